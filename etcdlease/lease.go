package etcdlease

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"go.etcd.io/etcd/api/v3/mvccpb"
	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/ringflake/ringflake"
	"github.com/ringflake/ringflake/lease"
)

// Options configure [Acquire], [Claim] and [List]; the type is
// [lease.Options], shared with redislease. With etcd, TTLs are whole
// seconds (the server may grant more; the lease uses what it grants), and
// a prefix p owns the keys "p/lease/<id>", "p/owner/<id>", "p/mark/<id>",
// "p/saved/<id>", "p/epoch" and "p/quiet" (see the package documentation).
type Options = lease.Options

// rules: TTLs are whole seconds.
var rules = lease.Rules{Package: "etcdlease", TTLUnit: time.Second}

// errEpochMoved: the prefix's epoch changed while Acquire looked for an id.
var errEpochMoved = errors.New("etcdlease: the prefix's epoch changed during the acquisition")

// Client is what the leases need of an etcd client: key-value access with
// transactions, and leases. *clientv3.Client implements it.
type Client interface {
	clientv3.KV
	clientv3.Lease
}

// settings are Options with defaults applied and validated.
type settings struct{ lease.Config }

func resolve(opts Options, client Client) (settings, error) {
	c, err := opts.Resolve(rules)
	if err == nil && client == nil {
		err = &lease.OptionError{Package: rules.Package, Reason: "nil client"}
	}
	return settings{c}, err
}

// bound limits ctx to Options.Timeout.
func (s *settings) bound(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, s.Timeout)
}

func (s *settings) key(kind string, node int64) string {
	return s.Prefix + "/" + kind + "/" + strconv.FormatInt(node, 10)
}

func (s *settings) dir(kind string) string { return s.Prefix + "/" + kind + "/" }

func (s *settings) epochKey() string { return s.Prefix + "/epoch" }

// nodeOf parses the id at the end of a key under dir; ok is false for
// keys that are not ids of the range.
func (s *settings) nodeOf(dir string, key []byte) (int64, bool) {
	n, err := strconv.ParseInt(strings.TrimPrefix(string(key), dir), 10, 64)
	return n, err == nil && n >= 0 && n <= s.MaxNode
}

// A Lease holds a node id in etcd until it is lost or closed. It
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
	client   Client
	s        settings
	token    string // the lease key's value
	owner    string // the owner key's value: token and holder
	epoch    string // the prefix's epoch when the id was acquired
	leaseKey string
	ownerKey string
	markKey  string
	savedKey string       // token and number of the save that stored the mark
	leaseID  atomic.Int64 // the etcd lease the lease key is attached to
	saves    atomic.Int64 // SaveMark calls so far: each save's number
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
// ringflake.ErrLeaseLost — until the quiet period of TTL + Margin +
// MaxLead since the epoch was made has passed, after which every lease
// etcd may have forgotten has expired and the clock has passed every ID
// its holder may have issued ahead. WaitHeld waits for it.
//
// Errors:
//   - ringflake.ErrNodeUnavailable: every id of the range is held (a
//     [*lease.RangeFullError]);
//   - ringflake.ErrInvalidOption: Options that cannot work (a TTL that is
//     not a positive whole number of seconds, RenewEvery + Margin not
//     shorter than TTL, negative durations), a nil client;
//   - otherwise the client's error (etcd unreachable, a request longer
//     than Options.Timeout, ctx done).
func Acquire(ctx context.Context, client Client, opts Options) (*Lease, error) {
	s, err := resolve(opts, client)
	if err != nil {
		return nil, err
	}
	return s.take(ctx, client, s.claimLowest)
}

