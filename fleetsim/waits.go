package fleetsim

import (
	"time"

	"github.com/ringflake/ringflake/internal/calltrace"
)

// waits is what a call waited for, as the generator tells it: the clock a
// node's generator reads (genClock) is a calltrace.Tracer, which the
// replay of package scenario uses too.
type waits struct{ c calltrace.Call }

func (w *waits) reset() { w.c = calltrace.Call{} }

// strategy returns how long the call slept for its strategy.
func (w *waits) strategy() time.Duration { return w.c.Strategy }

// Waited is told each wait of the call under way of the generator that
// reads c, after the wait (calltrace.Tracer).
func (c genClock) Waited(cause calltrace.Cause, d time.Duration) {
	c.inc.waited.c.Add(cause, d)
}
