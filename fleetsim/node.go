package fleetsim

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/ringflake/ringflake"
	"github.com/ringflake/ringflake/internal/simhook"
	"github.com/ringflake/ringflake/lease"
)

// A node is one host of the fleet: its clock, and the service process
// running on it (an incarnation: a crash or a restart starts another).
type node struct {
	sim *Sim
	n   int
	clk *hostClock

	pausedUntil time.Duration // the host is stopped (a VM pause) until then
	cutServer   time.Duration // partitioned from the server until then
	cutNodes    time.Duration // partitioned from the other nodes until then

	inc  *incarnation // the process running now; nil while down
	incs int          // processes started
	disk disk         // the mark file, with marks: file
}

// An incarnation is one run of a node's service process.
type incarnation struct {
	node    *node
	n       int // its number on the node, from 0
	dead    bool
	unwound bool // die ran: its procs ran to their end
	ctx     context.Context
	cancel  context.CancelFunc
	procs   []*proc
	main    *proc

	hold  *holding // the lease held now, or nil
	gen   *ringflake.Generator
	floor ringflake.ID // the greatest ID Observe accepted; -1: none
	seen  ringflake.ID // the newest ID this process issued or observed

	waited waits // what the call under way waited for
	inbox  []ringflake.ID
	idle   *wake // set while main waits for the next call or message
	stop   bool  // a clean restart asked main to close down
	nextAt time.Duration
}

// A holding is one lease a process took: what the checks attribute IDs to.
type holding struct {
	index int // in Sim.holdings
	inc   *incarnation
	id    int64 // the node id
	token string
	epoch uint64
	era   int
	drv   *lease.Driver
	seq   uint64 // the save counter
	lost  bool

	first, last time.Duration // true times of its first and last ID
	issued      int64
	newest      ringflake.ID
}

func (n *node) start() {
	n.incs++
	ctx, cancel := context.WithCancel(context.Background())
	inc := &incarnation{node: n, n: n.incs - 1, cancel: cancel, floor: -1, seen: -1}
	inc.ctx = ctx
	n.inc = inc
	n.sim.incs = append(n.sim.incs, inc)
	n.sim.trace(n.name(), "process %d starts", inc.n)
	inc.main = n.sim.w.spawn(inc, inc.run)
}

func (n *node) name() string { return fmt.Sprintf("node %d", n.n) }

// ids returns the range of node ids the node's process takes its lease
// from: the lowest free one of the fleet's or, with marks: file, its own
// (it claims its number: its mark file stays on its host).
func (n *node) ids() (from, to int64) {
	if n.sim.sc.Fleet.Marks == MarksFile {
		return int64(n.n), int64(n.n)
	}
	return 0, int64(n.sim.sc.Fleet.ids()) - 1
}

// crash kills the process: its calls under way never return, its saves
// in flight may still land, and it restarts after the fleet's
// restart_after.
func (n *node) crash(restart bool) {
	inc := n.inc
	if inc == nil {
		return
	}
	n.sim.trace(n.name(), "process %d crashes", inc.n)
	inc.die()
	n.inc = nil
	if n.sim.sc.Fleet.Marks == MarksFile {
		n.disk.crash(n.sim.w.now)
		n.sim.check.fileKept(n)
	}
	if restart {
		n.sim.w.at(n.sim.w.now+n.sim.sc.Fleet.restartAfter(), func() {
			if n.inc == nil {
				n.start()
			}
		})
	}
}

// die ends the process and unwinds its procs: every wait of a dead
// process returns at once.
func (inc *incarnation) die() {
	if inc.dead && inc.unwound {
		return
	}
	inc.dead, inc.unwound = true, true
	inc.cancel()
	if h := inc.hold; h != nil {
		h.lost = true
	}
	w := inc.node.sim.w
	for i := 0; i < len(inc.procs); i++ {
		p := inc.procs[i]
		if !p.ended && p != w.cur {
			p.token++
			w.run(p)
		}
	}
}

// restart closes the process cleanly (its generator saves the exact mark,
// its lease is released) and starts a new one.
func (n *node) restartClean() {
	inc := n.inc
	if inc == nil {
		return
	}
	inc.stop = true
	if inc.idle != nil {
		inc.idle.fire()
	}
}

// deliver puts a message in the process's inbox and wakes it if idle.
func (inc *incarnation) deliver(id ringflake.ID) {
	inc.inbox = append(inc.inbox, id)
	if inc.idle != nil {
		inc.idle.fire()
	}
}

