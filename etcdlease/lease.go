package etcdlease

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/benbjohnson/clock"
	"go.etcd.io/etcd/api/v3/mvccpb"
	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/ringflake/ringflake"
	"github.com/ringflake/ringflake/internal/leasekeep"
)

// Defaults of [Options].
const (
	DefaultPrefix = "ringflake"
	DefaultTTL    = 10 * time.Second
)

// ErrClosed is what [Lease.Err] returns after [Lease.Close].
var ErrClosed = errors.New("etcdlease: lease closed")

// ErrDataLost is matched, together with ringflake.ErrLeaseLost, by the
// error of a lease lost because etcd no longer has the prefix's epoch: it
// lost the prefix's data (a new, empty cluster behind the same endpoints)
// or an operator deleted the epoch to force a quiet period, as after
// restoring a backup. See the package documentation.
var ErrDataLost = errors.New("etcdlease: the server lost the prefix's data")

// A RangeFullError reports that every node id of a prefix's range is
// held. It matches ringflake.ErrNodeUnavailable.
type RangeFullError struct {
	Prefix string
	// Nodes is how many ids the range has: Layout.MaxNode() + 1.
	Nodes int64
}

// Error names the prefix and the size of its range.
func (e *RangeFullError) Error() string {
	return fmt.Sprintf("%v: etcdlease: all %d node ids under prefix %q are held", ringflake.ErrNodeUnavailable, e.Nodes, e.Prefix)
}

// Is reports whether target is ringflake.ErrNodeUnavailable.
func (e *RangeFullError) Is(target error) bool { return target == ringflake.ErrNodeUnavailable }

// errEpochMoved: the prefix's epoch changed while Acquire looked for an id.
var errEpochMoved = errors.New("etcdlease: the prefix's epoch changed during the acquisition")

// Client is what the leases need of an etcd client: key-value access with
// transactions, and leases. *clientv3.Client implements it.
type Client interface {
	clientv3.KV
	clientv3.Lease
}

// Options configure [Acquire] and [List]. The zero value of every field
// means its documented default; leases that share a Prefix must share a
// Layout's node range.
type Options struct {
	// Prefix names the set of node ids the leases share: keys are
	// "Prefix/lease/<id>", "Prefix/owner/<id>", "Prefix/mark/<id>",
	// "Prefix/epoch" and "Prefix/quiet". Default [DefaultPrefix].
	Prefix string

	// Layout gives the range of ids: [0, Layout.MaxNode()]. Default
	// ringflake.TwitterLayout(), like ringflake.New.
	Layout ringflake.Layout

	// TTL is the etcd lease's TTL, a whole number of seconds: the time a
	// crashed holder's id stays unusable, and the longest a holder cut off
	// from etcd keeps issuing. The server may grant more (its minimum is
	// 1.5 election timeouts, 2 s with etcd's defaults); the lease then
	// uses what was granted. Default [DefaultTTL].
	TTL time.Duration

	// RenewEvery is the renewal interval. Default TTL/3, so that two
	// renewals in a row may fail before the lease may have expired.
	RenewEvery time.Duration

	// Margin is subtracted from every TTL when the lease computes how long
	// it certainly holds the id, for the holder's clock running slower than
	// the server's. Default TTL/100 + 2ms.
	Margin time.Duration

	// Timeout bounds every request the lease makes: each request of
	// Acquire, renewals, marks loaded and saved for a generator, the
	// revocation of Close. The etcd client waits for an unreachable
	// server until its context ends. Default RenewEvery.
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
		Package:       "etcdlease",
		DefaultPrefix: DefaultPrefix,
		DefaultTTL:    DefaultTTL,
		TTLUnit:       time.Second,
		TTLUnitName:   "seconds",
	})
	if err != nil {
		return settings{}, err
	}
	return settings{Config: c, onEvent: o.OnEvent}, nil
}

// bound limits ctx to Options.Timeout.
func (s *settings) bound(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, s.Timeout)
}

func (s *settings) key(kind string, node int64) string {
	return s.Prefix + "/" + kind + "/" + strconv.FormatInt(node, 10)
}

