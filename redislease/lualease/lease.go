package lualease

import (
	"context"
	"fmt"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/ringflake/ringflake"
	"github.com/ringflake/ringflake/lease"
)

// Options configure [Acquire], [Claim] and [List]; the type is
// [lease.Options], shared with etcdlease. With Redis, TTLs are whole
// milliseconds, and a prefix p owns the keys "{p}:lease:<id>",
// "{p}:node:<id>", "{p}:epoch" and "{p}:quiet" (see package redislease's
// documentation); Options.Timeout is enforced by the lease even with a
// client that ignores its context.
type Options = lease.Options

// rules: TTLs are whole milliseconds; TIME reads the server's clock.
var rules = lease.Rules{Package: "redislease", TTLUnit: time.Millisecond, ServerClock: true}

// settings are Options with defaults applied and validated.
type settings struct{ lease.Config }

func resolve(opts Options, client ScriptRunner) (settings, error) {
	c, err := opts.Resolve(rules)
	if err == nil && client == nil {
		err = &lease.OptionError{Package: rules.Package, Reason: "nil client"}
	}
	return settings{c}, err
}

// keyBase is "{prefix}": every key of the prefix shares its hash slot.
func (s *settings) keyBase() string { return "{" + s.Prefix + "}" }

// quietMillis is the quiet period in whole milliseconds, rounded up.
func (s *settings) quietMillis() int64 {
	return int64((s.Quiet() + time.Millisecond - 1) / time.Millisecond)
}

// acquireChunk is how many ids one call of the acquisition script tries,
// so that a large range that is mostly held does not block the server for
// long (about 10 ms per 1024 ids).
const acquireChunk = 1024

// A Lease holds a node id in Redis until it is lost or closed, through
// either of redislease's transports (package redislease's Lease is this
// type). It
// implements [ringflake.Lease] and [ringflake.MarkStore]: pass it to
// ringflake.New with [ringflake.WithLease] and the generator checks
// Held on every ID and keeps its high-water mark with the lease. Node,
// Held, WaitHeld, Done, Err, MarkAhead and MaxLead are those of the
// embedded [lease.Keeper].
//
// A Lease is safe for concurrent use by multiple goroutines.
type Lease struct {
	*lease.Keeper
	stop     func(reason error) bool
	node     int64 // Node(), for the renewal goroutine, which may start before Keep returns
	client   ScriptRunner
	s        settings
	token    string
	epoch    string // the prefix's epoch when the id was acquired
	leaseKey string
	nodeKey  string
	offset   atomic.Pointer[lease.Offset] // ClockOffset; nil when not measured
	saves    atomic.Int64                 // SaveMark calls so far: each save's number
}

var (
	_ ringflake.Lease     = (*Lease)(nil)
	_ ringflake.MarkStore = (*Lease)(nil)
)