// run is the process: take a lease, make a generator, serve calls and
// messages until the lease is lost (then again) or the process ends.
func (inc *incarnation) run() {
	w := inc.node.sim.w
	inc.nextAt = inc.node.sim.nextCall(inc.node, w.now-1)
	for !inc.dead && !inc.stop {
		if !inc.serve() && !inc.dead && !inc.stop {
			w.cur.sleep(inc.node.sim.sc.Fleet.Server.renewEvery(inc.node.sim.sc.Fleet.Server.TTL))
		}
	}
	if inc.stop && !inc.dead {
		inc.node.sim.trace(inc.node.name(), "process %d exits cleanly", inc.n)
		inc.node.inc = nil
		w.at(w.now, inc.die) // its renewals stop
		inc.node.sim.w.at(w.now+inc.node.sim.sc.Fleet.restartAfter(), func() {
			if inc.node.inc == nil {
				inc.node.start()
			}
		})
	}
}

// serve takes one lease and serves with it until it is lost or the
// process stops; false when it could not start.
func (inc *incarnation) serve() bool {
	sim := inc.node.sim
	h := inc.acquire()
	if h == nil {
		return false
	}
	inc.hold = h
	opts := []ringflake.Option{ringflake.WithClock(genClock{inc}), ringflake.WithStrategy(sim.strategy),
		ringflake.WithLayout(sim.layout), ringflake.WithLease(&simLease{h: h})}
	if sim.sc.Fleet.Marks == MarksFile {
		opts[3] = ringflake.WithLease(guardLease{h})
		opts = append(opts, ringflake.WithMarkStore(markFile{inc}))
	}
	gen, err := ringflake.New(h.id, opts...)
	if err != nil {
		sim.trace(inc.node.name(), "generator on id %d fails to start: %v", h.id, err)
		sim.count("start_failed")
		inc.releaseLease(h)
		return false
	}
	inc.gen = gen
	inc.floor = -1 // Observe's promise is the generator's: a new one observed nothing
	sim.trace(inc.node.name(), "generator starts on id %d", h.id)
	for !inc.dead && !inc.stop && !h.lost {
		inc.step()
	}
	if inc.dead {
		return true
	}
	// Lost, or a clean stop: close the generator (the exact mark) and
	// free the id.
	err = gen.Close(inc.ctx)
	sim.trace(inc.node.name(), "generator on id %d closed (%v)", h.id, err)
	inc.gen = nil
	inc.releaseLease(h)
	return true
}

// step serves the next message or call, or waits for one.
func (inc *incarnation) step() {
	sim := inc.node.sim
	w := sim.w
	switch {
	case len(inc.inbox) > 0:
		x := inc.inbox[0]
		inc.inbox = inc.inbox[1:]
		sim.observe(inc, x)
	case inc.nextAt <= w.now:
		inc.nextAt = sim.nextCall(inc.node, inc.nextAt)
		if inc.nextAt < 0 {
			inc.nextAt = 1<<63 - 1
		}
		sim.call(inc)
	default:
		// Nothing to do before nextAt: when no event comes first, move
		// true time there at once (what the loop would do next anyway).
		if t, ok := w.nextAt(); (!ok || t > inc.nextAt) && inc.node.pausedUntil <= w.now && inc.nextAt <= sim.end {
			w.now = inc.nextAt
			return
		}
		k := w.cur.wakeAt(min(inc.nextAt, sim.end+1))
		inc.idle = k
		w.cur.block()
		inc.idle = nil
	}
}

// acquire takes a lease, retrying while the process lives; nil when it
// died first.
func (inc *incarnation) acquire() *holding {
	sim := inc.node.sim
	cfg := sim.cfg
	for !inc.dead && !inc.stop {
		sim.tokens++
		token := fmt.Sprintf("n%d.%d.%d", inc.node.n, inc.n, sim.tokens)
		sent := inc.node.sim.w.now
		sentMono := monoClock{h: inc.node.clk, base: sim.sc.Start}.Now()
		var rep acquireReply
		from, to := inc.node.ids()
		err := inc.request(func(s *server) { rep = s.acquire(from, to, token) })
		if err == nil && rep.id >= 0 {
			mc := monoClock{h: inc.node.clk, base: sim.sc.Start}
			c := cfg
			c.Clock = mc
			var from time.Time
			if rep.quiet > 0 {
				from = mc.Now().Add(rep.quiet)
			}
			h := &holding{index: len(sim.holdings), inc: inc, id: rep.id, token: token, epoch: rep.epoch,
				era: sim.srv.era, newest: -1, first: -1}
			c.OnEvent = func(ev lease.Event) { sim.leaseEvent(h, ev) }
			h.drv = lease.Drive(c, rep.id, from, sentMono.Add(cfg.TTL-cfg.Margin))
			sim.holdings = append(sim.holdings, h)
			sim.count("leases")
			sim.trace(inc.node.name(), "holds id %d (token %s, quiet %v, sent %v)", rep.id, token, rep.quiet, sent)
			inc.hold = h
			sim.renewRunner(h) // renewals start at once, as Keep's do
			// Wait until held (WaitHeld): at once, or after the quiet
			// period — or until the lease ends first, which WaitHeld
			// returns at once too (the renewals wake the wait).
			for !inc.dead && !inc.stop && !h.lost && !h.drv.Held() {
				w := inc.node.sim.w
				inc.idle = w.cur.wakeAt(w.now + max(rep.quiet, cfg.RenewEvery))
				w.cur.block()
				inc.idle = nil
			}
			if h.lost || inc.dead || inc.stop {
				if !inc.dead {
					inc.releaseLease(h)
				}
				continue
			}
			return h
		}
		inc.node.sim.w.cur.sleep(cfg.RenewEvery)
	}
	return nil
}

