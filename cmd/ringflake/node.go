package main

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"

	"github.com/ringflake/ringflake"
	"github.com/ringflake/ringflake/etcdlease"
	"github.com/ringflake/ringflake/redislease"
)

const nodeHelp = `node id: local[:DIR] (the lowest id no other process of this host holds,
locked in DIR, default ` + ringflake.DefaultLocalNodeDir + `), N, env:VAR (decimal id in
$VAR), ordinal[:HOST] (StatefulSet ordinal at the end of HOST, NAME-N; default
this host's name), or a lease:
redis://[USER:PASS@]HOST[:PORT][/DB][?prefix=P&ttl=10s] (rediss:// for TLS) or
etcd://HOST:PORT[,HOST:PORT...][?prefix=P&ttl=10s]. The first lease under a
prefix, or after the server lost data, waits one TTL before it issues`

// acquireTimeout bounds taking a lease, and giving it back.
const acquireTimeout = 10 * time.Second

// node is the node id gen issues under, with what comes with it.
type node struct {
	id    int64
	lease ringflake.Lease // nil for a fixed id
	// release gives a lease back and closes its client; nil for a fixed id.
	release func(context.Context) error
}

// isLease reports whether the -node flag names a coordination service.
func isLease(spec string) bool {
	for _, scheme := range []string{"redis://", "rediss://", "etcd://"} {
		if strings.HasPrefix(spec, scheme) {
			return true
		}
	}
	return false
}

// resolveNode turns the -node flag into a node id for layout l, taking a
// lease when the flag names a coordination service. Problems with the
// flag's syntax are usage errors that name the bad part; a service that
// cannot give an id is not.
func resolveNode(ctx context.Context, spec string, l ringflake.Layout) (node, error) {
	var src ringflake.NodeSource
	switch {
	case strings.HasPrefix(spec, "redis://"), strings.HasPrefix(spec, "rediss://"):
		return redisNode(ctx, spec, l)
	case strings.HasPrefix(spec, "etcd://"):
		return etcdNode(ctx, spec, l)
	case isLocal(spec):
		return localNode(ctx, spec, l, -1)
	case strings.HasPrefix(spec, "env:"):
		name := strings.TrimPrefix(spec, "env:")
		if name == "" {
			return node{}, usagef("-node %q: no variable name after env:", spec)
		}
		src = ringflake.EnvNode(name)
	case spec == "ordinal" || strings.HasPrefix(spec, "ordinal:"):
		host := strings.TrimPrefix(strings.TrimPrefix(spec, "ordinal"), ":")
		if strings.HasPrefix(spec, "ordinal:") && !endsInOrdinal(host) {
			return node{}, usagef("-node %q: host name %q does not end in -N, as a StatefulSet's pods do (NAME-N)", spec, host)
		}
		src = ringflake.OrdinalNode(host)
	default:
		if !isDecimal(strings.TrimPrefix(spec, "-")) {
			return node{}, usagef("-node %q: not a decimal node id; want %s", spec, nodeHelp)
		}
		n, err := strconv.ParseInt(spec, 10, 64)
		if err != nil {
			return node{}, usagef("-node %q: %v", spec, err)
		}
		src = ringflake.StaticNode(n)
	}
	id, err := src.NodeID(ctx, l)
	if err != nil {
		return node{}, err
	}
	return node{id: id}, nil
}

