package fleetsim

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ringflake/ringflake"
	"github.com/ringflake/ringflake/lease"
	"github.com/ringflake/ringflake/lease/leasetest"
	"github.com/ringflake/ringflake/simclock"
)

// TestConformance runs the lease modules' conformance suite
// (lease/leasetest), which redislease, etcdlease and pglease pass against
// real servers, against the simulation's server model of each kind: the
// model cannot drift from the real servers silently.
//
// The suite talks to the model through a lease module of this file's
// own, in-process: Acquire, Claim and List, and a Lease built on
// lease.Keep, as the real modules are. Its requests reach the model
// through the answers the simulation uses too (renewal, saveErr,
// loadedMark in server.go). The model's clock stands still at
// leasetest.Start: the suite's servers keep TTLs of a minute of real time
// that never run out while a test runs unless it says so (Expire), and
// the suite moves only the leases' own mock clocks.
func TestConformance(t *testing.T) {
	for _, kind := range []string{Redis, Etcd, Postgres} {
		t.Run(kind, func(t *testing.T) {
			leasetest.Run(t, &modelDriver{kind: kind, shared: newModelServer(kind)})
		})
	}
}

// modelDriver is a leasetest.Driver of the server model of one kind.
type modelDriver struct {
	kind   string
	shared *modelServer
}

func (d *modelDriver) Connect(t *testing.T) leasetest.Conn { return &modelConn{srv: d.shared} }

// Unreachable returns a client of a server that never answers: every
// request is refused, as by a port nothing listens on.
func (d *modelDriver) Unreachable(t *testing.T) leasetest.Conn {
	s := newModelServer(d.kind)
	s.down = true
	return &modelConn{srv: s}
}

func (d *modelDriver) StartServer(t *testing.T) leasetest.Server {
	s := newModelServer(d.kind)
	t.Cleanup(func() { s.Stop(t) }) // no request is left waiting on a paused server
	return s
}

func (d *modelDriver) DetectsRestart() bool { return d.shared.m.detectsRestart() }

func (d *modelDriver) TTLUnit() time.Duration { return ttlUnit(d.kind) }

// ConnectDelayed returns a client of the shared server whose mark saves
// the returned Delay can hold back.
func (d *modelDriver) ConnectDelayed(t *testing.T) (leasetest.Conn, leasetest.Delay) {
	c := &modelConn{srv: d.shared, delay: &modelDelay{}}
	return c, c.delay
}

func ttlUnit(kind string) time.Duration {
	if kind == Etcd {
		return time.Second
	}
	return time.Millisecond
}

// modelServer is a model behind a lock, and what the suite does to a
// server process: stop it, start it again with or without its data,
// pause it.
type modelServer struct {
	mu     sync.Mutex
	m      *model
	down   bool          // stopped: requests are refused
	paused chan struct{} // while paused: closed when it resumes or stops
}

func newModelServer(kind string) *modelServer {
	clk := simclock.New(leasetest.Start)
	return &modelServer{m: newModel(kind, clk.Now)}
}

// errAbandoned is a request whose client broke its connection.
var errAbandoned = errors.New("fleetsim: connection closed by the client")

// do runs f on the model as one request: at once, refused while the
// server is down, or — while it is paused — once it resumes, whatever
// the client does meanwhile (the request is on its way).
func (s *modelServer) do(f func(m *model)) error {
	s.mu.Lock()
	for s.paused != nil && !s.down {
		ch := s.paused
		s.mu.Unlock()
		<-ch
		s.mu.Lock()
	}
	defer s.mu.Unlock()
	if s.down {
		return errRefused
	}
	f(s.m)
	return nil
}

func (s *modelServer) Connect(t *testing.T, patient bool) leasetest.Conn { return &modelConn{srv: s} }

func (s *modelServer) Stop(t *testing.T) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.down = true
	s.resume()
}

// Start starts the server again with its data: a new process.
func (s *modelServer) Start(t *testing.T) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.down = false
	s.m.restart()
}

// StartEmpty starts it again without its data.
func (s *modelServer) StartEmpty(t *testing.T) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.down = false
	s.m.loseData()
}

func (s *modelServer) Pause(t *testing.T) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.paused == nil {
		s.paused = make(chan struct{})
	}
}

func (s *modelServer) Resume(t *testing.T) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.resume()
}

func (s *modelServer) resume() {
	if s.paused != nil {
		close(s.paused)
		s.paused = nil
	}
}

// modelDelay holds back a client's mark save (leasetest.Delay).
type modelDelay struct {
	mu     sync.Mutex
	hold   bool
	held   func()        // the held save, applied by Deliver
	heldCh chan struct{} // closed when a save is held
	cut    chan struct{} // closed by Abandon: the held save's client gives up
}

func (d *modelDelay) HoldSave() {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.hold, d.held, d.heldCh, d.cut = true, nil, make(chan struct{}), make(chan struct{})
}