func (s *settings) dir(kind string) string { return s.Prefix + "/" + kind + "/" }

// nodeOf parses the id at the end of a key under dir; ok is false for
// keys that are not ids of the range.
func (s *settings) nodeOf(dir string, key []byte) (int64, bool) {
	n, err := strconv.ParseInt(strings.TrimPrefix(string(key), dir), 10, 64)
	return n, err == nil && n >= 0 && n <= s.MaxNode
}

// A Lease holds a node id in etcd until it is lost or closed. It
// implements [ringflake.Lease] and [ringflake.MarkStore]: pass it to
// ringflake.New with [ringflake.WithLease] and the generator checks
// [Lease.Held] on every ID and keeps its high-water mark with the lease.
//
// A Lease is safe for concurrent use by multiple goroutines.
type Lease struct {
	client   Client
	s        settings
	node     int64
	token    string // the lease key's value
	owner    string // the owner key's value: token and holder
	epoch    string // the prefix's epoch when the id was acquired
	leaseKey string
	ownerKey string
	markKey  string
	epochKey string
	leaseID  atomic.Int64 // the etcd lease the lease key is attached to
	k        *leasekeep.Keeper
}

var (
	_ ringflake.Lease     = (*Lease)(nil)
	_ ringflake.MarkStore = (*Lease)(nil)
)

// Acquire grants an etcd lease, takes the lowest free node id in
// [0, Layout.MaxNode()] under opts.Prefix with a transaction that creates
// the id's key only if it does not exist, and keeps the lease alive in the
// background until [Lease.Close] or until it is lost. ctx bounds the
// acquisition, and Options.Timeout each request of it.
//
// When etcd has no epoch for the prefix (a first start, or a server that
// lost the prefix's data), or a quiet period is under way, the lease does
// not hold its id — Held is false, a generator fails with
// ringflake.ErrLeaseLost — until the quiet period of TTL + Margin since the
// epoch was made has passed, after which every lease etcd may have
// forgotten has expired. [Lease.WaitHeld] waits for it.
//
// Errors:
//   - ringflake.ErrNodeUnavailable: every id of the range is held (a
//     [*RangeFullError]);
//   - ringflake.ErrInvalidOption: Options that cannot work (a TTL that is
//     not a positive whole number of seconds, RenewEvery + Margin not
//     shorter than TTL, negative durations), a nil client;
//   - otherwise the client's error (etcd unreachable, a request longer
//     than Options.Timeout, ctx done).
func Acquire(ctx context.Context, client Client, opts Options) (*Lease, error) {
	s, err := opts.settings()
	if err != nil {
		return nil, err
	}
	if client == nil {
		return nil, &leasekeep.OptionError{Package: "etcdlease", Reason: "nil client"}
	}
	token := leasekeep.NewToken()
	owner := token + " " + s.Holder
	sent := s.Clock.Now()
	gctx, cancel := s.bound(ctx)
	grant, err := client.Grant(gctx, int64(s.TTL/time.Second))
	cancel()
	if err != nil {
		return nil, fmt.Errorf("etcdlease: granting a lease: %w", err)
	}
	var (
		node      int64
		epoch     string
		notBefore time.Time
	)
	for attempt := 0; ; attempt++ {
		var quiet time.Duration
		epoch, quiet, err = ensureEpoch(ctx, client, &s)
		if err == nil {
			if quiet > 0 {
				notBefore = s.Clock.Now().Add(quiet)
			}
			node, err = claimLowest(ctx, client, &s, grant.ID, token, owner, epoch)
		}
		if !errors.Is(err, errEpochMoved) || attempt == 2 {
			break
		}
	}
	if err != nil {
		revoke(client, grant.ID, s.Timeout)
		return nil, err
	}
	l := &Lease{
		client:   client,
		s:        s,
		node:     node,
		token:    token,
		owner:    owner,
		epoch:    epoch,
		leaseKey: s.key("lease", node),
		ownerKey: s.key("owner", node),
		markKey:  s.key("mark", node),
		epochKey: s.Prefix + "/epoch",
	}
	l.leaseID.Store(int64(grant.ID))
	l.k = leasekeep.Start(s.Config, node, notBefore, sent.Add(time.Duration(grant.TTL)*time.Second-s.Margin), l.renew, forward(s.onEvent))
	return l, nil
}

