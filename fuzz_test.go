package ringflake_test

import (
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ringflake/ringflake"
	"github.com/ringflake/ringflake/simclock"
	"github.com/ringflake/ringflake/strategies"
)

// FuzzStrategies turns bytes into a clock script and a call pattern, plays
// it against one strategy and checks, on every call, the promises of that
// strategy (harness_test.go): never a duplicate, monotonic where promised,
// stalls and leads within their bounds, the ring never past the newest ID.
//
// Byte 0 picks the strategy, byte 1 the clock mode (bit 0), whether the
// generator keeps a high-water mark and may restart (bit 1), the layout's
// field order (bit 2: time | sequence | node) and whether each tick starts
// at a random sequence number (bit 3, WithSequenceOffset); then pairs (op,
// arg). Calls are Next or, when the arg's top bit is set, NextN for the
// same number of IDs at once.
func FuzzStrategies(f *testing.F) {
	f.Add([]byte{0, 0, 0, 5, 1, 0, 2, 2, 0, 5})                          // small step, error
	f.Add([]byte{1, 1, 0, 9, 1, 3, 3, 2, 0, 9})                          // large step, wait
	f.Add([]byte{2, 0, 5, 0, 2, 4, 5, 0, 0, 3})                          // overflow around a step, logical
	f.Add([]byte{3, 0, 0, 15, 1, 1, 3, 60, 0, 15, 1, 200, 0, 15})        // beyond the window, ring
	f.Add([]byte{4, 1, 0, 3, 4, 100, 0, 3, 2, 90, 0, 3})                 // jump forward, step back, default
	f.Add([]byte{5, 0, 8, 2, 0, 15, 1, 1, 0, 15, 6, 9, 0, 7})            // jitter and freeze
	f.Add([]byte{6, 0, 5, 255, 2, 1, 5, 255})                            // two saturations across a step
	f.Add([]byte{3, 4, 0, 5, 5, 3, 2, 2, 0, 9, 5, 1})                    // ring, Sonyflake's field order
	f.Add([]byte{1, 5, 0, 9, 1, 3, 3, 2, 0, 9})                          // wait, Sonyflake's field order
	f.Add([]byte{4, 10, 0, 0x83, 5, 0x81, 2, 3, 0, 0x8f, 9, 1, 5, 0x82}) // batches, offsets, a crash
	f.Add([]byte{3, 12, 5, 0x80, 2, 4, 0, 0x8f, 0, 0x8f})                // batches during a rollback, ring, both orders
	f.Fuzz(playScript)
}

// fuzzLayout is FuzzStrategies' layout: Twitter's with a 4-bit sequence
// (16 IDs per tick), so that used-up ticks, overflow walks and a ring
// without spare room take a few dozen calls instead of thousands.
var fuzzLayout = func() ringflake.Layout {
	l, err := ringflake.ParseLayout("twitter,seq=4,width=55")
	if err != nil {
		panic(err)
	}
	return l
}()

// fuzzLayoutSeqFirst is fuzzLayout in Sonyflake's field order, time |
// sequence | node: the ring and the strategies must not notice.
var fuzzLayoutSeqFirst = func() ringflake.Layout {
	l, err := ringflake.ParseLayout(fuzzLayout.String() + ",order=time,seq,node")
	if err != nil {
		panic(err)
	}
	return l
}()

// fuzzBudget bounds the calls one input makes, so that every input runs in
// about a millisecond and the fuzzer's minimizer, which runs an input once
// per candidate, finishes in well under a second.
const fuzzBudget = 1500

