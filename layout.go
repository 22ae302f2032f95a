package ringflake

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// A Layout says how an ID's bits are used. In the default field order,
// [TimeNodeSequence] (Twitter's):
//
//	bit 63    62 ........ S+N   S+N-1 ...... S   S-1 ...... 0
//	  0     | time (T bits)   | node (N bits)  | sequence (S bits)
//
// and in [TimeSequenceNode] order (Sonyflake's) the node and the sequence
// swap places:
//
//	bit 63    62 ........ S+N   S+N-1 ...... N   N-1 ...... 0
//	  0     | time (T bits)   | sequence (S)   | node (N bits)
//
// where time counts units since the layout's epoch and the node may be
// split into a datacenter (high bits) and a worker (low bits). T+N+S is the
// layout's width: 63 normally, less for layouts whose IDs must stay small
// ([JSSafeLayout]); the bits above the width are always zero, so IDs are
// never negative. Either way the IDs of one node increase with (time,
// sequence); the order decides how the IDs of different nodes interleave
// within a tick.
//
// A Layout is an immutable value, safe to copy and to share between
// goroutines. Get one from a preset ([TwitterLayout], [SonyflakeLayout],
// [SonyflakeV2Layout], [DiscordLayout], [JSSafeLayout]; [github.com/ringflake/ringflake/layoutplan.Presets] lists
// them), [NewLayout] or [ParseLayout]. The zero Layout is not valid: [New]
// rejects it and its methods return zero values.
type Layout struct {
	epoch     time.Time
	unit      time.Duration
	timeBits  uint8
	dcBits    uint8
	workBits  uint8
	seqBits   uint8
	width     uint8
	order     Order
	timeShift uint8 // bits below the time: node and sequence
	nodeShift uint8 // bits below the node
	seqShift  uint8 // bits below the sequence
	preset    string
}

// Order is the order of the node and the sequence below the time in an
// ID. The zero value is [TimeNodeSequence].
type Order uint8

const (
	// TimeNodeSequence puts the node above the sequence: time | node |
	// sequence, as Twitter's Snowflake, bwmarrin/snowflake and Discord do.
	// It is the default.
	TimeNodeSequence Order = iota
	// TimeSequenceNode puts the sequence above the node: time | sequence
	// | node, as Sonyflake does.
	TimeSequenceNode
)

// String returns the order as [ParseLayout]'s order key writes it:
// "time,node,seq" or "time,seq,node".
func (o Order) String() string {
	switch o {
	case TimeNodeSequence:
		return "time,node,seq"
	case TimeSequenceNode:
		return "time,seq,node"
	}
	return fmt.Sprintf("Order(%d)", uint8(o))
}

// parseOrder reads an order as [Order.String] writes it: "time,node,seq"
// or "time,seq,node" (spaces around the names are allowed). Errors match
// [ErrInvalidLayout].
func parseOrder(s string) (Order, error) {
	names := strings.Split(s, ",")
	for i := range names {
		names[i] = strings.TrimSpace(names[i])
	}
	switch strings.Join(names, ",") {
	case "time,node,seq":
		return TimeNodeSequence, nil
	case "time,seq,node":
		return TimeSequenceNode, nil
	}
	return 0, &LayoutError{Field: "order", Reason: fmt.Sprintf("%q is neither time,node,seq nor time,seq,node", s)}
}

// LayoutSpec describes a layout for [NewLayout]. Every field must be set
// except Width, whose zero value means 63, DatacenterBits, whose zero
// value means the node is not split, and Order, whose zero value is
// [TimeNodeSequence].
type LayoutSpec struct {
	// Epoch is the instant time zero of IDs stands for. Not before
	// 1970-01-01T00:00:00Z.
	Epoch time.Time
	// Unit is the length of one tick: a whole number of milliseconds
	// (1 ms like Twitter, 10 ms like Sonyflake).
	Unit time.Duration
	// TimeBits is the number of bits for the tick count (at least 1).
	TimeBits int
	// DatacenterBits and WorkerBits make up the node id; a layout whose
	// node is not split uses WorkerBits only.
	DatacenterBits int
	WorkerBits     int
	// SequenceBits is the number of bits counting IDs within one tick.
	SequenceBits int
	// Width is the number of low bits IDs use: TimeBits + DatacenterBits +
	// WorkerBits + SequenceBits must equal it. Zero means 63.
	Width int
	// Order is the order of the node and the sequence below the time.
	Order Order
}

