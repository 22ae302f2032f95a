package ringflake_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ringflake/ringflake"
	"github.com/ringflake/ringflake/hostlocal"
	"github.com/ringflake/ringflake/simclock"
	"github.com/ringflake/ringflake/strategies"
)

// TestTwoNamesOfOneLayoutAreOneGenerator: "twitter" and
// "twitter,node=10" put every bit in the same place (the node split is
// only a reading of the node's bits), so two generators of node 906 under
// the two names would issue the same IDs: the second one is refused.
func TestTwoNamesOfOneLayoutAreOneGenerator(t *testing.T) {
	ctx := context.Background()
	flat, err := ringflake.ParseLayout("twitter,node=10")
	require.NoError(t, err)
	assert.True(t, flat.Equal(ringflake.TwitterLayout()), "twitter,node=10 is twitter")

	g, err := ringflake.New(906)
	require.NoError(t, err)
	defer func() { require.NoError(t, g.Close(ctx)) }()
	h, err := ringflake.New(906, ringflake.WithLayout(flat))
	if err == nil {
		// Before the fix both started: count the IDs they share.
		defer func() { require.NoError(t, h.Close(ctx)) }()
		seen := make(map[ringflake.ID]bool)
		dups := 0
		for range 20_000 {
			a, errA := g.Next()
			b, errB := h.Next()
			require.NoError(t, errA)
			require.NoError(t, errB)
			for _, id := range []ringflake.ID{a, b} {
				if seen[id] {
					dups++
				}
				seen[id] = true
			}
		}
		t.Fatalf("twitter and twitter,node=10 both started on node 906 and issued %d duplicates in 40,000 IDs", dups)
	}
	require.ErrorIs(t, err, ringflake.ErrNodeInUse)
}

// layoutBits is what makes a layout's IDs, written out for the property
// test below: two layouts must be Equal exactly when their layoutBits
// are.
type layoutBits struct {
	epoch                     time.Time
	unit                      time.Duration
	timeBits, nodeBits, width int
	order                     ringflake.Order
}

func (b layoutBits) seqBits() int { return b.width - b.timeBits - b.nodeBits }

// canonical returns b with the order that makes no difference (one of
// node and sequence has no bits) set to the default.
func (b layoutBits) canonical() layoutBits {
	if b.nodeBits == 0 || b.seqBits() == 0 {
		b.order = ringflake.TimeNodeSequence
	}
	b.epoch = b.epoch.UTC()
	return b
}

// randomBits draws layout bits from small pools, so that random pairs
// often coincide, and every draw is a valid layout whose lifetime
// includes the present (the guard's generators run on the system clock).
func randomBits(r *rand.Rand) layoutBits {
	epochs := []time.Time{
		ringflake.TwitterLayout().Spec().Epoch, ringflake.DiscordLayout().Spec().Epoch,
		time.Date(2014, 9, 1, 0, 0, 0, 0, time.UTC), time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC),
	}
	for {
		b := layoutBits{epoch: epochs[r.IntN(len(epochs))], width: []int{63, 62, 53}[r.IntN(3)],
			nodeBits: []int{0, 5, 7, 10, 16}[r.IntN(5)], order: ringflake.Order(r.IntN(2))}
		if r.IntN(2) == 0 {
			b.unit, b.timeBits = time.Millisecond, 40+r.IntN(2)
		} else {
			b.unit, b.timeBits = 10*time.Millisecond, 38+r.IntN(2)
		}
		if s := b.seqBits(); s >= 0 && s <= 22 {
			return b
		}
	}
}

