package ringflake_test

import (
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ringflake/ringflake"
	"github.com/ringflake/ringflake/layoutplan"
	"github.com/ringflake/ringflake/simclock"
)

func TestPresetLayouts(t *testing.T) {
	for _, tc := range []struct {
		name     string
		layout   ringflake.Layout
		last     string
		maxNode  int64
		maxSeq   int64
		capacity float64
		width    int
	}{
		{"twitter", ringflake.TwitterLayout(), "2080-07-10T17:30:30.208Z", 1023, 4095, 4_096_000, 63},
		{"sonyflake", ringflake.SonyflakeLayout(), "2188-11-16T03:28:58.87Z", 65535, 255, 25_600, 63},
		{"sonyflake-v2", ringflake.SonyflakeV2Layout(), "2199-03-19T03:28:58.87Z", 65535, 255, 25_600, 63},
		{"discord", ringflake.DiscordLayout(), "2084-09-06T15:47:35.551Z", 1023, 4095, 4_096_000, 63},
		{"js-safe", ringflake.JSSafeLayout(), "2112-02-09T13:44:29.43Z", 127, 255, 25_600, 53},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l := tc.layout
			assert.Equal(t, tc.name, l.String())
			assert.Equal(t, tc.last, l.Last().UTC().Format(time.RFC3339Nano))
			assert.Equal(t, tc.maxNode, l.MaxNode())
			assert.Equal(t, tc.maxSeq, l.MaxSequence())
			assert.InDelta(t, tc.capacity, layoutplan.Capacity(l), 1e-6)
			assert.Equal(t, tc.width, l.Spec().Width)

			parsed, err := ringflake.ParseLayout(tc.name)
			require.NoError(t, err)
			assert.Equal(t, l, parsed)

			// The greatest ID of the layout stays within its width.
			id, err := l.Compose(l.Last(), l.MaxNode(), l.MaxSequence())
			require.NoError(t, err)
			assert.Equal(t, int64(1)<<tc.width-1, int64(id))
		})
	}
	var names []string
	for _, l := range ringflake.Presets() {
		names = append(names, l.String())
	}
	assert.Equal(t, []string{"twitter", "sonyflake", "sonyflake-v2", "discord", "js-safe"}, names)
}

func TestTwitterLayoutMatchesTwitterFormula(t *testing.T) {
	l := ringflake.TwitterLayout()
	node, err := l.NodeID(3, 17)
	require.NoError(t, err)
	at := time.UnixMilli(1288834974657 + 123456789)
	id, err := l.Compose(at, node, 42)
	require.NoError(t, err)
	assert.Equal(t, int64(123456789)<<22|3<<17|17<<12|42, int64(id))

	p, err := l.Decompose(id)
	require.NoError(t, err)
	assert.Equal(t, ringflake.Parts{Time: at.UTC(), Tick: 123456789, Node: 3<<5 | 17,
		Datacenter: 3, Worker: 17, Sequence: 42}, p)
	assert.True(t, id.Time(l).Equal(at))
	assert.Equal(t, node, id.Node(l))
	assert.Equal(t, int64(42), id.Sequence(l))
}

