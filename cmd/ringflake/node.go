package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/ringflake/ringflake"
	"github.com/ringflake/ringflake/etcdlease/gateway"
	"github.com/ringflake/ringflake/etcdlease/txnlease"
	"github.com/ringflake/ringflake/hostlocal"
	"github.com/ringflake/ringflake/lease"
	"github.com/ringflake/ringflake/redislease/lualease"
	"github.com/ringflake/ringflake/redislease/resp"
	"github.com/ringflake/ringflake/strategies"
)

const nodeHelp = `node id: local[:DIR] (the lowest id no other process of this host holds,
locked in DIR, default $RINGFLAKE_NODE_DIR or ` + hostlocal.DefaultDir + `), N, env:VAR
(decimal id in $VAR), ordinal[:HOST] (StatefulSet ordinal at the end of HOST,
NAME-N; default this host's name) — a configured id is locked on this host
too, so a second process with it fails at start —, or a lease:
redis://[USER:PASS@]HOST[:PORT][/DB][?prefix=P&ttl=10s&maxlead=1s] (rediss://
for TLS), etcd://HOST:PORT[,HOST:PORT...][?prefix=P&ttl=10s&maxlead=1s] or
postgres://[USER[:PASS]@]HOST[:PORT]/DB[?prefix=P&ttl=10s&maxlead=1s&sslmode=…]
(postgresql:// too; other parameters go to the driver; the tables are
created when missing). maxlead is the longest any process of the prefix
may run ahead of its clock (a logical:D strategy needs D or more; use the
same value in every process).
The first lease under a prefix, or after the server lost data, waits
ttl + maxlead and a margin (ttl/100 + 2ms) before it issues`

const guardHelp = `claim the configured -node id (N, env:VAR or ordinal) on a server while
gen runs, so that a second process with the same id fails at start:
redis://…, etcd://… or postgres://… as for -node (prefix, ttl, maxlead). The claim keeps
the high-water mark, and gen stops if the claim is lost`

// acquireTimeout bounds taking a lease, and giving it back.
const acquireTimeout = 10 * time.Second

// node is the node id gen issues under, with what comes with it.
type node struct {
	id    int64
	lease ringflake.Lease // nil for a fixed id
	// release gives a lease back and closes its client; nil for a fixed id.
	release func(context.Context) error
	// rehold waits until the lease holds its id again, as after a
	// renewal that came late; it fails when the lease ended for good or
	// did not hold the id again in time. Nil for a fixed id.
	rehold func() error
}

// nodeFlags are gen's flags about its node id.
type nodeFlags struct {
	node     string // -node
	nodeSet  bool   // -node was given
	guard    string // -guard
	state    string // -state
	strategy strategies.Strategy
	stderr   io.Writer // where a lease's wait is told
}

// isLease reports whether a -node value names a coordination service.
func isLease(spec string) bool {
	for _, scheme := range []string{"redis://", "rediss://", "etcd://", "postgres://", "postgresql://"} {
		if strings.HasPrefix(spec, scheme) {
			return true
		}
	}
	return false
}

// isConfigured reports whether a -node value is a node id the process is
// configured with — N, env:VAR, ordinal — rather than one it takes on
// its own (a lease; a host-local lease, local[:DIR]).
func isConfigured(spec string) bool {
	return !isLease(spec) && spec != "local" && !strings.HasPrefix(spec, "local:")
}

// resolveNode turns gen's node flags into a node id for layout l: taking a
// lease when -node names a coordination service, claiming the configured
// id when -guard names one. Problems with the flags' syntax and
// combination are usage errors that name the bad part, found before
// anything is dialled; a service that cannot give or guard an id is not.
func resolveNode(ctx context.Context, f nodeFlags, l ringflake.Layout) (node, error) {
	switch {
	case f.guard != "" && !f.nodeSet:
		return node{}, badValuef("-guard needs the node id it guards: -node N, env:VAR or ordinal[:HOST]")
	case f.guard != "" && !isConfigured(f.node):
		return node{}, badValuef("-guard with -node %q: -guard guards a configured node id (N, env:VAR or ordinal[:HOST]); a leased id needs no guard", f.node)
	case f.state != "" && isLease(f.node):
		return node{}, badValuef("-state: a leased node id keeps its high-water mark with the lease; -state is for fixed node ids")
	case f.state != "" && f.guard != "":
		return node{}, badValuef("-state: a guarded node id keeps its high-water mark with its claim; -state is for unguarded fixed node ids")
	}
	if isLease(f.node) {
		s, err := parseServer("-node", f.node, f.strategy)
		if err != nil {
			return node{}, err
		}
		s.stderr = f.stderr
		return s.take(ctx, l, -1)
	}
	if isLocal(f.node) {
		want := int64(-1) // the lowest free id, or the one the state file was written for
		if n, ok := markNode(ctx, f.state, l); ok {
			want = n
		}
		return localNode(ctx, f.node, l, want, f.state)
	}
	var guard *server
	if f.guard != "" {
		if !isLease(f.guard) {
			return node{}, badValuef("-guard %q: want redis://HOST[:PORT][/DB][?…], etcd://HOST:PORT[,…][?…] or postgres://[USER@]HOST[:PORT]/DB[?…]", f.guard)
		}
		var err error
		if guard, err = parseServer("-guard", f.guard, f.strategy); err != nil {
			return node{}, err
		}
		guard.stderr = f.stderr
	}
	id, err := configuredNode(ctx, f.node, l)
	if err != nil {
		return node{}, err
	}
	unhold, err := holdOnHost(ctx, l, id)
	if err != nil {
		return node{}, err
	}
	if guard == nil {
		return node{id: id, release: unhold}, nil
	}
	n, err := guard.take(ctx, l, id)
	if err != nil {
		return node{}, errors.Join(err, unhold(ctx))
	}
	release := n.release
	n.release = func(ctx context.Context) error { return errors.Join(release(ctx), unhold(ctx)) }
	return n, nil
}

