package strategies_test

import (
	"errors"
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ringflake/ringflake/internal/zerotest"
	"github.com/ringflake/ringflake/strategies"
)

// builtins returns every built-in strategy and a few chains, as a
// configuration gives them, with lead and wait bounds drawn from arg.
func builtins(t *testing.T, arg time.Duration) []strategies.Strategy {
	t.Helper()
	all := []strategies.Strategy{
		strategies.Error(), strategies.Ring(), strategies.Wait(strategies.DefaultWait), strategies.Logical(strategies.DefaultLead),
		strategies.Wait(arg), strategies.Logical(arg), strategies.Default(),
		strategies.Chain(strategies.Ring(), strategies.Logical(arg), strategies.Error()),
		strategies.Chain(strategies.Ring(), strategies.Wait(arg)),
		strategies.Chain(), strategies.Chain(nil), strategies.Chain(strategies.Ring(), nil, strategies.Error()),
	}
	for _, cfg := range []string{"ring,wait:5ms,error", "logical:1h,error", "wait:1s,logical:1ms", "ring,logical,wait"} {
		s, err := strategies.Parse(cfg)
		require.NoError(t, err, cfg)
		all = append(all, s)
	}
	return all
}

// checkPlan asserts that p is a plan step may make in s: the promise of
// each built-in strategy, held by any Situation, zero and absurd ones
// included.
func checkPlan(t *testing.T, step strategies.Strategy, s strategies.Situation, p strategies.Plan) {
	t.Helper()
	now, behind := s.Now(), s.IsBehind()
	from, limit, issue := p.Range()
	name := step.String()
	switch {
	case issue:
		require.LessOrEqual(t, from, limit, "%s: issue range from %d past its limit %d", name, from, limit)
	case p.SleepFor() > 0:
		// a Sleep plan (an Issue plan's fallback sleep is checked above)
	case p.Err() != nil:
		require.True(t, behind, "%s: fails while the clock is not behind", name)
		if s.Frozen {
			require.ErrorIs(t, p.Err(), strategies.ErrClockFrozen, name)
		} else {
			require.ErrorIs(t, p.Err(), strategies.ErrClockRollback, name)
		}
	default:
		require.True(t, p.IsPass(), "%s: a plan that is none of issue, sleep, fail and pass: %v", name, p)
	}
	require.GreaterOrEqual(t, p.SleepFor(), time.Duration(0), "%s: %v", name, p)

	switch name {
	case "error":
		require.Equal(t, behind, p.Err() != nil, "error fails exactly while behind: %v", p)
	case "ring":
		if !behind {
			require.True(t, p.IsPass(), "ring passes while not behind: %v", p)
			break
		}
		require.True(t, issue, "ring issues while behind: %v", p)
		assert.Equal(t, now, from, "ring from the clock's tick")
		assert.Equal(t, s.Newest, limit, "ring never past the newest tick")
	}
	if w, ok := strategies.PromiseOf(step); ok {
		if w.MaxStall > 0 && !issue && p.SleepFor() > 0 {
			require.True(t, behind, "%s sleeps while not behind", name)
			if s.Waited >= 0 {
				require.LessOrEqual(t, p.SleepFor(), w.MaxStall-s.Waited, "%s: sleeps past its bound after %v", name, s.Waited)
			}
		}
		if w.MaxLead > 0 && issue {
			require.GreaterOrEqual(t, from, max(now, s.Newest), "%s: borrows below the newest tick or the clock", name)
			if lead := s.Ticks(w.MaxLead); now <= math.MaxInt64-lead {
				require.LessOrEqual(t, limit, now+lead, "%s: leads past its bound", name)
			}
		}
	}
}