func TestNewLayoutRejects(t *testing.T) {
	valid := ringflake.LayoutSpec{Epoch: time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC), Unit: time.Millisecond,
		TimeBits: 41, WorkerBits: 10, SequenceBits: 12}
	_, err := ringflake.NewLayout(valid)
	require.NoError(t, err)

	for _, tc := range []struct {
		name  string
		edit  func(*ringflake.LayoutSpec)
		field string
	}{
		{"no epoch", func(s *ringflake.LayoutSpec) { s.Epoch = time.Time{} }, "Epoch"},
		{"epoch before 1970", func(s *ringflake.LayoutSpec) { s.Epoch = time.Date(1969, 12, 31, 0, 0, 0, 0, time.UTC) }, "Epoch"},
		{"zero unit", func(s *ringflake.LayoutSpec) { s.Unit = 0 }, "Unit"},
		{"sub-millisecond unit", func(s *ringflake.LayoutSpec) { s.Unit = 500 * time.Microsecond }, "Unit"},
		{"fractional milliseconds", func(s *ringflake.LayoutSpec) { s.Unit = 1500 * time.Microsecond }, "Unit"},
		{"negative unit", func(s *ringflake.LayoutSpec) { s.Unit = -time.Millisecond }, "Unit"},
		{"bits sum to 62", func(s *ringflake.LayoutSpec) { s.SequenceBits = 11 }, "bits"},
		{"bits sum to 64", func(s *ringflake.LayoutSpec) { s.SequenceBits = 13 }, "bits"},
		{"no time bits", func(s *ringflake.LayoutSpec) { s.TimeBits, s.SequenceBits = 0, 53 }, "TimeBits"},
		{"negative worker bits", func(s *ringflake.LayoutSpec) { s.WorkerBits, s.SequenceBits = -1, 23 }, "WorkerBits"},
		{"negative datacenter bits", func(s *ringflake.LayoutSpec) { s.DatacenterBits, s.SequenceBits = -2, 14 }, "DatacenterBits"},
		{"width above 63", func(s *ringflake.LayoutSpec) { s.Width = 64 }, "Width"},
		{"negative width", func(s *ringflake.LayoutSpec) { s.Width = -1 }, "Width"},
		{"lifetime beyond time.Duration", func(s *ringflake.LayoutSpec) { s.Unit = time.Second; s.TimeBits, s.WorkerBits = 45, 6 }, "TimeBits"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			spec := valid
			tc.edit(&spec)
			_, err := ringflake.NewLayout(spec)
			require.ErrorIs(t, err, ringflake.ErrInvalidLayout)
			var le *ringflake.LayoutError
			require.ErrorAs(t, err, &le)
			assert.Equal(t, tc.field, le.Field)
		})
	}
}

func TestParseLayout(t *testing.T) {
	l, err := ringflake.ParseLayout("sonyflake,epoch=2024-01-01T00:00:00Z")
	require.NoError(t, err)
	assert.True(t, l.Spec().Epoch.Equal(time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)))
	assert.Equal(t, 10*time.Millisecond, l.Spec().Unit)
	assert.Equal(t, int64(255), l.MaxSequence())

	wide, err := ringflake.ParseLayout("epoch=2020-01-01T00:00:00Z, time=41, node=0, seq=22")
	require.NoError(t, err)
	assert.Equal(t, int64(0), wide.MaxNode())
	assert.Equal(t, int64(1)<<22-1, wide.MaxSequence())

	// Custom layouts print in a form ParseLayout reads back.
	for _, l := range []ringflake.Layout{l, wide} {
		back, err := ringflake.ParseLayout(l.String())
		require.NoError(t, err, l.String())
		assert.True(t, l.Equal(back), "%s != %s", l, back)
	}

	for _, tc := range []struct{ in, field string }{
		{"", "preset"},
		{"tweeter", "preset"},
		{"twitter,seq", "seq"},
		{"twitter,seq=x", "seq"},
		{"twitter,colour=red", "colour"},
		{"twitter,epoch=yesterday", "epoch"},
		{"twitter,unit=fast", "unit"},
		{"twitter,seq=13", "bits"},
		{"twitter,unit=1500us", "Unit"},
		{"js-safe,width=54", "bits"},
	} {
		t.Run(tc.in, func(t *testing.T) {
			_, err := ringflake.ParseLayout(tc.in)
			require.ErrorIs(t, err, ringflake.ErrInvalidLayout)
			var le *ringflake.LayoutError
			require.ErrorAs(t, err, &le)
			assert.Equal(t, tc.field, le.Field)
		})
	}
}