// Claim grants an etcd lease, takes node id node under opts.Prefix with a
// transaction that creates the id's key only if it does not exist, and
// keeps it alive like [Acquire] — the same keys, fencing, quiet periods
// and marks — for a node id that is configured rather than leased
// (static, from the environment, a StatefulSet's ordinal): a fleet guard.
// A second process that claims an id while another holds it fails at
// once, with the holder's [lease.Options.Holder]; a holder that loses its claim
// stops issuing (Held is false, Done is closed). Ids claimed and ids
// acquired share the range: Acquire skips a claimed id, and a Claim of an
// acquired id fails.
//
// Errors:
//   - ringflake.ErrNodeUnavailable: another lease holds the id (a
//     [*lease.HeldError], naming its holder);
//   - ringflake.ErrNodeOutOfRange: node does not fit Options.Layout;
//   - ringflake.ErrInvalidOption: as for Acquire;
//   - otherwise the client's error (etcd unreachable, a request longer
//     than Options.Timeout, ctx done).
func Claim(ctx context.Context, client Client, node int64, opts Options) (*Lease, error) {
	s, err := resolve(opts, client)
	if err != nil {
		return nil, err
	}
	if _, err := ringflake.StaticNode(node).NodeID(ctx, s.Layout); err != nil {
		return nil, err
	}
	return s.take(ctx, client, func(ctx context.Context, client Client, t ticket) (int64, error) {
		return node, s.claimNode(ctx, client, t, node)
	})
}

// A ticket is what an acquisition writes: the etcd lease the id's key is
// attached to, the key's token, the owner key's value, and the prefix's
// epoch it expects.
type ticket struct {
	id           clientv3.LeaseID
	token, owner string
	epoch        string
}

// take grants an etcd lease and takes an id with claim in the prefix's
// epoch (made first, with a quiet period, when it is missing), trying
// again when the epoch changes meanwhile; it revokes the etcd lease when
// it takes no id.
func (s *settings) take(ctx context.Context, client Client, claim func(context.Context, Client, ticket) (int64, error)) (*Lease, error) {
	t := ticket{token: lease.NewToken()}
	t.owner = t.token + " " + s.Holder
	sent := s.Clock.Now()
	gctx, cancel := s.bound(ctx)
	grant, err := client.Grant(gctx, int64(s.TTL/time.Second))
	cancel()
	if err != nil {
		return nil, fmt.Errorf("etcdlease: granting a lease: %w", err)
	}
	t.id = grant.ID
	var (
		node      int64
		notBefore time.Time
	)
	for attempt := 0; ; attempt++ {
		var quiet time.Duration
		t.epoch, quiet, err = ensureEpoch(ctx, client, s)
		if err == nil {
			if quiet > 0 {
				notBefore = s.Clock.Now().Add(quiet)
			}
			node, err = claim(ctx, client, t)
		}
		if !errors.Is(err, errEpochMoved) || attempt == 2 {
			break
		}
	}
	if err != nil {
		revoke(client, t.id, s.Timeout)
		return nil, err
	}
	l := &Lease{
		client:   client,
		s:        *s,
		node:     node,
		token:    t.token,
		owner:    t.owner,
		epoch:    t.epoch,
		leaseKey: s.key("lease", node),
		ownerKey: s.key("owner", node),
		markKey:  s.key("mark", node),
		savedKey: s.key("saved", node),
	}
	l.leaseID.Store(int64(t.id))
	l.Keeper, l.stop = lease.Keep(s.Config, node, notBefore, sent.Add(time.Duration(grant.TTL)*time.Second-s.Margin), l.renew)
	return l, nil
}

// ensureEpoch returns the prefix's epoch and how long its quiet period
// goes on from now (0 when none is under way). A prefix without an epoch
// is one nobody used yet, or one whose data etcd lost: holders etcd
// forgot may still be issuing, so it makes the epoch, with a quiet period
// of TTL + Margin + MaxLead: a key PREFIX/quiet on an etcd lease of its
// own.
func ensureEpoch(ctx context.Context, client Client, s *settings) (string, time.Duration, error) {
	epochKey, quietKey := s.epochKey(), s.Prefix+"/quiet"
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
		epoch := lease.NewToken()
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
// prefix's epoch is no longer t.epoch; it then tries the next lowest.
func (s *settings) claimLowest(ctx context.Context, client Client, t ticket) (int64, error) {
	dir := s.dir("lease")
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
			return 0, &lease.RangeFullError{Package: rules.Package, Prefix: s.Prefix, Nodes: s.MaxNode + 1}
		}
		txn, err := s.put(ctx, client, t, node, clientv3.OpGet(dir, clientv3.WithPrefix(), clientv3.WithKeysOnly()))
		if err != nil || txn.Succeeded {
			return node, err
		}
		kvs = txn.Responses[1].GetResponseRange().Kvs // someone was first: the ids in use now
	}
}

