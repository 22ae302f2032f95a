package ringflake

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
)

// A generator's horizon is the greatest tick its fast path may issue at
// without asking anything: the layout's last tick, or — with a MarkStore —
// a tick half an interval before the saved high-water mark runs out, so the
// next mark is saved in the background before it is needed. Past the
// horizon the slow path takes over. While callers wait in line, and after
// Close, the horizon is at the bottom: every call takes the slow path.

// marker keeps the saved high-water mark of a generator.
type marker struct {
	store      MarkStore
	aheadTicks int64
	hard       atomic.Int64 // the saved mark's tick: nothing is issued above it
	saved      atomic.Bool  // this run saved a mark: Close saves the exact one

	// reserved is the tick of the previous run's mark (-1 without one):
	// every tick up to it counts as issued. The ticks after the previous
	// run's Since are a reservation, not IDs known to be issued: a clock
	// that reads among them is waited out (or borrowed across), not
	// reported as a rollback. It does not change after New.
	reserved int64

	mu     sync.Mutex
	saving chan struct{} // closed when the save in flight ends; nil when idle
	err    error         // the error of the last save, until one succeeds
	// sent is the greatest Limit and Since (ticks, -1 for none) of the
	// saves this run started: every later save is at least both, so that
	// a store that applies saves in order never goes back (see MarkStore),
	// whichever call starts a save from whatever reading.
	sentLimit, sentSince int64
}

// hardTick returns the greatest tick the generator may issue at now.
func (g *Generator) hardTick() int64 {
	if g.mark == nil {
		return g.last
	}
	return min(g.mark.hard.Load(), g.last)
}

// setHorizon recomputes the fast path's horizon from the saved mark.
func (g *Generator) setHorizon() {
	g.hmu.Lock()
	defer g.hmu.Unlock()
	if g.closed.Load() {
		return
	}
	h := g.saveAfter()
	if g.line.length.Load() > 0 {
		h = bottom // callers wait in line: everyone joins it
	}
	g.horizon.Store(h)
}

// saveAfter returns the greatest tick the generator may issue at before it
// starts saving its next mark: the layout's last tick, or half an interval
// before the saved mark runs out.
func (g *Generator) saveAfter() int64 {
	if hard := g.hardTick(); hard < g.last { // at the layout's end there is nothing left to save
		return hard - g.mark.aheadTicks/2
	}
	return g.last
}

// prepare makes sure the generator may issue at tick: it starts saving the
// next mark when tick is past saveAfter, and waits for that save when tick
// is past the saved mark. It reports whether it waited, and returns the
// save's error, or ctx's.
func (g *Generator) prepare(ctx context.Context, tick int64) (waited bool, err error) {
	if g.mark == nil {
		return false, nil
	}
	for tick > g.saveAfter() {
		done, err := g.saveMark(tick)
		if tick <= g.mark.hard.Load() {
			return waited, nil
		}
		if err != nil {
			return waited, err
		}
		waited = true
		select {
		case <-done:
		case <-ctx.Done():
			return waited, ctx.Err()
		}
	}
	return waited, nil
}

// saveMark starts saving a mark ahead of tick unless a save is in flight,
// and returns a channel closed when the save in flight ends, with the
// error of the last save that ended.
func (g *Generator) saveMark(tick int64) (<-chan struct{}, error) {
	m := g.mark
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.saving != nil {
		return m.saving, nil
	}
	if g.closed.Load() {
		return nil, ErrClosed // Close saves the last mark
	}
	if err := m.err; err != nil && tick > m.hard.Load() {
		// Report the failure once to a caller that needs the mark; the
		// next such caller tries again.
		m.err = nil
		return nil, err
	}
	// Never below a save this run made before: a call may start a save
	// from a reading older than the one that started the last save.
	target := max(min(tick+m.aheadTicks, g.last), m.sentLimit)
	_, now := g.src.readTick()
	since := min(max(g.since(now, g.newest.Load()), m.sentSince), target)
	m.sentLimit, m.sentSince = target, since
	mark := g.markOf(target, since)
	done := make(chan struct{})
	m.saving = done
	go func() {
		err := m.store.SaveMark(context.Background(), mark)
		m.mu.Lock()
		defer m.mu.Unlock()
		if err == nil {
			m.saved.Store(true)
			m.hard.Store(max(m.hard.Load(), target))
			g.setHorizon()
		} else {
			err = notSaved(err)
		}
		m.err = err
		m.saving = nil
		close(done)
	}()
	return done, nil
}

// since returns the tick a mark saved when the clock reads now and the
// newest tick issued is newest says the generator knew of: the newest
// tick, unless the generator leads its clock because of an observed ID
// (observe.go) — then the clock, so that a restart treats that lead as a
// reservation to wait out or borrow across, not as a rollback.
func (g *Generator) since(now, newest int64) int64 {
	if now < g.observedLead.Load() {
		return now
	}
	return max(now, newest)
}

