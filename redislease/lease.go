package redislease

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/benbjohnson/clock"
	"github.com/redis/go-redis/v9"

	"github.com/ringflake/ringflake"
	"github.com/ringflake/ringflake/internal/leasekeep"
)

// Defaults of [Options].
const (
	DefaultPrefix = "ringflake"
	DefaultTTL    = 10 * time.Second
)

// ErrClosed is what [Lease.Err] returns after [Lease.Close].
var ErrClosed = errors.New("redislease: lease closed")

// ErrDataLost is matched, together with ringflake.ErrLeaseLost, by the
// error of a lease lost because the server no longer has the prefix's
// epoch: it lost the prefix's data (a restart without persistence,
// FLUSHALL, a failover to an empty replica) or an operator deleted the
// epoch to force a quiet period. See the package documentation.
var ErrDataLost = errors.New("redislease: the server lost the prefix's data")

// A RangeFullError reports that every node id of a prefix's range is
// held. It matches ringflake.ErrNodeUnavailable.
type RangeFullError struct {
	Prefix string
	// Nodes is how many ids the range has: Layout.MaxNode() + 1.
	Nodes int64
}

// Error names the prefix and the size of its range.
func (e *RangeFullError) Error() string {
	return fmt.Sprintf("%v: redislease: all %d node ids under prefix %q are held", ringflake.ErrNodeUnavailable, e.Nodes, e.Prefix)
}

// Is reports whether target is ringflake.ErrNodeUnavailable.
func (e *RangeFullError) Is(target error) bool { return target == ringflake.ErrNodeUnavailable }

// Options configure [Acquire] and [List]. The zero value of every field
// means its documented default; leases that share a Prefix must share a
// Layout's node range.
type Options struct {
	// Prefix names the set of node ids the leases share: keys are
	// "{Prefix}:lease:<id>", "{Prefix}:node:<id>", "{Prefix}:epoch" and
	// "{Prefix}:quiet". Default [DefaultPrefix].
	Prefix string

	// Layout gives the range of ids: [0, Layout.MaxNode()]. Default
	// ringflake.TwitterLayout(), like ringflake.New.
	Layout ringflake.Layout

	// TTL is how long the id stays held on the server without a renewal:
	// the time a crashed holder's id stays unusable, and the longest a
	// holder cut off from Redis keeps issuing. Default [DefaultTTL].
	TTL time.Duration

	// RenewEvery is the renewal interval. Default TTL/3, so that two
	// renewals in a row may fail before the lease may have expired.
	RenewEvery time.Duration

	// Margin is subtracted from every TTL when the lease computes how long
	// it certainly holds the id, for the holder's clock running slower than
	// the server's. Default TTL/100 + 2ms (the allowance Redlock uses).
	Margin time.Duration

	// Timeout bounds every request the lease makes: each script call of
	// Acquire and List, renewals, marks loaded and saved for a generator,
	// the release of Close. The lease enforces it itself, whatever the
	// client's options: go-redis ignores context deadlines unless the
	// client has ContextTimeoutEnabled, so the lease stops waiting at the
	// deadline and lets the abandoned call run out in the background (it
	// may still reach the server). Set ContextTimeoutEnabled on the client
	// all the same, so that an abandoned call also gives its connection
	// back at the deadline rather than at the client's ReadTimeout.
	// Default RenewEvery.
	Timeout time.Duration

	// Holder describes the holder for [List]. Default "HOSTNAME/PID".
	Holder string

	// Clock times renewals and expiry. Default clock.New(), the system
	// clock; tests pass a *clock.Mock.
	Clock clock.Clock

	// OnEvent, when set, is called with every renewal, failure, expiry
	// and loss, from the lease's renewal goroutine: it must return quickly.
	OnEvent func(Event)
}

// settings are Options with defaults applied and validated.
type settings struct {
	leasekeep.Config
	onEvent func(Event)
}

