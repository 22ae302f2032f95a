package lease_test

import (
	"context"
	"errors"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/benbjohnson/clock"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ringflake/ringflake"
	"github.com/ringflake/ringflake/lease"
	"github.com/ringflake/ringflake/simclock"
)

// clocked are the rules of a module whose server has a clock to read.
var clocked = lease.Rules{Package: "clockedlease", TTLUnit: time.Millisecond, ServerClock: true}

func TestOffsetBeyond(t *testing.T) {
	const max = time.Second
	for _, tc := range []struct {
		name        string
		offset, unc time.Duration
		beyond      bool
	}{
		{"within", 10 * time.Millisecond, time.Millisecond, false},
		{"at the maximum", time.Second, 0, false},
		{"just past, exactly known", time.Second + 1, 0, true},
		{"behind by 5s", 5 * time.Second, time.Millisecond, true},
		{"ahead by 5s", -5 * time.Second, time.Millisecond, true},
		{"past, but the uncertainty covers the maximum", 1500 * time.Millisecond, 500 * time.Millisecond, false},
		{"past, ahead, the uncertainty covers the maximum", -1500 * time.Millisecond, 600 * time.Millisecond, false},
		{"past by more than the uncertainty", 1500 * time.Millisecond, 499 * time.Millisecond, true},
		{"the most negative Duration", time.Duration(-1 << 63), time.Second, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := lease.Offset{Offset: tc.offset, Uncertainty: tc.unc, At: start}
			assert.Equal(t, tc.beyond, o.Beyond(max))
		})
	}
	assert.True(t, lease.Offset{}.IsZero())
	assert.False(t, lease.Offset{At: start}.IsZero())
}

// sample is one scripted round trip of a fakeServer: how long it takes,
// and when, as a fraction of it, the server reads its clock.
type sample struct {
	rtt    time.Duration
	readAt float64
}

// fakeServer is a server whose clock is true time + offset, read during
// round trips that the test scripts on a simulated host clock: each read
// lets rtt pass on the clock, the server reading at readAt of it. Its
// readings are truncated to resolution.
func fakeServer(host *simclock.Clock, offset, resolution time.Duration, samples []sample, during func(i int)) lease.ReadServerClock {
	i := 0
	return func(ctx context.Context) (time.Time, error) {
		s := samples[i%len(samples)]
		first := time.Duration(float64(s.rtt) * s.readAt)
		host.Add(first)
		// The host's wall clock is true time here: no step happened yet.
		server := host.Wall().Add(offset)
		if during != nil {
			during(i)
		}
		host.Add(s.rtt - first)
		i++
		if resolution > 0 {
			server = server.Truncate(resolution)
		}
		return server, nil
	}
}

// TestMeasureOffsetKeepsTheShortestRoundTrip: of several samples, the one
// with the shortest round trip is kept, and its offset is within its
// uncertainty of the true one wherever in the round trip the server read
// its clock.
func TestMeasureOffsetKeepsTheShortestRoundTrip(t *testing.T) {
	host := simclock.New(start)
	samples := []sample{{10 * time.Millisecond, 0.5}, {2 * time.Millisecond, 0.05}, {6 * time.Millisecond, 0.9}}
	o, err := lease.MeasureOffset(context.Background(), host, 3, 0, fakeServer(host, 3*time.Second, 0, samples, nil))
	require.NoError(t, err)
	assert.Equal(t, 2*time.Millisecond, o.RoundTrip)
	assert.Equal(t, time.Millisecond, o.Uncertainty, "half the round trip")
	assert.Equal(t, 3*time.Second-900*time.Microsecond, o.Offset, "read at 5% of the round trip: 0.9ms below the midpoint")
	assert.Equal(t, start.Add(10*time.Millisecond+time.Millisecond), o.At, "the middle of the kept sample")
	assert.Equal(t, 3, o.Samples)
}

// TestMeasureOffsetBoundsTheTrueOffset is a property: whatever the round
// trips, wherever in them the server reads its clock, and whatever the
// server's resolution, the true offset lies within the measurement's
// uncertainty.
func TestMeasureOffsetBoundsTheTrueOffset(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for range 2000 {
		host := simclock.New(start.Add(time.Duration(rng.Int64N(int64(time.Hour)))))
		offset := time.Duration(rng.Int64N(int64(20*time.Second))) - 10*time.Second
		resolution := []time.Duration{0, time.Nanosecond, time.Microsecond, time.Millisecond}[rng.IntN(4)]
		samples := make([]sample, 1+rng.IntN(5))
		for i := range samples {
			samples[i] = sample{time.Duration(rng.Int64N(int64(50 * time.Millisecond))), rng.Float64()}
		}
		o, err := lease.MeasureOffset(context.Background(), host, len(samples), resolution, fakeServer(host, offset, resolution, samples, nil))
		require.NoError(t, err)
		require.LessOrEqual(t, (o.Offset - offset).Abs(), o.Uncertainty,
			"offset %v, measured %v, resolution %v, samples %v", offset, o, resolution, samples)
		require.GreaterOrEqual(t, o.Uncertainty, o.RoundTrip/2)
	}
}

