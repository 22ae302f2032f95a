package fleetsim

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"hash"
	"io"
	"math/rand/v2"
	"slices"
	"strings"
	"time"

	"github.com/ringflake/ringflake"
	"github.com/ringflake/ringflake/lease"
	"github.com/ringflake/ringflake/strategies"
)

// faults are bugs injected on purpose, by tests only, to show that the
// checks find them: nothing outside this package's tests sets them.
type faults struct {
	blindSaves bool // the server applies every mark save, however late
	noHeld     bool // the generator's lease reports held while the process lives
	noQuiet    bool // the server starts no quiet period
	noObserve  bool // a message's ID is not observed: the floor is ignored
	// unsyncedMarks: a mark file's save returns before the mark is on
	// the disk (no fsync): a crash loses the writes of the last
	// writeback period.
	unsyncedMarks bool
}

// Sim is one run of a fleet scenario.
type Sim struct {
	sc       *Scenario
	faults   faults
	w        *world
	rng      *rand.Rand
	cfg      lease.Config
	strategy strategies.Strategy
	promise  strategies.Promise
	layout   ringflake.Layout
	end      time.Duration

	srv      *server
	nodes    []*node
	holdings []*holding
	incs     []*incarnation // every process started
	tokens   int

	downUntil, slowUntil, dropUntil time.Duration
	slowDelay                       time.Duration

	lanes  []Lane // sampled for plots, with WithLanes
	check  checker
	calls  int64
	counts map[string]int64
	hash   hash.Hash
	buf    []byte
	out    io.Writer   // when set, every trace line is written to it
	log    []traceLine // the recent trace, for violations
	nlog   int
}

type traceLine struct {
	at   time.Duration
	who  string
	text string
}

const logKeep = 64

// trace records one line of what happened: into the trace hash, and into
// the recent lines that a violation cites.
func (s *Sim) trace(who, format string, args ...any) {
	text := fmt.Sprintf(format, args...)
	s.buf = binary.AppendVarint(s.buf[:0], int64(s.w.now))
	s.buf = append(s.buf, who...)
	s.buf = append(s.buf, 0)
	s.buf = append(s.buf, text...)
	s.buf = append(s.buf, '\n')
	s.hash.Write(s.buf)
	if s.out != nil {
		fmt.Fprintf(s.out, "%12v %-8s %s\n", s.w.now, who, text)
	}
	l := traceLine{at: s.w.now, who: who, text: text}
	if len(s.log) < logKeep {
		s.log = append(s.log, l)
	} else {
		s.log[s.nlog%logKeep] = l
	}
	s.nlog++
}

// recent returns the recent trace lines, oldest first.
func (s *Sim) recent() []traceLine {
	if len(s.log) < logKeep {
		return slices.Clone(s.log)
	}
	i := s.nlog % logKeep
	return append(slices.Clone(s.log[i:]), s.log[:i]...)
}

func (s *Sim) count(what string) { s.counts[what]++ }

