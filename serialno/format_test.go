package serialno_test

import (
	"cmp"
	"fmt"
	"math/rand/v2"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ringflake/ringflake"
	"github.com/ringflake/ringflake/layoutplan"
	"github.com/ringflake/ringflake/serialno"
)

// presetLayouts are the preset layouts, by the names ParseLayout reads.
func presetLayouts(t testing.TB) []ringflake.Layout {
	t.Helper()
	var ls []ringflake.Layout
	for _, p := range layoutplan.Presets() {
		l, err := ringflake.ParseLayout(p.String())
		require.NoError(t, err, p.String())
		ls = append(ls, l)
	}
	return ls
}

// nodeField and seqField match a pattern's node and sequence fields.
var nodeField, seqField = regexp.MustCompile(`\{node(:\d+)?\}`), regexp.MustCompile(`\{seq(:\d+)?\}`)

// inOrder returns pattern, written with the node before the sequence,
// with the two fields swapped when l keeps the sequence above the node
// (time | sequence | node, as Sonyflake): serial numbers must put the
// fields in the order of their bits.
func inOrder(pattern string, l ringflake.Layout) string {
	if l.Spec().Order != ringflake.TimeSequenceNode {
		return pattern
	}
	n, q := nodeField.FindStringIndex(pattern), seqField.FindStringIndex(pattern)
	return pattern[:n[0]] + pattern[q[0]:q[1]] + pattern[n[1]:q[0]] + pattern[n[0]:n[1]] + pattern[q[1]:]
}

// mustSerial returns the serial format of pattern for l, failing the test
// when NewSerialFormat refuses it.
func mustSerial(t testing.TB, pattern string, l ringflake.Layout) serialno.Format {
	t.Helper()
	f, err := serialno.New(pattern, l)
	require.NoError(t, err, "%s with %s", pattern, l)
	return f
}

// compose is l.Compose that fails the test on error.
func compose(t testing.TB, l ringflake.Layout, tick, node, seq int64) ringflake.ID {
	t.Helper()
	id, err := l.Compose(l.TickTime(tick), node, seq)
	require.NoError(t, err)
	return id
}

// layoutEdgeIDs are a layout's first and last IDs and their neighbours in
// each field, in numeric order (which depends on the field order).
func layoutEdgeIDs(t testing.TB, l ringflake.Layout) []ringflake.ID {
	t.Helper()
	maxT, maxN, maxS := l.MaxTick(), l.MaxNode(), l.MaxSequence()
	return slices.Sorted(slices.Values([]ringflake.ID{
		compose(t, l, 0, 0, 0), compose(t, l, 0, 0, min(1, maxS)), compose(t, l, 0, min(1, maxN), 0),
		compose(t, l, 0, maxN, maxS), compose(t, l, 1, 0, 0), compose(t, l, maxT/2, maxN/2, maxS/2),
		compose(t, l, maxT-1, maxN, maxS), compose(t, l, maxT, 0, 0), compose(t, l, maxT, maxN, 0),
		compose(t, l, maxT, maxN, maxS),
	}))
}

// referenceSerial writes id the way a serial format of pattern
// inOrder(prefix{time:goLayout}{node:n}{seq:s}, l) must, with package
// time's own formatter for the time.
func referenceSerial(l ringflake.Layout, prefix, goLayout string, nodeDigits, seqDigits int, id ringflake.ID) string {
	node, seq := fmt.Sprintf("%0*d", nodeDigits, id.Node(l)), fmt.Sprintf("%0*d", seqDigits, id.Sequence(l))
	if l.Spec().Order == ringflake.TimeSequenceNode {
		node, seq = seq, node
	}
	return prefix + id.Time(l).UTC().Format(goLayout) + node + seq
}