func (o Options) settings() (settings, error) {
	c, err := leasekeep.Config{
		Prefix: o.Prefix, Layout: o.Layout, TTL: o.TTL, RenewEvery: o.RenewEvery,
		Margin: o.Margin, Timeout: o.Timeout, Holder: o.Holder, Clock: o.Clock,
	}.Resolve(leasekeep.Rules{
		Package:       "redislease",
		DefaultPrefix: DefaultPrefix,
		DefaultTTL:    DefaultTTL,
		TTLUnit:       time.Millisecond,
		TTLUnitName:   "milliseconds",
	})
	if err != nil {
		return settings{}, err
	}
	return settings{Config: c, onEvent: o.OnEvent}, nil
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

// A Lease holds a node id in Redis until it is lost or closed. It
// implements [ringflake.Lease] and [ringflake.MarkStore]: pass it to
// ringflake.New with [ringflake.WithLease] and the generator checks
// [Lease.Held] on every ID and keeps its high-water mark with the lease.
//
// A Lease is safe for concurrent use by multiple goroutines.
type Lease struct {
	client   redis.Scripter
	s        settings
	node     int64
	token    string
	epoch    string // the prefix's epoch when the id was acquired
	leaseKey string
	nodeKey  string
	k        *leasekeep.Keeper
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
// period of TTL + Margin has passed, after which every lease the server
// may have forgotten has expired. [Lease.WaitHeld] waits for it.
//
// Errors:
//   - ringflake.ErrNodeUnavailable: every id of the range is held (a
//     [*RangeFullError]);
//   - ringflake.ErrInvalidOption: Options that cannot work (a TTL that is
//     not a positive whole number of milliseconds, RenewEvery + Margin not
//     shorter than TTL, negative durations), a nil client;
//   - otherwise the client's error, context.DeadlineExceeded (a request
//     took longer than Options.Timeout), or ctx's error.
func Acquire(ctx context.Context, client redis.Scripter, opts Options) (*Lease, error) {
	s, err := opts.settings()
	if err != nil {
		return nil, err
	}
	if client == nil {
		return nil, &leasekeep.OptionError{Package: "redislease", Reason: "nil client"}
	}
	token := leasekeep.NewToken()
	newEpoch := leasekeep.NewToken()
	for from := int64(0); from <= s.MaxNode; from += acquireChunk {
		to := min(from+acquireChunk-1, s.MaxNode)
		sent := s.Clock.Now()
		v, err := leasekeep.Call(ctx, s.Timeout, func(ctx context.Context) ([]any, error) {
			return acquireScript.Run(ctx, client, []string{s.keyBase()},
				from, to, token, s.TTL.Milliseconds(), s.Holder, newEpoch, s.quietMillis()).Slice()
		})
		if err != nil {
			return nil, fmt.Errorf("redislease: acquiring a node id: %w", err)
		}
		node, epoch, quiet, ok := acquired(v)
		if !ok {
			return nil, fmt.Errorf("redislease: acquiring a node id: unexpected reply %v", v)
		}
		if node < 0 {
			continue
		}
		var notBefore time.Time
		if quiet > 0 {
			// The quiet period ends quiet after the script ran, which
			// was before now.
			notBefore = s.Clock.Now().Add(quiet)
		}
		l := &Lease{
			client:   client,
			s:        s,
			node:     node,
			token:    token,
			epoch:    epoch,
			leaseKey: s.keyBase() + ":lease:" + strconv.FormatInt(node, 10),
			nodeKey:  s.keyBase() + ":node:" + strconv.FormatInt(node, 10),
		}
		l.k = leasekeep.Start(s.Config, node, notBefore, sent.Add(s.TTL-s.Margin), l.renew, forward(s.onEvent))
		return l, nil
	}
	return nil, &RangeFullError{Prefix: s.Prefix, Nodes: s.MaxNode + 1}
}

// acquired parses acquireScript's reply.
func acquired(v []any) (node int64, epoch string, quiet time.Duration, ok bool) {
	if len(v) != 3 {
		return 0, "", 0, false
	}
	node, ok1 := v[0].(int64)
	epoch, ok2 := v[1].(string)
	ms, ok3 := v[2].(int64)
	return node, epoch, time.Duration(ms) * time.Millisecond, ok1 && ok2 && ok3
}

// renew runs renewScript once, bounded by Options.Timeout.
func (l *Lease) renew(ctx context.Context, at time.Time) leasekeep.Renewal {
	r := leasekeep.Renewal{Sent: at, TTL: l.s.TTL}
	v, err := leasekeep.Call(ctx, l.s.Timeout, func(ctx context.Context) ([]any, error) {
		return renewScript.Run(ctx, l.client, []string{l.s.keyBase()},
			l.node, l.token, l.s.TTL.Milliseconds(), l.epoch, l.s.quietMillis()).Slice()
	})
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
		r.Kind = leasekeep.RenewFailed
		r.Err = fmt.Errorf("redislease: renewing node %d: %w", l.node, err)
	case code == 1:
		r.Kind = leasekeep.Renewed
	case code == 2:
		r.Kind = leasekeep.Retaken
		if ms > 0 {
			// The server process changed: the key may be gone because
			// the server lost it, with the id held by someone it forgot.
			r.NotBefore = l.s.Clock.Now().Add(time.Duration(ms) * time.Millisecond)
		}
	case code == 0:
		r.Kind = leasekeep.Lost
		r.Err = fmt.Errorf("%w: redislease: node %d is held by another holder", ringflake.ErrLeaseLost, l.node)
	case code == -2:
		r.Kind = leasekeep.Lost
		r.Err = fmt.Errorf("%w: %w: prefix %q has no epoch %s any more (node %d)", ringflake.ErrLeaseLost, ErrDataLost, l.s.Prefix, l.epoch, l.node)
	default:
		r.Kind = leasekeep.Lost
		r.Err = fmt.Errorf("%w: redislease: node %d expired and another holder acquired it since", ringflake.ErrLeaseLost, l.node)
	}
	return r
}

// Node returns the leased node id.
func (l *Lease) Node() int64 { return l.node }

// Held reports whether the lease certainly holds the id: the last
// successful renewal request was sent less than TTL − Margin ago on the
// lease's clock, no renewal found another holder, and no quiet period is
// under way. It compares that instant with the clock (monotonic time, with
// the system clock) on every call, so a renewal goroutine that runs late
// cannot stretch it; it costs two atomic loads and a clock reading.
func (l *Lease) Held() bool { return l.k.Held() }

// WaitHeld blocks until [Lease.Held] is true and returns nil: at once,
// normally; at the end of the quiet period after a first start under the
// prefix or a server that may have lost data; when a renewal succeeds
// after an outage. It returns [Lease.Err] when the lease ends first, and
// ctx's error when ctx is done first.
func (l *Lease) WaitHeld(ctx context.Context) error { return l.k.Wait(ctx) }

// MarkAhead returns TTL/2: the lead with which a generator that keeps its
// high-water mark with the lease writes it, unless ringflake.WithMarkAhead
// says otherwise. A generator then saves a mark about every TTL/4 instead
// of twice a second, and keeps issuing through a server pause of up to
// about TTL/4 before it waits for a save; after a crash the next holder
// cannot get the id before the crashed holder's mark is in the past (the
// key outlives the mark), so a longer lead costs a new holder nothing
// unless its clock is behind.
func (l *Lease) MarkAhead() time.Duration { return l.s.MarkAhead() }

// Done returns a channel that is closed when the lease ends for good: it
// was lost (another holder holds or took the id) or closed. [Lease.Err]
// then says which.
func (l *Lease) Done() <-chan struct{} { return l.k.Done() }

// Err returns nil while the lease may still hold the id; once the lease
// has ended, what ended it first: an error matching ringflake.ErrLeaseLost
// when it was lost for good, [ErrClosed] when it was closed.
func (l *Lease) Err() error { return l.k.Err() }

// Close stops renewing and releases the id: it deletes the lease key if it
// still holds this lease's token, so the id is free at once. Close a
// generator using the lease first — its Close saves the exact high-water
// mark through the lease. Closing twice returns nil the second time. The
// release is bounded by ctx and by Options.Timeout; Close returns the
// client's error, context.DeadlineExceeded or ctx's error (the id then
// stays held until its TTL runs out).
func (l *Lease) Close(ctx context.Context) error {
	if !l.k.Stop(ErrClosed) {
		return nil
	}
	_, err := leasekeep.Call(ctx, l.s.Timeout, func(ctx context.Context) (any, error) {
		return nil, releaseScript.Run(ctx, l.client, []string{l.leaseKey}, l.token).Err()
	})
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
	v, err := leasekeep.Call(ctx, l.s.Timeout, func(ctx context.Context) ([]any, error) {
		return loadMarkScript.Run(ctx, l.client, []string{l.nodeKey}).Slice()
	})
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
// overwrite the mark of the next holder. It implements
// [ringflake.MarkStore]. Errors match ringflake.ErrLeaseLost when the
// token does not hold the id, and context.DeadlineExceeded when the request
// takes longer than Options.Timeout (the mark may then be saved or not).
// How durable a saved mark is depends on the server's persistence (see the
// package documentation).
func (l *Lease) SaveMark(ctx context.Context, mark ringflake.Mark) error {
	text, _ := mark.MarshalText() // never fails
	n, err := leasekeep.Call(ctx, l.s.Timeout, func(ctx context.Context) (int64, error) {
		return saveMarkScript.Run(ctx, l.client, []string{l.leaseKey, l.nodeKey}, l.token, string(text)).Int64()
	})
	if err != nil {
		return fmt.Errorf("redislease: saving the mark of node %d: %w", l.node, err)
	}
	if n != 1 {
		return fmt.Errorf("%w: redislease: node %d is not held by this lease; mark not saved", ringflake.ErrLeaseLost, l.node)
	}
	return nil
}