// markOf returns the mark that nothing was issued after tick limit, and
// that the generator knew of tick since (its clock or its newest ID);
// limit < 0 is the mark of nothing issued.
func (g *Generator) markOf(limit, since int64) Mark {
	m := Mark{Node: g.node, Layout: g.layout.String()}
	if limit >= 0 {
		m.Limit = g.layout.TickTime(limit)
		m.Since = g.layout.TickTime(min(max(since, 0), limit))
	}
	return m
}

// openMark sets up the generator's high-water mark in the store cfg
// gives: it holds the store first when the store has Hold and Release
// methods, then loads the previous run's mark, and saves this run's
// first one when the clock (at tick now) is past it.
func (g *Generator) openMark(cfg config, now int64) error {
	unit := g.layout.unit
	ahead := int64(cfg.ahead / unit)
	if cfg.ahead%unit != 0 {
		ahead++
	}
	if ahead < 2 && !cfg.aheadSet {
		ahead = 2 // the default, on a layout of ticks longer than half of it
	}
	if ahead < 2 {
		return fmt.Errorf("%w: WithMarkAhead(%v): want at least two ticks of %v", ErrInvalidOption, cfg.ahead, unit)
	}
	g.mark = &marker{store: cfg.marks, aheadTicks: ahead}
	if h, ok := cfg.marks.(markHolder); ok {
		if err := h.Hold(context.Background()); err != nil {
			return err
		}
	}
	if err := g.loadMark(context.Background(), now); err != nil {
		return errors.Join(err, g.releaseMark())
	}
	return nil
}

// releaseMark releases a store that the generator holds.
func (g *Generator) releaseMark() error {
	if h, ok := g.mark.store.(markHolder); ok {
		return h.Release()
	}
	return nil
}

// loadMark reads the mark of a previous run and treats everything up to it
// as issued. The newest tick becomes the mark's Since: a clock behind it
// is a rollback; one between it and the mark waits for the reservation.
// When the clock (tick now) is already past the mark, it saves this run's
// first mark, ahead of the clock; otherwise the previous mark covers the
// ticks up to it and the next save comes when the clock nears it, so that
// a process that keeps crashing before the clock passes its mark never
// moves the mark further ahead.
func (g *Generator) loadMark(ctx context.Context, now int64) error {
	m := g.mark
	m.reserved, m.sentLimit, m.sentSince = -1, -1, -1
	prev, err := m.store.LoadMark(ctx)
	if err != nil {
		return err
	}
	if err := g.checkMark(prev); err != nil {
		return err
	}
	if !prev.Limit.IsZero() {
		limit := g.layout.Tick(prev.Limit)
		if limit > g.last {
			return &timeError{err: ErrLayoutExpired, at: prev.Limit, edge: g.layout.Last()}
		}
		if limit >= 0 {
			since := limit
			if !prev.Since.IsZero() {
				since = min(g.layout.Tick(prev.Since), limit)
			}
			g.newest.Store(max(since, -1))
			g.ring.fill(limit)
			m.reserved = limit
		}
	}
	if m.reserved >= now {
		m.hard.Store(m.reserved)
		return nil
	}
	target := min(now+m.aheadTicks, g.last)
	since := min(max(now, g.newest.Load()), target)
	if err := m.store.SaveMark(ctx, g.markOf(target, since)); err != nil {
		return notSaved(err)
	}
	m.sentLimit, m.sentSince = target, since
	m.saved.Store(true)
	m.hard.Store(target)
	return nil
}

// checkMark refuses a mark written for another node id or layout. The
// layouts' field order is not compared: a mark bounds ticks, and both
// orders of one layout have the same ticks — and a mark written before
// the sonyflake preset took Sonyflake's order says "sonyflake" for what is
// now "sonyflake,order=time,node,seq".
func (g *Generator) checkMark(prev Mark) error {
	if prev.Layout == "" {
		return nil // a mark of an earlier version, or of nothing
	}
	l, err := ParseLayout(prev.Layout)
	l.order = g.layout.order
	if prev.Node == g.node && err == nil && l.Equal(g.layout) {
		return nil
	}
	store := fmt.Sprintf("%T", g.mark.store)
	if s, ok := g.mark.store.(fmt.Stringer); ok {
		store = s.String()
	}
	return &MarkError{Kind: ErrMarkMismatch, Path: store, Node: prev.Node, WantNode: g.node, Layout: prev.Layout, WantLayout: g.layout.String()}
}

// SyncMark waits until no save of the high-water mark is under way and
// returns the error of the last save, if it failed, or ctx's error. Without
// a [MarkStore] it returns nil at once. A service need not call it — calls
// that need a later mark wait for it themselves — but a test or a replay
// can make "the mark written ahead has landed" a fact before it goes on.
func (g *Generator) SyncMark(ctx context.Context) error {
	if g.mark == nil {
		return nil
	}
	for {
		g.mark.mu.Lock()
		done, err := g.mark.saving, g.mark.err
		g.mark.mu.Unlock()
		if done == nil {
			return err
		}
		select {
		case <-done:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}