// Every preset's first, last and edge IDs format as package time and fmt
// would write them, parse back, keep one width, and sort like the IDs.
func TestSerialFormatPresetEdges(t *testing.T) {
	for _, l := range presetLayouts(t) {
		for _, goLayout := range []string{"20060102150405.000", "2006-01-02T15:04:05.000000Z", "2006-01-02 15:04:05,000000000"} {
			t.Run(l.String()+"/"+goLayout, func(t *testing.T) {
				nodeDigits, seqDigits := len(fmt.Sprint(l.MaxNode())), len(fmt.Sprint(l.MaxSequence()))
				f := mustSerial(t, inOrder("PAY{time:"+goLayout+"}{node}{seq}", l), l)
				ids := layoutEdgeIDs(t, l)
				var texts []string
				for _, id := range ids {
					s, err := f.Format(id)
					require.NoError(t, err, "Format(%d)", id)
					assert.Equal(t, referenceSerial(l, "PAY", goLayout, nodeDigits, seqDigits, id), s, "Format(%d)", id)
					assert.Len(t, s, f.Width())
					back, err := f.Parse(s)
					require.NoError(t, err, "Parse(%q)", s)
					assert.Equal(t, id, back, "Parse(%q)", s)
					texts = append(texts, s)
				}
				assert.True(t, slices.IsSorted(ids), "the edge IDs are in order")
				assert.True(t, slices.IsSorted(texts), "so are their serial numbers: %q", texts)
			})
		}
	}
}

// The serial numbers of IDs sorted numerically are sorted byte-wise, and
// all distinct, for every preset and a range of patterns.
func TestSerialFormatSortsLikeIDs(t *testing.T) {
	rng := rand.New(rand.NewPCG(13, 2))
	for _, l := range presetLayouts(t) {
		for _, pattern := range []string{
			"PAY{time:20060102150405.000}{node}{seq}",
			"PAY{time:20060102150405000}{node:6}{seq:6}",
			"{time:2006-01-02T15:04:05.000Z}/{node}/{seq}",
			"订单{time:2006年01月02日15:04:05,000}-{node}-{seq}",
		} {
			t.Run(l.String()+"/"+pattern, func(t *testing.T) {
				f := mustSerial(t, inOrder(pattern, l), l)
				ids := layoutEdgeIDs(t, l)
				for range 3000 {
					tick := rng.Int64N(l.MaxTick() + 1)
					if rng.IntN(2) == 0 { // IDs close together, where node and sequence decide
						tick = rng.Int64N(3)
					}
					ids = append(ids, compose(t, l, tick, rng.Int64N(l.MaxNode()+1), rng.Int64N(l.MaxSequence()+1)))
				}
				slices.Sort(ids)
				ids = slices.Compact(ids)
				texts := make([]string, len(ids))
				for i, id := range ids {
					s, err := f.Format(id)
					require.NoError(t, err)
					texts[i] = s
				}
				for i := 1; i < len(texts); i++ {
					require.Less(t, texts[i-1], texts[i], "IDs %d < %d", ids[i-1], ids[i])
				}
			})
		}
	}
}

// Layouts whose units the time can show, down to a day.
func TestSerialFormatCustomLayouts(t *testing.T) {
	for _, tc := range []struct {
		layout, pattern, want string
		tick, node, seq       int64
	}{
		{"epoch=2020-01-01T00:00:00Z,unit=24h,time=16,node=10,seq=37", "INV{time:20060102}{node}{seq}", "INV202001040007000000000042", 3, 7, 42},
		{"epoch=2020-01-01T00:00:00Z,unit=1h,time=20,node=10,seq=0,width=30", "{time:2006010215}-{node}", "2020010103-0007", 3, 7, 0},
		{"epoch=2020-01-01T00:00:00Z,unit=1s,time=31,node=10,seq=22", "{time:20060102150405}{node}{seq}", "2020010100000300070000042", 3, 7, 42},
		{"epoch=2020-01-01T00:00:00.5Z,unit=500ms,time=33,node=10,seq=20", "{time:20060102150405.0}{node}{seq}", "20200101000002.000070000042", 3, 7, 42},
		{"epoch=2020-01-01T00:00:00Z,time=41,node=0,seq=22", "{time:060102150405.000}{seq}", "200101000000.0030000042", 3, 0, 42},
		{"epoch=2020-01-01T00:00:00Z,time=41,node=22,seq=0", "{time:060102150405.000}{node}", "200101000000.0030000007", 3, 7, 0},
	} {
		t.Run(tc.pattern, func(t *testing.T) {
			l, err := ringflake.ParseLayout(tc.layout)
			require.NoError(t, err)
			f := mustSerial(t, tc.pattern, l)
			id := compose(t, l, tc.tick, tc.node, tc.seq)
			s, err := f.Format(id)
			require.NoError(t, err)
			assert.Equal(t, tc.want, s)
			back, err := f.Parse(s)
			require.NoError(t, err)
			assert.Equal(t, id, back)
			for _, id := range layoutEdgeIDs(t, l) {
				s, err := f.Format(id)
				require.NoError(t, err)
				back, err := f.Parse(s)
				require.NoError(t, err, "Parse(%q)", s)
				assert.Equal(t, id, back)
			}
		})
	}
}