// TestMeasureOffsetTimesRoundTripsOnTheMonotonicClock: a wall clock that
// steps back by a second during a sample does not make its round trip
// negative: the round trip is timed on the monotonic clock.
func TestMeasureOffsetTimesRoundTripsOnTheMonotonicClock(t *testing.T) {
	host := simclock.New(start)
	samples := []sample{{4 * time.Millisecond, 0.5}}
	step := func(int) { host.Step(-time.Second) }
	o, err := lease.MeasureOffset(context.Background(), host, 1, 0, fakeServer(host, 0, 0, samples, step))
	require.NoError(t, err)
	assert.Equal(t, 4*time.Millisecond, o.RoundTrip)
	assert.Equal(t, time.Duration(0), o.Offset, "measured against the wall clock read at the send")
}

// pausingClock is a simulated clock whose caller is paused right after
// each wall reading, as a goroutine can be on a loaded machine.
type pausingClock struct {
	*simclock.Clock
	pause time.Duration
}

func (c pausingClock) Now() time.Time {
	t := c.Clock.Now()
	c.Clock.Add(c.pause)
	return t
}

// TestMeasureOffsetSurvivesAPauseAfterTheWallReading: a pause between the
// wall reading of the send and the request lengthens the round trip
// instead of moving the server's reading out of it. (Timing the round
// trip from a monotonic reading taken after the wall reading once put
// 1 in 2,000 measurements on a loaded machine outside their uncertainty.)
func TestMeasureOffsetSurvivesAPauseAfterTheWallReading(t *testing.T) {
	host := simclock.New(start)
	clk := pausingClock{host, 5 * time.Millisecond}
	samples := []sample{{100 * time.Microsecond, 0.5}}
	o, err := lease.MeasureOffset(context.Background(), clk, 1, 0, fakeServer(host, 0, 0, samples, nil))
	require.NoError(t, err)
	assert.Equal(t, 5*time.Millisecond+100*time.Microsecond, o.RoundTrip, "the pause is in the round trip")
	requireWithin(t, 0, o)
}

// requireWithin fails unless the measurement o bounds the true offset.
func requireWithin(t *testing.T, offset time.Duration, o lease.Offset) {
	t.Helper()
	require.LessOrEqual(t, (o.Offset - offset).Abs(), o.Uncertainty, "offset %v, measured %v", offset, o)
}

// TestMeasureOffsetOnClocksWithoutMonotonic: a clock with only Now (a
// *clock.Mock, frozen here) gets its round trips timed on the system's
// monotonic clock, which never runs backwards.
func TestMeasureOffsetOnClocksWithoutMonotonic(t *testing.T) {
	mock := clock.NewMock()
	mock.Set(start)
	read := func(context.Context) (time.Time, error) { return start.Add(time.Second), nil }
	o, err := lease.MeasureOffset(context.Background(), mock, 0, time.Microsecond, read)
	require.NoError(t, err)
	assert.GreaterOrEqual(t, o.RoundTrip, time.Duration(0))
	assert.Equal(t, lease.DefaultSamples, o.Samples, "0 samples: the default")
	assert.LessOrEqual(t, (o.Offset - time.Second).Abs(), o.Uncertainty)
}

func TestMeasureOffsetErrors(t *testing.T) {
	ctx := context.Background()
	read := func(context.Context) (time.Time, error) { return start, nil }
	for _, tc := range []struct {
		name       string
		samples    int
		resolution time.Duration
		read       lease.ReadServerClock
	}{
		{"negative samples", -1, 0, read},
		{"too many samples", lease.MaxSamples + 1, 0, read},
		{"negative resolution", 1, -time.Microsecond, read},
		{"no reader", 1, 0, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := lease.MeasureOffset(ctx, nil, tc.samples, tc.resolution, tc.read)
			require.ErrorIs(t, err, ringflake.ErrInvalidOption)
			var oe *lease.OptionError
			require.ErrorAs(t, err, &oe)
		})
	}

	boom := errors.New("boom")
	_, err := lease.MeasureOffset(ctx, nil, 3, 0, func(context.Context) (time.Time, error) { return time.Time{}, boom })
	require.ErrorIs(t, err, boom)

	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	_, err = lease.MeasureOffset(cancelled, nil, 3, 0, read)
	require.ErrorIs(t, err, context.Canceled)
}