// playScript is FuzzStrategies' body: it plays data as described there.
func playScript(t *testing.T, data []byte) {
	if len(data) < 2 {
		return
	}
	sc := strategyCases[int(data[0])%len(strategyCases)]
	mode := clockModes(time.Millisecond)[int(data[1])%2]
	layout := fuzzLayout
	if data[1]&4 != 0 {
		layout = fuzzLayoutSeqFirst
	}
	clk := simclock.New(start)
	c := newChecker(t, clk, sc, mode, layout, 5) // node 5 in both orders: the checker reads it back from every ID
	if data[1]&8 != 0 {
		c.opts = []ringflake.Option{ringflake.WithSequenceOffset(int(layout.MaxSequence()) + 1)}
		c.offset = int(layout.MaxSequence())
		c.gen = c.newGenerator(5)
	}
	var store *recordingStore
	if data[1]&2 != 0 {
		store = &recordingStore{}
		c.restart(store, false) // this run keeps a high-water mark
	}
	perTick := c.perTick()
	ops := data[2:]
	if len(ops) > 80 {
		ops = ops[:80]
	}
	budget := fuzzBudget
	issue := func(n int, batch bool) {
		n = min(n, budget)
		budget -= n
		if batch && n > 0 {
			_ = c.nextN(n)
			return
		}
		c.issue(n)
	}
	for i := 0; i+1 < len(ops); i += 2 {
		arg := int(ops[i+1])
		switch ops[i] % 10 {
		case 0:
			issue(arg%16+1, arg&0x80 != 0)
		case 1:
			clk.Add(time.Duration(arg%8+1) * time.Millisecond)
		case 2:
			c.step(-time.Duration(arg%10+1) * time.Millisecond)
		case 3:
			c.step(-time.Duration(arg) * 37 * time.Millisecond)
		case 4:
			c.step(time.Duration(arg) * 11 * time.Millisecond)
		case 5:
			issue(perTick*(1+arg%4)+arg%perTick, arg&0x80 != 0) // saturate ticks and spill into the next
		case 6:
			clk.Freeze(time.Duration(arg%30+1) * time.Millisecond)
			c.exact = false
		case 7:
			clk.Add(time.Duration(arg) * 7 * time.Microsecond)
		case 8:
			jitter := time.Duration(arg%3) * time.Millisecond
			require.NoError(t, clk.SetJitter(jitter, uint64(arg)))
			c.exact = c.exact && jitter == 0
			c.slack = max(c.slack, jitter)
		case 9:
			if store != nil {
				c.restart(store, arg&1 == 0) // a clean restart or a crash
			}
		}
	}
	c.issue(3)
}

// FuzzParseID: Parse accepts exactly the decimal forms of IDs; everything
// else is an ErrInvalidID naming where it went wrong.
func FuzzParseID(f *testing.F) {
	for _, s := range []string{"0", "42", "9223372036854775807", "9223372036854775808", "-1", "", "0x1f", "00012", " 7"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		id, err := ringflake.Parse(s)
		if err != nil {
			require.ErrorIs(t, err, ringflake.ErrInvalidID)
			var se *ringflake.SyntaxError
			require.ErrorAs(t, err, &se)
			assert.Equal(t, s, se.Input)
			assert.Less(t, se.Offset, len(s))
			return
		}
		require.GreaterOrEqual(t, int64(id), int64(0))
		back, err := ringflake.Parse(id.String())
		require.NoError(t, err)
		assert.Equal(t, id, back)
		var fromText ringflake.ID
		require.NoError(t, fromText.UnmarshalText([]byte(s)))
		assert.Equal(t, id, fromText)
	})
}

// FuzzIDRoundTrip: every non-negative int64 formats and parses back, as
// text and as JSON, and decomposes and recomposes under every preset, in
// both field orders, whose width it fits.
func FuzzIDRoundTrip(f *testing.F) {
	for _, n := range []int64{0, 1, 4095, 1 << 22, 1541815603606036480, 1<<53 - 1, 1<<63 - 1} {
		f.Add(n)
	}
	layouts := orderedPresets(f)
	f.Fuzz(func(t *testing.T, n int64) {
		if n < 0 {
			n = -(n + 1)
		}
		id := ringflake.ID(n)
		back, err := ringflake.Parse(id.String())
		require.NoError(t, err)
		assert.Equal(t, id, back)

		js, err := id.MarshalJSON()
		require.NoError(t, err)
		var fromJSON ringflake.ID
		require.NoError(t, fromJSON.UnmarshalJSON(js))
		assert.Equal(t, id, fromJSON)

		for _, l := range layouts {
			p, err := l.Decompose(id)
			if n>>l.Spec().Width != 0 {
				require.ErrorIs(t, err, ringflake.ErrInvalidID)
				continue
			}
			require.NoError(t, err)
			again, err := l.Compose(p.Time, p.Node, p.Sequence)
			require.NoError(t, err)
			assert.Equal(t, id, again, "%s", l)
		}
	})
}

// FuzzParseLayout: a layout string either fails with ErrInvalidLayout or
// gives a layout that prints back to an equal one and composes IDs within
// its width.
func FuzzParseLayout(f *testing.F) {
	for _, s := range []string{"twitter", "sonyflake", "js-safe", "twitter,seq=13", "sonyflake,epoch=2024-01-01T00:00:00Z",
		"epoch=2020-01-01T00:00:00Z,time=41,node=0,seq=22", "js-safe,width=54", "twitter,unit=10ms", "x=1", ",,",
		"sonyflake-v2", "discord,order=time,seq,node", "sonyflake,order=time,node,seq", "twitter,order=time,seq", "order=time,seq,node,seq=11,node=11"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		l, err := ringflake.ParseLayout(s)
		if err != nil {
			require.ErrorIs(t, err, ringflake.ErrInvalidLayout)
			var le *ringflake.LayoutError
			require.ErrorAs(t, err, &le)
			return
		}
		back, err := ringflake.ParseLayout(l.String())
		require.NoError(t, err, "String() = %q", l.String())
		require.True(t, l.Equal(back), "%s vs %s", l, back)

		id, err := l.Compose(l.Last(), l.MaxNode(), l.MaxSequence())
		require.NoError(t, err)
		assert.Zero(t, int64(id)>>l.Spec().Width)
		p, err := l.Decompose(id)
		require.NoError(t, err)
		assert.Equal(t, l.MaxTick(), p.Tick)
	})
}