// The time is UTC whatever location the layout's epoch carries.
func TestSerialFormatIsUTC(t *testing.T) {
	l, err := ringflake.NewLayout(ringflake.LayoutSpec{Epoch: time.Date(2020, 1, 1, 8, 0, 0, 0, time.FixedZone("UTC+8", 8*3600)),
		Unit: time.Millisecond, TimeBits: 41, WorkerBits: 10, SequenceBits: 12})
	require.NoError(t, err)
	f := mustSerial(t, "{time:2006-01-02T15:04:05.000Z}{node}{seq}", l)
	s, err := f.Format(compose(t, l, 0, 0, 0))
	require.NoError(t, err)
	assert.Equal(t, "2020-01-01T00:00:00.000Z00000000", s)
}

func TestNewSerialFormatRejects(t *testing.T) {
	twitter := ringflake.TwitterLayout()
	layout := func(s string) ringflake.Layout {
		l, err := ringflake.ParseLayout(s)
		require.NoError(t, err, s)
		return l
	}
	const good = "{time:20060102150405.000}"
	for _, tc := range []struct {
		name    string
		pattern string
		layout  ringflake.Layout
		offset  int
	}{
		{"empty", "", twitter, -1},
		{"no time", "PAY{node}{seq}", twitter, -1},
		{"time without layout", "{time}{node}{seq}", twitter, 0},
		{"time with empty layout", "{time:}{node}{seq}", twitter, 0},
		{"time of literals only", "{time:--}{node}{seq}", twitter, 6},
		{"time twice", good + "{time:2006}{node}{seq}", twitter, 25},
		{"node twice", good + "{node}{node}{seq}", twitter, 31},
		{"seq twice", good + "{node}{seq}{seq}", twitter, 36},
		{"unknown field", good + "{dc}{node}{seq}", twitter, 25},
		{"node width not a number", good + "{node:x}{seq}", twitter, 25},
		{"node width 0", good + "{node:0}{seq}", twitter, 25},
		{"node width 20", good + "{node:20}{seq}", twitter, 25},
		{"unclosed brace", good + "{node", twitter, 25},
		{"stray closing brace", "P}" + good + "{node}{seq}", twitter, 1},
		{"seconds for 1 ms ticks", "PAY{time:20060102150405}{node:4}{seq:4}", twitter, 21},
		{"days for 1 ms ticks", "{time:20060102}{node}{seq}", twitter, 12},
		{"centiseconds for 1 ms ticks", "{time:20060102150405.00}{node}{seq}", twitter, 20},
		{"seconds, epoch at .657 s", "{time:20060102150405}{node}{seq}",
			layout("epoch=2010-11-04T01:42:54.657Z,unit=1s,time=31,node=10,seq=22"), 18},
		{"two-digit year beyond a century", "{time:060102150405.00}{node}{seq}", ringflake.SonyflakeLayout(), 6},
		{"year beyond 9999", "{time:20060102150405}{node}{seq}",
			layout("epoch=9990-01-01T00:00:00Z,unit=1s,time=31,node=10,seq=22"), 6},
		{"node too narrow", "PAY" + good + "{node:3}{seq:4}", twitter, 28},
		{"seq too narrow", good + "{node:4}{seq:3}", twitter, 33},
		{"no node", good + "{seq}", twitter, -1},
		{"no seq", good + "{node}", twitter, -1},
		{"seq before node", good + "{seq}{node}", twitter, 30},
		{"node before time", "{node}" + good + "{seq}", twitter, 6},
		{"time last", "{node}{seq}" + good, twitter, 11},
		{"no year", "{time:0102150405.000}{node}{seq}", twitter, 6},
		{"month after day", "{time:20060201150405.000}{node}{seq}", twitter, 10},
		{"no seconds before the fraction", "{time:200601021504.000}{node}{seq}", twitter, 18},
		{"month twice", "{time:2006010201}{node}{seq}", twitter, 14},
		{"year twice", "{time:200606}{node}{seq}", twitter, 10},
		{"ends with the month", "{time:200601}{node}{seq}", twitter, 10},
		{"unpadded month", "{time:2006-1-02}{node}{seq}", twitter, 11},
		{"12-hour clock", "{time:20060102030405.000}{node}{seq}", twitter, 14},
		{"month name", "{time:2006Jan02}{node}{seq}", twitter, 10},
		{"PM", "{time:2006010215PM}{node}{seq}", twitter, 16},
		{"zone", "{time:20060102150405.000-0700}{node}{seq}", twitter, 25},
		{"trimmed fraction", "{time:20060102150405.999}{node}{seq}", twitter, 20},
		{"day of year", "{time:2006002}{node}{seq}", twitter, 10},
		{"space-padded day", "{time:200601_2}{node}{seq}", twitter, 13},
		{"ten fraction digits", "{time:20060102150405.0000000000}{node}{seq}", twitter, 20},
		{"fraction then a digit", "{time:20060102150405.0001}{node}{seq}", twitter, 24},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, err := serialno.New(tc.pattern, tc.layout)
			require.ErrorIs(t, err, serialno.ErrInvalidPattern, "accepted with width %d", f.Width())
			var se *serialno.PatternError
			require.ErrorAs(t, err, &se)
			assert.Equal(t, tc.pattern, se.Pattern)
			assert.Equal(t, tc.offset, se.Offset, se.Reason)
			assert.NotEmpty(t, se.Reason)
			assert.NotContains(t, se.Reason, "\n")
			assert.Zero(t, f.Width())
		})
	}

	_, err := serialno.New(good+"{node}{seq}", ringflake.Layout{})
	require.ErrorIs(t, err, ringflake.ErrInvalidLayout)
}

