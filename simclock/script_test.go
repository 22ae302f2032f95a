package simclock_test

import (
	"errors"
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ringflake/ringflake/simclock"
)

// Event constructors that keep the scenario tables short.
func stepAt(at, d time.Duration) simclock.Event {
	return simclock.Event{At: at, Kind: simclock.Step, D: d}
}

func freezeAt(at, d time.Duration) simclock.Event {
	return simclock.Event{At: at, Kind: simclock.Freeze, D: d}
}

func driftAt(at time.Duration, rate float64) simclock.Event {
	return simclock.Event{At: at, Kind: simclock.Drift, Rate: rate}
}

func jitterAt(at, bound time.Duration, seed uint64) simclock.Event {
	return simclock.Event{At: at, Kind: simclock.Jitter, D: bound, Seed: seed}
}

// check is one point of a scripted scenario: after doing op, the clock reads
// wall (offset from t0) and mono, with pending events left.
type check struct {
	op         op
	wall, mono time.Duration
	pending    int
}

func TestScheduleFiresAtExactlyAt(t *testing.T) {
	ms := time.Millisecond
	tests := []struct {
		name   string
		events []simclock.Event
		checks []check
	}{
		{
			name:   "step fires when elapsed reaches At, not before",
			events: []simclock.Event{stepAt(time.Second, -100*ms)},
			checks: []check{
				{add(999 * ms), 999 * ms, 999 * ms, 1},
				{add(ms), 900 * ms, time.Second, 0},
				{add(ms), 901 * ms, time.Second + ms, 0},
			},
		},
		{
			name:   "step in the middle of one add",
			events: []simclock.Event{stepAt(500*ms, -time.Second)},
			checks: []check{{add(time.Second), 0, time.Second, 0}},
		},
		{
			name:   "drift starting halfway through one add",
			events: []simclock.Event{driftAt(30*time.Minute, -0.005)},
			checks: []check{{add(time.Hour), 3591 * time.Second, time.Hour, 0}},
		},
		{
			name:   "freeze starting and ending inside one add",
			events: []simclock.Event{freezeAt(10*time.Second, 5*time.Second)},
			checks: []check{{add(20 * time.Second), 15 * time.Second, 20 * time.Second, 0}},
		},
		{
			name:   "freeze starting inside one add and ending in the next",
			events: []simclock.Event{freezeAt(10*time.Second, 5*time.Second)},
			checks: []check{
				{add(12 * time.Second), 10 * time.Second, 12 * time.Second, 0},
				{add(8 * time.Second), 15 * time.Second, 20 * time.Second, 0},
			},
		},
		{
			name: "several kinds crossed by one sleep",
			events: []simclock.Event{
				driftAt(time.Second, 0.5),            // 0-1s: +1s
				freezeAt(2*time.Second, time.Second), // 1-2s: +1.5s; 2-3s: frozen
				stepAt(4*time.Second, -time.Second),  // 3-4s: +1.5s, then -1s
				driftAt(5*time.Second, 0),            // 4-5s: +1.5s; 5-6s: +1s
			},
			checks: []check{{sleep(6 * time.Second), 5500 * ms, 6 * time.Second, 0}},
		},
		{
			name:   "events fire through after",
			events: []simclock.Event{stepAt(time.Second, time.Hour)},
			checks: []check{{after(2 * time.Second), time.Hour + 2*time.Second, 2 * time.Second, 0}},
		},
		{
			name:   "events wait while only the wall moves",
			events: []simclock.Event{stepAt(time.Second, -ms)},
			checks: []check{
				{step(time.Hour), time.Hour, 0, 1},
				{set(t0.Add(time.Minute)), time.Minute, 0, 1},
				{freeze(time.Minute), time.Minute, 0, 1},
			},
		},
		{
			name:   "jitter event then jitter off",
			events: []simclock.Event{jitterAt(time.Second, time.Millisecond, 1), jitterAt(2*time.Second, 0, 0)},
			checks: []check{
				{add(time.Second), -1, -1, 1}, // noisy: checked below by not checking
				{add(time.Second), 2 * time.Second, 2 * time.Second, 0},
			},
		},
		{
			name:   "step event at time zero fires before any time passes",
			events: []simclock.Event{stepAt(0, -time.Minute)},
			checks: []check{{add(0), -time.Minute, 0, 0}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := simclock.New(t0)
			require.NoError(t, c.Schedule(tt.events...))
			for i, ch := range tt.checks {
				ch.op(c)
				require.Len(t, c.Pending(), ch.pending, "check %d", i)
				if ch.wall == -1 {
					continue // a jittered reading
				}
				require.Equal(t, ch.wall, c.Now().Sub(t0), "check %d: wall offset from start", i)
				require.Equal(t, ch.mono, c.Monotonic(), "check %d: monotonic reading", i)
			}
		})
	}
}

