//go:build go1.27

package bench_test

import (
	"encoding/binary"
	"slices"
	"testing"
	"testing/synctest"
	"time"
	"uuid"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ringflake/ringflake"
	"github.com/ringflake/ringflake/simclock"
)

// stdlibPeers: Go 1.27's uuid.NewV7, the zero-dependency default, beside
// the other peers of BenchmarkSeq and BenchmarkPar.
var stdlibPeers = []stdlibPeer{{
	name: "stdlib-uuidv7",
	seq: func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			_ = uuid.NewV7()
		}
	},
	par: func(b *testing.B) {
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				_ = uuid.NewV7()
			}
		})
	},
}}

// v7Time returns the time a version 7 UUID of the standard library
// carries: Unix milliseconds (48 bits) and the fraction of a millisecond,
// in 1/4096 ms, that it keeps in rand_a (12 bits).
func v7Time(u uuid.UUID) (ms, frac int64) {
	hi := binary.BigEndian.Uint64(u[:8])
	return int64(hi >> 16), int64(hi & 0x0fff)
}

// bubbleStart is where every testing/synctest bubble's clock starts.
var bubbleStart = time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)

// newV7At returns uuid.NewV7s made in a new testing/synctest bubble whose
// clock reads bubbleStart plus each of at in turn.
func newV7At(t *testing.T, at ...time.Duration) []uuid.UUID {
	t.Helper()
	var us []uuid.UUID
	synctest.Test(t, func(t *testing.T) {
		for _, d := range at {
			time.Sleep(time.Until(bubbleStart.Add(d)))
			us = append(us, uuid.NewV7())
		}
	})
	return us
}

// TestStdlibUUIDv7StepBack replays steps back of the clock uuid.NewV7
// reads, time.Now, without touching the host's clock. Every
// testing/synctest bubble starts its clock at 2000-01-01, so a new bubble
// steps time.Now back by exactly as far as the previous bubble moved it
// on; NewV7 keeps its state (the last timestamp and its second) in
// package variables that every bubble shares, so it meets the steps as
// it would meet the host's clock stepping back. The test asserts what it
// does, from the UUIDs it returns:
//
//   - a step back within the second of its last UUID (1.500 s to 1.200 s):
//     it counts on from its last timestamp by 1/4096 ms, so its UUIDs
//     still increase and carry a time 300 ms ahead of the clock;
//   - a step back into an earlier second (to 0.900 s): it forgets what
//     it issued; the next UUID sorts below the earlier ones and carries
//     the clock's time;
//   - when the clock comes back to 1.500 s it issues the very 60-bit time
//     (48 bits of ms, 12 of fraction) of a UUID it had issued: from then
//     on only the 62 random bits keep two UUIDs apart — unique with
//     probability, not by construction, and not counted anywhere.
//
// The same timeline through a ringflake generator (on simclock, 26 years
// later: the Twitter epoch is 2010) counts both steps as rollbacks and
// issues unique IDs by construction.
func TestStdlibUUIDv7StepBack(t *testing.T) {
	const ms = time.Millisecond
	msAt := func(d time.Duration) int64 { return bubbleStart.Add(d).UnixMilli() }

	// From the host's clock (2026 or later) into a bubble: 26 years back,
	// into an earlier second, so NewV7 starts afresh whatever this
	// process issued before.
	host := uuid.NewV7()
	first := newV7At(t, 1500*ms)[0]
	assert.Equal(t, -1, first.Compare(host), "26 years back: below the host's UUID")
	at, frac := v7Time(first)
	require.Equal(t, msAt(1500*ms), at)
	require.Zero(t, frac)

	second := newV7At(t, 1200*ms)[0]
	assert.Equal(t, 1, second.Compare(first), "300 ms back within the second: still increasing")
	at, frac = v7Time(second)
	assert.Equal(t, msAt(1500*ms), at, "its time is its last, 300 ms ahead of the clock")
	assert.Equal(t, int64(1), frac)

	us := newV7At(t, 900*ms, 1500*ms)
	third, fourth := us[0], us[1]
	assert.Equal(t, -1, third.Compare(first), "600 ms back into an earlier second: below the UUIDs before")
	at, _ = v7Time(third)
	assert.Equal(t, msAt(900*ms), at, "the clock's time")
	at, frac = v7Time(fourth)
	assert.Equal(t, msAt(1500*ms), at)
	assert.Zero(t, frac)
	assert.Equal(t, first[:8], fourth[:8], "the same 60-bit time, version and fraction as the first UUID")
	assert.NotEqual(t, first, fourth, "only the random bits differ")

	t.Run("ringflake", func(t *testing.T) {
		start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
		clk := simclock.New(start.Add(1500 * ms))
		g, err := ringflake.New(1, ringflake.WithClock(clk))
		require.NoError(t, err)
		var ids []ringflake.ID
		for _, d := range []time.Duration{1500 * ms, 1200 * ms, 900 * ms, 1500 * ms} {
			clk.Add(ms) // a little true time between the calls, as between the bubbles
			clk.Set(start.Add(d))
			id, err := g.Next()
			require.NoError(t, err)
			ids = append(ids, id)
		}
		assert.Equal(t, uint64(2), g.Stats().Rollbacks, "both steps back are seen")
		slices.Sort(ids)
		assert.Len(t, slices.Compact(ids), 4, "unique by construction")
	})
}