// take holds back apply when a save is to be held, and returns the
// channel that Abandon closes; nil when it is not held.
func (d *modelDelay) take(apply func()) chan struct{} {
	d.mu.Lock()
	defer d.mu.Unlock()
	if !d.hold {
		return nil
	}
	d.hold, d.held = false, apply
	close(d.heldCh)
	return d.cut
}

func (d *modelDelay) Abandon(t *testing.T) {
	t.Helper()
	d.mu.Lock()
	held, cut := d.heldCh, d.cut
	d.mu.Unlock()
	select {
	case <-held:
	case <-time.After(30 * time.Second):
		t.Fatal("no mark save within 30s of HoldSave")
	}
	close(cut)
}

func (d *modelDelay) Deliver(t *testing.T) {
	t.Helper()
	d.mu.Lock()
	apply := d.held
	d.held = nil
	d.mu.Unlock()
	require.NotNil(t, apply, "Deliver without a held save")
	apply()
}

// modelConn is a client of a model server: the module's calls through
// it, and what the suite does to the server's keys behind a lease's back.
type modelConn struct {
	srv   *modelServer
	delay *modelDelay // nil: saves are never held
}

// call runs f as one request, bounded by timeout as lease.Call bounds a
// real module's.
func call[T any](ctx context.Context, c *modelConn, timeout time.Duration, f func(m *model) T) (T, error) {
	return lease.Call(ctx, timeout, func(context.Context) (T, error) {
		var v T
		err := c.srv.do(func(m *model) { v = f(m) })
		return v, err
	})
}

func (c *modelConn) resolve(opts lease.Options) (lease.Config, error) {
	return opts.Resolve(lease.Rules{Package: "fleetsim", TTLUnit: ttlUnit(c.srv.m.kind)})
}

func (c *modelConn) Acquire(ctx context.Context, opts lease.Options) (leasetest.Lease, error) {
	return c.take(ctx, opts, 0, false)
}

func (c *modelConn) Claim(ctx context.Context, node int64, opts lease.Options) (leasetest.Lease, error) {
	return c.take(ctx, opts, node, true)
}

// take acquires the lowest free id, or claims node.
func (c *modelConn) take(ctx context.Context, opts lease.Options, node int64, claim bool) (leasetest.Lease, error) {
	cfg, err := c.resolve(opts)
	if err != nil {
		return nil, err
	}
	from, to := int64(0), cfg.MaxNode
	if claim {
		if _, err := ringflake.StaticNode(node).NodeID(ctx, cfg.Layout); err != nil {
			return nil, err
		}
		from, to = node, node
	}
	sent, token := cfg.Clock.Now(), lease.NewToken()
	rep, err := call(ctx, c, cfg.Timeout, func(m *model) acquireReply {
		return m.acquire(cfg.Prefix, from, to, token, cfg.Holder, cfg.TTL, cfg.Quiet())
	})
	switch {
	case err != nil:
		return nil, fmt.Errorf("fleetsim: acquiring a node id: %w", err)
	case rep.id < 0 && claim:
		return nil, &lease.HeldError{Package: cfg.Package, Prefix: cfg.Prefix, Node: node, Holder: rep.holder}
	case rep.id < 0:
		return nil, &lease.RangeFullError{Package: cfg.Package, Prefix: cfg.Prefix, Nodes: cfg.MaxNode + 1}
	}
	var notBefore time.Time
	if rep.quiet > 0 {
		notBefore = cfg.Clock.Now().Add(rep.quiet)
	}
	l := &modelLease{c: c, cfg: cfg, node: rep.id, token: token, epoch: rep.epoch}
	l.Keeper, l.stop = lease.Keep(cfg, rep.id, notBefore, sent.Add(cfg.TTL-cfg.Margin), l.renew)
	return l, nil
}

func (c *modelConn) List(ctx context.Context, opts lease.Options) ([]lease.Holding, error) {
	cfg, err := c.resolve(opts)
	if err != nil {
		return nil, err
	}
	return call(ctx, c, cfg.Timeout, func(m *model) []lease.Holding { return m.list(cfg.Prefix, cfg.MaxNode) })
}

// admin runs f on the model at once, as a test's own client does.
func (c *modelConn) admin(t *testing.T, f func(m *model)) {
	t.Helper()
	require.NoError(t, c.srv.do(f))
}

// Expire ends the lease now, on the server's clock, as its TTL running
// out does.
func (c *modelConn) Expire(t *testing.T, prefix string, node int64) {
	t.Helper()
	c.admin(t, func(m *model) {
		s := m.space(prefix)
		k, ok := s.leases[node]
		require.True(t, ok, "no lease of node %d", node)
		k.expires = m.clock()
		s.leases[node] = k
	})
}

