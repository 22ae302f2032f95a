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

// Options configure [Acquire] and [List]. The zero value of every field
// means its documented default; leases that share a Prefix must share a
// Layout's node range.
type Options struct {
	// Prefix names the set of node ids the leases share: keys are
	// "{Prefix}:lease:<id>" and "{Prefix}:node:<id>". Default
	// [DefaultPrefix].
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

	// Timeout bounds every request the lease makes in the background
	// (renewals, and marks saved for a generator). Default RenewEvery.
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
	return settings{Config: c, onEvent: o.OnEvent}, err
}

// keyBase is "{prefix}": every key of the prefix shares its hash slot.
func (s *settings) keyBase() string { return "{" + s.Prefix + "}" }

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
// acquisition only. The script tries one id after the other, so it runs
// for as many steps as there are held ids below the one it takes (the
// whole range when every id is held: 1024 with the Twitter layout).
//
// Errors:
//   - ringflake.ErrNodeUnavailable: every id of the range is held;
//   - ringflake.ErrInvalidOption: Options that cannot work (a TTL that is
//     not a positive whole number of milliseconds, RenewEvery + Margin not
//     shorter than TTL, negative durations);
//   - otherwise the client's error (Redis unreachable, ctx done).
func Acquire(ctx context.Context, client redis.Scripter, opts Options) (*Lease, error) {
	s, err := opts.settings()
	if err != nil {
		return nil, err
	}
	if client == nil {
		return nil, fmt.Errorf("%w: redislease: nil client", ringflake.ErrInvalidOption)
	}
	token := leasekeep.NewToken()
	sent := s.Clock.Now()
	node, err := acquireScript.Run(ctx, client, []string{s.keyBase()},
		s.MaxNode, token, s.TTL.Milliseconds(), s.Holder).Int64()
	if err != nil {
		return nil, fmt.Errorf("redislease: acquiring a node id: %w", err)
	}
	if node < 0 {
		return nil, fmt.Errorf("%w: redislease: all %d node ids under prefix %q are held", ringflake.ErrNodeUnavailable, s.MaxNode+1, s.Prefix)
	}
	l := &Lease{
		client:   client,
		s:        s,
		node:     node,
		token:    token,
		leaseKey: s.keyBase() + ":lease:" + strconv.FormatInt(node, 10),
		nodeKey:  s.keyBase() + ":node:" + strconv.FormatInt(node, 10),
	}
	l.k = leasekeep.Start(s.Config, node, sent.Add(s.TTL-s.Margin), l.renew, forward(s.onEvent))
	return l, nil
}

// renew runs renewScript once, bounded by Options.Timeout.
func (l *Lease) renew(ctx context.Context, at time.Time) leasekeep.Renewal {
	ctx, cancel := context.WithTimeout(ctx, l.s.Timeout)
	defer cancel()
	r := leasekeep.Renewal{Sent: at, TTL: l.s.TTL}
	n, err := renewScript.Run(ctx, l.client, []string{l.leaseKey, l.nodeKey}, l.token, l.s.TTL.Milliseconds()).Int64()
	switch {
	case err != nil:
		r.Kind = leasekeep.RenewFailed
		r.Err = fmt.Errorf("redislease: renewing node %d: %w", l.node, err)
	case n == 1:
		r.Kind = leasekeep.Renewed
	case n == 2:
		r.Kind = leasekeep.Retaken
	case n == 0:
		r.Kind = leasekeep.Lost
		r.Err = fmt.Errorf("%w: redislease: node %d is held by another holder", ringflake.ErrLeaseLost, l.node)
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
// lease's clock, and no renewal found another holder. It is one atomic
// load; a timer, not the caller, reads the clock.
func (l *Lease) Held() bool { return l.k.Held() }

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
// client's error (the id then stays held until its TTL runs out), or
// ctx's.
func (l *Lease) Close(ctx context.Context) error {
	if !l.k.Stop(ErrClosed) {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, l.s.Timeout)
	defer cancel()
	if err := releaseScript.Run(ctx, l.client, []string{l.leaseKey}, l.token).Err(); err != nil {
		return fmt.Errorf("redislease: releasing node %d: %w", l.node, err)
	}
	return nil
}

// LoadMark returns the node's high-water mark, kept in Redis without a TTL
// so that it outlives leases: the mark of the id's previous holders, or the
// zero Time when no holder ever saved one. It implements
// [ringflake.MarkStore]. Errors match ringflake.ErrLeaseLost when another
// holder acquired the id since this lease did, and ringflake.ErrMarkCorrupt
// for a stored mark that is not a time.
func (l *Lease) LoadMark(ctx context.Context) (time.Time, error) {
	ctx, cancel := l.bound(ctx)
	defer cancel()
	v, err := loadMarkScript.Run(ctx, l.client, []string{l.nodeKey}).Slice()
	if err != nil {
		return time.Time{}, fmt.Errorf("redislease: loading the mark of node %d: %w", l.node, err)
	}
	if len(v) != 2 || v[0] != l.token {
		return time.Time{}, fmt.Errorf("%w: redislease: node %d was acquired by another holder", ringflake.ErrLeaseLost, l.node)
	}
	if v[1] == nil {
		return time.Time{}, nil
	}
	s, _ := v[1].(string)
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}, &ringflake.MarkError{Path: "redis " + l.nodeKey + " mark", Reason: fmt.Sprintf("%q is not an RFC 3339 time", s)}
	}
	return t, nil
}

// SaveMark stores mark while, and only while, this lease's token holds the
// id: the check and the write are one Lua script, so a holder that lost
// the id (even one paused past its TTL that does not know it yet) cannot
// overwrite the mark of the next holder. It implements
// [ringflake.MarkStore]. Errors match ringflake.ErrLeaseLost when the
// token does not hold the id. How durable a saved mark is depends on the
// server's persistence (see the package documentation).
func (l *Lease) SaveMark(ctx context.Context, mark time.Time) error {
	ctx, cancel := l.bound(ctx)
	defer cancel()
	n, err := saveMarkScript.Run(ctx, l.client, []string{l.leaseKey, l.nodeKey}, l.token, mark.UTC().Format(time.RFC3339Nano)).Int64()
	if err != nil {
		return fmt.Errorf("redislease: saving the mark of node %d: %w", l.node, err)
	}
	if n != 1 {
		return fmt.Errorf("%w: redislease: node %d is not held by this lease; mark not saved", ringflake.ErrLeaseLost, l.node)
	}
	return nil
}

// bound limits ctx to Options.Timeout: a generator saves its marks with
// context.Background.
func (l *Lease) bound(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, l.s.Timeout)
}