// ensureEpoch returns the prefix's epoch and how long its quiet period
// goes on from now (0 when none is under way). A prefix without an epoch
// is one nobody used yet, or one whose data etcd lost: holders etcd
// forgot may still be issuing, so it makes the epoch, with a quiet period
// of TTL + Margin: a key PREFIX/quiet on an etcd lease of its own.
func ensureEpoch(ctx context.Context, client Client, s *settings) (string, time.Duration, error) {
	epochKey, quietKey := s.Prefix+"/epoch", s.Prefix+"/quiet"
	fail := func(err error) (string, time.Duration, error) {
		return "", 0, fmt.Errorf("etcdlease: reading the epoch of prefix %q: %w", s.Prefix, err)
	}
	rctx, cancel := s.bound(ctx)
	resp, err := client.Txn(rctx).Then(clientv3.OpGet(epochKey), clientv3.OpGet(quietKey)).Commit()
	cancel()
	for {
		if err != nil {
			return fail(err)
		}
		if kvs := resp.Responses[0].GetResponseRange().Kvs; len(kvs) > 0 {
			var quiet time.Duration
			if q := resp.Responses[1].GetResponseRange().Kvs; len(q) > 0 && q[0].Lease != 0 {
				rctx, cancel := s.bound(ctx)
				ttl, err := client.TimeToLive(rctx, clientv3.LeaseID(q[0].Lease))
				cancel()
				if err != nil {
					return fail(err)
				}
				if ttl.TTL >= 0 { // -1: expired; else whole seconds, rounded down
					quiet = time.Duration(ttl.TTL+1) * time.Second
				}
			}
			return string(kvs[0].Value), quiet, nil
		}
		secs := int64((s.Quiet() + time.Second - 1) / time.Second)
		rctx, cancel := s.bound(ctx)
		grant, err := client.Grant(rctx, secs)
		cancel()
		if err != nil {
			return fail(err)
		}
		epoch := leasekeep.NewToken()
		rctx, cancel = s.bound(ctx)
		txn, err := client.Txn(rctx).
			If(clientv3.Compare(clientv3.CreateRevision(epochKey), "=", 0)).
			Then(clientv3.OpPut(epochKey, epoch), clientv3.OpPut(quietKey, "", clientv3.WithLease(grant.ID))).
			Else(clientv3.OpGet(epochKey), clientv3.OpGet(quietKey)).
			Commit()
		cancel()
		if err != nil {
			revoke(client, grant.ID, s.Timeout)
			return fail(err)
		}
		if txn.Succeeded {
			// The quiet key lives TTL + Margin (or longer) from the grant,
			// which was before now.
			return epoch, time.Duration(grant.TTL) * time.Second, nil
		}
		revoke(client, grant.ID, s.Timeout) // another acquirer made the epoch first
		resp = txn
	}
}

