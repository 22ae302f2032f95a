package segment

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"
)

// An Allocator hands out the numbers of one business tag from two
// buffers of ranges taken from PostgreSQL. Make one with [New]; the zero
// Allocator is not usable. It is safe for concurrent use by multiple
// goroutines.
type Allocator struct {
	// cur is the range numbers come from. A number is one atomic add on
	// cur.used; only a call that finds cur used up takes mu.
	cur atomic.Pointer[segment]

	tag        string
	src        source
	clk        Clock
	prefetchAt float64
	maxStep    int64
	target     time.Duration
	minBackoff time.Duration
	maxBackoff time.Duration
	spawn      func(func())                              // runs a load in the background
	sleep      func(context.Context, time.Duration) bool // waits before a retry; false once ctx ends
	ctx        context.Context                           // ends loads at Close
	cancel     context.CancelFunc
	wg         sync.WaitGroup // running loads

	mu       sync.Mutex
	next     *segment          // the second buffer; nil while empty
	loading  bool              // a load runs: taking a range, or waiting to retry
	done     chan struct{}     // closed (and replaced) when an attempt to take a range ends
	failure  *UnavailableError // why the last attempt failed; nil after a success
	closed   bool
	step     int64     // size of the newest range
	end      int64     // end of the newest range
	rowStep  int64     // the row's step when the newest range was taken
	lastLoad time.Time // when the newest range's load started
	backoff  time.Duration
	counts   Stats // the counters of Stats; the rest is computed
}

// A segment is one range in a buffer: [first, first+size).
type segment struct {
	used    atomic.Int64 // numbers taken, counting every call that ran past the end
	first   int64
	size    int64
	trigger int64 // the call that takes this offset loads the next range
}

func newSegment(r rng, prefetchAt float64) *segment {
	trigger := min(int64(float64(r.size)*prefetchAt), r.size-1)
	return &segment{first: r.first, size: r.size, trigger: trigger}
}

// maxTagLen is the longest business tag, in bytes (Leaf's varchar(128)).
const maxTagLen = 128

// New returns an allocator of the numbers of bizTag, taking ranges from
// the table ringflake_segments in db (see [Migrate] and [Schema]). When
// the tag has no row yet, New creates it with the first number and step
// of [WithStart] and [WithStep]. New takes the first range before it
// returns, so it fails when the database does; after that the allocator
// takes ranges in the background. Call [Allocator.Close] when done: it
// stops the background work, and the numbers left in the buffers are
// never handed out by anyone.
//
// Pass a pool (*sql.DB) opened with a PostgreSQL driver, such as pgx's
// stdlib ("pgx") or lib/pq ("postgres"). Each range is one UPDATE …
// RETURNING in a transaction of its own: never a transaction of yours.
//
// Errors: [ErrInvalidOption] for a nil db or a bad option,
// [ErrInvalidTag] for a tag that is empty, longer than 128 bytes, not
// UTF-8 or contains NUL, and an [*UnavailableError] (matching
// [ErrUnavailable] and wrapping the cause, such as the database's error or
// ctx's) when the first range cannot be taken: no table, no connection,
// [ErrOverflow], [ErrInvalidRow].
func New(ctx context.Context, db *sql.DB, bizTag string, opts ...Option) (*Allocator, error) {
	if db == nil {
		return nil, fmt.Errorf("%w: nil *sql.DB", ErrInvalidOption)
	}
	if err := checkTag(bizTag); err != nil {
		return nil, err
	}
	cfg := defaultConfig()
	for _, o := range opts {
		o.apply(&cfg)
	}
	if cfg.err != nil {
		return nil, cfg.err
	}
	src := &pgSource{db: db, tag: bizTag}
	r, err := src.take(ctx, 0)
	if errors.Is(err, ErrTagMissing) {
		if err = src.create(ctx, cfg.start, cfg.step); err == nil {
			r, err = src.take(ctx, 0)
		}
	}
	if err != nil {
		return nil, &UnavailableError{Tag: bizTag, Err: err}
	}
	return newAllocator(bizTag, src, cfg, r, nil, nil), nil
}

func checkTag(tag string) error {
	switch {
	case tag == "":
		return fmt.Errorf("%w: empty", ErrInvalidTag)
	case len(tag) > maxTagLen:
		return fmt.Errorf("%w: %d bytes, more than %d", ErrInvalidTag, len(tag), maxTagLen)
	case !utf8.ValidString(tag):
		return fmt.Errorf("%w: %q is not valid UTF-8", ErrInvalidTag, tag)
	}
	for i := range len(tag) {
		if tag[i] == 0 {
			return fmt.Errorf("%w: %q has a NUL byte at %d", ErrInvalidTag, tag, i)
		}
	}
	return nil
}

