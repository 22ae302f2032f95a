package ringflake

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ringflake/ringflake/internal/simhook"
)

// DefaultMarkAhead is how far ahead of the IDs it issues a generator with a
// [MarkStore] writes its high-water mark, unless [WithMarkAhead] says
// otherwise — or two ticks of the layout, when they are longer.
const DefaultMarkAhead = time.Second

// A MarkStore persists a generator's high-water mark ([Mark]): an instant
// that no ID of the generator's node is stamped after. A generator writes
// the mark ahead of the IDs it issues — by [DefaultMarkAhead] or
// [WithMarkAhead] — so it writes about twice per such interval, not once per
// ID, and it never issues an ID stamped after the last mark it saved.
//
// On start, [New] loads the mark and treats every ID up to it as issued, so
// a restarted generator never issues an ID at or below the mark of a
// previous run. A mark tells a reservation from a rollback: a clock that
// reads behind the mark but not behind [Mark.Since] is behind only because
// the previous run reserved time ahead (it crashed without a clean
// [Generator.Close]); the generator waits out, or borrows across, that
// reservation without reporting a rollback. A clock behind Since is a
// rollback, and the generator's strategy decides.
//
// Saves must take effect in the order they were made. A store whose saves
// travel over a network must order them on the server, because a request
// the client gave up on (a timeout, a stalled connection, a pool that
// opened another) can still reach the server after a later save
// succeeded, and a mark that goes back lets a restart with its clock
// behind issue IDs again. Number each writer's saves and send the number
// with the fencing token; the server stores a save only when its number
// is above the last one it stored for that token, and a late, older one
// changes nothing (it may report an error; its caller gave up on it).
// Compare numbers, not marks: [Generator.Close]'s exact mark, the run's
// last save, may be below the mark written ahead before it and must
// replace it. The lease modules (redislease, etcdlease, pglease) do this,
// and lease/leasetest holds a store to it through a proxy that delivers a
// save late.
//
// A store that one generator must hold at a time (a file, say) also has
// the methods Hold(ctx) error and Release() error: New calls Hold before
// it loads the mark and fails with its error, and Close calls Release.
//
// Implementations must be safe for concurrent use. There is no default
// store: a generator keeps a mark only when given one.
// [github.com/ringflake/ringflake/hostlocal.MarkFile] keeps it in a local
// file; the leases of redislease, etcdlease and pglease keep the mark of a
// leased node id with the lease, so that the next holder of the id starts after it.
// A store that keeps marks as text can use [Mark.MarshalText] and
// [Mark.UnmarshalText], which also read the bare RFC 3339 time earlier
// versions stored.
type MarkStore interface {
	// LoadMark returns the stored mark, or the zero Mark when nothing was
	// ever stored (a first start). A mark that exists but cannot be read
	// or understood is an error, never "no mark".
	LoadMark(ctx context.Context) (Mark, error)

	// SaveMark durably stores m before returning. A running generator
	// only saves marks later than the ones it loaded or saved before;
	// [Generator.Close] may then save an earlier one: the exact mark of
	// what was issued, in place of the mark written ahead. Generators
	// call it on a background goroutine without a deadline, and calls
	// that need the mark wait for it, so it must bound its own time (a
	// network store needs a timeout).
	SaveMark(ctx context.Context, m Mark) error
}

// markHolder is a [MarkStore] that one generator holds at a time. A store
// with these two methods, as [github.com/ringflake/ringflake/hostlocal.MarkFile]
// has, is held: [New] calls Hold before it loads the mark and fails with
// Hold's error (so a second generator on the same store fails at once,
// instead of seeing the first one's mark as a rollback), and
// [Generator.Close] — or a New that fails after Hold — calls Release
// once. If Close's context ends before the final save, the store stays
// held until the process exits.
type markHolder interface {
	MarkStore
	Hold(ctx context.Context) error
	Release() error
}

// A Mark is a generator's high-water mark, as a [MarkStore] keeps it. The
// zero Mark means nothing was ever issued.
type Mark struct {
	// Limit is an instant no ID of the node was stamped after: the end of
	// the time a running generator reserved ahead of the IDs it issues or,
	// after a clean [Generator.Close], the time of its newest ID. The zero
	// Time means that nothing was issued.
	Limit time.Time

	// Since is the newest the writing generator knew of when it saved the
	// mark: the later of its clock's reading and its newest ID. IDs up to
	// Since may have been issued; the time between Since and Limit is a
	// reservation. A mark saved by a clean Close has Since equal to
	// Limit. A mark without Since (written by ringflake before v0.2) is
	// read as Since = Limit.
	Since time.Time

	// Node and Layout ([Layout.String]) say whom the mark was written
	// for: [New] refuses a mark of another node id or layout
	// ([ErrMarkMismatch]). The layouts' field order is not compared (a
	// mark bounds ticks, which both orders share). An empty Layout (a
	// mark written before v0.2) is not checked.
	Node   int64
	Layout string
}