// NewLayout validates spec and returns its layout. Errors match
// [ErrInvalidLayout] and name the field at fault: a zero or pre-1970 epoch,
// a unit that is not a positive whole number of milliseconds, negative bit
// counts, TimeBits below 1, bits that do not add up to the width (63 unless
// given), a width above 63, or a lifetime longer than [time.Duration] can
// hold (about 292 years), an Order that is neither [TimeNodeSequence] nor
// [TimeSequenceNode].
func NewLayout(spec LayoutSpec) (Layout, error) {
	bad := func(field, format string, args ...any) (Layout, error) {
		return Layout{}, &LayoutError{Field: field, Reason: fmt.Sprintf(format, args...)}
	}
	switch {
	case spec.Epoch.IsZero():
		return bad("Epoch", "not set")
	case spec.Epoch.Before(time.Unix(0, 0)):
		return bad("Epoch", "%s is before 1970-01-01T00:00:00Z", spec.Epoch.Format(time.RFC3339Nano))
	case spec.Unit <= 0 || spec.Unit%time.Millisecond != 0:
		return bad("Unit", "%v is not a positive whole number of milliseconds", spec.Unit)
	case spec.Order != TimeNodeSequence && spec.Order != TimeSequenceNode:
		return bad("Order", "%v is neither TimeNodeSequence nor TimeSequenceNode", spec.Order)
	}
	width := spec.Width
	if width == 0 {
		width = 63
	}
	if width < 1 || width > 63 {
		return bad("Width", "%d is outside [1, 63]", spec.Width)
	}
	for _, f := range []struct {
		name string
		bits int
		min  int
	}{{"TimeBits", spec.TimeBits, 1}, {"DatacenterBits", spec.DatacenterBits, 0},
		{"WorkerBits", spec.WorkerBits, 0}, {"SequenceBits", spec.SequenceBits, 0}} {
		if f.bits < f.min || f.bits > 63 {
			return bad(f.name, "%d is outside [%d, 63]", f.bits, f.min)
		}
	}
	if sum := spec.TimeBits + spec.DatacenterBits + spec.WorkerBits + spec.SequenceBits; sum != width {
		return bad("bits", "time %d + datacenter %d + worker %d + sequence %d = %d, want %d",
			spec.TimeBits, spec.DatacenterBits, spec.WorkerBits, spec.SequenceBits, sum, width)
	}
	if maxTick := int64(1)<<spec.TimeBits - 1; maxTick > math.MaxInt64/int64(spec.Unit) {
		return bad("TimeBits", "%d bits of %v reach beyond the about 292 years a time.Duration holds; use fewer bits or a smaller unit",
			spec.TimeBits, spec.Unit)
	}
	l := Layout{
		epoch:    spec.Epoch,
		unit:     spec.Unit,
		timeBits: uint8(spec.TimeBits),
		dcBits:   uint8(spec.DatacenterBits),
		workBits: uint8(spec.WorkerBits),
		seqBits:  uint8(spec.SequenceBits),
		width:    uint8(width),
		order:    spec.Order,
	}
	nodeBits := l.dcBits + l.workBits
	l.timeShift = nodeBits + l.seqBits
	if l.order == TimeSequenceNode {
		l.seqShift = nodeBits
	} else {
		l.nodeShift = l.seqBits
	}
	return l, nil
}

// Spec returns the fields l was made from (Width always set).
func (l Layout) Spec() LayoutSpec {
	return LayoutSpec{Epoch: l.epoch, Unit: l.unit, TimeBits: int(l.timeBits),
		DatacenterBits: int(l.dcBits), WorkerBits: int(l.workBits),
		SequenceBits: int(l.seqBits), Width: int(l.width), Order: l.order}
}

// IsZero reports whether l is the zero Layout, which is not valid.
func (l Layout) IsZero() bool { return l.width == 0 }

// MaxTick returns the greatest tick the layout can represent.
func (l Layout) MaxTick() int64 { return mask(l.timeBits) }

// MaxNode returns the greatest node id of the layout (datacenter and worker
// together).
func (l Layout) MaxNode() int64 { return mask(l.dcBits + l.workBits) }

// MaxSequence returns the greatest sequence number within one tick.
func (l Layout) MaxSequence() int64 { return mask(l.seqBits) }

// Last returns the start of the last tick the layout can represent: a
// generator with this layout fails with [ErrLayoutExpired] once its clock
// reads past the end of that tick.
func (l Layout) Last() time.Time { return l.TickTime(l.MaxTick()) }