// TestSkewError: the error of a refused acquire matches ErrClockSkew, and
// carries the measurement on one line.
func TestSkewError(t *testing.T) {
	o := lease.Offset{Offset: -5 * time.Second, Uncertainty: 150 * time.Microsecond, RoundTrip: 300 * time.Microsecond, At: start}
	err := error(&lease.SkewError{Package: "clockedlease", Offset: o, Max: time.Second})
	require.ErrorIs(t, err, lease.ErrClockSkew)
	require.NotErrorIs(t, err, ringflake.ErrInvalidOption)
	var se *lease.SkewError
	require.ErrorAs(t, err, &se)
	assert.Equal(t, o, se.Offset)
	assert.NotContains(t, err.Error(), "\n", "one line")
	t.Log(err)
}

// TestResolveMaxSkew: MaxSkew defaults to 1s for a module with a server
// clock; negative turns the check off; a module without a server clock
// turns it off and refuses a positive MaxSkew.
func TestResolveMaxSkew(t *testing.T) {
	for _, tc := range []struct {
		name  string
		rules lease.Rules
		set   time.Duration
		want  time.Duration // -1: off
	}{
		{"default", clocked, 0, lease.DefaultMaxSkew},
		{"set", clocked, 50 * time.Millisecond, 50 * time.Millisecond},
		{"off", clocked, -1, -1},
		{"any negative is off", clocked, -time.Hour, -1},
		{"no server clock", rules, 0, -1},
		{"no server clock, off", rules, -1, -1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := lease.Options{MaxSkew: tc.set}.Resolve(tc.rules)
			require.NoError(t, err)
			assert.Equal(t, tc.want, c.MaxSkew)
			assert.Equal(t, tc.want >= 0, c.MeasuresSkew())
		})
	}
	_, err := lease.Options{MaxSkew: time.Second}.Resolve(rules)
	require.ErrorIs(t, err, ringflake.ErrInvalidOption, "a positive MaxSkew for a server without a clock")
}

// skewKept is a Keeper of a module with a server clock whose renewals
// measure the offsets the test queues.
type skewKept struct {
	clk     *clock.Mock
	offsets chan lease.Offset
	events  chan lease.Event
}

func keepMeasuring(t *testing.T, maxSkew time.Duration) *skewKept {
	t.Helper()
	k := &skewKept{clk: clock.NewMock(), offsets: make(chan lease.Offset, 8), events: make(chan lease.Event, 8)}
	k.clk.Set(start)
	c, err := lease.Options{TTL: ttl, Clock: k.clk, MaxSkew: maxSkew, OnEvent: func(e lease.Event) { k.events <- e }}.Resolve(clocked)
	require.NoError(t, err)
	renew := func(ctx context.Context, at time.Time) lease.Renewal {
		select {
		case o := <-k.offsets:
			return lease.Renewal{Kind: lease.Renewed, Sent: at, TTL: ttl, Offset: o}
		case <-ctx.Done():
			return lease.Renewal{Kind: lease.RenewFailed, Err: ctx.Err()}
		}
	}
	_, stop := lease.Keep(c, 7, time.Time{}, start.Add(ttl-margin), renew)
	t.Cleanup(func() {
		go func() {
			for range k.events {
			}
		}()
		stop(errors.New("test over"))
	})
	return k
}