// spell writes b in one of its many spellings: ParseLayout's keys in any
// order, over any preset or none, the epoch in any time zone, the unit
// in any unit, the node split or not, the default order said or not; or
// a LayoutSpec for NewLayout.
func spell(t *testing.T, r *rand.Rand, b layoutBits) (ringflake.Layout, string) {
	t.Helper()
	zones := []*time.Location{time.UTC, time.FixedZone("", 5*3600+1800), time.FixedZone("", -8*3600)}
	dc := 0
	if b.nodeBits > 0 && r.IntN(2) == 0 {
		dc = r.IntN(b.nodeBits + 1)
	}
	order := b.order
	if b.canonical().order != b.order && r.IntN(2) == 0 {
		order = ringflake.TimeNodeSequence // either order makes these IDs
	}
	if r.IntN(4) == 0 {
		spec := ringflake.LayoutSpec{Epoch: b.epoch.In(zones[r.IntN(len(zones))]), Unit: b.unit, TimeBits: b.timeBits,
			DatacenterBits: dc, WorkerBits: b.nodeBits - dc, SequenceBits: b.seqBits(), Order: order}
		if b.width != 63 || r.IntN(2) == 0 {
			spec.Width = b.width
		}
		l, err := ringflake.NewLayout(spec)
		require.NoError(t, err, "%+v", spec)
		return l, fmt.Sprintf("NewLayout(%+v)", spec)
	}
	units := []string{b.unit.String(), fmt.Sprintf("%dus", b.unit.Microseconds()), fmt.Sprintf("%gs", b.unit.Seconds())}
	node := fmt.Sprintf("dc=%d,worker=%d", dc, b.nodeBits-dc)
	if dc == 0 && r.IntN(2) == 0 {
		node = fmt.Sprintf("node=%d", b.nodeBits)
	}
	keys := map[string]string{
		"epoch": "epoch=" + b.epoch.In(zones[r.IntN(len(zones))]).Format(time.RFC3339Nano),
		"unit":  "unit=" + units[r.IntN(len(units))],
		"time":  fmt.Sprintf("time=%d", b.timeBits),
		"seq":   fmt.Sprintf("seq=%d", b.seqBits()),
		"width": fmt.Sprintf("width=%d", b.width),
		"order": "order=" + order.String(),
		"node":  node,
	}
	// A key that repeats the value it overrides may be left out: over a
	// preset, the preset's; alone, the Twitter layout's.
	base := ringflake.TwitterLayout()
	var words []string
	if r.IntN(3) > 0 {
		base = ringflake.Presets()[r.IntN(len(ringflake.Presets()))]
		words = append(words, base.String())
	}
	spec := base.Spec()
	same := map[string]bool{
		"epoch": spec.Epoch.Equal(b.epoch), "unit": spec.Unit == b.unit, "time": spec.TimeBits == b.timeBits,
		"seq": spec.SequenceBits == b.seqBits(), "width": spec.Width == b.width, "order": spec.Order == order,
		"node": spec.DatacenterBits == dc && spec.WorkerBits == b.nodeBits-dc,
	}
	for _, name := range []string{"epoch", "unit", "time", "seq", "width", "order", "node"} {
		if k := keys[name]; !same[name] || r.IntN(2) == 0 {
			words = append(words, k)
		}
	}
	if len(words) == 0 {
		words = append(words, "twitter")
	}
	keyWords := words
	if len(words) > 0 && !strings.Contains(words[0], "=") {
		keyWords = words[1:]
	}
	r.Shuffle(len(keyWords), func(i, j int) { keyWords[i], keyWords[j] = keyWords[j], keyWords[i] })
	s := strings.Join(words, ",")
	l, err := ringflake.ParseLayout(s)
	require.NoError(t, err, s)
	return l, s
}