// releaseLease frees the id, when the lease still holds it.
func (inc *incarnation) releaseLease(h *holding) {
	h.drv.Stop(lease.ErrClosed)
	h.lost = true
	_ = inc.request(func(s *server) { s.release(h.id, h.token) })
	if inc.hold == h {
		inc.hold = nil
	}
}

// errTimeout is a request that got no answer within the lease's Timeout;
// errRefused one the server refused (it is down).
var (
	errTimeout = errors.New("fleetsim: request timed out")
	errRefused = errors.New("fleetsim: server unavailable")
	errDead    = errors.New("fleetsim: process died")
)

// request sends a request to the server and waits for its reply, at most
// the lease's Timeout. The server applies it when it arrives, whether or
// not the client still waits: a request delayed past the timeout lands
// later; a reply lost after the write leaves the client in the dark.
func (inc *incarnation) request(apply func(*server)) error {
	sim := inc.node.sim
	w := sim.w
	p := w.cur
	if inc.dead || p == nil {
		return errDead
	}
	half := sim.sc.Fleet.Server.rtt() / 2
	var result error = errTimeout
	k := p.prepare()
	send := w.now
	if inc.node.cutServer > send {
		sim.count("requests_lost")
	} else {
		delay := half
		if sim.slowUntil > send {
			delay += sim.slowDelay
		}
		w.at(send+delay, func() {
			if sim.downUntil > w.now {
				w.at(w.now+half, func() {
					result = errRefused
					k.fire()
				})
				return
			}
			apply(sim.srv)
			if sim.dropUntil > w.now || inc.node.cutServer > w.now {
				sim.count("replies_lost")
				return
			}
			w.at(w.now+half, func() {
				if inc.node.cutServer > w.now {
					return
				}
				result = nil
				k.fire()
			})
		})
	}
	w.at(send+sim.cfg.Timeout, k.fire)
	p.block()
	if inc.dead {
		return errDead
	}
	return result
}

// renewRunner starts the proc that renews h every RenewEvery.
func (sim *Sim) renewRunner(h *holding) *proc {
	inc := h.inc
	return sim.w.spawn(inc, func() {
		p := sim.w.cur
		for {
			p.sleep(sim.cfg.RenewEvery)
			if inc.dead || h.lost {
				return
			}
			at := monoClock{h: inc.node.clk, base: sim.sc.Start}.Now()
			var res renewResult
			var quiet time.Duration
			err := inc.request(func(s *server) { res, quiet = s.renew(h.id, h.token, h.epoch) })
			if inc.dead || h.lost {
				return
			}
			r := renewal(h.id, res, quiet, err, at, sim.cfg.TTL, monoClock{h: inc.node.clk, base: sim.sc.Start}.Now)
			if h.drv.Apply(r) {
				h.lost = true
				if inc.idle != nil {
					inc.idle.fire()
				}
				return
			}
		}
	})
}

// simLease is the lease a node's generator holds: the Driver's Held (or,
// with the injected fault noHeld, always true), and the mark kept on the
// server under the lease's token.
type simLease struct{ h *holding }

func (l *simLease) Node() int64 { return l.h.id }
func (l *simLease) Held() bool {
	if l.h.inc.node.sim.faults.noHeld {
		return !l.h.inc.dead
	}
	return l.h.drv.Held()
}
func (l *simLease) MaxLead() time.Duration   { return l.h.drv.MaxLead() }
func (l *simLease) MarkAhead() time.Duration { return l.h.drv.MarkAhead() }
func (l *simLease) Sim() simhook.Runner      { return runner{l.h.inc} }

func (l *simLease) LoadMark(ctx context.Context) (ringflake.Mark, error) {
	var (
		r    nodeRecord
		ours bool
	)
	if err := l.h.inc.request(func(s *server) { r, ours = s.m.loadMark(prefix, l.h.id, l.h.token) }); err != nil {
		return ringflake.Mark{}, err
	}
	return loadedMark(l.h.id, r, ours, l.h.inc.node.sim.srv.m.where(prefix, l.h.id))
}

func (l *simLease) SaveMark(ctx context.Context, m ringflake.Mark) error {
	h := l.h
	h.seq++
	seq := h.seq
	closing := h.inc.gen != nil && !h.inc.dead && (h.lost || h.inc.stop)
	var res saveResult
	if err := h.inc.request(func(s *server) { res = s.saveMark(h.id, h.token, seq, m, closing) }); err != nil {
		return err
	}
	return saveErr(h.id, res)
}