// TickTime returns the instant tick starts at.
func (l Layout) TickTime(tick int64) time.Time {
	return l.epoch.Add(time.Duration(tick) * l.unit)
}

// Tick returns the tick t falls in (rounding down, so it is negative before
// the epoch). The zero Layout, which has no ticks, returns 0.
func (l Layout) Tick(t time.Time) int64 {
	if l.unit <= 0 {
		return 0
	}
	return floorDiv(int64(t.Sub(l.epoch)), int64(l.unit))
}

// NodeID combines a datacenter and a worker id into the node id [New]
// takes. Errors match [ErrNodeOutOfRange].
func (l Layout) NodeID(datacenter, worker int64) (int64, error) {
	if datacenter < 0 || datacenter > mask(l.dcBits) {
		return 0, &NodeError{Field: "datacenter", Value: datacenter, Max: mask(l.dcBits)}
	}
	if worker < 0 || worker > mask(l.workBits) {
		return 0, &NodeError{Field: "worker", Value: worker, Max: mask(l.workBits)}
	}
	return datacenter<<l.workBits | worker, nil
}

func (l Layout) checkNode(node int64) error {
	if node < 0 || node > l.MaxNode() {
		return &NodeError{Field: "node", Value: node, Max: l.MaxNode()}
	}
	return nil
}

// Compose returns the ID for time t (in whatever tick t falls), node and
// sequence seq. It needs no generator and issues nothing: uniqueness is the
// caller's affair. Errors match [ErrInvalidLayout] for the zero layout,
// [ErrBeforeEpoch] and [ErrLayoutExpired] for a time the layout cannot
// express, and [ErrNodeOutOfRange] or [ErrInvalidID] (for the sequence)
// for values that do not fit.
func (l Layout) Compose(t time.Time, node, seq int64) (ID, error) {
	if l.IsZero() {
		return 0, &LayoutError{Field: "Layout", Reason: "zero value"}
	}
	tick := l.Tick(t)
	switch {
	case tick < 0:
		return 0, &timeError{err: ErrBeforeEpoch, at: t, edge: l.epoch}
	case tick > l.MaxTick():
		return 0, &timeError{err: ErrLayoutExpired, at: t, edge: l.Last()}
	}
	if err := l.checkNode(node); err != nil {
		return 0, err
	}
	if seq < 0 || seq > l.MaxSequence() {
		return 0, &SyntaxError{Input: strconv.FormatInt(seq, 10), Offset: -1,
			Reason: fmt.Sprintf("sequence out of range [0, %d]", l.MaxSequence())}
	}
	return l.compose(tick, node, seq), nil
}

func (l Layout) compose(tick, node, seq int64) ID {
	return ID(tick<<l.timeShift | node<<l.nodeShift | seq<<l.seqShift)
}

// minID returns the smallest ID any node can stamp in the tick of t: the
// tick's ID with node 0 and sequence 0. maxID returns the largest: every
// node and sequence bit set. In either field order every ID of the tick
// lies between the two. Times outside the layout saturate to its first
// or last tick. The zero Layout returns 0.
func (l Layout) minID(t time.Time) ID {
	return l.compose(l.clampTick(t), 0, 0)
}

// maxID returns the largest ID any node can stamp in the tick of t; see
// minID.
func (l Layout) maxID(t time.Time) ID {
	if l.IsZero() {
		return 0
	}
	return l.compose(l.clampTick(t), 0, 0) | ID(mask(l.timeShift))
}

// clampTick returns t's tick, moved into [0, MaxTick].
func (l Layout) clampTick(t time.Time) int64 {
	if l.IsZero() {
		return 0
	}
	return min(max(l.Tick(t), 0), l.MaxTick())
}