// newAllocator returns an allocator whose current range is first. spawn
// and sleep replace the goroutine a load runs in and the wait before a
// retry (tests run them step by step); nil means the real ones.
func newAllocator(tag string, src source, cfg config, first rng, spawn func(func()), sleep func(context.Context, time.Duration) bool) *Allocator {
	a := &Allocator{
		tag:        tag,
		src:        src,
		clk:        cfg.clock,
		prefetchAt: cfg.prefetchAt,
		maxStep:    cfg.maxStep,
		target:     cfg.targetDuration,
		minBackoff: cfg.minBackoff,
		maxBackoff: cfg.maxBackoff,
		spawn:      spawn,
		sleep:      sleep,
		done:       make(chan struct{}),
		step:       first.size,
		end:        first.first + first.size,
		rowStep:    first.rowStep,
		lastLoad:   cfg.clock.Now(),
		backoff:    cfg.minBackoff,
	}
	a.ctx, a.cancel = context.WithCancel(context.Background())
	if a.spawn == nil {
		a.spawn = func(f func()) { go f() }
	}
	if a.sleep == nil {
		a.sleep = a.clockSleep
	}
	a.counts.Ranges = 1
	a.cur.Store(newSegment(first, a.prefetchAt))
	return a
}

// Next returns the next number: greater than every number this
// allocator returned before the call began, and never returned by any
// allocator of the tag, in this process or another. It is one atomic add
// while the current range lasts; ctx matters only when the call must wait
// for a range being loaded.
//
// Errors: an [*UnavailableError] (matching [ErrUnavailable], wrapping
// the cause) when both buffers are empty and the last attempt to take a
// range failed; ctx's error when ctx ends while the call waits for a
// range; [ErrClosed] after Close.
func (a *Allocator) Next(ctx context.Context) (int64, error) {
	for {
		s := a.cur.Load()
		off := s.used.Add(1) - 1
		if off < s.size {
			if off == s.trigger {
				a.prefetch()
			}
			return s.first + off, nil
		}
		if err := a.refill(ctx, s); err != nil {
			return 0, err
		}
	}
}

// NextN fills dst with numbers as if by len(dst) calls of Next: strictly
// increasing, each greater than every number this allocator returned
// before the call began. It takes them in runs of one atomic add per
// range. It returns how many it filled; on an error (those of Next) the
// first n are valid numbers all the same.
func (a *Allocator) NextN(ctx context.Context, dst []int64) (n int, err error) {
	for n < len(dst) {
		s := a.cur.Load()
		want := int64(len(dst) - n)
		off := s.used.Add(want) - want
		if off >= s.size {
			if err := a.refill(ctx, s); err != nil {
				return n, err
			}
			continue
		}
		got := min(want, s.size-off)
		if off <= s.trigger && s.trigger < off+got {
			a.prefetch()
		}
		for i := range got {
			dst[n+int(i)] = s.first + off + i
		}
		n += int(got)
	}
	return n, nil
}

// prefetch starts loading the next range, unless one is loaded or being
// loaded. The call that takes a range's trigger offset calls it.
func (a *Allocator) prefetch() {
	a.mu.Lock()
	defer a.mu.Unlock()
	if !a.closed && a.next == nil && !a.loading {
		a.counts.Prefetches++
		a.startLoad()
	}
}

// startLoad starts a load in the background; a.mu is held.
func (a *Allocator) startLoad() {
	a.loading = true
	a.wg.Add(1)
	a.spawn(func() {
		defer a.wg.Done()
		a.load()
	})
}

// refill makes sure that the current range is not old, which a caller
// found used up: it switches to the second buffer, or waits for the range
// being loaded. It returns when the caller should try again.
func (a *Allocator) refill(ctx context.Context, old *segment) error {
	a.mu.Lock()
	for {
		switch {
		case a.cur.Load() != old: // another caller switched
			a.mu.Unlock()
			return nil
		case a.closed:
			a.mu.Unlock()
			return ErrClosed
		case a.next != nil:
			a.cur.Store(a.next)
			a.next = nil
			a.mu.Unlock()
			return nil
		case a.failure != nil: // fail fast while the database fails
			a.counts.Unavailable++
			err := a.failure
			a.mu.Unlock()
			return err
		}
		if !a.loading { // only when the prefetch has not run, as with a range of one number
			a.startLoad()
		}
		a.counts.Waits++
		done := a.done
		a.mu.Unlock()
		select {
		case <-done:
		case <-ctx.Done():
			return ctx.Err()
		}
		a.mu.Lock()
	}
}

