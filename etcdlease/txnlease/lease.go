package txnlease

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/ringflake/ringflake"
	"github.com/ringflake/ringflake/lease"
)

// Options configure [Acquire], [Claim] and [List]; the type is
// [lease.Options], shared with redislease. With etcd, TTLs are whole
// seconds (the server may grant more; the lease uses what it grants), and
// a prefix p owns the keys "p/lease/<id>", "p/owner/<id>", "p/mark/<id>",
// "p/saved/<id>", "p/epoch" and "p/quiet" (see the package documentation
// of etcdlease).
type Options = lease.Options

// rules: TTLs are whole seconds. Errors name the module, etcdlease.
var rules = lease.Rules{Package: "etcdlease", TTLUnit: time.Second}

// errEpochMoved: the prefix's epoch changed while Acquire looked for an id.
var errEpochMoved = errors.New("etcdlease: the prefix's epoch changed during the acquisition")

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
func (s *settings) nodeOf(dir, key string) (int64, bool) {
	n, err := strconv.ParseInt(strings.TrimPrefix(key, dir), 10, 64)
	return n, err == nil && n >= 0 && n <= s.MaxNode
}

// A Lease holds a node id in etcd until it is lost or closed. It
// implements [ringflake.Lease] and [ringflake.MarkStore]: pass it to
// ringflake.New with [ringflake.WithLease] and the generator checks
// Held on every ID and keeps its high-water mark with the lease. Node,
// Held, WaitHeld, Done, Err, MarkAhead and MaxLead are those of the
// embedded [lease.Keeper]. etcdlease.Lease is this type.
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
// MaxLead since the epoch was made has passed. WaitHeld waits for it.
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

// Claim grants an etcd lease and takes node id node under opts.Prefix,
// like [Acquire] — the same keys, fencing, quiet periods and marks — for
// a node id that is configured rather than leased: a fleet guard. A
// second process that claims an id while another holds it fails at once,
// with the holder's [lease.Options.Holder]. Ids claimed and ids acquired
// share the range.
//
// Errors:
//   - ringflake.ErrNodeUnavailable: another lease holds the id (a
//     [*lease.HeldError], naming its holder);
//   - ringflake.ErrNodeOutOfRange: node does not fit Options.Layout;
//   - ringflake.ErrInvalidOption: as for Acquire;
//   - otherwise the client's error.
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
	id           int64
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
	l.leaseID.Store(t.id)
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
	resp, err := client.Txn(rctx, Txn{Then: []Op{Get(epochKey), Get(quietKey)}})
	cancel()
	for {
		if err != nil {
			return fail(err)
		}
		if kvs := resp.Kvs(0); len(kvs) > 0 {
			var quiet time.Duration
			if q := resp.Kvs(1); len(q) > 0 && q[0].Lease != 0 {
				rctx, cancel := s.bound(ctx)
				ttl, err := client.TimeToLive(rctx, q[0].Lease)
				cancel()
				if err != nil {
					return fail(err)
				}
				if ttl >= 0 { // -1: expired; else whole seconds, rounded down
					quiet = time.Duration(ttl+1) * time.Second
				}
			}
			return kvs[0].Value, quiet, nil
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
		txn, err := client.Txn(rctx, Txn{
			If:   []Compare{Absent(epochKey)},
			Then: []Op{Put(epochKey, epoch, 0), Put(quietKey, "", grant.ID)},
			Else: []Op{Get(epochKey), Get(quietKey)},
		})
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
	resp, err := client.Txn(rctx, Txn{Then: []Op{GetPrefix(dir, true)}})
	cancel()
	if err != nil {
		return 0, fmt.Errorf("etcdlease: listing node ids: %w", err)
	}
	kvs := resp.Kvs(0)
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
		txn, err := s.put(ctx, client, t, node, GetPrefix(dir, true))
		if err != nil || txn.Succeeded {
			return node, err
		}
		kvs = txn.Kvs(1) // someone was first: the ids in use now
	}
}

// claimNode creates node's lease key, in a transaction that fails when
// the key exists — a [*lease.HeldError], with the holder the owner key
// names when it names the key's token — or the prefix's epoch is no
// longer t.epoch.
func (s *settings) claimNode(ctx context.Context, client Client, t ticket, node int64) error {
	txn, err := s.put(ctx, client, t, node, Get(s.key("lease", node)), Get(s.key("owner", node)))
	if err != nil || txn.Succeeded {
		return err
	}
	held := &lease.HeldError{Package: rules.Package, Prefix: s.Prefix, Node: node}
	key, owner := txn.Kvs(1), txn.Kvs(2)
	if len(key) == 1 && len(owner) == 1 {
		if token, holder, ok := strings.Cut(owner[0].Value, " "); ok && token == key[0].Value {
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
func (s *settings) put(ctx context.Context, client Client, t ticket, node int64, orElse ...Op) (TxnResponse, error) {
	key, epochKey := s.key("lease", node), s.epochKey()
	rctx, cancel := s.bound(ctx)
	defer cancel()
	txn, err := client.Txn(rctx, Txn{
		If:   []Compare{Absent(key), ValueIs(epochKey, Equal, t.epoch)},
		Then: []Op{Put(key, t.token, t.id), Put(s.key("owner", node), t.owner, 0)},
		Else: append([]Op{Get(epochKey)}, orElse...),
	})
	if err != nil {
		return TxnResponse{}, fmt.Errorf("etcdlease: acquiring node %d: %w", node, err)
	}
	if txn.Succeeded {
		return txn, nil
	}
	if e := txn.Kvs(0); len(e) == 0 || e[0].Value != t.epoch {
		return TxnResponse{}, errEpochMoved
	}
	return txn, nil
}

// revoke revokes an etcd lease on a best-effort basis (its TTL ends it
// otherwise).
func revoke(client Client, id int64, timeout time.Duration) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	_ = client.Revoke(ctx, id)
}