// FuzzDecide: every built-in strategy and chain, asked about any
// Situation — the zero one, a Unit of zero or less, ticks at the ends of
// int64 — returns a valid plan and never panics; a chain returns the plan
// of its first step that does not pass.
func FuzzDecide(f *testing.F) {
	f.Add(int64(0), int64(0), int64(0), int64(0), int64(0), false, false, int64(0), int64(0))
	f.Add(int64(time.Second), int64(time.Millisecond), int64(1500), int64(1<<41-1), int64(time.Millisecond), false, false, int64(0), int64(5*time.Millisecond))
	f.Add(int64(999*time.Millisecond), int64(time.Millisecond), int64(1000), int64(1<<41-1), int64(0), true, true, int64(0), int64(time.Second))
	f.Add(int64(math.MaxInt64), int64(1), int64(math.MinInt64), int64(math.MaxInt64), int64(math.MaxInt64), true, false, int64(1), int64(math.MaxInt64))
	f.Add(int64(math.MinInt64), int64(-1), int64(math.MaxInt64), int64(-1), int64(math.MinInt64), false, true, int64(-5), int64(-1))
	f.Fuzz(func(t *testing.T, elapsed, unit, newest, last, waited int64, full, frozen bool, epoch, arg int64) {
		s := strategies.Situation{
			Elapsed: time.Duration(elapsed), Unit: time.Duration(unit), Epoch: time.Unix(0, epoch),
			Newest: newest, Last: last, Full: full, Waited: time.Duration(waited), Frozen: frozen,
		}
		if epoch == 0 {
			s.Epoch = time.Time{}
		}
		_ = s.Behind()
		_ = s.BehindError()
		_ = s.Until(newest)
		for _, strategy := range builtins(t, time.Duration(arg)) {
			var first strategies.Plan
			for _, step := range strategies.Flatten(strategy) {
				if step == nil {
					continue
				}
				p := step.Decide(s)
				if _, ok := step.(strategies.Promiser); ok && strategies.Validate(step, s.Unit) == nil {
					checkPlan(t, step, s, p)
				}
				if first.IsPass() {
					first = p
				}
			}
			got := strategy.Decide(s)
			require.Equal(t, first.String(), got.String(), "%s decides as its first step that does not pass", strategy)
			require.Equal(t, first.IsPass(), got.IsPass())
		}
	})
}

// TestZeroSituation: each built-in strategy asked about the zero
// Situation passes (the clock is not behind, nothing was issued), and
// the zero Situation's methods return zero values.
func TestZeroSituation(t *testing.T) {
	var s strategies.Situation
	for _, strategy := range builtins(t, strategies.DefaultWait) {
		var p strategies.Plan
		require.NotPanics(t, func() { p = strategy.Decide(s) }, strategy.String())
		if _, _, ok := p.Range(); !ok {
			assert.True(t, p.IsPass(), "%s: %v", strategy, p)
		}
	}
	assert.Zero(t, s.Now())
	assert.Zero(t, s.Behind())
	assert.Zero(t, s.Ticks(time.Second))
	assert.Zero(t, s.Until(0))
	assert.False(t, s.IsBehind())
	var rollback *strategies.RollbackError
	require.ErrorAs(t, strategies.Situation{Newest: 1}.BehindError(), &rollback)
}

// TestZeroValuesDoNotPanic calls the package's functions and the methods
// of its zero values with zero arguments.
func TestZeroValuesDoNotPanic(t *testing.T) {
	for name, f := range map[string]any{
		"Validate": strategies.Validate, "Fail": strategies.Fail, "Issue": strategies.Issue, "Pass": strategies.Pass,
		"Sleep": strategies.Sleep, "PromiseOf": strategies.PromiseOf, "Chain": strategies.Chain, "Default": strategies.Default,
		"Error": strategies.Error, "Flatten": strategies.Flatten, "Logical": strategies.Logical, "Parse": strategies.Parse,
		"Ring": strategies.Ring, "Wait": strategies.Wait,
	} {
		zerotest.Call(t, name, f)
	}
	zerotest.Methods(t, nil,
		strategies.Situation{}, strategies.Plan{}, strategies.Promise{}, &strategies.AheadError{}, &strategies.FrozenError{},
		&strategies.RollbackError{}, &strategies.StrategyError{},
		strategies.Wait(0), strategies.Logical(0), strategies.Chain(), strategies.Chain(nil), strategies.Error(), strategies.Ring(),
	)
	assert.True(t, errors.Is(strategies.Validate(nil, time.Millisecond), strategies.ErrInvalidStrategy))
}