func TestScheduleEventDueNowFiresAtOnce(t *testing.T) {
	c := simclock.New(t0)
	c.Add(time.Second)
	require.NoError(t, c.Schedule(stepAt(time.Second, -2*time.Second), stepAt(2*time.Second, time.Second)))
	assert.Equal(t, -time.Second, c.Now().Sub(t0), "the event at the current elapsed time fired")
	assert.Equal(t, []simclock.Event{stepAt(2*time.Second, time.Second)}, c.Pending())
	assert.Equal(t, time.Second, c.Monotonic())
}

func TestScheduleOrder(t *testing.T) {
	t.Run("pending lists events in firing order", func(t *testing.T) {
		a := stepAt(time.Second, 1)
		b := stepAt(time.Second, 2)
		cc := stepAt(time.Second, 3)
		d := stepAt(500*time.Millisecond, 4)
		e := stepAt(3*time.Second, 5)
		f := stepAt(2*time.Second, 6)
		c := simclock.New(t0)
		require.NoError(t, c.Schedule(e, a, b))
		require.NoError(t, c.Schedule(cc, d, f))
		assert.Equal(t, []simclock.Event{d, a, b, cc, f, e}, c.Pending())
	})

	t.Run("many events with few distinct At keep their order", func(t *testing.T) {
		// Long enough that an unstable sort would reorder equal At.
		batch := func(sign time.Duration) []simclock.Event {
			var evs []simclock.Event
			for i := range 40 {
				at := time.Duration(1+i%3) * time.Second
				evs = append(evs, stepAt(at, sign*time.Duration(i+1)))
			}
			return evs
		}
		first, second := batch(1), batch(-1)
		c := simclock.New(t0)
		require.NoError(t, c.Schedule(first...))
		require.NoError(t, c.Schedule(second...))
		var want []simclock.Event
		for _, at := range []time.Duration{time.Second, 2 * time.Second, 3 * time.Second} {
			for _, evs := range [][]simclock.Event{first, second} {
				for _, ev := range evs {
					if ev.At == at {
						want = append(want, ev)
					}
				}
			}
		}
		assert.Equal(t, want, c.Pending())
	})

	t.Run("equal At fire in the given order", func(t *testing.T) {
		c := simclock.New(t0)
		require.NoError(t, c.Schedule(driftAt(time.Second, 0.1), driftAt(time.Second, 0.2)))
		c.Add(2 * time.Second)
		assert.Equal(t, 2200*time.Millisecond, c.Now().Sub(t0), "the last drift at 1s is in force")
	})

	t.Run("equal At fire after those scheduled earlier", func(t *testing.T) {
		c := simclock.New(t0)
		require.NoError(t, c.Schedule(driftAt(time.Second, 0.1)))
		require.NoError(t, c.Schedule(driftAt(time.Second, 0.3)))
		c.Add(2 * time.Second)
		assert.Equal(t, 2300*time.Millisecond, c.Now().Sub(t0))
	})

	t.Run("jitter off after jitter on at the same At", func(t *testing.T) {
		c := simclock.New(t0)
		require.NoError(t, c.Schedule(jitterAt(0, time.Second, 1), jitterAt(0, 0, 0)))
		for range 10 {
			require.Equal(t, time.Duration(0), c.Now().Sub(t0))
		}
	})
}

func TestScheduleJitterMatchesSetJitter(t *testing.T) {
	scripted := simclock.New(t0)
	require.NoError(t, scripted.Schedule(jitterAt(time.Second, time.Millisecond, 77)))
	direct := simclock.New(t0)
	direct.Add(time.Second)
	require.NoError(t, direct.SetJitter(time.Millisecond, 77))
	scripted.Add(time.Second)
	for range 50 {
		require.Equal(t, direct.Now().Sub(t0), scripted.Now().Sub(t0))
	}
}