// What a pattern may leave out or add.
func TestNewSerialFormatAccepts(t *testing.T) {
	twitter := ringflake.TwitterLayout()
	for _, tc := range []struct {
		pattern string
		layout  ringflake.Layout
		width   int
	}{
		{"PAY{time:20060102150405.000}{node:4}{seq:4}", twitter, 29},
		{"{time:060102150405.000}{node}{seq}", twitter, 24},  // 2010 to 2080: one century
		{"{time:20060102150405000}{node}{seq}", twitter, 25}, // fraction without separator
		{"{time:20060102150405.000000000}{node:19}{seq:19}", twitter, 62},
		{"{{{time:2006-01-02T15:04:05.000Z}}}{node}{seq}", twitter, 34},
		{"{time:20060102150405.00}{seq}{node}", ringflake.SonyflakeLayout(), 25}, // Sonyflake's order: sequence above machine
		{"{time:20060102 150405.00}#{node}#{seq}", ringflake.JSSafeLayout(), 26},
	} {
		t.Run(tc.pattern, func(t *testing.T) {
			f := mustSerial(t, tc.pattern, tc.layout)
			assert.Equal(t, tc.width, f.Width())
			assert.Equal(t, tc.pattern, f.String())
			assert.True(t, tc.layout.Equal(f.Layout()))
		})
	}
	f := mustSerial(t, "{{{time:2006-01-02T15:04:05.000Z}}}{node}{seq}", twitter)
	s, err := f.Format(0)
	require.NoError(t, err)
	assert.Equal(t, "{2010-11-04T01:42:54.657Z}00000000", s, "{{ and }} are literal braces")
}