// TestLayoutSpellingsProperty draws random pairs of layout spellings
// (seeded, so a failure repeats): spellings of the same bits are Equal,
// conflict in the process's guard, conflict for a host's node lock and
// read each other's marks; spellings of different bits are not Equal and
// do not conflict in the guard.
func TestLayoutSpellingsProperty(t *testing.T) {
	ctx := context.Background()
	r := rand.New(rand.NewPCG(31, 2))
	dir := t.TempDir()
	equalPairs := 0
	for i := range 400 {
		ba := randomBits(r)
		bb := ba
		if r.IntN(2) == 0 {
			bb = randomBits(r)
		}
		a, sa := spell(t, r, ba)
		b, sb := spell(t, r, bb)
		same := ba.canonical() == bb.canonical()
		what := fmt.Sprintf("pair %d: %s and %s", i, sa, sb)

		// Each spelling is its bits, and its String reads back as it.
		spec := a.Spec()
		assert.True(t, spec.Epoch.Equal(ba.epoch) && spec.Unit == ba.unit && spec.TimeBits == ba.timeBits &&
			spec.DatacenterBits+spec.WorkerBits == ba.nodeBits && spec.Width == ba.width, "%s: %s", what, sa)
		back, err := ringflake.ParseLayout(a.String())
		require.NoError(t, err, what)
		require.True(t, back.Equal(a), "%s: String %s", what, a)

		require.Equal(t, same, a.Equal(b), "%s: Equal", what)
		require.Equal(t, same, b.Equal(a), "%s: Equal the other way", what)
		if same {
			equalPairs++
			// Equal layouts make equal IDs.
			at := ba.epoch.Add(time.Duration(r.Int64N(1<<30)) * ba.unit)
			node, seq := r.Int64N(a.MaxNode()+1), r.Int64N(a.MaxSequence()+1)
			ida, err := a.Compose(at, node, seq)
			require.NoError(t, err, what)
			idb, err := b.Compose(at, node, seq)
			require.NoError(t, err, what)
			require.Equal(t, ida, idb, what)
		}

		// The process's guard: on the system clock, a second generator on
		// the node of an equal layout is refused, of another layout not.
		node := min(a.MaxNode(), b.MaxNode())
		ga, err := ringflake.New(node, ringflake.WithLayout(a))
		require.NoError(t, err, what)
		gb, err := ringflake.New(node, ringflake.WithLayout(b))
		if same {
			require.ErrorIs(t, err, ringflake.ErrNodeInUse, what)
		} else {
			require.NoError(t, err, what)
			require.NoError(t, gb.Close(ctx))
		}
		require.NoError(t, ga.Close(ctx))

		// The host's lock is one range of numbers, whatever the layout.
		if same {
			ha, hb := hostlocal.NewNode(dir), hostlocal.NewNode(dir)
			require.NoError(t, ha.Claim(ctx, a, node), what)
			require.ErrorIs(t, hb.Claim(ctx, b, node), ringflake.ErrNodeUnavailable, what)
			require.NoError(t, ha.Close())
			require.NoError(t, hb.Claim(ctx, b, node), what)
			require.NoError(t, hb.Close())
		}

		// Marks: a mark written under one spelling is read under the
		// other, and the second run starts above the first one's IDs. A
		// mark bounds ticks, so it is also read by a layout that differs
		// in the field order only; any other difference is a mismatch.
		from := ba.epoch
		if bb.epoch.After(from) {
			from = bb.epoch
		}
		clk := simclock.New(from.Add(time.Duration(1+r.Int64N(1<<20)) * ba.unit))
		store := &recordingStore{}
		g1, err := ringflake.New(node, ringflake.WithClock(clk), ringflake.WithLayout(a), ringflake.WithMarkStore(store))
		require.NoError(t, err, what)
		last, err := g1.Next()
		require.NoError(t, err, what)
		require.NoError(t, g1.Close(ctx))
		clk.Step(-time.Second) // a restart with the clock behind
		g2, err := ringflake.New(node, ringflake.WithClock(clk), ringflake.WithLayout(b), ringflake.WithMarkStore(store),
			ringflake.WithStrategy(strategies.Logical(time.Hour)))
		orderOnly := ba.canonical() != bb.canonical() && func() bool {
			x, y := ba.canonical(), bb.canonical()
			x.order = y.order
			return x == y
		}()
		if !same && !orderOnly {
			require.ErrorIs(t, err, ringflake.ErrMarkMismatch, what)
			continue
		}
		require.NoError(t, err, what)
		first, err := g2.Next()
		require.NoError(t, err, what)
		if same {
			assert.Greater(t, first, last, "%s: the second run starts above the first", what)
		}
		require.NoError(t, g2.Close(ctx))
	}
	assert.Greater(t, equalPairs, 100, "pairs of equal layouts drawn")
}