// claimLowest creates the lease key of the lowest id that has none, in a
// transaction that fails when another acquirer created it first or the
// prefix's epoch is no longer epoch; it then tries the next lowest.
func claimLowest(ctx context.Context, client Client, s *settings, id clientv3.LeaseID, token, owner, epoch string) (int64, error) {
	dir, epochKey := s.dir("lease"), s.Prefix+"/epoch"
	rctx, cancel := s.bound(ctx)
	resp, err := client.Get(rctx, dir, clientv3.WithPrefix(), clientv3.WithKeysOnly())
	cancel()
	if err != nil {
		return 0, fmt.Errorf("etcdlease: listing node ids: %w", err)
	}
	kvs := resp.Kvs
	for {
		used := make(map[int64]bool, len(kvs))
		for _, kv := range kvs {
			if n, ok := s.nodeOf(dir, kv.Key); ok {
				used[n] = true
			}
		}
		node := int64(0)
		for used[node] {
			node++
		}
		if node > s.MaxNode {
			return 0, &RangeFullError{Prefix: s.Prefix, Nodes: s.MaxNode + 1}
		}
		key := s.key("lease", node)
		rctx, cancel := s.bound(ctx)
		txn, err := client.Txn(rctx).
			If(clientv3.Compare(clientv3.CreateRevision(key), "=", 0),
				clientv3.Compare(clientv3.Value(epochKey), "=", epoch)).
			Then(clientv3.OpPut(key, token, clientv3.WithLease(id)), clientv3.OpPut(s.key("owner", node), owner)).
			Else(clientv3.OpGet(dir, clientv3.WithPrefix(), clientv3.WithKeysOnly()), clientv3.OpGet(epochKey)).
			Commit()
		cancel()
		if err != nil {
			return 0, fmt.Errorf("etcdlease: acquiring a node id: %w", err)
		}
		if txn.Succeeded {
			return node, nil
		}
		if e := txn.Responses[1].GetResponseRange().Kvs; len(e) == 0 || string(e[0].Value) != epoch {
			return 0, errEpochMoved
		}
		kvs = txn.Responses[0].GetResponseRange().Kvs // someone was first: the ids in use now
	}
}

// revoke revokes an etcd lease on a best-effort basis (its TTL ends it
// otherwise).
func revoke(client Client, id clientv3.LeaseID, timeout time.Duration) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	_, _ = client.Revoke(ctx, id)
}

// renew keeps the etcd lease alive and checks that the id's key is still
// ours and the prefix's epoch unchanged; when the key or the etcd lease is
// gone it takes the id again if nobody acquired it since.
func (l *Lease) renew(ctx context.Context, at time.Time) leasekeep.Renewal {
	ctx, cancel := context.WithTimeout(ctx, l.s.Timeout)
	defer cancel()
	id := clientv3.LeaseID(l.leaseID.Load())
	ka, err := l.client.KeepAliveOnce(ctx, id)
	if errors.Is(err, rpctypes.ErrLeaseNotFound) {
		return l.retake(ctx, 0, at, 0) // the etcd lease expired or was revoked
	}
	if err != nil {
		return l.failed(err)
	}
	resp, err := l.client.Txn(ctx).Then(clientv3.OpGet(l.leaseKey), clientv3.OpGet(l.epochKey)).Commit()
	if err != nil {
		return l.failed(err)
	}
	if !l.sameEpoch(resp.Responses[1].GetResponseRange().Kvs) {
		return l.dataLost()
	}
	kvs := resp.Responses[0].GetResponseRange().Kvs
	if len(kvs) == 0 {
		return l.retake(ctx, id, at, time.Duration(ka.TTL)*time.Second) // the key was deleted; our etcd lease is alive
	}
	kv := kvs[0]
	switch {
	case string(kv.Value) != l.token:
		return l.lostTo("is held by another holder")
	case clientv3.LeaseID(kv.Lease) != id:
		// Our token under another of our etcd leases: a retake whose
		// answer was lost. Keep that lease alive from now on.
		l.leaseID.Store(kv.Lease)
		revoke(l.client, id, l.s.Timeout)
		return l.failed(errors.New("the key moved to another of this holder's etcd leases"))
	}
	return leasekeep.Renewal{Kind: leasekeep.Renewed, Sent: at, TTL: time.Duration(ka.TTL) * time.Second}
}

// sameEpoch reports whether kvs, a read of the epoch key, holds the epoch
// the lease was acquired in.
func (l *Lease) sameEpoch(kvs []*mvccpb.KeyValue) bool {
	return len(kvs) == 1 && string(kvs[0].Value) == l.epoch
}