// renew queues the offset the next renewal measures, lets the renewal
// happen and returns the events that follow, up to its Renewed.
func (k *skewKept) renew(t *testing.T, o lease.Offset) []lease.Event {
	t.Helper()
	k.offsets <- o
	k.clk.Add(every)
	var got []lease.Event
	for {
		select {
		case e := <-k.events:
			got = append(got, e)
			if e.Kind == lease.Renewed {
				return got
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("no Renewed event within 10s; got %+v", got)
		}
	}
}

// TestKeeperReportsASkewedClock: a renewal that measures the clock beyond
// MaxSkew reports ClockSkewed, with the measurement and a SkewError, just
// before its Renewed event; the lease is renewed all the same. A renewal
// within MaxSkew reports only Renewed, with its measurement. A Recorder
// counts them and says whether the latest measurement was beyond.
func TestKeeperReportsASkewedClock(t *testing.T) {
	k := keepMeasuring(t, 0)
	var rec lease.Recorder
	within := lease.Offset{Offset: 3 * time.Millisecond, Uncertainty: 100 * time.Microsecond, At: start.Add(every), Samples: 5}
	evs := k.renew(t, within)
	require.Len(t, evs, 1)
	assert.Equal(t, within, evs[0].Offset)
	rec.Record(evs[0])
	assert.False(t, rec.Stats().Skewed)

	beyond := lease.Offset{Offset: -2 * time.Second, Uncertainty: 100 * time.Microsecond, At: start.Add(2 * every), Samples: 5}
	evs = k.renew(t, beyond)
	require.Len(t, evs, 2)
	skewed, renewed := evs[0], evs[1]
	require.Equal(t, lease.ClockSkewed, skewed.Kind)
	assert.Equal(t, beyond, skewed.Offset)
	require.ErrorIs(t, skewed.Err, lease.ErrClockSkew)
	var se *lease.SkewError
	require.ErrorAs(t, skewed.Err, &se)
	assert.Equal(t, lease.SkewError{Package: "clockedlease", Offset: beyond, Max: lease.DefaultMaxSkew}, *se)
	assert.Equal(t, beyond, renewed.Offset)
	assert.Equal(t, start.Add(2*every+ttl-margin), renewed.ValidUntil, "renewed all the same")
	for _, e := range evs {
		rec.Record(e)
		assert.True(t, rec.Stats().Skewed, "skewed from its ClockSkewed event on, through its renewal's event")
	}
	s := rec.Stats()
	assert.Equal(t, lease.EventStats{Renewed: 2, ClockSkewed: 1, Offset: beyond, Skewed: true}, s)

	back := lease.Offset{Offset: 20 * time.Millisecond, Uncertainty: 100 * time.Microsecond, At: start.Add(3 * every), Samples: 5}
	evs = k.renew(t, back)
	require.Len(t, evs, 1, "within MaxSkew again: no ClockSkewed")
	rec.Record(evs[0])
	assert.False(t, rec.Stats().Skewed)
	assert.Equal(t, back, rec.Stats().Offset)

	unmeasured := k.renew(t, lease.Offset{})
	require.Len(t, unmeasured, 1)
	rec.Record(unmeasured[0])
	assert.Equal(t, back, rec.Stats().Offset, "a renewal that measured nothing keeps the latest offset")
}

// TestKeeperWithTheSkewCheckOff: with a negative MaxSkew, no offset is
// beyond it.
func TestKeeperWithTheSkewCheckOff(t *testing.T) {
	k := keepMeasuring(t, -1)
	evs := k.renew(t, lease.Offset{Offset: time.Hour, At: start.Add(every)})
	require.Len(t, evs, 1)
	assert.Equal(t, lease.Renewed, evs[0].Kind)
}

// TestRecorderCounts: every kind is counted.
func TestRecorderCounts(t *testing.T) {
	var rec lease.Recorder
	for _, k := range []lease.EventKind{lease.Renewed, lease.RenewFailed, lease.RenewFailed, lease.Expired,
		lease.Retaken, lease.Lost, lease.ClockSkewed, 0} {
		rec.Record(lease.Event{Kind: k})
	}
	assert.Equal(t, lease.EventStats{Renewed: 1, RenewFailed: 2, Expired: 1, Retaken: 1, Lost: 1, ClockSkewed: 1}, rec.Stats())
}

// FuzzMeasureOffset: for any true offset, round trips, instants at which
// the server reads its clock, server resolution and pause after the
// host's wall reading, the measurement bounds the true offset, keeps the
// shortest round trip, and its uncertainty covers half of it.
func FuzzMeasureOffset(f *testing.F) {
	f.Add(int64(0), uint32(100_000), uint32(2_000_000), uint16(0), uint16(65535), uint8(2), uint32(0))
	f.Add(int64(-5e9), uint32(1), uint32(0), uint16(32768), uint16(1), uint8(3), uint32(5_000_000))
	f.Add(int64(1<<62), uint32(1<<31), uint32(7), uint16(100), uint16(200), uint8(1), uint32(1))
	f.Fuzz(func(t *testing.T, offset int64, rtt1, rtt2 uint32, at1, at2 uint16, res uint8, pause uint32) {
		resolution := []time.Duration{0, time.Nanosecond, time.Microsecond, time.Millisecond}[res%4]
		samples := []sample{
			{time.Duration(rtt1), float64(at1) / 65535},
			{time.Duration(rtt2), float64(at2) / 65535},
		}
		host := simclock.New(start)
		clk := pausingClock{host, time.Duration(pause)}
		o, err := lease.MeasureOffset(context.Background(), clk, len(samples), resolution,
			fakeServer(host, time.Duration(offset), resolution, samples, nil))
		require.NoError(t, err)
		requireWithin(t, time.Duration(offset), o)
		assert.Equal(t, time.Duration(pause)+min(time.Duration(rtt1), time.Duration(rtt2)), o.RoundTrip)
		assert.GreaterOrEqual(t, o.Uncertainty, o.RoundTrip/2)
		assert.Equal(t, 2, o.Samples)
	})
}