// nodeDirEnv names the environment variable that sets the directory of
// the host-local node locks, for -node local and configured ids alike
// (hostlocal.DefaultDir when unset).
const nodeDirEnv = "RINGFLAKE_NODE_DIR"

// envNodeDir returns $RINGFLAKE_NODE_DIR, after checking that it names a
// directory that exists: hostlocal would create a missing one, and a
// typo would then split the host's node locks in two, letting two
// processes hold one id. The default directory is created as before.
func envNodeDir() (string, error) {
	dir := os.Getenv(nodeDirEnv)
	return dir, checkNodeDir(nodeDirEnv+"="+dir, dir)
}

// checkNodeDir checks that dir, the node lock directory that what names,
// exists and is a directory, unless it is "" or hostlocal.DefaultDir.
func checkNodeDir(what, dir string) error {
	if dir == "" || filepath.Clean(dir) == hostlocal.DefaultDir {
		return nil
	}
	fi, err := os.Stat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("%s: no such directory; create it, the one directory every process of this host uses for node locks, or unset it for %s", what, hostlocal.DefaultDir)
	case err != nil:
		return fmt.Errorf("%s: %w", what, err)
	case !fi.IsDir():
		return fmt.Errorf("%s: not a directory", what)
	}
	return nil
}

// holdOnHost takes the host-local lock of the configured node id of
// layout l, in $RINGFLAKE_NODE_DIR or hostlocal.DefaultDir — the locks
// -node local takes — so that a second process of this host with the same
// id fails at start, naming the first one's pid, instead of issuing the
// same IDs. It returns how to give the lock back.
func holdOnHost(ctx context.Context, l ringflake.Layout, id int64) (func(context.Context) error, error) {
	dir, err := envNodeDir()
	if err != nil {
		return nil, err
	}
	src := hostlocal.NewNode(dir)
	ctx, cancel := context.WithTimeout(ctx, acquireTimeout)
	defer cancel()
	if err := src.Claim(ctx, l, id); err != nil {
		var held *hostlocal.NodeError
		if errors.As(err, &held) {
			return nil, fmt.Errorf("node %d is in use on this host: %w", id, err)
		}
		return nil, fmt.Errorf("node %d: the host-local lock (set %s to another directory, or use -node local): %w", id, nodeDirEnv, err)
	}
	return func(context.Context) error { return src.Close() }, nil
}