// retake sets the id's key again, attached to etcd lease id or, when id is
// 0, to a new one, if the key does not exist, the owner key still names
// this lease (nobody acquired the id since) and the epoch is unchanged. at,
// the instant the renewal timer fired, precedes the keep-alive or grant
// whose TTL the key now lives on, so the lease's validity counts from it.
func (l *Lease) retake(ctx context.Context, id clientv3.LeaseID, at time.Time, ttl time.Duration) leasekeep.Renewal {
	if id == 0 {
		grant, err := l.client.Grant(ctx, int64(l.s.TTL/time.Second))
		if err != nil {
			return l.failed(err)
		}
		id, ttl = grant.ID, time.Duration(grant.TTL)*time.Second
	}
	txn, err := l.client.Txn(ctx).
		If(clientv3.Compare(clientv3.CreateRevision(l.leaseKey), "=", 0),
			clientv3.Compare(clientv3.Value(l.ownerKey), "=", l.owner),
			clientv3.Compare(clientv3.Value(l.epochKey), "=", l.epoch)).
		Then(clientv3.OpPut(l.leaseKey, l.token, clientv3.WithLease(id))).
		Else(clientv3.OpGet(l.epochKey)).
		Commit()
	if err != nil {
		return l.failed(err)
	}
	if !txn.Succeeded {
		revoke(l.client, id, l.s.Timeout)
		if !l.sameEpoch(txn.Responses[0].GetResponseRange().Kvs) {
			return l.dataLost()
		}
		return l.lostTo("was acquired by another holder since this lease held it")
	}
	if old := l.leaseID.Swap(int64(id)); old != int64(id) {
		revoke(l.client, clientv3.LeaseID(old), l.s.Timeout) // gone already, normally
	}
	return leasekeep.Renewal{Kind: leasekeep.Retaken, Sent: at, TTL: ttl}
}

func (l *Lease) failed(err error) leasekeep.Renewal {
	return leasekeep.Renewal{Kind: leasekeep.RenewFailed, Err: fmt.Errorf("etcdlease: renewing node %d: %w", l.node, err)}
}

func (l *Lease) lostTo(what string) leasekeep.Renewal {
	return leasekeep.Renewal{Kind: leasekeep.Lost, Err: fmt.Errorf("%w: etcdlease: node %d %s", ringflake.ErrLeaseLost, l.node, what)}
}

func (l *Lease) dataLost() leasekeep.Renewal {
	return leasekeep.Renewal{Kind: leasekeep.Lost, Err: fmt.Errorf("%w: %w: prefix %q has no epoch %s any more (node %d)",
		ringflake.ErrLeaseLost, ErrDataLost, l.s.Prefix, l.epoch, l.node)}
}

// Node returns the leased node id.
func (l *Lease) Node() int64 { return l.node }

// Held reports whether the lease certainly holds the id: the last
// successful keep-alive was sent less than TTL − Margin ago on the lease's
// clock, no renewal found the id taken, and no quiet period is under way.
// It compares that instant with the clock (monotonic time, with the system
// clock) on every call, so a renewal goroutine that runs late cannot
// stretch it; it costs two atomic loads and a clock reading.
func (l *Lease) Held() bool { return l.k.Held() }

// WaitHeld blocks until [Lease.Held] is true and returns nil: at once,
// normally; at the end of the quiet period after a first start under the
// prefix or a server that lost the prefix's data; when a renewal succeeds
// after an outage. It returns [Lease.Err] when the lease ends first, and
// ctx's error when ctx is done first.
func (l *Lease) WaitHeld(ctx context.Context) error { return l.k.Wait(ctx) }

// MarkAhead returns TTL/2: the lead with which a generator that keeps its
// high-water mark with the lease writes it, unless ringflake.WithMarkAhead
// says otherwise. A generator then saves a mark about every TTL/4 instead
// of twice a second, and keeps issuing through an etcd stall (an
// election, a slow disk) of up to about TTL/4 before it waits for a save;
// after a crash the next holder cannot get the id before the crashed
// holder's mark is in the past (the key outlives the mark), so a longer
// lead costs a new holder nothing unless its clock is behind.
func (l *Lease) MarkAhead() time.Duration { return l.s.MarkAhead() }

// Done returns a channel that is closed when the lease ends for good: it
// was lost (another holder holds or took the id) or closed. [Lease.Err]
// then says which.
func (l *Lease) Done() <-chan struct{} { return l.k.Done() }