func TestComposeRejects(t *testing.T) {
	l := ringflake.TwitterLayout()
	for _, tc := range []struct {
		name      string
		at        time.Time
		node, seq int64
		want      error
	}{
		{"before epoch", l.Spec().Epoch.Add(-time.Millisecond), 0, 0, ringflake.ErrBeforeEpoch},
		{"after last tick", l.Last().Add(time.Millisecond), 0, 0, ringflake.ErrLayoutExpired},
		{"node too large", l.Spec().Epoch, 1024, 0, ringflake.ErrNodeOutOfRange},
		{"negative node", l.Spec().Epoch, -1, 0, ringflake.ErrNodeOutOfRange},
		{"sequence too large", l.Spec().Epoch, 0, 4096, ringflake.ErrInvalidID},
		{"negative sequence", l.Spec().Epoch, 0, -1, ringflake.ErrInvalidID},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := l.Compose(tc.at, tc.node, tc.seq)
			require.ErrorIs(t, err, tc.want)
		})
	}
	_, err := ringflake.Layout{}.Compose(time.Now(), 0, 0)
	require.ErrorIs(t, err, ringflake.ErrInvalidLayout)

	// The last instant of the last tick still composes.
	_, err = l.Compose(l.Last().Add(time.Millisecond-1), 0, 0)
	require.NoError(t, err)
}

func TestDecomposeRejects(t *testing.T) {
	js := ringflake.JSSafeLayout()
	_, err := js.Decompose(ringflake.ID(1) << 53)
	require.ErrorIs(t, err, ringflake.ErrInvalidID)
	_, err = ringflake.TwitterLayout().Decompose(-1)
	require.ErrorIs(t, err, ringflake.ErrInvalidID)
	_, err = ringflake.Layout{}.Decompose(1)
	require.ErrorIs(t, err, ringflake.ErrInvalidLayout)
}

func TestNodeID(t *testing.T) {
	l := ringflake.TwitterLayout()
	n, err := l.NodeID(31, 31)
	require.NoError(t, err)
	assert.Equal(t, int64(1023), n)

	_, err = l.NodeID(32, 0)
	var ne *ringflake.NodeError
	require.ErrorAs(t, err, &ne)
	assert.Equal(t, "datacenter", ne.Field)
	assert.Equal(t, int64(31), ne.Max)

	_, err = l.NodeID(0, -1)
	require.ErrorAs(t, err, &ne)
	assert.Equal(t, "worker", ne.Field)
	assert.True(t, errors.Is(err, ringflake.ErrNodeOutOfRange))
}

