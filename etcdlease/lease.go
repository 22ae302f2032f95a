package etcdlease

import (
	"context"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/ringflake/ringflake"
	"github.com/ringflake/ringflake/etcdlease/txnlease"
	"github.com/ringflake/ringflake/lease"
)

// Options configure [Acquire], [Claim] and [List]; the type is
// [lease.Options], shared with redislease. With etcd, TTLs are whole
// seconds (the server may grant more; the lease uses what it grants), and
// a prefix p owns the keys "p/lease/<id>", "p/owner/<id>", "p/mark/<id>",
// "p/saved/<id>", "p/epoch" and "p/quiet" (see the package documentation).
type Options = lease.Options

// Client is what the leases need of an etcd client: key-value access with
// transactions, and leases. *clientv3.Client implements it.
type Client interface {
	clientv3.KV
	clientv3.Lease
}

// A Lease holds a node id in etcd until it is lost or closed: the lease
// of package [txnlease], whichever transport it runs over. It implements
// [ringflake.Lease] and [ringflake.MarkStore]; Node, Held, WaitHeld,
// Done, Err, MarkAhead and MaxLead are those of the embedded
// [lease.Keeper].
//
// A Lease is safe for concurrent use by multiple goroutines.
type Lease = txnlease.Lease

var (
	_ ringflake.Lease     = (*Lease)(nil)
	_ ringflake.MarkStore = (*Lease)(nil)
)

// Acquire grants an etcd lease, takes the lowest free node id in
// [0, Layout.MaxNode()] under opts.Prefix with a transaction that creates
// the id's key only if it does not exist, and keeps the lease alive in the
// background until [txnlease.Lease.Close] or until it is lost. ctx bounds the
// acquisition, and Options.Timeout each request of it. It is
// [txnlease.Acquire] over client.
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
	return txnlease.Acquire(ctx, adapt(client), opts)
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
// acquired id fails. It is [txnlease.Claim] over client.
//
// Errors:
//   - ringflake.ErrNodeUnavailable: another lease holds the id (a
//     [*lease.HeldError], naming its holder);
//   - ringflake.ErrNodeOutOfRange: node does not fit Options.Layout;
//   - ringflake.ErrInvalidOption: as for Acquire;
//   - otherwise the client's error (etcd unreachable, a request longer
//     than Options.Timeout, ctx done).
func Claim(ctx context.Context, client Client, node int64, opts Options) (*Lease, error) {
	return txnlease.Claim(ctx, adapt(client), node, opts)
}

// List returns the ids in use under opts.Prefix in [0, Layout.MaxNode()],
// in ascending order, for an operator. Only Prefix and Layout of opts
// matter. The keys are read at one revision; the remaining TTLs are asked
// for one by one afterwards. Errors: ringflake.ErrInvalidOption for
// Options that cannot work, otherwise the client's. It is
// [txnlease.List] over client.
func List(ctx context.Context, client Client, opts Options) ([]lease.Holding, error) {
	return txnlease.List(ctx, adapt(client), opts)
}
