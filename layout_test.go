package ringflake_test

import (
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ringflake/ringflake"
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
		{"js-safe", ringflake.JSSafeLayout(), "2112-02-09T13:44:29.43Z", 127, 255, 25_600, 53},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l := tc.layout
			assert.Equal(t, tc.name, l.String())
			assert.Equal(t, tc.last, l.Last().UTC().Format(time.RFC3339Nano))
			assert.Equal(t, tc.maxNode, l.MaxNode())
			assert.Equal(t, tc.maxSeq, l.MaxSequence())
			assert.InDelta(t, tc.capacity, l.Capacity(), 1e-6)
			assert.Equal(t, tc.width, l.Spec().Width)

			parsed, err := ringflake.ParseLayout(tc.name)
			require.NoError(t, err)
			assert.Equal(t, l, parsed)

			// The greatest ID of the layout stays within its width.
			id, err := l.Compose(l.Last(), l.MaxNode(), l.MaxSequence())
			require.NoError(t, err)
			assert.Equal(t, int64(1)<<tc.width-1, id.Int64())
		})
	}
}

func TestTwitterLayoutMatchesTwitterFormula(t *testing.T) {
	l := ringflake.TwitterLayout()
	node, err := l.NodeID(3, 17)
	require.NoError(t, err)
	at := time.UnixMilli(1288834974657 + 123456789)
	id, err := l.Compose(at, node, 42)
	require.NoError(t, err)
	assert.Equal(t, int64(123456789)<<22|3<<17|17<<12|42, id.Int64())

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
	assert.True(t, l.Epoch().Equal(time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)))
	assert.Equal(t, 10*time.Millisecond, l.Unit())
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
		{"before epoch", l.Epoch().Add(-time.Millisecond), 0, 0, ringflake.ErrBeforeEpoch},
		{"after last tick", l.Last().Add(time.Millisecond), 0, 0, ringflake.ErrLayoutExpired},
		{"node too large", l.Epoch(), 1024, 0, ringflake.ErrNodeOutOfRange},
		{"negative node", l.Epoch(), -1, 0, ringflake.ErrNodeOutOfRange},
		{"sequence too large", l.Epoch(), 0, 4096, ringflake.ErrInvalidID},
		{"negative sequence", l.Epoch(), 0, -1, ringflake.ErrInvalidID},
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