// Bounds returns the smallest and largest IDs stamped from the start of
// from's tick to the end of to's tick, for a query such as
//
//	WHERE id BETWEEN lo AND hi
//
// lo is the ID of from's tick with node 0 and sequence 0, hi the ID of
// to's tick with every node and sequence bit set: in either field order
// every ID of those ticks lies between the two. Bounds(t, t) bounds the
// IDs of t's tick. When from's tick comes after to's, lo is greater than
// hi and BETWEEN matches nothing. A from before the epoch counts as the
// first tick and a to past [Layout.Last] as the last one.
//
// Errors say when no ID of the layout can fall in the range: to is before
// the epoch ([ErrBeforeEpoch]) or from is past the layout's last tick
// ([ErrLayoutExpired]). The zero Layout is [ErrInvalidLayout].
func (l Layout) Bounds(from, to time.Time) (lo, hi ID, err error) {
	switch {
	case l.IsZero():
		return 0, 0, &LayoutError{Field: "Layout", Reason: "zero value"}
	case l.Tick(to) < 0:
		return 0, 0, &timeError{err: ErrBeforeEpoch, at: to, edge: l.epoch}
	case l.Tick(from) > l.MaxTick():
		return 0, 0, &timeError{err: ErrLayoutExpired, at: from, edge: l.Last()}
	}
	return l.minID(from), l.maxID(to), nil
}

// timeLeft returns how long after now the layout's last tick ends, or 0
// once it has.
func (l Layout) timeLeft(now time.Time) time.Duration {
	if l.IsZero() {
		return 0
	}
	return max(l.Last().Add(l.unit).Sub(now), 0)
}

// Parts is an ID taken apart under a layout.
type Parts struct {
	Time       time.Time // start of the ID's tick
	Tick       int64     // units since the layout's epoch
	Node       int64     // datacenter and worker together
	Datacenter int64     // 0 when the layout's node is not split
	Worker     int64
	Sequence   int64
}

// Decompose takes id apart. Errors match [ErrInvalidID] when id is
// negative or uses bits above the layout's width, and [ErrInvalidLayout]
// for the zero layout.
func (l Layout) Decompose(id ID) (Parts, error) {
	if l.IsZero() {
		return Parts{}, &LayoutError{Field: "Layout", Reason: "zero value"}
	}
	if id < 0 || int64(id)>>l.width != 0 {
		return Parts{}, &SyntaxError{Input: id.String(), Offset: -1,
			Reason: fmt.Sprintf("does not fit the layout's %d bits", l.width)}
	}
	tick := id.tick(l)
	return Parts{
		Time:       l.TickTime(tick),
		Tick:       tick,
		Node:       id.Node(l),
		Datacenter: int64(id) >> (l.nodeShift + l.workBits) & mask(l.dcBits),
		Worker:     int64(id) >> l.nodeShift & mask(l.workBits),
		Sequence:   id.Sequence(l),
	}, nil
}

// String returns the preset's name for a preset layout and otherwise the
// key=value form ParseLayout reads, so ParseLayout(l.String()) returns l.
func (l Layout) String() string {
	if l.IsZero() {
		return "<zero layout>"
	}
	if l.preset != "" {
		return l.preset
	}
	var b strings.Builder
	fmt.Fprintf(&b, "epoch=%s,unit=%v,time=%d,", l.epoch.UTC().Format(time.RFC3339Nano), l.unit, l.timeBits)
	if l.dcBits > 0 {
		fmt.Fprintf(&b, "dc=%d,worker=%d,", l.dcBits, l.workBits)
	} else {
		fmt.Fprintf(&b, "node=%d,", l.workBits)
	}
	fmt.Fprintf(&b, "seq=%d", l.seqBits)
	if l.width != 63 {
		fmt.Fprintf(&b, ",width=%d", l.width)
	}
	if l.order != TimeNodeSequence {
		fmt.Fprintf(&b, ",order=%s", l.order)
	}
	return b.String()
}

// Equal reports whether l and m lay out IDs identically, bit for bit:
// the same epoch instant, unit, widths of the time, node and sequence
// fields, and field order. Names do not count ("twitter" and
// "twitter,node=10" are equal), nor does the split of the node into a
// datacenter and a worker, which only reads the node's bits, nor the
// order of a layout without node bits or without sequence bits, whose
// two orders make the same IDs. Equal layouts are one layout to every
// guard: the process's, a host's, a mark's.
func (l Layout) Equal(m Layout) bool { return l.ident() == m.ident() }

// layoutIdent is what makes a layout's IDs: two layouts with one ident
// compose every (tick, node, sequence) into the same ID.
type layoutIdent struct {
	epochSec           int64 // the epoch instant: Unix seconds and nanoseconds,
	epochNsec          int32 // whatever its location
	unit               time.Duration
	timeBits, nodeBits uint8
	seqBits            uint8
	order              Order // TimeNodeSequence when either field is empty
}

