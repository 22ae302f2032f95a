package strategies_test

import (
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ringflake/ringflake/strategies"
)

func TestParse(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"error", "error"},
		{"ring", "ring"},
		{"wait", "wait:5ms"},
		{"wait:5ms", "wait:5ms"},
		{"wait:1500us", "wait:1.5ms"},
		{"logical", "logical:1s"},
		{"logical:250ms", "logical:250ms"},
		{"ring,wait:5ms,error", "ring,wait:5ms,error"},
		{" ring , wait:2ms ", "ring,wait:2ms"},
		{"logical:1m,error", "logical:1m,error"},
		{"logical:2h0m0s", "logical:2h"},
		{"wait:1m30s", "wait:1m30s"},
	} {
		t.Run(tc.in, func(t *testing.T) {
			s, err := strategies.Parse(tc.in)
			require.NoError(t, err)
			assert.Equal(t, tc.want, s.String())

			again, err := strategies.Parse(s.String())
			require.NoError(t, err)
			assert.Equal(t, s, again, "String must parse back to the same strategy")
		})
	}
}

func TestParseRejects(t *testing.T) {
	for _, tc := range []struct {
		in    string
		index int
	}{
		{"", 0},
		{"   ", 0},
		{"wait:abc", 1},
		{"wait:", 1},
		{"wait:-5ms", 1},
		{"wait:0s", 1},
		{"logical:0", 1},
		{"ring,,", 2},
		{"ring,", 2},
		{",ring", 1},
		{"ring:5", 1},
		{"error:now", 1},
		{"Ring", 1},
		{"retry", 1},
		{":5ms", 1},
		{"ring,wait:5ms,eror", 3},
		{"error,logical:1m", 2},            // unreachable after error
		{"ring,wait:5ms,error,logical", 4}, // likewise
		{"ring,error,error", 3},
	} {
		t.Run(tc.in, func(t *testing.T) {
			_, err := strategies.Parse(tc.in)
			require.ErrorIs(t, err, strategies.ErrInvalidStrategy)
			var se *strategies.StrategyError
			require.ErrorAs(t, err, &se)
			assert.Equal(t, tc.in, se.Input)
			assert.Equal(t, tc.index, se.Index)
			assert.NotEmpty(t, se.Reason)
		})
	}
}

func TestValidate(t *testing.T) {
	ms := time.Millisecond
	require.NoError(t, strategies.Validate(strategies.Default(), ms))
	require.NoError(t, strategies.Validate(strategies.Logical(10*ms), 10*ms))

	for _, tc := range []struct {
		name  string
		s     strategies.Strategy
		unit  time.Duration
		index int
	}{
		{"nil", nil, ms, 0},
		{"empty chain", strategies.Chain(), ms, 0},
		{"nil step", strategies.Chain(strategies.Ring(), nil), ms, 2},
		{"zero wait", strategies.Wait(0), ms, 0},
		{"negative wait in chain", strategies.Chain(strategies.Ring(), strategies.Wait(-ms)), ms, 2},
		{"lead below one tick", strategies.Logical(5 * ms), 10 * ms, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := strategies.Validate(tc.s, tc.unit)
			require.ErrorIs(t, err, strategies.ErrInvalidStrategy)
			var se *strategies.StrategyError
			require.ErrorAs(t, err, &se)
			assert.Equal(t, tc.index, se.Index)
		})
	}
}

func TestChainFlattens(t *testing.T) {
	inner := strategies.Chain(strategies.Ring(), strategies.Wait(time.Millisecond))
	c := strategies.Chain(inner, strategies.Error())
	assert.Equal(t, "ring,wait:1ms,error", c.String())
	assert.Len(t, strategies.Flatten(c), 3)
	assert.Equal(t, strategies.Ring(), strategies.Chain(strategies.Ring()))
	assert.Equal(t, []strategies.Strategy{strategies.Error()}, strategies.Flatten(strategies.Error()))
}

// situation builds a Situation at clock tick now (plus frac of a tick).
func situation(now, newest int64, full bool, waited time.Duration) strategies.Situation {
	return strategies.Situation{Elapsed: time.Duration(now) * time.Millisecond, Unit: time.Millisecond,
		Newest: newest, Last: 1<<41 - 1, Full: full, Waited: waited}
}