// Delete deletes the lease key; with PostgreSQL, the id's row, which
// holds the mark and the latest acquirer too.
func (c *modelConn) Delete(t *testing.T, prefix string, node int64) {
	c.admin(t, func(m *model) {
		s := m.space(prefix)
		delete(s.leases, node)
		if m.kind == Postgres {
			delete(s.nodes, node)
		}
	})
}

// Put writes node's key as someone else's lease would: with a TTL of a
// minute on Redis and PostgreSQL (whose row then has a fencing token no
// lease has, and no holder), without one on etcd.
func (c *modelConn) Put(t *testing.T, prefix string, node int64, value string) (expires bool) {
	c.admin(t, func(m *model) {
		s := m.space(prefix)
		k := leaseKey{token: value}
		if m.kind != Etcd {
			k.expires, expires = m.clock().Add(time.Minute), true
		}
		if m.kind == Postgres {
			k.token = "fence -1"
			r := s.nodes[node]
			r.token, r.holder = k.token, ""
			s.nodes[node] = r
		}
		s.leases[node] = k
	})
	return expires
}

func (c *modelConn) Key(t *testing.T, prefix string, node int64) (exists, expires bool) {
	c.admin(t, func(m *model) {
		s := m.space(prefix)
		exists = m.held(s, node) != ""
		expires = exists && !s.leases[node].expires.IsZero()
	})
	return exists, expires
}

func (c *modelConn) CorruptMark(t *testing.T, prefix string, node int64) (where string) {
	c.admin(t, func(m *model) {
		s := m.space(prefix)
		r := s.nodes[node]
		r.corrupt = "yesterday"
		s.nodes[node] = r
		where = m.where(prefix, node)
	})
	return where
}

// WaitConnected returns at once: a model has no connection to make
// again.
func (c *modelConn) WaitConnected(t *testing.T) {
	c.srv.mu.Lock()
	defer c.srv.mu.Unlock()
	require.False(t, c.srv.down, "the server is stopped")
}

// Settle writes the prefix's epoch, as seen by the server as it is now,
// without a quiet period.
func (c *modelConn) Settle(t *testing.T, prefix string) {
	c.admin(t, func(m *model) {
		s := m.space(prefix)
		m.epochs++
		s.epoch, s.seen, s.quietUntil = m.epochs, m.ident(), time.Time{}
	})
}

// modelLease is a lease of the suite's module on a model, built like a
// real module's: a lease.Keeper that renews through the model.
type modelLease struct {
	*lease.Keeper
	stop  func(reason error) bool
	c     *modelConn
	cfg   lease.Config
	node  int64
	token string
	epoch uint64
	saves atomic.Uint64
}

func (l *modelLease) renew(ctx context.Context, at time.Time) lease.Renewal {
	type answer struct {
		res   renewResult
		quiet time.Duration
	}
	a, err := call(ctx, l.c, l.cfg.Timeout, func(m *model) answer {
		res, quiet := m.renew(l.cfg.Prefix, l.node, l.token, l.epoch, l.cfg.TTL, l.cfg.Quiet())
		return answer{res, quiet}
	})
	return renewal(l.node, a.res, a.quiet, err, at, l.cfg.TTL, l.cfg.Clock.Now)
}

func (l *modelLease) Close(ctx context.Context) error {
	if !l.stop(lease.ErrClosed) {
		return nil
	}
	_, err := call(ctx, l.c, l.cfg.Timeout, func(m *model) bool { return m.release(l.cfg.Prefix, l.node, l.token) })
	if err != nil {
		return fmt.Errorf("fleetsim: releasing node %d: %w", l.node, err)
	}
	return nil
}

func (l *modelLease) LoadMark(ctx context.Context) (ringflake.Mark, error) {
	type answer struct {
		r     nodeRecord
		ours  bool
		where string
	}
	a, err := call(ctx, l.c, l.cfg.Timeout, func(m *model) answer {
		r, ours := m.loadMark(l.cfg.Prefix, l.node, l.token)
		return answer{r, ours, m.where(l.cfg.Prefix, l.node)}
	})
	if err != nil {
		return ringflake.Mark{}, fmt.Errorf("fleetsim: loading the mark of node %d: %w", l.node, err)
	}
	return loadedMark(l.node, a.r, a.ours, a.where)
}

func (l *modelLease) SaveMark(ctx context.Context, mark ringflake.Mark) error {
	seq := l.saves.Add(1)
	res, err := lease.Call(ctx, l.cfg.Timeout, func(context.Context) (saveResult, error) {
		var res saveResult
		apply := func() error {
			return l.c.srv.do(func(m *model) { res = m.saveMark(l.cfg.Prefix, l.node, l.token, seq, mark) })
		}
		if d := l.c.delay; d != nil {
			if cut := d.take(func() { _ = apply() }); cut != nil {
				<-cut
				return 0, errAbandoned
			}
		}
		err := apply()
		return res, err
	})
	if err != nil {
		return fmt.Errorf("fleetsim: saving the mark of node %d: %w", l.node, err)
	}
	return saveErr(l.node, res)
}