// ident returns l's identity: see [Layout.Equal].
func (l Layout) ident() layoutIdent {
	order := l.order
	if l.dcBits+l.workBits == 0 || l.seqBits == 0 {
		order = TimeNodeSequence // one field: nothing to order
	}
	return layoutIdent{
		epochSec: l.epoch.Unix(), epochNsec: int32(l.epoch.Nanosecond()), unit: l.unit,
		timeBits: l.timeBits, nodeBits: l.dcBits + l.workBits, seqBits: l.seqBits,
		order: order,
	}
}

// ParseLayout reads a layout from a configuration string: a preset name
// ("twitter", "sonyflake", "sonyflake-v2", "discord", "js-safe"),
// optionally followed by comma-separated overrides, or the overrides
// alone, which then start from the Twitter layout. Keys:
//
//	epoch=RFC3339 time   unit=DURATION (whole ms)   width=BITS
//	time=BITS   dc=BITS   worker=BITS   node=BITS (worker bits, no datacenter)   seq=BITS
//	order=time,node,seq | order=time,seq,node   (the order's own commas belong to it)
//
// For example "sonyflake,epoch=2024-01-01T00:00:00Z",
// "epoch=2020-01-01T00:00:00Z,time=41,node=0,seq=22" or
// "sonyflake,order=time,node,seq" (the sonyflake preset in ringflake's
// former field order). The result is validated like [NewLayout]. Errors
// match [ErrInvalidLayout] and name the offending key.
func ParseLayout(s string) (Layout, error) {
	parts := strings.Split(s, ",")
	first := strings.TrimSpace(parts[0])
	base, named := presetNamed(first)
	if named {
		parts = parts[1:]
	} else {
		base = TwitterLayout()
	}
	if !named && !strings.Contains(first, "=") {
		return Layout{}, &LayoutError{Field: "preset", Reason: fmt.Sprintf("%q is not %s, nor a key=value pair", first, presetNames)}
	}
	if len(parts) == 0 {
		return base, nil
	}
	spec := base.Spec()
	for i := 0; i < len(parts); i++ {
		key, val, ok := strings.Cut(strings.TrimSpace(parts[i]), "=")
		if !ok {
			return Layout{}, &LayoutError{Field: strings.TrimSpace(parts[i]), Reason: "want key=value"}
		}
		if strings.TrimSpace(key) == "order" {
			// The order's value has commas of its own: it takes the
			// next two parts, the field names after the first.
			if i+2 >= len(parts) {
				return Layout{}, &LayoutError{Field: "order", Reason: fmt.Sprintf("%q: want order=time,node,seq or order=time,seq,node", strings.Join(parts[i:], ","))}
			}
			val = strings.Join(append([]string{val}, parts[i+1:i+3]...), ",")
			i += 2
		}
		if err := setLayoutKey(&spec, strings.TrimSpace(key), val); err != nil {
			return Layout{}, err
		}
	}
	return NewLayout(spec)
}

func setLayoutKey(spec *LayoutSpec, key, val string) error {
	switch key {
	case "epoch":
		t, err := time.Parse(time.RFC3339Nano, val)
		if err != nil {
			return &LayoutError{Field: key, Reason: fmt.Sprintf("%q is not an RFC 3339 time", val)}
		}
		spec.Epoch = t
		return nil
	case "unit":
		d, err := time.ParseDuration(val)
		if err != nil {
			return &LayoutError{Field: key, Reason: fmt.Sprintf("%q is not a duration", val)}
		}
		spec.Unit = d
		return nil
	case "order":
		o, err := parseOrder(val)
		if err != nil {
			return err
		}
		spec.Order = o
		return nil
	}
	var field *int
	switch key {
	case "time":
		field = &spec.TimeBits
	case "dc":
		field = &spec.DatacenterBits
	case "worker":
		field = &spec.WorkerBits
	case "node":
		spec.DatacenterBits = 0
		field = &spec.WorkerBits
	case "seq":
		field = &spec.SequenceBits
	case "width":
		field = &spec.Width
	default:
		return &LayoutError{Field: key, Reason: "unknown key; want epoch, unit, time, dc, worker, node, seq, width or order"}
	}
	n, err := strconv.Atoi(val)
	if err != nil {
		return &LayoutError{Field: key, Reason: fmt.Sprintf("%q is not a whole number of bits", val)}
	}
	*field = n
	return nil
}

func mask(bits uint8) int64 { return int64(1)<<bits - 1 }

// floorDiv divides rounding towards negative infinity; b > 0.
func floorDiv(a, b int64) int64 {
	q := a / b
	if a%b < 0 {
		q--
	}
	return q
}