// The IDs the peers publish in their own tests and docs decode to the
// fields they publish.
func TestPeerVectors(t *testing.T) {
	for _, tc := range []struct {
		name, source string
		layout       ringflake.Layout
		id           ringflake.ID
		time         string
		node         int64
		dc, worker   int64 // split layouts only
		seq          int64
	}{
		// sony/sonyflake, sonyflake_test.go TestSonyflakeOnce (v1) and
		// v2/sonyflake_test.go TestNextID: 50 units after the start, the
		// first ID has time 50, sequence 0 and the machine id of the mock
		// interface 192.168.0.1, which TestLower16BitPrivateIP gives as 1.
		// 50<<24 | 0<<16 | 1 is the ID issue 18 quotes.
		{name: "sonyflake v1, TestSonyflakeOnce", source: "sony/sonyflake sonyflake_test.go",
			layout: ringflake.SonyflakeLayout(), id: 838860801, time: "2014-09-01T00:00:00.5Z", node: 1},
		{name: "sonyflake v2, TestNextID", source: "sony/sonyflake v2/sonyflake_test.go",
			layout: ringflake.SonyflakeV2Layout(), id: 838860801, time: "2025-01-01T00:00:00.5Z", node: 1},
		// v2/sonyflake_test.go TestComposeAndDecompose at the start time:
		// "max sequence" (255, machine 0) and "max machine id" (0, 65535).
		{name: "sonyflake v2, max sequence", source: "sony/sonyflake v2/sonyflake_test.go",
			layout: ringflake.SonyflakeV2Layout(), id: 255 << 16, time: "2025-01-01T00:00:00Z", seq: 255},
		{name: "sonyflake v2, max machine id", source: "sony/sonyflake v2/sonyflake_test.go",
			layout: ringflake.SonyflakeV2Layout(), id: 65535, time: "2025-01-01T00:00:00Z", node: 65535},
		// https://discord.com/developers/docs/reference#snowflakes: the
		// documented example 175928847299117063 is 41944705796 ms after
		// the Discord epoch (2016-04-30 11:18:25.796 UTC), internal worker
		// 1, internal process 0, increment 7.
		{name: "discord docs example", source: "discord.com/developers/docs/reference#snowflakes",
			layout: ringflake.DiscordLayout(), id: 175928847299117063, time: "2016-04-30T11:18:25.796Z",
			node: 1 << 5, dc: 1, worker: 0, seq: 7},
		// bwmarrin/snowflake snowflake_test.go TestParseBase58 and
		// TestParseBase32: IDs of NewNode(0) with its Twitter epoch and
		// 10 node + 12 step bits; its ID.Time is (id>>22)+1288834974657.
		{name: "bwmarrin TestParseBase58", source: "bwmarrin/snowflake snowflake_test.go",
			layout: bwmarrinLayout(t), id: 1428076403798048768, time: "2021-08-18T19:28:41.699Z"},
		{name: "bwmarrin TestParseBase32", source: "bwmarrin/snowflake snowflake_test.go",
			layout: bwmarrinLayout(t), id: 1427970479175499776, time: "2021-08-18T12:27:47.301Z"},
		{name: "bwmarrin TestInt64", source: "bwmarrin/snowflake snowflake_test.go",
			layout: bwmarrinLayout(t), id: 1116766490855473152, time: "2019-04-12T18:14:14.595Z"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := tc.layout.Decompose(tc.id)
			require.NoError(t, err)
			assert.Equal(t, tc.time, p.Time.UTC().Format(time.RFC3339Nano), tc.source)
			assert.Equal(t, tc.node, p.Node, "node")
			assert.Equal(t, tc.dc, p.Datacenter, "datacenter")
			if tc.layout.Spec().DatacenterBits > 0 {
				assert.Equal(t, tc.worker, p.Worker, "worker")
			}
			assert.Equal(t, tc.seq, p.Sequence, "sequence")
			assert.Equal(t, tc.node, tc.id.Node(tc.layout))
			assert.Equal(t, tc.seq, tc.id.Sequence(tc.layout))

			back, err := tc.layout.Compose(p.Time, p.Node, p.Sequence)
			require.NoError(t, err)
			assert.Equal(t, tc.id, back)
		})
	}
}

// bwmarrinLayout is bwmarrin/snowflake's default layout: Twitter's epoch
// and bits with an unsplit 10-bit node.
func bwmarrinLayout(t *testing.T) ringflake.Layout {
	l, err := ringflake.ParseLayout("twitter,node=10")
	require.NoError(t, err)
	return l
}

// The two field orders put the node and the sequence in each other's
// place; everything else stays.
func TestFieldOrder(t *testing.T) {
	tns, err := ringflake.ParseLayout("sonyflake,order=time,node,seq")
	require.NoError(t, err)
	tsn := ringflake.SonyflakeLayout()
	assert.Equal(t, ringflake.TimeNodeSequence, tns.Spec().Order)
	assert.Equal(t, ringflake.TimeSequenceNode, tsn.Spec().Order)
	assert.False(t, tns.Equal(tsn), "the order is part of the layout")
	assert.Equal(t, "epoch=2014-09-01T00:00:00Z,unit=10ms,time=39,node=16,seq=8", tns.String())

	at := tsn.Spec().Epoch.Add(1234 * 10 * time.Millisecond)
	a, err := tns.Compose(at, 3, 5)
	require.NoError(t, err)
	b, err := tsn.Compose(at, 3, 5)
	require.NoError(t, err)
	assert.Equal(t, int64(1234)<<24|3<<8|5, int64(a), "time | node | sequence")
	assert.Equal(t, int64(1234)<<24|5<<16|3, int64(b), "time | sequence | node")
	for _, c := range []struct {
		l  ringflake.Layout
		id ringflake.ID
	}{{tns, a}, {tsn, b}} {
		p, err := c.l.Decompose(c.id)
		require.NoError(t, err)
		assert.Equal(t, ringflake.Parts{Time: at.UTC(), Tick: 1234, Node: 3, Worker: 3, Sequence: 5}, p)
	}

	// A split node keeps its datacenter above its worker in either order.
	split, err := ringflake.ParseLayout("discord,order=time,seq,node")
	require.NoError(t, err)
	node, err := split.NodeID(2, 9)
	require.NoError(t, err)
	id, err := split.Compose(split.Spec().Epoch, node, 4095)
	require.NoError(t, err)
	assert.Equal(t, int64(4095)<<10|2<<5|9, int64(id))
	p, err := split.Decompose(id)
	require.NoError(t, err)
	assert.Equal(t, [3]int64{2, 9, 4095}, [3]int64{p.Datacenter, p.Worker, p.Sequence})

	// Either order prints and parses back.
	for _, s := range []string{"sonyflake,order=time,node,seq", "twitter,order=time,seq,node", "order=time,seq,node",
		"sonyflake,epoch=2024-01-01T00:00:00Z", "twitter, order = time , seq , node ,seq=11,node=11"} {
		l, err := ringflake.ParseLayout(s)
		require.NoError(t, err, s)
		back, err := ringflake.ParseLayout(l.String())
		require.NoError(t, err, l.String())
		assert.True(t, l.Equal(back), "%s: %s != %s", s, l, back)
	}
}