func TestSerialFormatParseRejects(t *testing.T) {
	f := mustSerial(t, "PAY{time:20060102150405.000}{node:4}{seq:4}", ringflake.TwitterLayout())
	const valid = "PAY20220628160740.10503780000"
	id, err := f.Parse(valid)
	require.NoError(t, err)
	require.Equal(t, ringflake.ID(1541815603606036480), id)
	leap, err := f.Parse("PAY20240229000000.00000000000")
	require.NoError(t, err, "2024 is a leap year")
	assert.Equal(t, time.Date(2024, 2, 29, 0, 0, 0, 0, time.UTC), leap.Time(f.Layout()))

	sony := mustSerial(t, "{time:20060102150405.000}{seq}{node}", ringflake.SonyflakeLayout())
	wide := mustSerial(t, "{time:20060102150405.000}N{node:19}S{seq:19}", ringflake.TwitterLayout())
	const wideValid = "20220628160740.105N0000000000000000378S0000000000000000000"
	_, err = wide.Parse(wideValid)
	require.NoError(t, err)
	for _, tc := range []struct {
		name   string
		f      serialno.Format
		in     string
		offset int
	}{
		{"empty", f, "", -1},
		{"one byte short", f, valid[:len(valid)-1], -1},
		{"one byte long", f, valid + "0", -1},
		{"another prefix", f, "PAX" + valid[3:], 2},
		{"lower-case prefix", f, "pay" + valid[3:], 0},
		{"letter in the year", f, "PAY2O22" + valid[7:], 4},
		{"sign in the node", f, valid[:21] + "-378" + valid[25:], 21},
		{"month 00", f, "PAY20220028160740.10503780000", 7},
		{"month 13", f, "PAY20221328160740.10503780000", 7},
		{"day 00", f, "PAY20220600160740.10503780000", 9},
		{"June 31", f, "PAY20220631160740.10503780000", 9},
		{"February 29 of 2023", f, "PAY20230229160740.10503780000", 9},
		{"hour 24", f, "PAY20220628240740.10503780000", 11},
		{"minute 60", f, "PAY20220628166040.10503780000", 13},
		{"leap second", f, "PAY20220628160760.10503780000", 15},
		{"comma for the point", f, "PAY20220628160740,10503780000", 17},
		{"node 1024", f, "PAY20220628160740.10510240000", 21},
		{"sequence 4096", f, "PAY20220628160740.10503784096", 25},
		{"before the epoch", f, "PAY20101104014254.65603780000", 3},
		{"after the last tick", f, "PAY20800710173030.20903780000", 3},
		{"non-ASCII digit", f, "PAY2022062816074é.10503780000"[:len(valid)], 16},
		{"not the start of a 10 ms tick", sony, "20220628160740.10500378000", 0},
		{"19-digit node beyond 63 bits", wide, wideValid[:19] + "9999999999999999999" + wideValid[38:], 19},
		{"19-digit sequence beyond 63 bits", wide, wideValid[:39] + "9300000000000000000", 39},
		{"19-digit node above the layout's", wide, wideValid[:19] + "9223372036854775807" + wideValid[38:], 19},
	} {
		t.Run(tc.name, func(t *testing.T) {
			id, err := tc.f.Parse(tc.in)
			se := requireSyntaxError(t, err, tc.in)
			assert.Equal(t, tc.offset, se.Offset, se.Reason)
			assert.Zero(t, id)
		})
	}
	// The last tick itself parses.
	last, err := f.Parse("PAY20800710173030.20810234095")
	require.NoError(t, err)
	assert.Equal(t, compose(t, f.Layout(), f.Layout().MaxTick(), 1023, 4095), last)
}

func TestSerialFormatFormatRejects(t *testing.T) {
	f := mustSerial(t, "{time:20060102150405.00}{node}{seq}", ringflake.JSSafeLayout())
	for _, id := range []ringflake.ID{-1, 1 << 53, 1<<63 - 1} {
		s, err := f.Format(id)
		require.ErrorIs(t, err, ringflake.ErrInvalidID, "Format(%d) = %q", id, s)
		buf, err := f.Append([]byte("x"), id)
		require.ErrorIs(t, err, ringflake.ErrInvalidID)
		assert.Equal(t, "x", string(buf), "a failed Append leaves dst as it was")
	}

	var zero serialno.Format
	_, err := zero.Format(0)
	require.ErrorIs(t, err, serialno.ErrInvalidPattern)
	_, err = zero.Parse("0")
	require.ErrorIs(t, err, serialno.ErrInvalidPattern)
	assert.Zero(t, zero.Width())
}