// Acquire takes the lowest free node id in [0, Layout.MaxNode()] under
// opts.Prefix, with a new random token, and keeps it renewed in the
// background until [Lease.Close] or until it is lost. ctx bounds the
// acquisition, and Options.Timeout each request of it. The ids are tried
// in chunks of 1024, one script call each, so that a range that is mostly
// held does not block Redis for long; each SET NX is atomic, so two
// acquirers never get the same id, and the id is the lowest free one
// unless a lower one was freed while the later chunks were tried.
//
// When the server has no epoch for the prefix (a first start, or a server
// that lost the prefix's data) or its process changed since a script last
// ran (a restart, a failover), the lease does not hold its id — Held is
// false, a generator fails with ringflake.ErrLeaseLost — until a quiet
// period of TTL + Margin + MaxLead has passed, after which every lease the
// server may have forgotten has expired and the clock has passed every ID
// its holder may have issued ahead. WaitHeld waits for it.
//
// Before it takes an id, Acquire measures the offset of the server's
// clock (TIME) from Options.Clock, unless Options.MaxSkew is negative, and
// refuses a clock that is certainly further off than MaxSkew (default
// 1 s); renewals measure it again and report a drift (see the package
// documentation, "Fleet skew").
//
// Errors:
//   - lease.ErrClockSkew: this host's clock is certainly further from the
//     server's than Options.MaxSkew (a [*lease.SkewError] with the
//     measured offset and its uncertainty);
//   - ringflake.ErrNodeUnavailable: every id of the range is held (a
//     [*lease.RangeFullError]);
//   - ringflake.ErrInvalidOption: Options that cannot work (a TTL that is
//     not a positive whole number of milliseconds, RenewEvery + Margin not
//     shorter than TTL, negative durations), a nil client;
//   - otherwise the client's error, context.DeadlineExceeded (a request
//     took longer than Options.Timeout), or ctx's error.
func Acquire(ctx context.Context, client ScriptRunner, opts Options) (*Lease, error) {
	s, err := resolve(opts, client)
	if err != nil {
		return nil, err
	}
	offset, err := s.checkSkew(ctx, client)
	if err != nil {
		return nil, err
	}
	token, epoch := lease.NewToken(), lease.NewToken()
	for from := int64(0); from <= s.MaxNode; from += acquireChunk {
		l, _, err := s.take(ctx, client, from, min(from+acquireChunk-1, s.MaxNode), token, epoch, offset)
		if l != nil || err != nil {
			return l, err
		}
	}
	return nil, &lease.RangeFullError{Package: rules.Package, Prefix: s.Prefix, Nodes: s.MaxNode + 1}
}

// Claim takes node id node under opts.Prefix, with a new random token, and
// keeps it renewed like [Acquire] — the same keys, fencing, quiet periods
// and marks — for a node id that is configured rather than leased (static,
// from the environment, a StatefulSet's ordinal): a fleet guard. A second
// process that claims an id while another holds it fails at once, with
// the holder's [lease.Options.Holder]; a holder that loses its claim stops
// issuing (Held is false, Done is closed). Ids claimed and ids acquired
// share the range: Acquire skips a claimed id, and a Claim of an acquired
// id fails. Like Acquire, Claim first measures the offset to the server's
// clock and refuses a clock further off than Options.MaxSkew.
//
// Errors:
//   - lease.ErrClockSkew: as for Acquire;
//   - ringflake.ErrNodeUnavailable: another lease holds the id (a
//     [*lease.HeldError], naming its holder);
//   - ringflake.ErrNodeOutOfRange: node does not fit Options.Layout;
//   - ringflake.ErrInvalidOption: as for Acquire;
//   - otherwise the client's error, context.DeadlineExceeded (a request
//     took longer than Options.Timeout), or ctx's error.
func Claim(ctx context.Context, client ScriptRunner, node int64, opts Options) (*Lease, error) {
	s, err := resolve(opts, client)
	if err != nil {
		return nil, err
	}
	if _, err := ringflake.StaticNode(node).NodeID(ctx, s.Layout); err != nil {
		return nil, err
	}
	offset, err := s.checkSkew(ctx, client)
	if err != nil {
		return nil, err
	}
	l, holder, err := s.take(ctx, client, node, node, lease.NewToken(), lease.NewToken(), offset)
	if l != nil || err != nil {
		return l, err
	}
	return nil, &lease.HeldError{Package: rules.Package, Prefix: s.Prefix, Node: node, Holder: holder}
}

// take runs acquireScript once, for the lowest free id of [from, to]. It
// returns a nil Lease when every id there is held, with the holder of to.
// offset is the lease's first ClockOffset.
func (s *settings) take(ctx context.Context, client ScriptRunner, from, to int64, token, newEpoch string, offset lease.Offset) (*Lease, string, error) {
	sent := s.Clock.Now()
	v, err := callSlice(ctx, client, s.Timeout, acquireScript, []string{s.keyBase()},
		itoa(from), itoa(to), token, itoa(s.TTL.Milliseconds()), s.Holder, newEpoch, itoa(s.quietMillis()))
	if err != nil {
		return nil, "", fmt.Errorf("redislease: acquiring a node id: %w", err)
	}
	r, ok := parseTaken(v)
	if !ok {
		return nil, "", fmt.Errorf("redislease: acquiring a node id: unexpected reply %v", v)
	}
	if r.node < 0 {
		return nil, r.holder, nil
	}
	var notBefore time.Time
	if r.quiet > 0 {
		// The quiet period ends r.quiet after the script ran, which was
		// before now.
		notBefore = s.Clock.Now().Add(r.quiet)
	}
	l := &Lease{
		client:   client,
		s:        *s,
		node:     r.node,
		token:    token,
		epoch:    r.epoch,
		leaseKey: s.keyBase() + ":lease:" + strconv.FormatInt(r.node, 10),
		nodeKey:  s.keyBase() + ":node:" + strconv.FormatInt(r.node, 10),
	}
	if !offset.IsZero() {
		l.offset.Store(&offset)
	}
	l.Keeper, l.stop = lease.Keep(s.Config, r.node, notBefore, sent.Add(s.TTL-s.Margin), l.renew)
	return l, "", nil
}

