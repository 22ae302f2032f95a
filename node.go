package ringflake

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/ringflake/ringflake/strategies"
)

// A NodeSource provides the node id a generator issues IDs under. Node ids
// are what keep IDs of different generators apart: two generators that
// share a layout must never use the same node id at the same time.
//
// Built in: [StaticNode], [EnvNode], [OrdinalNode], and [github.com/ringflake/ringflake/hostlocal.Node],
// which leases ids among the processes of one host through file locks.
// Leases on a coordination service live in nested modules (see [Lease]).
type NodeSource interface {
	// NodeID returns a node id that fits l. Errors match
	// [ErrNodeUnavailable] when the source has no id to give, and
	// [ErrNodeOutOfRange] when its id does not fit l.
	NodeID(ctx context.Context, l Layout) (int64, error)
}

// StaticNode returns a source of the node id n, fixed in configuration.
// It reports an error matching [ErrNodeOutOfRange] when n does not fit
// the layout asked about.
func StaticNode(n int64) NodeSource { return staticNode(n) }

type staticNode int64

func (n staticNode) NodeID(_ context.Context, l Layout) (int64, error) {
	if err := l.checkNode(int64(n)); err != nil {
		return 0, err
	}
	return int64(n), nil
}

// EnvNode returns a source that reads the node id, in decimal, from the
// environment variable name each time it is asked (never at import).
func EnvNode(name string) NodeSource { return envNode(name) }

type envNode string

func (e envNode) NodeID(_ context.Context, l Layout) (int64, error) {
	v, ok := os.LookupEnv(string(e))
	if !ok || strings.TrimSpace(v) == "" {
		return 0, fmt.Errorf("%w: environment variable %s is not set", ErrNodeUnavailable, string(e))
	}
	n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
	if err != nil {
		return 0, fmt.Errorf("%w: environment variable %s=%q is not a decimal node id", ErrNodeUnavailable, string(e), v)
	}
	return StaticNode(n).NodeID(context.Background(), l)
}

// OrdinalNode returns a source that takes the node id from the ordinal at
// the end of a host name, as Kubernetes gives the pods of a StatefulSet
// ("ids-0", "ids-1", …): the decimal number after the last '-'. An empty
// hostname means the machine's, read with [os.Hostname] each time the
// source is asked.
func OrdinalNode(hostname string) NodeSource { return ordinalNode(hostname) }

type ordinalNode string

func (o ordinalNode) NodeID(_ context.Context, l Layout) (int64, error) {
	host := string(o)
	if host == "" {
		h, err := os.Hostname()
		if err != nil {
			return 0, fmt.Errorf("%w: reading the host name: %v", ErrNodeUnavailable, err)
		}
		host = h
	}
	host, _, _ = strings.Cut(host, ".") // a pod's FQDN: ids-3.ids.default.svc…
	i := strings.LastIndexByte(host, '-')
	n, err := strconv.ParseInt(host[i+1:], 10, 64)
	if i < 0 || err != nil || host[i+1] == '+' {
		return 0, fmt.Errorf("%w: host name %q does not end in -ORDINAL", ErrNodeUnavailable, host)
	}
	return StaticNode(n).NodeID(context.Background(), l)
}

// A Lease is a node id held on a coordination service for a limited time
// and renewed in the background: the nested modules
// github.com/ringflake/ringflake/redislease (Redis),
// github.com/ringflake/ringflake/etcdlease (etcd) and
// github.com/ringflake/ringflake/pglease (PostgreSQL) provide them, on
// the common ground of package github.com/ringflake/ringflake/lease.
// Each of them also keeps the node's mark and bounds the fleet's lead, as
// described below. Pass one to [New]
// with [WithLease]; the generator then checks Held on every call and fails
// with [ErrLeaseLost] while it is false, so it never issues under an id
// someone else may hold.
//
// A Lease that also implements [MarkStore] keeps the node's high-water mark
// with the lease, so the next holder of the id — possibly on a machine
// whose clock is behind — starts after the IDs of the previous one. Such a
// lease may also have a method
//
//	MarkAhead() time.Duration
//
// giving the lead a generator writes its mark with when [WithMarkAhead] is
// not given (instead of [DefaultMarkAhead]): a store on a network server
// wants fewer, earlier writes than a local file.
//
// A Lease may also have a method
//
//	MaxLead() time.Duration
//
// bounding how far ahead of its clock any generator holding one of its
// ids may stamp an ID — the fleet's bound, which the leases of redislease,
// etcdlease and pglease wait out, with their TTL, before a new holder issues after
// the server lost data. [New] then refuses (with [ErrInvalidOption]) a
// strategy that may lead further (strategies.PromiseOf) or that states no
// promise, so the bound holds for every generator on the lease.
type Lease interface {
	// Node returns the leased node id.
	Node() int64

	// Held reports whether the id is certainly still held: the lease was
	// renewed recently enough that it cannot have expired, and nobody
	// else took it. It is called on every ID and must be cheap, safe for
	// concurrent use and must not block. The leases of redislease,
	// etcdlease and pglease compare a reading of the monotonic clock with the end of
	// their validity (two atomic loads and about 30 ns for the clock), so
	// that a renewal goroutine running late cannot stretch the lease.
	Held() bool
}

// checkLead returns an error matching [ErrInvalidOption] when lease bounds
// the lead of its fleet (a MaxLead method) and strategy s may stamp IDs
// further ahead of the clock, or states no promise; nil otherwise.
func checkLead(lease Lease, s strategies.Strategy) error {
	bound, ok := lease.(interface{ MaxLead() time.Duration })
	if !ok {
		return nil
	}
	maxLead := bound.MaxLead()
	p, ok := strategies.PromiseOf(s)
	switch {
	case !ok:
		return fmt.Errorf("%w: WithLease: the lease's MaxLead is %v and strategy %v states no promise (strategies.Promiser), so how far it may run ahead of the clock is unknown; give it a Promise method with MaxLead at most %v",
			ErrInvalidOption, maxLead, s, maxLead)
	case p.MaxLead > maxLead:
		return fmt.Errorf("%w: WithLease: strategy %v may stamp IDs %v ahead of the clock, more than the lease's MaxLead %v; use a strategy that leads by at most %v, or set the lease's MaxLead to %v or more in every process of its prefix",
			ErrInvalidOption, s, p.MaxLead, maxLead, maxLead, p.MaxLead)
	}
	return nil
}
