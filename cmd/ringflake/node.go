package main

import (
	"context"
	"errors"
	"fmt"
	"net/url"
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

const nodeHelp = `node id: N, env:VAR (decimal id in $VAR), ordinal[:HOST] (StatefulSet
ordinal at the end of HOST, default this host's name), or a lease:
redis://[USER:PASS@]HOST:PORT[/DB][?prefix=P&ttl=10s] or
etcd://HOST:PORT[,HOST:PORT...][?prefix=P&ttl=10s]`

// acquireTimeout bounds taking a lease, and giving it back.
const acquireTimeout = 10 * time.Second

// node is the node id gen issues under, with what comes with it.
type node struct {
	id    int64
	lease ringflake.Lease // nil for a fixed id
	// release gives a lease back and closes its client; nil for a fixed id.
	release func(context.Context) error
}

// resolveNode turns the -node flag into a node id for layout l, taking a
// lease when the flag names a coordination service. Problems with the
// flag's syntax are usage errors; a service that cannot give an id is not.
func resolveNode(ctx context.Context, spec string, l ringflake.Layout) (node, error) {
	var src ringflake.NodeSource
	switch {
	case strings.HasPrefix(spec, "redis://"), strings.HasPrefix(spec, "rediss://"):
		return redisNode(ctx, spec, l)
	case strings.HasPrefix(spec, "etcd://"):
		return etcdNode(ctx, spec, l)
	case strings.HasPrefix(spec, "env:"):
		src = ringflake.EnvNode(strings.TrimPrefix(spec, "env:"))
	case spec == "ordinal" || strings.HasPrefix(spec, "ordinal:"):
		src = ringflake.OrdinalNode(strings.TrimPrefix(strings.TrimPrefix(spec, "ordinal"), ":"))
	default:
		n, err := strconv.ParseInt(spec, 10, 64)
		if err != nil {
			return node{}, usagef("-node %q: want %s", spec, nodeHelp)
		}
		src = ringflake.StaticNode(n)
	}
	id, err := src.NodeID(ctx, l)
	if err != nil {
		return node{}, err
	}
	return node{id: id}, nil
}

// leaseQuery takes the lease options ringflake reads from a URL's query
// (prefix, ttl) and returns the query without them.
func leaseQuery(u *url.URL) (prefix string, ttl time.Duration, rest url.Values, err error) {
	rest = u.Query()
	prefix = rest.Get("prefix")
	if v := rest.Get("ttl"); v != "" {
		if ttl, err = time.ParseDuration(v); err != nil {
			return "", 0, nil, usagef("-node: ttl=%q is not a duration", v)
		}
	}
	rest.Del("prefix")
	rest.Del("ttl")
	return prefix, ttl, rest, nil
}

func redisNode(ctx context.Context, spec string, l ringflake.Layout) (node, error) {
	u, err := url.Parse(spec)
	if err != nil {
		return node{}, usagef("-node %q: %v", spec, err)
	}
	prefix, ttl, rest, err := leaseQuery(u)
	if err != nil {
		return node{}, err
	}
	u.RawQuery = rest.Encode()
	opts, err := redis.ParseURL(u.String())
	if err != nil {
		return node{}, usagef("-node %q: %v", spec, err)
	}
	redis.SetLogger(quietRedis{}) // the error below says what went wrong; go-redis's own log lines only repeat it
	client := redis.NewClient(opts)
	ctx, cancel := context.WithTimeout(ctx, acquireTimeout)
	defer cancel()
	lease, err := redislease.Acquire(ctx, client, redislease.Options{Prefix: prefix, Layout: l, TTL: ttl})
	if err != nil {
		return node{}, errors.Join(fmt.Errorf("leasing a node id from %s: %w", u.Host, err), client.Close())
	}
	return node{id: lease.Node(), lease: lease, release: func(ctx context.Context) error {
		return errors.Join(lease.Close(ctx), client.Close())
	}}, nil
}

func etcdNode(ctx context.Context, spec string, l ringflake.Layout) (node, error) {
	u, err := url.Parse(spec)
	if err != nil {
		return node{}, usagef("-node %q: %v", spec, err)
	}
	prefix, ttl, rest, err := leaseQuery(u)
	if err != nil {
		return node{}, err
	}
	if len(rest) > 0 || u.Path != "" && u.Path != "/" || u.Host == "" {
		return node{}, usagef("-node %q: want etcd://HOST:PORT[,HOST:PORT...][?prefix=P&ttl=10s]", spec)
	}
	var endpoints []string
	for _, h := range strings.Split(u.Host, ",") {
		endpoints = append(endpoints, "http://"+h)
	}
	client, err := clientv3.New(clientv3.Config{Endpoints: endpoints, DialTimeout: acquireTimeout, Logger: zap.NewNop()})
	if err != nil {
		return node{}, fmt.Errorf("connecting to etcd %s: %w", u.Host, err)
	}
	ctx, cancel := context.WithTimeout(ctx, acquireTimeout)
	defer cancel()
	lease, err := etcdlease.Acquire(ctx, client, etcdlease.Options{Prefix: prefix, Layout: l, TTL: ttl})
	if err != nil {
		return node{}, errors.Join(fmt.Errorf("leasing a node id from etcd %s: %w", u.Host, err), client.Close())
	}
	return node{id: lease.Node(), lease: lease, release: func(ctx context.Context) error {
		return errors.Join(lease.Close(ctx), client.Close())
	}}, nil
}

// quietRedis drops go-redis's log lines.
type quietRedis struct{}

func (quietRedis) Printf(context.Context, string, ...any) {}