// taken is acquireScript's reply.
type taken struct {
	node   int64 // -1 when every id tried is held
	epoch  string
	quiet  time.Duration // left of a quiet period
	holder string        // when node is -1: the holder of the last id tried
}

func parseTaken(v []any) (taken, bool) {
	if len(v) != 4 {
		return taken{}, false
	}
	node, ok1 := v[0].(int64)
	epoch, ok2 := v[1].(string)
	ms, ok3 := v[2].(int64)
	holder, ok4 := v[3].(string)
	return taken{node, epoch, time.Duration(ms) * time.Millisecond, holder}, ok1 && ok2 && ok3 && ok4
}

// renew runs renewScript once, bounded by Options.Timeout, and, when it
// renewed or retook the id, measures the offset to the server's clock,
// bounded by Options.Timeout again.
func (l *Lease) renew(ctx context.Context, at time.Time) lease.Renewal {
	r := l.renewOnce(ctx, at)
	if (r.Kind == lease.Renewed || r.Kind == lease.Retaken) && l.s.MeasuresSkew() {
		// A failed measurement leaves the offset unmeasured: the renewal
		// itself succeeded, and the next one measures again.
		if o, err := measure(ctx, l.client, []string{l.s.keyBase()}, l.s.Clock, lease.DefaultSamples, l.s.Timeout); err == nil {
			r.Offset = o
			l.offset.Store(&o)
		}
	}
	return r
}

// renewOnce runs renewScript once, bounded by Options.Timeout.
func (l *Lease) renewOnce(ctx context.Context, at time.Time) lease.Renewal {
	r := lease.Renewal{Sent: at, TTL: l.s.TTL}
	v, err := callSlice(ctx, l.client, l.s.Timeout, renewScript, []string{l.s.keyBase()},
		itoa(l.node), l.token, itoa(l.s.TTL.Milliseconds()), l.epoch, itoa(l.s.quietMillis()))
	var code, ms int64
	if err == nil {
		var ok1, ok2 bool
		if len(v) == 2 {
			code, ok1 = v[0].(int64)
			ms, ok2 = v[1].(int64)
		}
		if !ok1 || !ok2 {
			err = fmt.Errorf("unexpected reply %v", v)
		}
	}
	switch {
	case err != nil:
		r.Kind = lease.RenewFailed
		r.Err = fmt.Errorf("redislease: renewing node %d: %w", l.node, err)
	case code == 1:
		r.Kind = lease.Renewed
	case code == 2:
		r.Kind = lease.Retaken
		if ms > 0 {
			// The server process changed: the key may be gone because
			// the server lost it, with the id held by someone it forgot.
			r.NotBefore = l.s.Clock.Now().Add(time.Duration(ms) * time.Millisecond)
		}
	case code == 0:
		r.Kind = lease.Lost
		r.Err = fmt.Errorf("%w: redislease: node %d is held by another holder", ringflake.ErrLeaseLost, l.node)
	case code == -2:
		r.Kind = lease.Lost
		r.Err = fmt.Errorf("%w: %w: prefix %q has no epoch %s any more (node %d)", ringflake.ErrLeaseLost, lease.ErrDataLost, l.s.Prefix, l.epoch, l.node)
	default:
		r.Kind = lease.Lost
		r.Err = fmt.Errorf("%w: redislease: node %d expired and another holder acquired it since", ringflake.ErrLeaseLost, l.node)
	}
	return r
}