func newSim(sc *Scenario, f faults) (*Sim, error) {
	if err := sc.Validate(); err != nil {
		return nil, err
	}
	st, err := strategies.Parse(sc.Fleet.Strategy)
	if err != nil {
		return nil, &Error{File: sc.File, Field: "fleet.strategy", Reason: err.Error(), Err: err}
	}
	l := sc.layout()
	if err := strategies.Validate(st, l.Spec().Unit); err != nil {
		return nil, &Error{File: sc.File, Field: "fleet.strategy", Reason: err.Error(), Err: err}
	}
	srv := sc.Fleet.Server
	cfg, err := lease.Options{Prefix: "fleet", Layout: l, TTL: srv.TTL, RenewEvery: srv.RenewEvery, Margin: srv.Margin,
		Timeout: srv.Timeout, MaxLead: srv.MaxLead, MaxSkew: -1, Holder: "fleetsim"}.Resolve(lease.Rules{Package: "fleetsim", TTLUnit: time.Millisecond})
	if err != nil {
		return nil, &Error{File: sc.File, Field: "fleet.server", Reason: err.Error(), Err: err}
	}
	p, _ := strategies.PromiseOf(st)
	if p.MaxLead > cfg.MaxLead {
		err := fmt.Errorf("strategy %v may lead the clock by %v, more than the lease's max_lead %v", st, p.MaxLead, cfg.MaxLead)
		return nil, &Error{File: sc.File, Field: "fleet.strategy", Reason: err.Error(), Err: err}
	}
	s := &Sim{sc: sc, faults: f, w: newWorld(), rng: rand.New(rand.NewPCG(sc.Seed, sc.Seed^0x9e3779b97f4a7c15)),
		cfg: cfg, strategy: st, promise: p, layout: l, end: sc.Duration, counts: map[string]int64{}, hash: sha256.New()}
	s.check.init(s)
	s.srv = newServer(s)
	for i := range sc.Fleet.Nodes {
		s.nodes = append(s.nodes, &node{sim: s, n: i, clk: newHostClock(s.w, sc.Start)})
	}
	return s, nil
}

// Run replays the fleet scenario sc and reports what happened: every
// property checked against true time, and the scenario's expectations.
// The same scenario gives the same report, byte for byte, and the same
// trace hash. Errors: those of [Scenario.Validate] (matching
// [ErrInvalid]), and ctx's.
func Run(ctx context.Context, sc *Scenario, opts ...Option) (*Report, error) {
	var o options
	for _, opt := range opts {
		if opt != nil {
			opt(&o)
		}
	}
	return run(ctx, sc, o)
}

// An Option configures [Run].
type Option func(*options)

type options struct {
	faults faults
	trace  io.Writer
	lanes  bool
}

// WithLanes makes [Run] sample every node's clock and newest ID, for
// [Report.Plot].
func WithLanes() Option { return func(o *options) { o.lanes = true } }

// WithTrace makes [Run] write every line of the run's trace to w: the
// events, requests, lease changes and process starts, with true times.
func WithTrace(w io.Writer) Option { return func(o *options) { o.trace = w } }

func run(ctx context.Context, sc *Scenario, o options) (*Report, error) {
	_, r, err := runSim(ctx, sc, o)
	return r, err
}

// runSim is run, returning the simulation too, for tests.
func runSim(ctx context.Context, sc *Scenario, o options) (*Sim, *Report, error) {
	s, err := newSim(sc, o.faults)
	if err != nil {
		return nil, nil, err
	}
	s.out = o.trace
	if o.lanes {
		s.lanes = make([]Lane, len(s.nodes))
		for i := range s.lanes {
			s.lanes[i].Node = i
		}
		s.sample()
	}
	if err := ctx.Err(); err != nil {
		return nil, nil, err
	}
	s.schedule()
	for _, n := range s.nodes {
		s.w.at(0, n.start)
	}
	// Check ctx now and then, between events.
	var stop bool
	var tick func()
	tick = func() {
		if ctx.Err() != nil {
			stop = true
			s.w.queue = s.w.queue[:0]
			return
		}
		if s.w.now+100*time.Millisecond <= s.end {
			s.w.at(s.w.now+100*time.Millisecond, tick)
		}
	}
	s.w.at(0, tick)
	s.w.loop(s.end)
	s.shutdown()
	if stop {
		return nil, nil, ctx.Err()
	}
	return s, s.report(), nil
}

// shutdown ends every process (no call starts after the end) and unwinds
// every proc, so that no goroutine is left behind.
func (s *Sim) shutdown() {
	for _, inc := range s.incs {
		inc.die()
	}
}

// nextCall returns when the next call of n is due after t (pass -1 for
// the first), or -1 when the load makes none.
func (s *Sim) nextCall(n *node, t time.Duration) time.Duration {
	r := s.sc.Fleet.Load
	if r.Count <= 0 {
		return -1
	}
	every := r.Per / time.Duration(r.Count)
	if every <= 0 {
		every = 1
	}
	// Calls are due at k*every, offset per node so nodes do not call in
	// lockstep.
	off := time.Duration(n.n) * every / time.Duration(len(s.nodes))
	k := (t - off) / every
	next := off + k*every
	for next <= t {
		next += every
	}
	return next
}