// Append into a buffer with room and every successful Parse allocate
// nothing; Format allocates its string.
func TestSerialFormatAllocs(t *testing.T) {
	for _, l := range presetLayouts(t) {
		f := mustSerial(t, inOrder("PAY{time:2006-01-02T15:04:05.000Z}{node}{seq}", l), l)
		buf := make([]byte, 0, 64)
		for _, id := range layoutEdgeIDs(t, l) {
			var err error
			assert.Zero(t, testing.AllocsPerRun(10, func() { buf, err = f.Append(buf[:0], id) }), "Append(%d)", id)
			require.NoError(t, err)
			s := string(buf)
			var back ringflake.ID
			assert.Zero(t, testing.AllocsPerRun(10, func() { back, err = f.Parse(s) }), "Parse(%q)", s)
			require.NoError(t, err)
			assert.Equal(t, id, back)
			assert.Equal(t, 1.0, testing.AllocsPerRun(10, func() { _, _ = f.Format(id) }), "Format(%d)", id)
		}
	}
}

// serialCases are the layouts and patterns the fuzz targets use: every
// preset with patterns that suit it (node and sequence in its order).
func serialCases(t testing.TB) []serialno.Format {
	var fs []serialno.Format
	for _, l := range presetLayouts(t) {
		for _, p := range []string{
			"PAY{time:20060102150405.000}{node}{seq}",
			"{time:2006-01-02T15:04:05.000000Z}-{node:6}-{seq:6}",
			"订单{time:20060102150405,000000000}{node}{seq}",
		} {
			fs = append(fs, mustSerial(t, inOrder(p, l), l))
		}
		if l.Spec().Unit == 10*time.Millisecond {
			fs = append(fs, mustSerial(t, inOrder("X{time:20060102150405.00}{node}{seq}", l), l))
		}
		fs = append(fs, mustSerial(t, inOrder("W{time:20060102150405.000}{node:19}{seq:19}", l), l))
	}
	return fs
}

// FuzzSerialFormatRoundTrip: for every preset and pattern, any two valid
// IDs of the layout format to serial numbers of the format's width that
// parse back to them and compare like the IDs.
func FuzzSerialFormatRoundTrip(f *testing.F) {
	f.Add(uint8(0), uint64(0), uint64(1))
	f.Add(uint8(1), uint64(1541815603606036480), uint64(1541815603606036481))
	f.Add(uint8(5), uint64(1<<63-1), uint64(1<<62))
	f.Add(uint8(9), uint64(1<<53-1), uint64(1<<52))
	cases := serialCases(f)
	f.Fuzz(func(t *testing.T, which uint8, a, b uint64) {
		sf := cases[int(which)%len(cases)]
		bits := sf.Layout().Spec().Width
		ida, idb := ringflake.ID(a&(1<<bits-1)), ringflake.ID(b&(1<<bits-1))
		sa, err := sf.Format(ida)
		require.NoError(t, err, "%s: Format(%d)", sf, ida)
		sb, err := sf.Format(idb)
		require.NoError(t, err, "%s: Format(%d)", sf, idb)
		for _, c := range []struct {
			id ringflake.ID
			s  string
		}{{ida, sa}, {idb, sb}} {
			assert.Len(t, c.s, sf.Width())
			back, err := sf.Parse(c.s)
			require.NoError(t, err, "%s: Parse(%q)", sf, c.s)
			assert.Equal(t, c.id, back, "%s: Parse(%q)", sf, c.s)
		}
		assert.Equal(t, cmp.Compare(ida, idb), strings.Compare(sa, sb), "%s: %d vs %d as %q vs %q", sf, ida, idb, sa, sb)
	})
}