func TestScheduleRejects(t *testing.T) {
	tests := []struct {
		name     string
		elapsed  time.Duration // time passed before Schedule
		events   []simclock.Event
		index    int
		field    string
		sentinel error // a more specific sentinel to match, if any
	}{
		{"At before elapsed", time.Second, []simclock.Event{stepAt(999*time.Millisecond, 1)}, 0, "At", nil},
		{"negative At", 0, []simclock.Event{stepAt(-1, 1)}, 0, "At", nil},
		{"zero Kind", 0, []simclock.Event{{At: time.Second, D: time.Second}}, 0, "Kind", nil},
		{"unknown Kind", 0, []simclock.Event{{At: time.Second, Kind: 99, D: time.Second}}, 0, "Kind", nil},
		{"zero step", 0, []simclock.Event{stepAt(time.Second, 0)}, 0, "D", nil},
		{"zero freeze", 0, []simclock.Event{freezeAt(time.Second, 0)}, 0, "D", nil},
		{"negative freeze", 0, []simclock.Event{freezeAt(time.Second, -time.Second)}, 0, "D", nil},
		{"NaN drift", 0, []simclock.Event{driftAt(time.Second, math.NaN())}, 0, "Rate", simclock.ErrInvalidDrift},
		{"drift of minus one", 0, []simclock.Event{driftAt(time.Second, -1)}, 0, "Rate", simclock.ErrInvalidDrift},
		{"drift above one", 0, []simclock.Event{driftAt(time.Second, 1.5)}, 0, "Rate", simclock.ErrInvalidDrift},
		{"infinite drift", 0, []simclock.Event{driftAt(time.Second, math.Inf(-1))}, 0, "Rate", simclock.ErrInvalidDrift},
		{"negative jitter", 0, []simclock.Event{jitterAt(time.Second, -1, 0)}, 0, "D", simclock.ErrInvalidJitter},
		{"D on a drift", 0, []simclock.Event{{At: time.Second, Kind: simclock.Drift, Rate: 0.1, D: 1}}, 0, "D", nil},
		{"Rate on a step", 0, []simclock.Event{{At: time.Second, Kind: simclock.Step, D: 1, Rate: 0.1}}, 0, "Rate", nil},
		{"Seed on a freeze", 0, []simclock.Event{{At: time.Second, Kind: simclock.Freeze, D: 1, Seed: 3}}, 0, "Seed", nil},
		{
			"second event bad",
			0,
			[]simclock.Event{stepAt(0, time.Hour), stepAt(time.Second, time.Hour), freezeAt(time.Second, 0), stepAt(-1, 0)},
			2, "D", nil,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := simclock.New(t0)
			c.Add(tt.elapsed)
			err := c.Schedule(tt.events...)
			require.ErrorIs(t, err, simclock.ErrInvalidEvent)
			var ee *simclock.EventError
			require.ErrorAs(t, err, &ee)
			assert.Equal(t, tt.index, ee.Index)
			assert.Equal(t, tt.field, ee.Field)
			assert.Equal(t, tt.events[tt.index].At, ee.Event.At)
			if tt.sentinel != nil {
				assert.ErrorIs(t, err, tt.sentinel)
			} else {
				assert.False(t, errors.Is(err, simclock.ErrInvalidDrift) || errors.Is(err, simclock.ErrInvalidJitter),
					"error matches a sentinel for another fault")
			}
			assert.Empty(t, c.Pending(), "nothing scheduled")
			assert.Equal(t, tt.elapsed, c.Now().Sub(t0), "nothing fired")
		})
	}
}

func TestScheduleNothing(t *testing.T) {
	c := simclock.New(t0)
	require.NoError(t, c.Schedule())
	assert.Empty(t, c.Pending())
}

func TestPendingIsACopy(t *testing.T) {
	c := simclock.New(t0)
	require.NoError(t, c.Schedule(stepAt(time.Second, -time.Second)))
	p := c.Pending()
	p[0].D = time.Hour
	c.Add(time.Second)
	assert.Equal(t, time.Duration(0), c.Now().Sub(t0))
}

func TestKindString(t *testing.T) {
	tests := []struct {
		kind simclock.Kind
		want string
	}{
		{simclock.Step, "step"},
		{simclock.Freeze, "freeze"},
		{simclock.Drift, "drift"},
		{simclock.Jitter, "jitter"},
		{0, "Kind(0)"},
		{-3, "Kind(-3)"},
	}
	for _, tt := range tests {
		t.Run(tt.want, func(t *testing.T) {
			assert.Equal(t, tt.want, tt.kind.String())
		})
	}
}