func TestParseLayoutOrderRejects(t *testing.T) {
	for _, in := range []string{"twitter,order=time", "twitter,order=time,seq", "twitter,order=node,time,seq",
		"twitter,order=time,seq,seq", "twitter,order=", "twitter,order=time,node,seq,order=x,y,z"} {
		t.Run(in, func(t *testing.T) {
			_, err := ringflake.ParseLayout(in)
			var le *ringflake.LayoutError
			require.ErrorAs(t, err, &le)
			assert.Equal(t, "order", le.Field)
		})
	}
	_, err := ringflake.NewLayout(ringflake.LayoutSpec{Epoch: time.Unix(0, 0), Unit: time.Millisecond,
		TimeBits: 41, WorkerBits: 10, SequenceBits: 12, Order: 2})
	var le *ringflake.LayoutError
	require.ErrorAs(t, err, &le)
	assert.Equal(t, "Order", le.Field)

	l, err := ringflake.ParseLayout("twitter,order= time , seq , node ")
	require.NoError(t, err, "spaces around the order's names are allowed")
	assert.Equal(t, ringflake.TimeSequenceNode, l.Spec().Order)
	assert.Equal(t, "Order(7)", ringflake.Order(7).String())
}

// tickBounds returns Bounds(at, at): the smallest and largest ID of at's
// tick.
func tickBounds(t testing.TB, l ringflake.Layout, at time.Time) (lo, hi ringflake.ID) {
	t.Helper()
	lo, hi, err := l.Bounds(at, at)
	require.NoError(t, err)
	return lo, hi
}

// Bounds of one tick bound its IDs for every node and sequence, in both
// field orders, and saturate at the layout's ends.
func TestTickBounds(t *testing.T) {
	for _, l := range orderedPresets(t) {
		t.Run(l.String(), func(t *testing.T) {
			at := l.Spec().Epoch.Add(1000*l.Spec().Unit + l.Spec().Unit/2)
			lo, hi := tickBounds(t, l, at)
			for _, node := range []int64{0, 1, l.MaxNode()} {
				for _, seq := range []int64{0, 1, l.MaxSequence()} {
					id, err := l.Compose(at, node, seq)
					require.NoError(t, err)
					assert.True(t, lo <= id && id <= hi, "%d outside [%d, %d]", id, lo, hi)
				}
			}
			first, err := l.Compose(at, 0, 0)
			require.NoError(t, err)
			last, err := l.Compose(at, l.MaxNode(), l.MaxSequence())
			require.NoError(t, err)
			assert.Equal(t, first, lo)
			assert.Equal(t, last, hi)
			next, _ := tickBounds(t, l, at.Add(l.Spec().Unit))
			assert.Equal(t, hi+1, next, "the next tick starts right above")
			assert.True(t, lo.Time(l).Equal(l.TickTime(1000)))

			lo, _, err = l.Bounds(l.Spec().Epoch.Add(-time.Hour), l.Spec().Epoch)
			require.NoError(t, err)
			assert.Equal(t, ringflake.ID(0), lo, "before the epoch saturates to the first tick")
			largest, err := l.Compose(l.Last(), l.MaxNode(), l.MaxSequence())
			require.NoError(t, err)
			_, hi, err = l.Bounds(l.Last(), l.Last().Add(time.Hour))
			require.NoError(t, err)
			assert.Equal(t, largest, hi, "past the last tick saturates to it")
		})
	}
}

