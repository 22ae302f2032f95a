package fleetsim

import (
	"time"

	"github.com/benbjohnson/clock"

	"github.com/ringflake/ringflake/simclock"
)

// hostClock is the clock of one host (a node or the server): a simclock
// whose true time follows the world's. Its events (steps, freezes,
// drift, jitter) are applied by the world when they fire.
type hostClock struct {
	w *world
	c *simclock.Clock
}

func newHostClock(w *world, start time.Time) *hostClock {
	return &hostClock{w: w, c: simclock.New(start)}
}

func (h *hostClock) sync() {
	if d := h.w.now - h.c.Monotonic(); d > 0 {
		h.c.Add(d)
	}
}

// Now reads the wall clock, with jitter.
func (h *hostClock) Now() time.Time { h.sync(); return h.c.Now() }

// Wall reads the wall clock without jitter.
func (h *hostClock) Wall() time.Time { h.sync(); return h.c.Wall() }

// Monotonic returns true time since the start.
func (h *hostClock) Monotonic() time.Duration { h.sync(); return h.c.Monotonic() }

// genClock is the clock a node's generator reads: its host's clock, whose
// After blocks the calling proc for the time asked.
type genClock struct{ inc *incarnation }

func (c genClock) Now() time.Time           { return c.inc.node.clk.Now() }
func (c genClock) Monotonic() time.Duration { return c.inc.node.clk.Monotonic() }

// After lets d of true time pass for the calling proc and returns a
// channel holding the clock's reading then. In a process that died it
// returns a channel that never delivers: the call's context, cancelled by
// the crash, ends the wait.
func (c genClock) After(d time.Duration) <-chan time.Time {
	w := c.inc.node.sim.w
	p := w.cur
	if c.inc.dead || p == nil || p.owner != c.inc {
		return nil
	}
	p.sleep(d)
	if c.inc.dead {
		return nil
	}
	ch := make(chan time.Time, 1)
	ch <- c.Now()
	return ch
}

// monoClock is the clock of a node's lease keeper: the host's monotonic
// clock as a time (as time.Now's monotonic reading is to a real keeper),
// so a step of the wall clock does not move a lease's validity. A Driver
// uses only Now, Since and Until; the other methods of clock.Clock are
// those of the embedded nil interface and are never called.
type monoClock struct {
	clock.Clock
	h    *hostClock
	base time.Time
}

func (m monoClock) Now() time.Time                  { return m.base.Add(m.h.Monotonic()) }
func (m monoClock) Since(t time.Time) time.Duration { return m.Now().Sub(t) }
func (m monoClock) Until(t time.Time) time.Duration { return t.Sub(m.Now()) }
