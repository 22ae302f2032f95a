package ringflake

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
)

// A generator's horizon is the greatest tick its fast path may issue at
// without asking anything: the layout's last tick, or — with a MarkStore —
// a tick half an interval before the saved high-water mark runs out, so the
// next mark is saved in the background before it is needed. Past the
// horizon the slow path takes over.

// marker keeps the saved high-water mark of a generator.
type marker struct {
	store      MarkStore
	aheadTicks int64
	hard       atomic.Int64 // the saved mark's tick: nothing is issued above it

	mu     sync.Mutex
	saving chan struct{} // closed when the save in flight ends; nil when idle
	err    error         // the error of the last save, until one succeeds
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
	if g.closed.Load() {
		return
	}
	h := g.last
	if hard := g.hardTick(); hard < g.last { // at the layout's end there is nothing left to save
		h = hard - g.mark.aheadTicks/2
	}
	g.horizon.Store(h)
}

// prepare makes sure the generator may issue at tick: it starts saving the
// next mark when tick is past the horizon, and waits for that save when
// tick is past the saved mark. It reports whether it waited, and returns
// the save's error, or ctx's.
func (g *Generator) prepare(ctx context.Context, tick int64) (waited bool, err error) {
	if g.mark == nil || tick <= g.horizon.Load() || g.mark.hard.Load() >= g.last {
		return false, nil
	}
	for {
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
	if err := m.err; err != nil && tick > m.hard.Load() {
		// Report the failure once to a caller that needs the mark; the
		// next such caller tries again.
		m.err = nil
		return nil, err
	}
	target := min(tick+m.aheadTicks, g.last)
	done := make(chan struct{})
	m.saving = done
	go func() {
		err := m.store.SaveMark(context.Background(), g.layout.TickTime(target))
		m.mu.Lock()
		defer m.mu.Unlock()
		if err == nil {
			m.hard.Store(max(m.hard.Load(), target))
			g.setHorizon()
		} else {
			err = fmt.Errorf("ringflake: saving the high-water mark: %w", err)
		}
		m.err = err
		m.saving = nil
		close(done)
	}()
	return done, nil
}

// loadMark reads the mark of a previous run, treats everything up to it as
// issued, and saves the first mark of this run, ahead of both the clock and
// the old mark.
func (g *Generator) loadMark(ctx context.Context, now int64) error {
	m := g.mark
	prev, err := m.store.LoadMark(ctx)
	if err != nil {
		return err
	}
	start := now
	if !prev.IsZero() {
		tick := g.layout.Tick(prev)
		if tick > g.last {
			return &timeError{err: ErrLayoutExpired, at: prev, edge: g.layout.Last()}
		}
		if tick >= 0 {
			g.newest.Store(tick)
			g.ring.fill(tick)
			start = max(start, tick)
		}
	}
	target := min(start+m.aheadTicks, g.last)
	if err := m.store.SaveMark(ctx, g.layout.TickTime(target)); err != nil {
		return fmt.Errorf("ringflake: saving the high-water mark: %w", err)
	}
	m.hard.Store(target)
	return nil
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