// configuredNode returns the node id a configured -node value gives for l.
func configuredNode(ctx context.Context, spec string, l ringflake.Layout) (int64, error) {
	var src ringflake.NodeSource
	switch {
	case strings.HasPrefix(spec, "env:"):
		name := strings.TrimPrefix(spec, "env:")
		if name == "" {
			return 0, badValuef("-node %q: no variable name after env:", spec)
		}
		src = ringflake.EnvNode(name)
	case spec == "ordinal" || strings.HasPrefix(spec, "ordinal:"):
		host := strings.TrimPrefix(strings.TrimPrefix(spec, "ordinal"), ":")
		if strings.HasPrefix(spec, "ordinal:") && !endsInOrdinal(host) {
			return 0, badValuef("-node %q: host name %q does not end in -N, as a StatefulSet's pods do (NAME-N)", spec, host)
		}
		src = ringflake.OrdinalNode(host)
	default:
		if scheme, _, ok := strings.Cut(spec, "://"); ok {
			return 0, badValuef("-node %q: no lease on %s://; want redis://, rediss://, etcd://, postgres:// or postgresql://", spec, scheme)
		}
		if !isDecimal(strings.TrimPrefix(spec, "-")) {
			return 0, badValuef("-node %q: not a node id; want local[:DIR], N, env:VAR, ordinal[:HOST], or a lease URL: redis://, etcd:// or postgres://", spec)
		}
		n, err := strconv.ParseInt(spec, 10, 64)
		if err != nil {
			return 0, badValuef("-node %q: %v", spec, err)
		}
		src = ringflake.StaticNode(n)
	}
	return src.NodeID(ctx, l)
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

// A server is a coordination service a -node or -guard URL names, with
// the lease options of its query. Nothing is dialled until take.
type server struct {
	flag, spec string
	opts       lease.Options
	redis      *resp.Options   // for redis:// and rediss://
	etcd       []string        // for etcd://: endpoints
	pg         *pgxpool.Config // for postgres:// and postgresql://
	where      string          // for errors: "127.0.0.1:6379", "etcd 127.0.0.1:2379"
	stderr     io.Writer       // where take tells of a quiet period; nil: nowhere
}

// parseServer parses the URL spec of flag, and checks that strategy s
// leads the clock by no more than the URL's maxlead allows.
func parseServer(flag, spec string, s strategies.Strategy) (*server, error) {
	if _, frag, ok := strings.Cut(spec, "#"); ok {
		return nil, badValuef("%s %q: fragment %q: a %s URL has none", flag, spec, "#"+frag, flag)
	}
	srv := &server{flag: flag, spec: spec}
	var err error
	switch {
	case strings.HasPrefix(spec, "etcd://"):
		err = srv.parseEtcd()
	case isPostgres(spec):
		err = srv.parsePostgres()
	default:
		err = srv.parseRedis()
	}
	if err != nil {
		return nil, err
	}
	maxLead := cmp.Or(srv.opts.MaxLead, lease.DefaultMaxLead)
	if p, ok := strategies.PromiseOf(s); ok && p.MaxLead > maxLead {
		return nil, badValuef("-strategy %v may issue IDs %v ahead of the clock, more than %s allows (maxlead %v): add maxlead=%v to the %s URL, the same in every process of its prefix",
			s, p.MaxLead, flag, maxLead, p.MaxLead, flag)
	}
	return srv, nil
}

// leaseQuery takes the lease options ringflake reads from a URL's query —
// prefix, ttl, maxlead — into s.opts, and returns the query without them.
func (s *server) leaseQuery(q url.Values) (url.Values, error) {
	s.opts.Prefix = q.Get("prefix")
	for _, d := range []struct {
		name string
		to   *time.Duration
	}{{"ttl", &s.opts.TTL}, {"maxlead", &s.opts.MaxLead}} {
		if v := q.Get(d.name); v != "" {
			var err error
			if *d.to, err = time.ParseDuration(v); err != nil || *d.to <= 0 {
				return nil, badValuef("%s %q: %s=%q is not a positive duration", s.flag, s.spec, d.name, v)
			}
		}
		q.Del(d.name)
	}
	q.Del("prefix")
	return q, nil
}

func (s *server) parseRedis() error {
	u, err := url.Parse(s.spec)
	if err != nil {
		return badValuef("%s %q: %v", s.flag, s.spec, err)
	}
	if u.Hostname() == "" {
		return badValuef("%s %q: no host; want %s://HOST[:PORT]", s.flag, s.spec, u.Scheme)
	}
	rest, err := s.leaseQuery(u.Query())
	if err != nil {
		return err
	}
	u.RawQuery = rest.Encode()
	opts, err := resp.ParseURL(u.String())
	if err != nil {
		return badValuef("%s %q: %v", s.flag, s.spec, err)
	}
	s.redis = &opts
	s.where = u.Host
	return nil
}

// parseEtcd parses an etcd URL by hand: net/url cannot parse a list of
// endpoints with IPv6 addresses.
func (s *server) parseEtcd() error {
	hosts, query, _ := strings.Cut(strings.TrimPrefix(s.spec, "etcd://"), "?")
	if user, _, ok := strings.Cut(hosts, "@"); ok {
		return badValuef("%s %q: credentials %q: etcd user names and passwords are not supported", s.flag, s.spec, user+"@")
	}
	if h, path, ok := strings.Cut(hosts, "/"); ok {
		if path != "" {
			return badValuef("%s %q: path %q: want etcd://HOST:PORT[,HOST:PORT...][?prefix=P&ttl=10s&maxlead=1s]", s.flag, s.spec, "/"+path)
		}
		hosts = h
	}
	for i, ep := range strings.Split(hosts, ",") {
		host, port, err := net.SplitHostPort(ep)
		if p, perr := strconv.Atoi(port); err != nil || host == "" || !isDecimal(port) || perr != nil || p < 1 || p > 65535 {
			return badValuef("%s %q: endpoint %d, %q, is not HOST:PORT", s.flag, s.spec, i+1, ep)
		}
		s.etcd = append(s.etcd, "http://"+ep)
	}
	q, err := url.ParseQuery(query)
	if err != nil {
		return badValuef("%s %q: %v", s.flag, s.spec, err)
	}
	rest, err := s.leaseQuery(q)
	if err != nil {
		return err
	}
	if len(rest) > 0 {
		names := slices.Sorted(maps.Keys(rest))
		return badValuef("%s %q: unknown option %q; etcd takes prefix, ttl and maxlead", s.flag, s.spec, names[0])
	}
	s.where = "etcd " + hosts
	return nil
}

// heldLease is what gen uses of a lease of either module.
type heldLease interface {
	ringflake.Lease
	WaitHeld(ctx context.Context) error
	Close(ctx context.Context) error
}

// take takes a node id of layout l from the server — the lowest free one
// when id is negative (-node), id itself otherwise (a -guard's claim) —
// and returns it once the lease holds it: at once, or after a quiet
// period.
func (s *server) take(ctx context.Context, l ringflake.Layout, id int64) (node, error) {
	opts := s.opts
	opts.Layout = l
	actx, cancel := context.WithTimeout(ctx, acquireTimeout)
	defer cancel()
	var (
		h           heldLease
		err         error
		closeClient func() error
	)
	switch {
	case s.pg != nil:
		h, closeClient, err = s.takePostgres(actx, opts, id)
	case s.redis != nil:
		client, cerr := resp.New(*s.redis)
		if cerr != nil {
			return node{}, fmt.Errorf("%s: connecting to %s: %w", s.flag, s.where, cerr)
		}
		closeClient = client.Close
		if id < 0 {
			h, err = lualease.Acquire(actx, client, opts)
		} else {
			h, err = lualease.Claim(actx, client, id, opts)
		}
	default:
		// etcd's JSON gateway: the lease of etcdlease without compiling
		// gRPC into the command.
		client, cerr := gateway.New(gateway.Config{Endpoints: s.etcd})
		if cerr != nil {
			return node{}, fmt.Errorf("%s: connecting to %s: %w", s.flag, s.where, cerr)
		}
		closeClient = client.Close
		if id < 0 {
			h, err = txnlease.Acquire(actx, client, opts)
		} else {
			h, err = txnlease.Claim(actx, client, id, opts)
		}
	}
	if err != nil {
		what := "leasing a node id"
		if id >= 0 {
			what = fmt.Sprintf("claiming node %d", id)
		}
		return node{}, errors.Join(fmt.Errorf("%s: %s from %s: %w", s.flag, what, s.where, err), closeClient())
	}
	// The wait: a quiet period of TTL + Margin + MaxLead after a first
	// start, or after the server lost data, and then some.
	patience := 2*cmp.Or(s.opts.TTL, lease.DefaultTTL) + cmp.Or(s.opts.MaxLead, lease.DefaultMaxLead) + acquireTimeout
	n := node{id: h.Node(), lease: h, release: func(ctx context.Context) error { return errors.Join(h.Close(ctx), closeClient()) }}
	n.rehold = func() error {
		wctx, cancel := context.WithTimeout(ctx, patience)
		defer cancel()
		err := h.WaitHeld(wctx)
		if errors.Is(err, context.DeadlineExceeded) {
			return fmt.Errorf("%w: node %d: the lease did not hold its id again within %v", ringflake.ErrLeaseLost, n.id, patience)
		}
		return err // nil, or what ended the lease: it matches ringflake.ErrLeaseLost
	}
	s.tellQuiet(h)
	if err := n.rehold(); err != nil {
		rctx, rcancel := context.WithTimeout(ctx, acquireTimeout)
		defer rcancel()
		return node{}, errors.Join(fmt.Errorf("%s: waiting for the lease of node %d to hold: %w", s.flag, n.id, err), n.release(rctx))
	}
	return n, nil
}

// tellQuiet says on stderr, once, why and for how long a lease that does
// not hold its id yet waits before the first ID: a first lease under its
// prefix, or the first after the server lost data, waits out a quiet
// period (lease.Config.Quiet) so that any holder the server forgot has
// stopped and its IDs are behind the clock.
func (s *server) tellQuiet(h heldLease) {
	if s.stderr == nil || h.Held() {
		return
	}
	cfg, err := s.opts.Resolve(lease.Rules{TTLUnit: time.Nanosecond})
	if err != nil {
		return // the lease was taken with these options: it cannot fail
	}
	fmt.Fprintf(s.stderr, "ringflake: node %d from %s: waiting up to %v before the first ID: a new prefix %q, or a server that lost data, may have had a holder it forgot (the wait is ttl %v + maxlead %v + margin %v)\n",
		h.Node(), s.where, cfg.Quiet().Round(time.Millisecond), cfg.Prefix, cfg.TTL, cfg.MaxLead, cfg.Margin)
}