// Close stops renewing and releases the id: it deletes the lease key if it
// still holds this lease's token, so the id is free at once. Close a
// generator using the lease first — its Close saves the exact high-water
// mark through the lease. Closing twice returns nil the second time. The
// release is bounded by ctx and by Options.Timeout; Close returns the
// client's error, context.DeadlineExceeded or ctx's error (the id then
// stays held until its TTL runs out). After Close, Err returns
// [lease.ErrClosed].
func (l *Lease) Close(ctx context.Context) error {
	if !l.stop(lease.ErrClosed) {
		return nil
	}
	_, err := call(ctx, l.client, l.s.Timeout, releaseScript, []string{l.leaseKey}, l.token)
	if err != nil {
		return fmt.Errorf("redislease: releasing node %d: %w", l.node, err)
	}
	return nil
}

// LoadMark returns the node's high-water mark, kept in Redis without a TTL
// so that it outlives leases: the mark of the id's previous holders, or the
// zero Mark when no holder ever saved one. It implements
// [ringflake.MarkStore]. Errors match ringflake.ErrLeaseLost when another
// holder acquired the id since this lease did, ringflake.ErrMarkCorrupt
// for a stored mark that is not a mark (a bare time, as earlier versions
// stored, still reads), and context.DeadlineExceeded when the request takes
// longer than Options.Timeout.
func (l *Lease) LoadMark(ctx context.Context) (ringflake.Mark, error) {
	v, err := callSlice(ctx, l.client, l.s.Timeout, loadMarkScript, []string{l.nodeKey})
	if err != nil {
		return ringflake.Mark{}, fmt.Errorf("redislease: loading the mark of node %d: %w", l.node, err)
	}
	if len(v) != 2 || v[0] != l.token {
		return ringflake.Mark{}, fmt.Errorf("%w: redislease: node %d was acquired by another holder", ringflake.ErrLeaseLost, l.node)
	}
	if v[1] == nil {
		return ringflake.Mark{}, nil
	}
	s, _ := v[1].(string)
	var m ringflake.Mark
	if err := m.UnmarshalText([]byte(s)); err != nil {
		return ringflake.Mark{}, &ringflake.MarkError{Path: "redis " + l.nodeKey + " mark", Reason: fmt.Sprintf("%q is not a mark", s)}
	}
	return m, nil
}

// SaveMark stores mark while, and only while, this lease's token holds the
// id: the check and the write are one Lua script, so a holder that lost
// the id (even one paused past its TTL that does not know it yet) cannot
// overwrite the mark of the next holder. Saves take effect in the order
// of the calls: each carries its number, and the script ignores one that
// reaches Redis after a later save of this lease (a request abandoned at
// its timeout may still arrive). It implements [ringflake.MarkStore].
// Errors match ringflake.ErrLeaseLost when the token does not hold the id,
// [lease.ErrStaleSave] when a later save was stored first, and
// context.DeadlineExceeded when the request takes longer than
// Options.Timeout (the mark may then be saved or not — but never after a
// later save).
// How durable a saved mark is depends on the server's persistence (see the
// package documentation).
func (l *Lease) SaveMark(ctx context.Context, mark ringflake.Mark) error {
	text, _ := mark.MarshalText() // never fails
	seq := l.saves.Add(1)
	n, err := callInt(ctx, l.client, l.s.Timeout, saveMarkScript, []string{l.leaseKey, l.nodeKey}, l.token, string(text), itoa(seq))
	switch {
	case err != nil:
		return fmt.Errorf("redislease: saving the mark of node %d: %w", l.node, err)
	case n == 2:
		return fmt.Errorf("%w: redislease: node %d: mark not saved", lease.ErrStaleSave, l.node)
	case n != 1:
		return fmt.Errorf("%w: redislease: node %d is not held by this lease; mark not saved", ringflake.ErrLeaseLost, l.node)
	}
	return nil
}