// load takes the next range into the second buffer, trying again after a
// backoff until it succeeds or the allocator is closed.
func (a *Allocator) load() {
	a.mu.Lock()
	started := a.clk.Now()
	step := a.nextStep(started)
	a.mu.Unlock()
	for {
		r, err := a.src.take(a.ctx, step)
		a.mu.Lock()
		if err == nil {
			err = a.check(r)
		}
		close(a.done)
		a.done = make(chan struct{})
		if a.closed { // the range, if any, is lost
			a.loading = false
			a.mu.Unlock()
			return
		}
		if err == nil {
			a.next = newSegment(r, a.prefetchAt)
			a.loading = false
			a.failure = nil
			a.backoff = a.minBackoff
			a.step, a.rowStep, a.lastLoad, a.end = r.size, r.rowStep, started, r.first+r.size
			a.counts.Ranges++
			a.mu.Unlock()
			return
		}
		a.counts.Errors++
		a.failure = &UnavailableError{Tag: a.tag, Err: err}
		if errors.Is(err, ErrOverflow) {
			step = a.rowStep // the smallest range may still fit
		}
		wait := a.backoff
		a.backoff = min(2*a.backoff, a.maxBackoff)
		a.mu.Unlock()
		if !a.sleep(a.ctx, wait) {
			a.mu.Lock()
			a.loading = false
			a.mu.Unlock()
			return
		}
	}
}

// check returns an error matching ErrInvalidRow when r cannot follow the
// newest range: it is empty, or it starts below the newest range's end,
// which happens only when the row's max_id went back (a database restored
// from an old backup, an UPDATE by hand) and would hand out numbers again.
// a.mu is held.
func (a *Allocator) check(r rng) error {
	switch {
	case r.size < 1:
		return fmt.Errorf("%w: a range of %d numbers for biz tag %q", ErrInvalidRow, r.size, a.tag)
	case r.first < a.end:
		return fmt.Errorf("%w: max_id of biz tag %q went back: a range from %d, below the end of an earlier one, %d",
			ErrInvalidRow, a.tag, r.first, a.end)
	}
	return nil
}

// nextStep returns the size of the next range. a.mu is held.
func (a *Allocator) nextStep(now time.Time) int64 {
	return adaptStep(a.step, a.rowStep, a.maxStep, now.Sub(a.lastLoad), a.target)
}

// adaptStep returns the step after a range of step numbers whose load
// started since ago, as Leaf does: twice the step when since is less than
// the target, half when it is twice the target or more, the same in
// between; never above maxStep or below rowStep (a row step above the
// maximum wins).
func adaptStep(step, rowStep, maxStep int64, since, target time.Duration) int64 {
	switch {
	case since < target:
		step = min(2*step, maxStep)
	case since >= 2*target:
		step /= 2
	}
	return max(step, rowStep)
}

// clockSleep waits d on the allocator's clock; false if ctx ended first.
func (a *Allocator) clockSleep(ctx context.Context, d time.Duration) bool {
	select {
	case <-a.clk.After(d):
		return true
	case <-ctx.Done():
		return false
	}
}

// Close stops the allocator: a load in progress is canceled, and every
// later call returns [ErrClosed]. The numbers left in its buffers
// (Stats().Left just before) are lost: no allocator hands them out. Close
// waits for the background work to end and always returns nil; closing
// again does nothing.
func (a *Allocator) Close() error {
	a.mu.Lock()
	if a.closed {
		a.mu.Unlock()
		return nil
	}
	a.closed = true
	a.next = nil
	a.cur.Store(&segment{}) // used up from the start: every call goes to refill
	a.cancel()
	a.mu.Unlock()
	a.wg.Wait()
	return nil
}

// Stats returns the allocator's counters and the state of its buffers.
func (a *Allocator) Stats() Stats {
	a.mu.Lock()
	defer a.mu.Unlock()
	s := a.counts
	cur := a.cur.Load()
	s.Left = max(cur.size-cur.used.Load(), 0)
	if a.next != nil {
		s.Left += a.next.size
		s.NextReady = true
	}
	s.Loading = a.loading
	s.Failing = a.failure != nil
	s.Step = a.step
	s.RoundTrips = a.src.roundTrips()
	return s
}