func TestEventString(t *testing.T) {
	tests := []struct {
		ev   simclock.Event
		want string
	}{
		{stepAt(1500*time.Millisecond, -20*time.Millisecond), "at 1.5s: step -20ms"},
		{freezeAt(0, time.Second), "at 0s: freeze 1s"},
		{driftAt(2*time.Second, -0.005), "at 2s: drift -0.005"},
		{jitterAt(time.Minute, time.Millisecond, 7), "at 1m0s: jitter 1ms seed 7"},
		{simclock.Event{At: time.Second, Kind: 9, D: 2}, "at 1s: Kind(9) 2ns"},
	}
	for _, tt := range tests {
		t.Run(tt.want, func(t *testing.T) {
			assert.Equal(t, tt.want, tt.ev.String())
		})
	}
}

// decodeScript turns fuzz bytes into a script of five-byte events (which
// may be invalid) and the sizes of the pieces in which to advance.
func decodeScript(data []byte) ([]simclock.Event, []time.Duration) {
	var events []simclock.Event
	at := time.Duration(0)
	for len(data) >= 5 && len(events) < 32 {
		b := data[:5]
		data = data[5:]
		if b[0] == 0 {
			break // end of the script; the rest are advance sizes
		}
		at += time.Duration(b[0]-1) * 7 * time.Millisecond
		ev := simclock.Event{At: at, Kind: simclock.Kind(b[1] % 5)}
		switch ev.Kind {
		case simclock.Step:
			ev.D = time.Duration(int8(b[2]))*time.Millisecond + time.Duration(int8(b[3]))
		case simclock.Freeze:
			ev.D = time.Duration(int8(b[2])) * time.Millisecond
		case simclock.Drift:
			ev.Rate = float64(int8(b[3])) / 100 // invalid at <= -1 or > 1
		case simclock.Jitter:
			ev.D = time.Duration(int8(b[2])) * time.Microsecond
			ev.Seed = uint64(b[4])
		}
		events = append(events, ev)
	}
	var pieces []time.Duration
	for _, b := range data {
		if len(pieces) == 256 {
			break
		}
		pieces = append(pieces, time.Duration(b)*3*time.Millisecond+time.Duration(b))
	}
	return events, pieces
}

// FuzzScriptPieces checks that a script gives the same readings however
// the time that passes is cut into pieces, and that Schedule either accepts
// a script or rejects it with an EventError and schedules nothing.
func FuzzScriptPieces(f *testing.F) {
	f.Add([]byte{1, 1, 0x80, 0, 0, 0, 7, 200, 13})
	f.Add([]byte{2, 3, 0, 0xfb, 0, 3, 2, 100, 0, 0, 1, 4, 50, 0, 9, 0, 1, 2, 3, 250, 251})
	f.Add([]byte{1, 1, 0, 0, 0, 1, 2, 5, 0, 0, 50, 3, 0, 10, 0, 0, 5, 5, 5, 5})
	f.Add([]byte{10, 3, 0, 200, 0, 0, 1})
	f.Fuzz(func(t *testing.T, data []byte) {
		events, pieces := decodeScript(data)
		var total time.Duration
		for _, p := range pieces {
			total += p
		}

		whole := simclock.New(t0)
		err := whole.Schedule(events...)
		if err != nil {
			require.ErrorIs(t, err, simclock.ErrInvalidEvent)
			var ee *simclock.EventError
			require.ErrorAs(t, err, &ee)
			require.Less(t, ee.Index, len(events))
			require.Empty(t, whole.Pending())
			return
		}
		cut := simclock.New(t0)
		require.NoError(t, cut.Schedule(events...))
		// Turn jitter off once all the time has passed, so that the final
		// readings are exact although After draws noise and Add does not.
		off := jitterAt(total, 0, 0)
		require.NoError(t, whole.Schedule(off))
		require.NoError(t, cut.Schedule(off))

		whole.Add(total)
		for i, p := range pieces {
			switch i % 3 {
			case 0:
				cut.Add(p)
			case 1:
				cut.Sleep(p)
			default:
				cut.After(p)
			}
		}
		require.Equal(t, total, whole.Monotonic())
		require.Equal(t, total, cut.Monotonic())
		require.Equal(t, whole.Pending(), cut.Pending())
		require.Equal(t, whole.Now().Sub(t0), cut.Now().Sub(t0))
	})
}