func TestBounds(t *testing.T) {
	l := ringflake.TwitterLayout()
	from := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	to := from.Add(time.Hour)
	lo, hi, err := l.Bounds(from, to)
	require.NoError(t, err)
	first, _ := tickBounds(t, l, from)
	_, last := tickBounds(t, l, to)
	assert.Equal(t, first, lo)
	assert.Equal(t, last, hi)

	lo, hi, err = l.Bounds(to, from)
	require.NoError(t, err)
	assert.Greater(t, lo, hi, "a reversed range matches nothing")

	// Saturating ends keep the range; ends that leave it empty are errors.
	lo, _, err = l.Bounds(l.Spec().Epoch.Add(-time.Hour), to)
	require.NoError(t, err)
	assert.Zero(t, lo)
	_, _, err = l.Bounds(from, l.Spec().Epoch.Add(-time.Millisecond))
	require.ErrorIs(t, err, ringflake.ErrBeforeEpoch)
	_, _, err = l.Bounds(l.Last().Add(time.Millisecond), l.Last().Add(time.Hour))
	require.ErrorIs(t, err, ringflake.ErrLayoutExpired)
	_, _, err = ringflake.Layout{}.Bounds(from, to)
	require.ErrorIs(t, err, ringflake.ErrInvalidLayout)
}

// orderedPresets returns every preset and, for each, the same layout in
// the other field order.
func orderedPresets(t testing.TB) []ringflake.Layout {
	var out []ringflake.Layout
	for _, l := range ringflake.Presets() {
		other := ringflake.TimeSequenceNode
		if l.Spec().Order == ringflake.TimeSequenceNode {
			other = ringflake.TimeNodeSequence
		}
		o, err := ringflake.ParseLayout(l.String() + ",order=" + other.String())
		require.NoError(t, err)
		out = append(out, l, o)
	}
	return out
}

// Stats tells how long the layout has left, on the generator's clock.
func TestStatsTimeLeft(t *testing.T) {
	l := ringflake.JSSafeLayout()
	clk := simclock.New(l.Last().Add(-time.Hour))
	g, err := ringflake.New(1, ringflake.WithClock(clk), ringflake.WithLayout(l))
	require.NoError(t, err)
	assert.Equal(t, time.Hour+l.Spec().Unit, g.Stats().TimeLeft, "up to the end of the last tick")

	clk.Add(time.Hour + l.Spec().Unit - time.Nanosecond)
	_, err = g.Next()
	require.NoError(t, err, "the last tick still issues")
	assert.Equal(t, time.Nanosecond, g.Stats().TimeLeft)

	clk.Add(time.Nanosecond)
	_, err = g.Next()
	require.ErrorIs(t, err, ringflake.ErrLayoutExpired)
	assert.Zero(t, g.Stats().TimeLeft)
	clk.Add(time.Hour)
	assert.Zero(t, g.Stats().TimeLeft, "never negative")
}

// layoutplan.Presets lists the very layouts ParseLayout knows by name, in
// the same order, the default first.
func TestLayoutplanListsThePresets(t *testing.T) {
	listed := layoutplan.Presets()
	require.Len(t, listed, len(ringflake.Presets()))
	for i, l := range ringflake.Presets() {
		assert.True(t, l.Equal(listed[i]), "preset %d: %v and %v", i, l, listed[i])
		assert.Equal(t, l.String(), listed[i].String())
		parsed, err := ringflake.ParseLayout(listed[i].String())
		require.NoError(t, err)
		assert.True(t, parsed.Equal(l))
	}
	assert.True(t, listed[0].Equal(ringflake.TwitterLayout()), "the default first")
}