// IsZero reports whether m is the zero Mark: nothing was ever issued.
func (m Mark) IsZero() bool { return m == Mark{} }

// markNone stands for a zero time in a mark's text.
const markNone = "none"

// MarshalText writes m as one line of text without a newline:
//
//	limit=2026-11-24T08:00:01.5Z since=2026-11-24T08:00:00.5Z node=7 layout=twitter
//
// with "none" for a zero time. The layout comes last: it is the rest of
// the line.
func (m Mark) MarshalText() ([]byte, error) {
	return m.appendText(nil), nil
}

func (m Mark) appendText(b []byte) []byte {
	stamp := func(b []byte, t time.Time) []byte {
		if t.IsZero() {
			return append(b, markNone...)
		}
		return t.UTC().AppendFormat(b, time.RFC3339Nano)
	}
	b = append(b, "limit="...)
	b = stamp(b, m.Limit)
	b = append(b, " since="...)
	b = stamp(b, m.Since)
	b = append(b, " node="...)
	b = strconv.AppendInt(b, m.Node, 10)
	b = append(b, " layout="...)
	return append(b, m.Layout...)
}

// UnmarshalText reads a mark written by [Mark.MarshalText], or a bare RFC
// 3339 time as earlier versions stored it (read as Limit = Since, no node
// or layout). Errors match [ErrMarkCorrupt].
func (m *Mark) UnmarshalText(text []byte) error {
	v, err := parseMark(string(text))
	if err != nil {
		return &MarkError{Path: "mark", Reason: err.Error()}
	}
	*m = v
	return nil
}

// parseMark reads the text of a mark; its errors say what is wrong, for a
// MarkError.
func parseMark(s string) (Mark, error) {
	if !strings.HasPrefix(s, "limit=") {
		t, err := time.Parse(time.RFC3339Nano, s)
		if err != nil || t.IsZero() {
			return Mark{}, fmt.Errorf("%q is neither a mark nor an RFC 3339 time", shorten(s))
		}
		return Mark{Limit: t, Since: t}, nil
	}
	var m Mark
	rest := s
	for _, key := range []string{"limit=", "since=", "node=", "layout="} {
		var val string
		if key == "layout=" {
			val, rest = rest, ""
		} else {
			val, rest, _ = strings.Cut(rest, " ")
		}
		val, ok := strings.CutPrefix(val, key)
		if !ok {
			return Mark{}, fmt.Errorf("want %s… in %q", key, shorten(s))
		}
		switch key {
		case "limit=", "since=":
			t := time.Time{}
			if val != markNone {
				var err error
				if t, err = time.Parse(time.RFC3339Nano, val); err != nil || t.IsZero() {
					return Mark{}, fmt.Errorf("%s%q is not an RFC 3339 time", key, shorten(val))
				}
			}
			if key == "limit=" {
				m.Limit = t
			} else {
				m.Since = t
			}
		case "node=":
			n, err := strconv.ParseInt(val, 10, 64)
			if err != nil || n < 0 {
				return Mark{}, fmt.Errorf("node=%q is not a node id", shorten(val))
			}
			m.Node = n
		case "layout=":
			m.Layout = val
		}
	}
	switch {
	case m.Limit.IsZero() && !m.Since.IsZero():
		return Mark{}, fmt.Errorf("since=%s without a limit", m.Since.UTC().Format(time.RFC3339Nano))
	case m.Since.After(m.Limit):
		return Mark{}, fmt.Errorf("since=%s is after limit=%s", m.Since.UTC().Format(time.RFC3339Nano), m.Limit.UTC().Format(time.RFC3339Nano))
	case !m.Limit.IsZero() && m.Since.IsZero():
		return Mark{}, fmt.Errorf("limit=%s without since", m.Limit.UTC().Format(time.RFC3339Nano))
	}
	return m, nil
}

// shorten returns s, cut to 40 bytes with "…" for error messages.
func shorten(s string) string {
	if len(s) <= 40 {
		return s
	}
	return s[:40] + "…"
}

// A generator keeps its high-water mark in the MarkStore it was given:
// loaded and checked at New (openMark), saved ahead of the ticks it
// issues at (saveMark, started by prepare in horizon.go), and saved exact
// by Close.

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
	save := func() {
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
	}
	if r := simhook.Of(m.store); r != nil {
		r.Go(save) // a fleet simulation runs the save as one of its events
	} else {
		go save()
	}
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
	if g == nil || g.mark == nil {
		return nil
	}
	for {
		g.mark.mu.Lock()
		done, err := g.mark.saving, g.mark.err
		g.mark.mu.Unlock()
		if done == nil {
			return err
		}
		if r := simhook.Of(g.mark.store); r != nil {
			r.Wait(done)
		}
		select {
		case <-done:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}
