package layoutplan

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strconv"
	"time"

	"github.com/ringflake/ringflake"
)

// A Demand is what a fleet needs of a layout, for [Fits]: how many nodes
// issue IDs at once, how fast each one at its peak, and for how long.
type Demand struct {
	// Nodes is the number of node ids in use at the same time (at least 1).
	Nodes int64
	// Rate is the most IDs one node must issue per second (above 0).
	Rate float64
	// Years is how long after its epoch the layout must last (above 0),
	// in years of 365.25 days.
	Years float64
	// Unit, when set, is the only tick length to plan with: a positive
	// whole number of milliseconds. Zero tries 1 ms, 10 ms, 100 ms and 1 s.
	Unit time.Duration
	// Epoch is the epoch of the layouts. Zero means the start of the
	// current year (UTC), read from the system clock; set it for a
	// reproducible plan. The years count from it, so an epoch long past
	// leaves less of them.
	Epoch time.Time
}

// String describes d in words, as error messages show it.
func (d Demand) String() string {
	nodes := "nodes"
	if d.Nodes == 1 {
		nodes = "node"
	}
	return fmt.Sprintf("for %d %s at %s IDs/s per node for %s years", d.Nodes, nodes,
		strconv.FormatFloat(d.Rate, 'g', -1, 64), strconv.FormatFloat(d.Years, 'g', -1, 64))
}

// A Fit is a layout that meets a [Demand], with its headroom: how many
// times the demand it holds in each dimension (1 is just enough).
type Fit struct {
	Layout ringflake.Layout
	// Nodes is the layout's node ids over the nodes demanded.
	Nodes float64
	// Rate is the layout's IDs per second per node ([Capacity])
	// over the rate demanded.
	Rate float64
	// Years is the layout's lifetime (from its epoch to the end of its
	// last tick) over the years demanded.
	Years float64
}

// Headroom returns the smallest of f's three headrooms: how many times
// the demand f holds in its tightest dimension.
func (f Fit) Headroom() float64 { return min(f.Nodes, f.Rate, f.Years) }

// A Shortfall is what one unit would need to meet a [Demand] that no
// layout of 63 bits meets ([NoFitError]).
type Shortfall struct {
	Unit time.Duration
	// NodeBits, SequenceBits and TimeBits are the fewest bits that hold
	// the nodes, the rate per tick of Unit and the years.
	NodeBits, SequenceBits, TimeBits int
	// TooLong reports that the years reach beyond the about 292 years a
	// layout can last (a time.Duration's range), whatever its bits.
	TooLong bool
}

// Missing returns how many bits more than 63 the shortfall needs.
func (s Shortfall) Missing() int { return s.NodeBits + s.SequenceBits + s.TimeBits - 63 }

// String says what s lacks.
func (s Shortfall) String() string {
	if s.TooLong {
		return fmt.Sprintf("with %v ticks the years reach beyond the about 292 years a layout can last", s.Unit)
	}
	return fmt.Sprintf("with %v ticks %d node + %d sequence + %d time bits = %d, %d more than 63",
		s.Unit, s.NodeBits, s.SequenceBits, s.TimeBits, s.NodeBits+s.SequenceBits+s.TimeBits, s.Missing())
}

// planUnits are the tick lengths Fits tries when the demand names none.
var planUnits = [...]time.Duration{time.Millisecond, 10 * time.Millisecond, 100 * time.Millisecond, time.Second}

// yearLength is a year of 365.25 days.
const yearLength = 36525 * 24 * time.Hour / 100