// claimNode creates node's lease key, in a transaction that fails when
// the key exists — a [*lease.HeldError], with the holder the owner key
// names when it names the key's token — or the prefix's epoch is no
// longer t.epoch.
func (s *settings) claimNode(ctx context.Context, client Client, t ticket, node int64) error {
	txn, err := s.put(ctx, client, t, node, clientv3.OpGet(s.key("lease", node)), clientv3.OpGet(s.key("owner", node)))
	if err != nil || txn.Succeeded {
		return err
	}
	held := &lease.HeldError{Package: rules.Package, Prefix: s.Prefix, Node: node}
	key, owner := txn.Responses[1].GetResponseRange().Kvs, txn.Responses[2].GetResponseRange().Kvs
	if len(key) == 1 && len(owner) == 1 {
		if token, holder, ok := strings.Cut(string(owner[0].Value), " "); ok && token == string(key[0].Value) {
			held.Holder = holder
		}
	}
	return held
}

// put creates node's lease key, attached to t's etcd lease, and its owner
// key, in one transaction that requires the lease key not to exist and the
// prefix's epoch to be t.epoch. When the key exists the transaction reads
// the epoch and runs orElse instead: their answers follow the epoch's in
// the response. It returns errEpochMoved when the epoch changed.
func (s *settings) put(ctx context.Context, client Client, t ticket, node int64, orElse ...clientv3.Op) (*clientv3.TxnResponse, error) {
	key, epochKey := s.key("lease", node), s.epochKey()
	rctx, cancel := s.bound(ctx)
	defer cancel()
	txn, err := client.Txn(rctx).
		If(clientv3.Compare(clientv3.CreateRevision(key), "=", 0),
			clientv3.Compare(clientv3.Value(epochKey), "=", t.epoch)).
		Then(clientv3.OpPut(key, t.token, clientv3.WithLease(t.id)), clientv3.OpPut(s.key("owner", node), t.owner)).
		Else(append([]clientv3.Op{clientv3.OpGet(epochKey)}, orElse...)...).
		Commit()
	if err != nil {
		return nil, fmt.Errorf("etcdlease: acquiring node %d: %w", node, err)
	}
	if txn.Succeeded {
		return txn, nil
	}
	if e := txn.Responses[0].GetResponseRange().Kvs; len(e) == 0 || string(e[0].Value) != t.epoch {
		return nil, errEpochMoved
	}
	return txn, nil
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
func (l *Lease) renew(ctx context.Context, at time.Time) lease.Renewal {
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
	resp, err := l.client.Txn(ctx).Then(clientv3.OpGet(l.leaseKey), clientv3.OpGet(l.s.epochKey())).Commit()
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
	return lease.Renewal{Kind: lease.Renewed, Sent: at, TTL: time.Duration(ka.TTL) * time.Second}
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
func (l *Lease) retake(ctx context.Context, id clientv3.LeaseID, at time.Time, ttl time.Duration) lease.Renewal {
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
			clientv3.Compare(clientv3.Value(l.s.epochKey()), "=", l.epoch)).
		Then(clientv3.OpPut(l.leaseKey, l.token, clientv3.WithLease(id))).
		Else(clientv3.OpGet(l.s.epochKey())).
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
	return lease.Renewal{Kind: lease.Retaken, Sent: at, TTL: ttl}
}

func (l *Lease) failed(err error) lease.Renewal {
	return lease.Renewal{Kind: lease.RenewFailed, Err: fmt.Errorf("etcdlease: renewing node %d: %w", l.node, err)}
}

func (l *Lease) lostTo(what string) lease.Renewal {
	return lease.Renewal{Kind: lease.Lost, Err: fmt.Errorf("%w: etcdlease: node %d %s", ringflake.ErrLeaseLost, l.node, what)}
}

func (l *Lease) dataLost() lease.Renewal {
	return lease.Renewal{Kind: lease.Lost, Err: fmt.Errorf("%w: %w: prefix %q has no epoch %s any more (node %d)",
		ringflake.ErrLeaseLost, lease.ErrDataLost, l.s.Prefix, l.epoch, l.node)}
}

// Close stops renewing and revokes the etcd lease, which deletes the id's
// key, so the id is free at once. Close a generator using the lease
// first — its Close saves the exact high-water mark through the lease.
// Closing twice returns nil the second time. The revocation is bounded by
// ctx and by Options.Timeout; Close returns the client's error (the id
// then stays held until its TTL runs out), or ctx's. After Close, Err
// returns [lease.ErrClosed].
func (l *Lease) Close(ctx context.Context) error {
	if !l.stop(lease.ErrClosed) {
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
// lease writes its token, so the token is the fencing token. Saves take
// effect in the order of the calls: each writes its token and number into
// the key "p/saved/<id>" with the mark, and the transaction ignores one
// that reaches etcd after a later save of this lease (a request abandoned
// at its timeout may still arrive). It implements [ringflake.MarkStore].
// Errors match ringflake.ErrLeaseLost when the token does not hold the
// id, and [lease.ErrStaleSave] when a later save was stored first.
func (l *Lease) SaveMark(ctx context.Context, mark ringflake.Mark) error {
	text, _ := mark.MarshalText() // never fails
	// "<token>/<number>", the number in 20 digits: etcd compares values
	// as bytes, which orders the saves of one token by number. The
	// values of the token lie between "<token>/" and "<token>0".
	ours, saved := l.token+"/", fmt.Sprintf("%s/%020d", l.token, l.saves.Add(1))
	held := clientv3.Compare(clientv3.Value(l.leaseKey), "=", l.token)
	write := []clientv3.Op{clientv3.OpPut(l.markKey, string(text)), clientv3.OpPut(l.savedKey, saved)}
	ctx, cancel := context.WithTimeout(ctx, l.s.Timeout)
	defer cancel()
	txn, err := l.client.Txn(ctx).
		// An earlier save of ours stored the mark: write.
		If(held, clientv3.Compare(clientv3.Value(l.savedKey), ">", ours), clientv3.Compare(clientv3.Value(l.savedKey), "<", saved)).
		Then(write...).
		Else(clientv3.OpTxn(
			// A later save of ours did: stale.
			[]clientv3.Cmp{held, clientv3.Compare(clientv3.Value(l.savedKey), ">", ours), clientv3.Compare(clientv3.Value(l.savedKey), "<", l.token+"0")},
			nil,
			// Another holder's save, or none (a value compared on a
			// missing key fails): write if the id is ours.
			[]clientv3.Op{clientv3.OpTxn([]clientv3.Cmp{held}, write, nil)})).
		Commit()
	if err != nil {
		return fmt.Errorf("etcdlease: saving the mark of node %d: %w", l.node, err)
	}
	switch {
	case txn.Succeeded:
		return nil
	case txn.Responses[0].GetResponseTxn().Succeeded:
		return fmt.Errorf("%w: etcdlease: node %d: mark not saved", lease.ErrStaleSave, l.node)
	case txn.Responses[0].GetResponseTxn().Responses[0].GetResponseTxn().Succeeded:
		return nil
	}
	return fmt.Errorf("%w: etcdlease: node %d is not held by this lease; mark not saved", ringflake.ErrLeaseLost, l.node)
}