// FuzzSerialFormatParse: Parse accepts exactly the strings Format writes
// (what it reads formats back to the input, byte for byte) and rejects
// anything else with an ErrInvalidID that names the input and an offset
// inside it; it never panics.
func FuzzSerialFormatParse(f *testing.F) {
	for _, s := range []string{"PAY20220628160740.10503780000", "PAY20220628160740.1050378000", "PAY20240229000000.00000000000",
		"PAY20230229000000.00000000000", "2022-06-28T16:07:40.105000Z-000378-000000", "订单20220628160740,105000000037800000",
		"X20220628160740.100000100", "PAY20800710173030.20810234095", "PAY2022062816074é.10503780000", ""} {
		for i := range 12 {
			f.Add(uint8(i), s)
		}
	}
	cases := serialCases(f)
	f.Fuzz(func(t *testing.T, which uint8, s string) {
		sf := cases[int(which)%len(cases)]
		id, err := sf.Parse(s)
		if err != nil {
			requireSyntaxError(t, err, s)
			return
		}
		back, err := sf.Format(id)
		require.NoError(t, err, "%s: Format(Parse(%q))", sf, s)
		assert.Equal(t, s, back, "%s: Format(Parse(%q))", sf, s)
	})
}

// FuzzNewSerialFormat: NewSerialFormat never panics; it refuses with an
// ErrInvalidSerialFormat that points into the pattern, or returns a format
// whose serial numbers of the layout's edge IDs have its width, parse
// back and sort like the IDs.
func FuzzNewSerialFormat(f *testing.F) {
	for _, p := range []string{"PAY{time:20060102150405.000}{node:4}{seq:4}", "{time:060102150405000}{node}{seq}",
		"{{{time:2006-01-02T15:04:05.000Z}}}{node}{seq}", "{time:20060102150405.00}{node}{seq}", "{seq}{node}{time:2006}",
		"{time:2006Jan02}", "{time:.0}", "{node:19}", "}{", "{time:20060102150405.0000000000}", "订单{time:2006年01月02日150405.000}{node}{seq}"} {
		f.Add(uint8(0), p)
		f.Add(uint8(1), p)
	}
	layouts := presetLayouts(f)
	f.Fuzz(func(t *testing.T, which uint8, pattern string) {
		if len(pattern) > 128 {
			return
		}
		l := layouts[int(which)%len(layouts)]
		sf, err := serialno.New(pattern, l)
		if err != nil {
			require.ErrorIs(t, err, serialno.ErrInvalidPattern, "%q", pattern)
			var se *serialno.PatternError
			require.ErrorAs(t, err, &se)
			assert.GreaterOrEqual(t, se.Offset, -1)
			assert.Less(t, se.Offset, len(pattern))
			assert.NotEmpty(t, se.Reason)
			return
		}
		var prev string
		for i, id := range layoutEdgeIDs(t, l) {
			s, err := sf.Format(id)
			require.NoError(t, err, "%q: Format(%d)", pattern, id)
			assert.Len(t, s, sf.Width())
			back, err := sf.Parse(s)
			require.NoError(t, err, "%q: Parse(%q)", pattern, s)
			assert.Equal(t, id, back, "%q: Parse(%q)", pattern, s)
			if i > 0 {
				assert.Less(t, prev, s, "%q", pattern)
			}
			prev = s
		}
	})
}

func BenchmarkSerialFormat(b *testing.B) {
	sf := mustSerial(b, "PAY{time:20060102150405.000}{node:4}{seq:4}", ringflake.TwitterLayout())
	id := ringflake.ID(1541815603606036480)
	s, err := sf.Format(id)
	require.NoError(b, err)
	b.Run("Append", func(b *testing.B) {
		b.ReportAllocs()
		buf := make([]byte, 0, 64)
		for b.Loop() {
			buf, _ = sf.Append(buf[:0], id)
		}
	})
	b.Run("Parse", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := sf.Parse(s); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// requireSyntaxError checks that err reports input as not an ID, with an
// offset inside it and a reason.
func requireSyntaxError(t *testing.T, err error, input string) *ringflake.SyntaxError {
	t.Helper()
	require.ErrorIs(t, err, ringflake.ErrInvalidID, "%q", input)
	var se *ringflake.SyntaxError
	require.ErrorAs(t, err, &se)
	assert.Equal(t, input, se.Input)
	assert.GreaterOrEqual(t, se.Offset, -1)
	assert.Less(t, se.Offset, len(input))
	assert.NotEmpty(t, se.Reason)
	return se
}