// Fits returns the layouts of 63 bits that meet d, best first: one per
// unit (d.Unit, or 1 ms, 10 ms, 100 ms and 1 s), each with the fewest bits
// that hold d's nodes, its rate per tick and its years, and the bits left
// over shared out one at a time to time, sequence and node, in that order,
// so that every dimension gets some headroom. Best is the greatest
// [Fit.Headroom], then the shorter unit (finer time, IDs closer to time
// order). Every layout is in the default field order with an unsplit node;
// its String is a layout string [ringflake.ParseLayout] reads back.
//
// Errors: [ErrInvalidDemand] for a demand that makes no sense (see
// [Demand]; an epoch [ringflake.NewLayout] rejects is [ringflake.ErrInvalidLayout]), and
// [ErrNoLayoutFits], a [*NoFitError] saying which bits each unit lacks,
// when no layout of 63 bits meets it.
func Fits(d Demand) ([]Fit, error) {
	bad := func(field, format string, args ...any) ([]Fit, error) {
		return nil, &DemandError{Field: field, Reason: fmt.Sprintf(format, args...)}
	}
	switch {
	case d.Nodes < 1:
		return bad("Nodes", "%d, want at least 1", d.Nodes)
	case !(d.Rate > 0) || math.IsInf(d.Rate, 0):
		return bad("Rate", "%v IDs/s, want a finite number above 0", d.Rate)
	case !(d.Years > 0) || math.IsInf(d.Years, 0):
		return bad("Years", "%v, want a finite number above 0", d.Years)
	case d.Unit < 0 || d.Unit%time.Millisecond != 0:
		return bad("Unit", "%v is not a positive whole number of milliseconds", d.Unit)
	}
	units := planUnits[:]
	if d.Unit != 0 {
		units = []time.Duration{d.Unit}
	}
	epoch := d.Epoch
	if epoch.IsZero() {
		epoch = time.Date(time.Now().UTC().Year(), 1, 1, 0, 0, 0, 0, time.UTC)
	}
	var (
		fits  []Fit
		short []Shortfall
	)
	for _, unit := range units {
		s := needs(d, unit)
		if s.TooLong || s.Missing() > 0 {
			short = append(short, s)
			continue
		}
		l, err := ringflake.NewLayout(ringflake.LayoutSpec{Epoch: epoch, Unit: unit, TimeBits: s.TimeBits,
			WorkerBits: s.NodeBits, SequenceBits: s.SequenceBits})
		if err != nil {
			return nil, err // the epoch: the bits are within bounds by construction
		}
		f := Fit{Layout: l, Nodes: float64(l.MaxNode()+1) / float64(d.Nodes), Rate: Capacity(l) / d.Rate,
			Years: float64(l.Last().Add(unit).Sub(epoch)) / float64(yearLength) / d.Years}
		fits = append(fits, f)
	}
	if len(fits) == 0 {
		return nil, &NoFitError{Demand: d, Short: short}
	}
	slices.SortStableFunc(fits, func(a, b Fit) int {
		if c := cmp.Compare(b.Headroom(), a.Headroom()); c != 0 {
			return c
		}
		return cmp.Compare(a.Layout.Spec().Unit, b.Layout.Spec().Unit)
	})
	return fits, nil
}

// needs returns the fewest bits of each field that meet d with ticks of
// unit and, when they fit in 63 bits, the bits left over shared out.
func needs(d Demand, unit time.Duration) Shortfall {
	s := Shortfall{Unit: unit,
		NodeBits:     bitsFor(float64(d.Nodes)),
		SequenceBits: bitsFor(d.Rate * unit.Seconds()),
		TimeBits:     max(bitsFor(d.Years*float64(yearLength)/float64(unit)), 1),
	}
	if !lifetimeFits(s.TimeBits, unit) {
		s.TooLong = true
		return s
	}
	for spare, turn := 63-s.NodeBits-s.SequenceBits-s.TimeBits, 0; spare > 0; turn++ {
		switch turn % 3 {
		case 0:
			if !lifetimeFits(s.TimeBits+1, unit) {
				continue
			}
			s.TimeBits++
		case 1:
			s.SequenceBits++
		case 2:
			s.NodeBits++
		}
		spare--
	}
	return s
}

// bitsFor returns the fewest bits b with 2^b ≥ n (0 for n ≤ 1, at most 64).
func bitsFor(n float64) int {
	b := 0
	for b < 64 && math.Ldexp(1, b) < n {
		b++
	}
	return b
}

// lifetimeFits reports whether a layout of timeBits bits of unit passes
// NewLayout's limit: its last tick within a time.Duration.
func lifetimeFits(timeBits int, unit time.Duration) bool {
	return timeBits < 63 && int64(1)<<timeBits-1 <= math.MaxInt64/int64(unit)
}

// Capacity returns the most IDs one node of l can issue per second: the
// layout's sequence numbers per tick over the tick's length. The zero
// Layout has none.
func Capacity(l ringflake.Layout) float64 {
	if l.IsZero() {
		return 0
	}
	return float64(l.MaxSequence()+1) * float64(time.Second) / float64(l.Spec().Unit)
}

// Presets returns ringflake's preset layouts, the default
// ([ringflake.TwitterLayout]) first: twitter, sonyflake, sonyflake-v2,
// discord, js-safe. [ringflake.ParseLayout] knows each by the name its
// String returns. Each call returns a new slice.
func Presets() []ringflake.Layout {
	return []ringflake.Layout{
		ringflake.TwitterLayout(), ringflake.SonyflakeLayout(), ringflake.SonyflakeV2Layout(),
		ringflake.DiscordLayout(), ringflake.JSSafeLayout(),
	}
}
