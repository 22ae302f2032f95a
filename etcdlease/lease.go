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
	// "Prefix/lease/<id>", "Prefix/owner/<id>" and "Prefix/mark/<id>".
	// Default [DefaultPrefix].
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

	// Timeout bounds every request the lease makes in the background
	// (renewals, and marks saved for a generator): the etcd client waits
	// for an unreachable server until its context ends. Default
	// RenewEvery.
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
	return settings{Config: c, onEvent: o.OnEvent}, err
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
	leaseKey string
	ownerKey string
	markKey  string
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
// acquisition only; give it a deadline, as the etcd client waits for an
// unreachable server until ctx ends.
//
// Errors:
//   - ringflake.ErrNodeUnavailable: every id of the range is held;
//   - ringflake.ErrInvalidOption: Options that cannot work (a TTL that is
//     not a positive whole number of seconds, RenewEvery + Margin not
//     shorter than TTL, negative durations);
//   - otherwise the client's error (etcd unreachable, ctx done).
func Acquire(ctx context.Context, client Client, opts Options) (*Lease, error) {
	s, err := opts.settings()
	if err != nil {
		return nil, err
	}
	if client == nil {
		return nil, fmt.Errorf("%w: etcdlease: nil client", ringflake.ErrInvalidOption)
	}
	token := leasekeep.NewToken()
	owner := token + " " + s.Holder
	sent := s.Clock.Now()
	grant, err := client.Grant(ctx, int64(s.TTL/time.Second))
	if err != nil {
		return nil, fmt.Errorf("etcdlease: granting a lease: %w", err)
	}
	node, err := claimLowest(ctx, client, &s, grant.ID, token, owner)
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
		leaseKey: s.key("lease", node),
		ownerKey: s.key("owner", node),
		markKey:  s.key("mark", node),
	}
	l.leaseID.Store(int64(grant.ID))
	l.k = leasekeep.Start(s.Config, node, sent.Add(time.Duration(grant.TTL)*time.Second-s.Margin), l.renew, forward(s.onEvent))
	return l, nil
}

// claimLowest creates the lease key of the lowest id that has none, in a
// transaction that fails when another acquirer created it first; it then
// tries the next lowest.
func claimLowest(ctx context.Context, client Client, s *settings, id clientv3.LeaseID, token, owner string) (int64, error) {
	dir := s.dir("lease")
	resp, err := client.Get(ctx, dir, clientv3.WithPrefix(), clientv3.WithKeysOnly())
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
			return 0, fmt.Errorf("%w: etcdlease: all %d node ids under prefix %q are held", ringflake.ErrNodeUnavailable, s.MaxNode+1, s.Prefix)
		}
		key := s.key("lease", node)
		txn, err := client.Txn(ctx).
			If(clientv3.Compare(clientv3.CreateRevision(key), "=", 0)).
			Then(clientv3.OpPut(key, token, clientv3.WithLease(id)), clientv3.OpPut(s.key("owner", node), owner)).
			Else(clientv3.OpGet(dir, clientv3.WithPrefix(), clientv3.WithKeysOnly())).
			Commit()
		if err != nil {
			return 0, fmt.Errorf("etcdlease: acquiring a node id: %w", err)
		}
		if txn.Succeeded {
			return node, nil
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
// ours; when the key or the etcd lease is gone it takes the id again if
// nobody acquired it since.
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
	resp, err := l.client.Get(ctx, l.leaseKey)
	if err != nil {
		return l.failed(err)
	}
	if len(resp.Kvs) == 0 {
		return l.retake(ctx, id, at, time.Duration(ka.TTL)*time.Second) // the key was deleted; our etcd lease is alive
	}
	kv := resp.Kvs[0]
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

// retake sets the id's key again, attached to etcd lease id or, when id is
// 0, to a new one, if the key does not exist and the owner key still names
// this lease: nobody acquired the id since. at, the instant the renewal
// timer fired, precedes the keep-alive or grant whose TTL the key now
// lives on, so the lease's validity counts from it.
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
			clientv3.Compare(clientv3.Value(l.ownerKey), "=", l.owner)).
		Then(clientv3.OpPut(l.leaseKey, l.token, clientv3.WithLease(id))).
		Commit()
	if err != nil {
		return l.failed(err)
	}
	if !txn.Succeeded {
		revoke(l.client, id, l.s.Timeout)
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

// Node returns the leased node id.
func (l *Lease) Node() int64 { return l.node }

// Held reports whether the lease certainly holds the id: the last
// successful keep-alive was sent less than TTL − Margin ago on the lease's
// clock, and no renewal found the id taken. It is one atomic load; a
// timer, not the caller, reads the clock.
func (l *Lease) Held() bool { return l.k.Held() }

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
// or the zero Time when no holder ever saved one. It implements
// [ringflake.MarkStore]. Errors match ringflake.ErrLeaseLost when another
// holder acquired the id since this lease did, and ringflake.ErrMarkCorrupt
// for a stored mark that is not a time.
func (l *Lease) LoadMark(ctx context.Context) (time.Time, error) {
	ctx, cancel := context.WithTimeout(ctx, l.s.Timeout)
	defer cancel()
	txn, err := l.client.Txn(ctx).
		If(clientv3.Compare(clientv3.Value(l.ownerKey), "=", l.owner)).
		Then(clientv3.OpGet(l.markKey)).
		Commit()
	if err != nil {
		return time.Time{}, fmt.Errorf("etcdlease: loading the mark of node %d: %w", l.node, err)
	}
	if !txn.Succeeded {
		return time.Time{}, fmt.Errorf("%w: etcdlease: node %d was acquired by another holder", ringflake.ErrLeaseLost, l.node)
	}
	kvs := txn.Responses[0].GetResponseRange().Kvs
	if len(kvs) == 0 {
		return time.Time{}, nil
	}
	t, err := time.Parse(time.RFC3339Nano, string(kvs[0].Value))
	if err != nil {
		return time.Time{}, &ringflake.MarkError{Path: "etcd " + l.markKey, Reason: fmt.Sprintf("%q is not an RFC 3339 time", kvs[0].Value)}
	}
	return t, nil
}

// SaveMark stores mark while, and only while, the id's key holds this
// lease's token: the comparison and the write are one transaction, so a
// holder that lost the id (even one paused past its TTL that does not know
// it yet) cannot overwrite the mark of the next holder. The key exists
// only while the etcd lease it is attached to is alive, and only this
// lease writes its token, so the token is the fencing token. It
// implements [ringflake.MarkStore]. Errors match ringflake.ErrLeaseLost
// when the token does not hold the id.
func (l *Lease) SaveMark(ctx context.Context, mark time.Time) error {
	ctx, cancel := context.WithTimeout(ctx, l.s.Timeout)
	defer cancel()
	txn, err := l.client.Txn(ctx).
		If(clientv3.Compare(clientv3.Value(l.leaseKey), "=", l.token)).
		Then(clientv3.OpPut(l.markKey, mark.UTC().Format(time.RFC3339Nano))).
		Commit()
	if err != nil {
		return fmt.Errorf("etcdlease: saving the mark of node %d: %w", l.node, err)
	}
	if !txn.Succeeded {
		return fmt.Errorf("%w: etcdlease: node %d is not held by this lease; mark not saved", ringflake.ErrLeaseLost, l.node)
	}
	return nil
}
