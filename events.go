package ringflake

import (
	"time"

	"github.com/ringflake/ringflake/strategies"
)

// A rollback is reported once, to the hooks of WithRollbackHook and
// WithLogger, by the first call that finds the clock behind the newest ID
// after the clock was seen to step back (see counters.seeRollback).

// claimReport makes c the call that reports the latest rollback seen, if
// no call reported it yet.
func (g *Generator) claimReport(c *call, s strategies.Situation) {
	seen := g.stats.rollbacks.Load()
	for {
		done := g.stats.reported.Load()
		if done >= seen {
			return
		}
		if g.stats.reported.CompareAndSwap(done, seen) {
			c.report, c.behind, c.at = true, s.Behind(), c.e
			return
		}
	}
}

// emit hands the rollback event of c to the hooks.
func (g *Generator) emit(c *call, err error) {
	ev := RollbackEvent{At: g.src.epoch.Add(time.Duration(c.at)), Behind: c.behind,
		Waited: c.waited, Err: err}
	if c.step >= 0 {
		ev.Strategy = g.steps[c.step].String()
	}
	for _, h := range g.hooks {
		h(ev)
	}
}