// Err returns nil while the lease may still hold the id; once the lease
// has ended, what ended it first: an error matching ringflake.ErrLeaseLost
// when it was lost for good, [ErrClosed] when it was closed.
func (l *Lease) Err() error { return l.k.Err() }

// Close stops renewing and revokes the etcd lease, which deletes the id's
// key, so the id is free at once. Close a generator using the lease
// first — its Close saves the exact high-water mark through the lease.
// Closing twice returns nil the second time. The revocation is bounded by
// ctx and by Options.Timeout; Close returns the client's error (the id
// then stays held until its TTL runs out), or ctx's.
func (l *Lease) Close(ctx context.Context) error {
	if !l.k.Stop(ErrClosed) {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, l.s.Timeout)
	defer cancel()
	_, err := l.client.Revoke(ctx, clientv3.LeaseID(l.leaseID.Load()))
	if err != nil && !errors.Is(err, rpctypes.ErrLeaseNotFound) {
		return fmt.Errorf("etcdlease: releasing node %d: %w", l.node, err)
	}
	return nil
}

// LoadMark returns the node's high-water mark, kept in etcd without a
// lease so that it outlives leases: the mark of the id's previous holders,
// or the zero Mark when no holder ever saved one. It implements
// [ringflake.MarkStore]. Errors match ringflake.ErrLeaseLost when another
// holder acquired the id since this lease did, and ringflake.ErrMarkCorrupt
// for a stored mark that is not a mark (a bare time, as earlier versions
// stored, still reads).
func (l *Lease) LoadMark(ctx context.Context) (ringflake.Mark, error) {
	ctx, cancel := context.WithTimeout(ctx, l.s.Timeout)
	defer cancel()
	txn, err := l.client.Txn(ctx).
		If(clientv3.Compare(clientv3.Value(l.ownerKey), "=", l.owner)).
		Then(clientv3.OpGet(l.markKey)).
		Commit()
	if err != nil {
		return ringflake.Mark{}, fmt.Errorf("etcdlease: loading the mark of node %d: %w", l.node, err)
	}
	if !txn.Succeeded {
		return ringflake.Mark{}, fmt.Errorf("%w: etcdlease: node %d was acquired by another holder", ringflake.ErrLeaseLost, l.node)
	}
	kvs := txn.Responses[0].GetResponseRange().Kvs
	if len(kvs) == 0 {
		return ringflake.Mark{}, nil
	}
	var m ringflake.Mark
	if err := m.UnmarshalText(kvs[0].Value); err != nil {
		return ringflake.Mark{}, &ringflake.MarkError{Path: "etcd " + l.markKey, Reason: fmt.Sprintf("%q is not a mark", kvs[0].Value)}
	}
	return m, nil
}

// SaveMark stores mark while, and only while, the id's key holds this
// lease's token: the comparison and the write are one transaction, so a
// holder that lost the id (even one paused past its TTL that does not know
// it yet) cannot overwrite the mark of the next holder. The key exists
// only while the etcd lease it is attached to is alive, and only this
// lease writes its token, so the token is the fencing token. It
// implements [ringflake.MarkStore]. Errors match ringflake.ErrLeaseLost
// when the token does not hold the id.
func (l *Lease) SaveMark(ctx context.Context, mark ringflake.Mark) error {
	text, _ := mark.MarshalText() // never fails
	ctx, cancel := context.WithTimeout(ctx, l.s.Timeout)
	defer cancel()
	txn, err := l.client.Txn(ctx).
		If(clientv3.Compare(clientv3.Value(l.leaseKey), "=", l.token)).
		Then(clientv3.OpPut(l.markKey, string(text))).
		Commit()
	if err != nil {
		return fmt.Errorf("etcdlease: saving the mark of node %d: %w", l.node, err)
	}
	if !txn.Succeeded {
		return fmt.Errorf("%w: etcdlease: node %d is not held by this lease; mark not saved", ringflake.ErrLeaseLost, l.node)
	}
	return nil
}
