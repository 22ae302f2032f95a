package ringflake

import (
	"context"

	"github.com/ringflake/ringflake/internal/simhook"
)

// A generator's horizon is the greatest tick its fast path may issue at
// without asking anything: the layout's last tick, or — with a MarkStore —
// a tick half an interval before the saved high-water mark runs out, so the
// next mark is saved in the background before it is needed. Past the
// horizon the slow path takes over. While callers wait in line, and after
// Close, the horizon is at the bottom: every call takes the slow path.

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
		if r := simhook.Of(g.mark.store); r != nil {
			r.Wait(done)
		}
		select {
		case <-done:
		case <-ctx.Done():
			return waited, ctx.Err()
		}
	}
	return waited, nil
}