// call makes one call of the generator of inc, and checks what it issued.
func (s *Sim) call(inc *incarnation) {
	start := s.w.now
	floor := inc.floor
	h := inc.hold
	prevNewest := h.newest
	inc.waited.reset()
	id, err := inc.gen.NextContext(inc.ctx)
	if inc.dead {
		return // the call never returned to the service
	}
	s.calls++
	if w := inc.waited.strategy(); w > s.promise.MaxStall+s.layout.Spec().Unit {
		s.check.violate("stall_violations", "node %d: a call that started at %v slept %v for its strategy, which promises at most %v",
			inc.node.n, start, w, s.promise.MaxStall)
	}
	if err != nil {
		s.countErr(err)
		return
	}
	inc.seen = max(inc.seen, id)
	s.check.issued(inc, h, id, start, floor, prevNewest)
}

func (s *Sim) countErr(err error) {
	switch {
	case errors.Is(err, ringflake.ErrLeaseLost):
		s.count("errors.lease_not_held")
	case errors.Is(err, ringflake.ErrMarkNotSaved):
		s.count("errors.mark_not_saved")
	case errors.Is(err, ringflake.ErrClockRollback):
		s.count("errors.rollback")
	case errors.Is(err, ringflake.ErrClosed):
		s.count("errors.closed")
	default:
		s.count("errors.other")
	}
}

// observe makes the process observe an ID a message carried.
func (s *Sim) observe(inc *incarnation, x ringflake.ID) {
	s.count("observes")
	// With the injected bug noObserve, Observe is not called but the
	// process believes it was: its floor is ignored.
	if !s.faults.noObserve {
		if err := inc.gen.Observe(x); err != nil {
			s.count("observes_refused")
			return
		}
	}
	if inc.dead {
		return
	}
	inc.floor = max(inc.floor, x)
	inc.seen = max(inc.seen, x)
}

// leaseEvent counts a lease's events.
func (s *Sim) leaseEvent(h *holding, ev lease.Event) {
	s.count("lease." + strings.ReplaceAll(ev.Kind.String(), " ", "_"))
	if ev.Kind == lease.Lost || ev.Kind == lease.Retaken {
		s.trace(h.inc.node.name(), "lease of id %d: %v (%v)", h.id, ev.Kind, ev.Err)
	}
}

// messages schedules the node-to-node traffic: each node sends at the
// fleet's message rate, to a node drawn at random, the newest ID it has
// seen; the receiver observes it.
func (s *Sim) messages() {
	m := s.sc.Fleet.Messages
	if m.Rate.Count <= 0 || len(s.nodes) < 2 {
		return
	}
	every := max(m.Rate.Per/time.Duration(m.Rate.Count), 1)
	for _, n := range s.nodes {
		var send func()
		send = func() {
			if s.w.now+every <= s.end {
				s.w.at(s.w.now+every, send)
			}
			inc := n.inc
			if inc == nil || inc.seen < 0 || n.pausedUntil > s.w.now {
				return
			}
			to := s.rng.IntN(len(s.nodes) - 1)
			if to >= n.n {
				to++
			}
			d := m.MinDelay
			if m.MaxDelay > m.MinDelay {
				d += time.Duration(s.rng.Int64N(int64(m.MaxDelay - m.MinDelay)))
			}
			s.count("messages")
			if n.cutNodes > s.w.now {
				s.count("messages_lost")
				return
			}
			id := inc.seen
			target := s.nodes[to]
			s.w.at(s.w.now+d, func() {
				if target.cutNodes > s.w.now || target.inc == nil {
					s.count("messages_lost")
					return
				}
				target.inc.deliver(id)
			})
		}
		s.w.at(time.Duration(n.n)*every/time.Duration(len(s.nodes)), send)
	}
}