// FuzzParseStrategy: a strategy string either fails with ErrInvalidStrategy
// naming the part, or gives a strategy whose String parses back to it.
func FuzzParseStrategy(f *testing.F) {
	for _, s := range []string{"error", "ring,wait:5ms,error", "logical:1s", "wait:abc", "ring,,", "ring:1", "wait:-1s", "logical:1h30m"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		st, err := strategies.Parse(s)
		if err != nil {
			require.ErrorIs(t, err, strategies.ErrInvalidStrategy)
			var se *strategies.StrategyError
			require.True(t, errors.As(err, &se))
			assert.NotEmpty(t, se.Reason)
			return
		}
		back, err := strategies.Parse(st.String())
		require.NoError(t, err)
		assert.Equal(t, st, back)
	})
}

// FuzzLayoutOrder: for any layout the fuzzer makes, in either field order,
// Compose and Decompose are each other's inverse, MinID and MaxID bound the
// tick's IDs, and the IDs of one node increase with (tick, sequence) — so
// a node's IDs stay in the order it issues them whatever the order.
func FuzzLayoutOrder(f *testing.F) {
	f.Add(uint8(41), uint8(10), uint8(12), uint16(1), false, int64(123456), int64(7), int64(42), int64(123457), int64(0))
	f.Add(uint8(39), uint8(16), uint8(8), uint16(10), true, int64(50), int64(1), int64(0), int64(50), int64(1))
	f.Add(uint8(38), uint8(7), uint8(8), uint16(10), true, int64(1), int64(127), int64(255), int64(2), int64(0))
	f.Add(uint8(1), uint8(0), uint8(62), uint16(1), true, int64(1), int64(0), int64(5), int64(0), int64(1<<61))
	f.Fuzz(func(t *testing.T, timeBits, nodeBits, seqBits uint8, unitMs uint16, seqFirst bool, tick1, node, seq1, tick2, seq2 int64) {
		order := ringflake.TimeNodeSequence
		if seqFirst {
			order = ringflake.TimeSequenceNode
		}
		width := int(timeBits) + int(nodeBits) + int(seqBits)
		if width > 63 || width == 0 {
			return
		}
		l, err := ringflake.NewLayout(ringflake.LayoutSpec{Epoch: time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC),
			Unit: time.Duration(max(unitMs, 1)) * time.Millisecond, TimeBits: int(timeBits),
			WorkerBits: int(nodeBits), SequenceBits: int(seqBits), Width: width, Order: order})
		if err != nil {
			require.ErrorIs(t, err, ringflake.ErrInvalidLayout)
			return
		}
		in := func(v, m int64) int64 { // v moved into [0, m]
			if v < 0 {
				v = -(v + 1)
			}
			return v % (m + 1)
		}
		tick1, tick2 = in(tick1, l.MaxTick()), in(tick2, l.MaxTick())
		node, seq1, seq2 = in(node, l.MaxNode()), in(seq1, l.MaxSequence()), in(seq2, l.MaxSequence())

		a, err := l.Compose(l.TickTime(tick1), node, seq1)
		require.NoError(t, err)
		b, err := l.Compose(l.TickTime(tick2), node, seq2)
		require.NoError(t, err)
		for _, c := range []struct {
			id        ringflake.ID
			tick, seq int64
		}{{a, tick1, seq1}, {b, tick2, seq2}} {
			require.Zero(t, int64(c.id)>>width, "within the width")
			p, err := l.Decompose(c.id)
			require.NoError(t, err)
			require.Equal(t, [3]int64{c.tick, node, c.seq}, [3]int64{p.Tick, p.Node, p.Sequence})
			require.Equal(t, node, c.id.Node(l))
			require.Equal(t, c.seq, c.id.Sequence(l))
			lo, hi, err := l.Bounds(p.Time, p.Time)
			require.NoError(t, err)
			require.True(t, lo <= c.id && c.id <= hi)
		}
		before := tick1 < tick2 || tick1 == tick2 && seq1 < seq2
		after := tick1 > tick2 || tick1 == tick2 && seq1 > seq2
		require.Equal(t, before, a < b, "a node's IDs follow (tick, sequence)")
		require.Equal(t, after, a > b)
	})
}