func TestDecide(t *testing.T) {
	ms := time.Millisecond
	rollback := func(d time.Duration) strategies.Plan {
		return strategies.Fail(&strategies.RollbackError{Behind: d})
	}
	for _, tc := range []struct {
		name string
		s    strategies.Strategy
		at   strategies.Situation
		want strategies.Plan
	}{
		{"error: used-up tick passes", strategies.Error(), situation(100, 100, true, 0), strategies.Pass()},
		{"error: rollback fails with the amount", strategies.Error(), situation(97, 100, false, 0), rollback(3 * ms)},
		{"wait: used-up tick passes", strategies.Wait(5 * ms), situation(100, 100, true, 0), strategies.Pass()},
		{"wait: small rollback sleeps until caught up", strategies.Wait(5 * ms), situation(97, 100, false, 0), strategies.Sleep(3 * ms)},
		{"wait: exactly the limit", strategies.Wait(5 * ms), situation(95, 100, false, 0), strategies.Sleep(5 * ms)},
		{"wait: beyond the limit passes", strategies.Wait(5 * ms), situation(50, 100, false, 0), strategies.Pass()},
		{"wait: limit counts earlier sleeps", strategies.Wait(5 * ms), situation(97, 100, false, 3*ms), strategies.Pass()},
		{"ring: used-up tick passes", strategies.Ring(), situation(100, 100, true, 0), strategies.Pass()},
		{"ring: rollback reuses up to the newest", strategies.Ring(), situation(97, 100, false, 0), strategies.Issue(97, 100)},
		{"logical: used-up tick borrows ahead", strategies.Logical(time.Second), situation(100, 100, true, 0),
			strategies.Issue(100, 1100).OrSleep(ms)},
		{"logical: rollback counts on from newest", strategies.Logical(time.Second), situation(97, 100, false, 0),
			strategies.Issue(100, 1097).OrSleep(ms)},
		{"logical: rollback of exactly the lead", strategies.Logical(3 * ms), situation(97, 100, false, 0),
			strategies.Issue(100, 100).OrSleep(ms)},
		{"logical: rollback beyond the lead passes", strategies.Logical(2 * ms), situation(97, 100, false, 0), strategies.Pass()},
		{"chain: first non-pass wins", strategies.Chain(strategies.Wait(ms), strategies.Error()), situation(97, 100, false, 0), rollback(3 * ms)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, tc.s.Decide(tc.at), "got %v", tc.s.Decide(tc.at))
		})
	}
}

func TestSituation(t *testing.T) {
	s := strategies.Situation{Elapsed: -1500 * time.Microsecond, Unit: time.Millisecond, Newest: 3}
	assert.Equal(t, int64(-2), s.Now())
	assert.True(t, s.IsBehind())
	assert.Equal(t, 4500*time.Microsecond, s.Behind())
	assert.Equal(t, int64(2), s.Ticks(2999*time.Microsecond))

	s = strategies.Situation{Elapsed: 5400 * time.Microsecond, Unit: time.Millisecond, Newest: 5}
	assert.Equal(t, int64(5), s.Now())
	assert.False(t, s.IsBehind())
	assert.Zero(t, s.Behind())
	assert.Equal(t, 600*time.Microsecond, s.Until(6))

	// A clock read centuries before the epoch (a saturated reading) is
	// behind by the most a Duration holds, not by a wrapped negative amount.
	s = strategies.Situation{Elapsed: math.MinInt64, Unit: time.Millisecond, Newest: 5}
	assert.True(t, s.IsBehind())
	assert.Equal(t, time.Duration(math.MaxInt64), s.Behind())
	s = strategies.Situation{Elapsed: math.MaxInt64, Unit: time.Millisecond}
	assert.Equal(t, time.Duration(math.MinInt64), s.Until(-1))
}

func TestPlans(t *testing.T) {
	assert.True(t, strategies.Sleep(0).IsPass())
	assert.True(t, strategies.Fail(nil).IsPass())
	assert.True(t, strategies.Plan{}.IsPass())
	assert.Equal(t, strategies.Sleep(time.Second), strategies.Sleep(time.Second).OrSleep(time.Millisecond))

	from, limit, ok := strategies.Issue(3, 9).Range()
	assert.True(t, ok)
	assert.Equal(t, [2]int64{3, 9}, [2]int64{from, limit})
	assert.Equal(t, "issue[3..9] or sleep 1ms", strategies.Issue(3, 9).OrSleep(time.Millisecond).String())
	_, _, ok = strategies.Sleep(time.Second).Range()
	assert.False(t, ok)
}

// A rollback error tells the clock's reading and the newest ID's time when
// the situation gives the epoch: a step of decades reads as two instants.
func TestRollbackErrorNamesTheInstants(t *testing.T) {
	epoch := time.Date(2010, 11, 4, 1, 42, 54, 657_000_000, time.UTC)
	newest := time.Date(2070, 1, 1, 0, 0, 0, 0, time.UTC)
	clock := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	s := strategies.Situation{Elapsed: clock.Sub(epoch), Unit: time.Millisecond, Epoch: epoch,
		Newest: int64(newest.Sub(epoch) / time.Millisecond), Last: 1<<41 - 1}
	var re *strategies.RollbackError
	require.ErrorAs(t, s.BehindError(), &re)
	assert.True(t, re.Clock.Equal(clock))
	assert.True(t, re.Newest.Equal(newest))
	assert.Equal(t, newest.Sub(clock), re.Behind)

	s.Epoch = time.Time{}
	require.ErrorAs(t, s.BehindError(), &re)
	assert.True(t, re.Clock.IsZero(), "no epoch, no instants")
}