// isDecimal reports whether s is one or more decimal digits, without a
// sign.
func isDecimal(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range []byte(s) {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// endsInOrdinal reports whether the first label of host is NAME-N: a name
// that does not end in '-', a '-', and decimal digits.
func endsInOrdinal(host string) bool {
	label, _, _ := strings.Cut(host, ".")
	i := strings.LastIndexByte(label, '-')
	return i > 0 && label[i-1] != '-' && isDecimal(label[i+1:])
}

// leaseQuery takes the lease options ringflake reads from a -node query
// (prefix, ttl) and returns the query without them.
func leaseQuery(spec string, q url.Values) (prefix string, ttl time.Duration, rest url.Values, err error) {
	prefix = q.Get("prefix")
	if v := q.Get("ttl"); v != "" {
		if ttl, err = time.ParseDuration(v); err != nil || ttl <= 0 {
			return "", 0, nil, usagef("-node %q: ttl=%q is not a positive duration", spec, v)
		}
	}
	q.Del("prefix")
	q.Del("ttl")
	return prefix, ttl, q, nil
}

// waitTimeout bounds the wait for a new lease to hold its id: a quiet
// period of TTL + Margin after a first start, or after the server lost
// data, and then some.
func waitTimeout(ttl time.Duration) time.Duration {
	if ttl == 0 {
		ttl = redislease.DefaultTTL // etcdlease's is the same
	}
	return 2*ttl + acquireTimeout
}

// noFragment rejects a -node URL with a fragment: nothing reads it.
func noFragment(spec string) error {
	if _, frag, ok := strings.Cut(spec, "#"); ok {
		return usagef("-node %q: fragment %q: a -node URL has none", spec, "#"+frag)
	}
	return nil
}

func redisNode(ctx context.Context, spec string, l ringflake.Layout) (node, error) {
	if err := noFragment(spec); err != nil {
		return node{}, err
	}
	u, err := url.Parse(spec)
	if err != nil {
		return node{}, usagef("-node %q: %v", spec, err)
	}
	if u.Hostname() == "" {
		return node{}, usagef("-node %q: no host; want %s://HOST[:PORT]", spec, u.Scheme)
	}
	prefix, ttl, rest, err := leaseQuery(spec, u.Query())
	if err != nil {
		return node{}, err
	}
	u.RawQuery = rest.Encode()
	opts, err := redis.ParseURL(u.String())
	if err != nil {
		return node{}, usagef("-node %q: %v", spec, err)
	}
	// Let go-redis itself give up at the lease's deadlines too (the
	// lease stops waiting then in any case), freeing the connection.
	opts.ContextTimeoutEnabled = true
	redis.SetLogger(quietRedis{}) // the error below says what went wrong; go-redis's own log lines only repeat it
	client := redis.NewClient(opts)
	actx, cancel := context.WithTimeout(ctx, acquireTimeout)
	defer cancel()
	lease, err := redislease.Acquire(actx, client, redislease.Options{Prefix: prefix, Layout: l, TTL: ttl})
	if err != nil {
		return node{}, errors.Join(fmt.Errorf("leasing a node id from %s: %w", u.Host, err), client.Close())
	}
	release := func(ctx context.Context) error { return errors.Join(lease.Close(ctx), client.Close()) }
	return held(ctx, node{id: lease.Node(), lease: lease, release: release}, lease.WaitHeld, ttl)
}

// etcdNode takes a lease from etcd. The -node value is parsed by hand:
// net/url cannot parse a list of endpoints with IPv6 addresses.
func etcdNode(ctx context.Context, spec string, l ringflake.Layout) (node, error) {
	if err := noFragment(spec); err != nil {
		return node{}, err
	}
	hosts, query, _ := strings.Cut(strings.TrimPrefix(spec, "etcd://"), "?")
	if user, _, ok := strings.Cut(hosts, "@"); ok {
		return node{}, usagef("-node %q: credentials %q: etcd user names and passwords are not supported", spec, user+"@")
	}
	if h, path, ok := strings.Cut(hosts, "/"); ok {
		if path != "" {
			return node{}, usagef("-node %q: path %q: want etcd://HOST:PORT[,HOST:PORT...][?prefix=P&ttl=10s]", spec, "/"+path)
		}
		hosts = h
	}
	var endpoints []string
	for i, ep := range strings.Split(hosts, ",") {
		host, port, err := net.SplitHostPort(ep)
		if p, perr := strconv.Atoi(port); err != nil || host == "" || !isDecimal(port) || perr != nil || p < 1 || p > 65535 {
			return node{}, usagef("-node %q: endpoint %d, %q, is not HOST:PORT", spec, i+1, ep)
		}
		endpoints = append(endpoints, "http://"+ep)
	}
	q, err := url.ParseQuery(query)
	if err != nil {
		return node{}, usagef("-node %q: %v", spec, err)
	}
	prefix, ttl, rest, err := leaseQuery(spec, q)
	if err != nil {
		return node{}, err
	}
	if len(rest) > 0 {
		names := slices.Sorted(maps.Keys(rest))
		return node{}, usagef("-node %q: unknown option %q; etcd takes prefix and ttl", spec, names[0])
	}
	client, err := clientv3.New(clientv3.Config{Endpoints: endpoints, DialTimeout: acquireTimeout, Logger: zap.NewNop()})
	if err != nil {
		return node{}, fmt.Errorf("connecting to etcd %s: %w", hosts, err)
	}
	actx, cancel := context.WithTimeout(ctx, acquireTimeout)
	defer cancel()
	lease, err := etcdlease.Acquire(actx, client, etcdlease.Options{Prefix: prefix, Layout: l, TTL: ttl})
	if err != nil {
		return node{}, errors.Join(fmt.Errorf("leasing a node id from etcd %s: %w", hosts, err), client.Close())
	}
	release := func(ctx context.Context) error { return errors.Join(lease.Close(ctx), client.Close()) }
	return held(ctx, node{id: lease.Node(), lease: lease, release: release}, lease.WaitHeld, ttl)
}

// held returns n once its lease holds the id — at once, or after a quiet
// period — or gives the lease back and returns why it does not.
func held(ctx context.Context, n node, wait func(context.Context) error, ttl time.Duration) (node, error) {
	wctx, cancel := context.WithTimeout(ctx, waitTimeout(ttl))
	defer cancel()
	if err := wait(wctx); err != nil {
		rctx, rcancel := context.WithTimeout(ctx, acquireTimeout)
		defer rcancel()
		return node{}, errors.Join(fmt.Errorf("waiting for the lease of node %d to hold: %w", n.id, err), n.release(rctx))
	}
	return n, nil
}

// quietRedis drops go-redis's log lines.
type quietRedis struct{}

// Printf drops the line.
func (quietRedis) Printf(context.Context, string, ...any) {}
