package fleetsim

import (
	"fmt"
	"maps"
	"time"

	"github.com/ringflake/ringflake"
)

// The server model keeps what redislease, etcdlease and pglease keep on
// their servers, with the same rules (see redislease/scripts.go): a
// lease per node id (the holder's token, expiring after its TTL on the
// server's clock), a record per node id that outlives the lease (the
// latest acquirer's token and the node's high-water mark, saved under
// the holder's token as fencing token and in the order of the holder's
// save counter), and a per-prefix epoch. A missing epoch (a first start,
// a server that lost its data) or a changed server process (Redis's
// run_id, PostgreSQL's timeline after a promotion) starts a quiet period
// of TTL + Margin + MaxLead during which an id taken is not held.

// Server kinds.
const (
	Redis    = "redis"
	Etcd     = "etcd"
	Postgres = "postgres"
)

type leaseKey struct {
	token   string
	expires time.Time // on the server's clock
}

type nodeRecord struct {
	token     string // the latest acquirer's
	mark      ringflake.Mark
	markToken string // who saved the mark
	markSeq   uint64 // the save counter of the mark's save
}

// state is what the server stores: what a data loss or a failover loses.
type state struct {
	epoch      uint64 // 0: none
	run        uint64 // the server process the epoch record last saw
	quietUntil time.Time
	leases     map[int64]leaseKey
	nodes      map[int64]nodeRecord
}

func (s state) clone() state {
	s.leases = maps.Clone(s.leases)
	s.nodes = maps.Clone(s.nodes)
	return s
}

type snapshot struct {
	at time.Duration
	st state
}

type server struct {
	sim  *Sim
	kind string
	clk  *hostClock
	st   state
	run  uint64 // the server process now
	era  int    // counts data losses (and failovers that lose writes)

	history []snapshot // the state after each write, for a failover's replica

	epochs uint64 // epoch values handed out
}

func newServer(sim *Sim) *server {
	s := &server{sim: sim, kind: sim.sc.Fleet.Server.Kind, clk: newHostClock(sim.w, sim.sc.Start), run: 1}
	s.st = state{leases: map[int64]leaseKey{}, nodes: map[int64]nodeRecord{}}
	return s
}

// losesOnFailover tells whether a failover of this kind of server may lose
// the latest acknowledged writes: asynchronous replication (Redis,
// PostgreSQL); etcd commits through Raft and loses none.
func (s *server) losesOnFailover() bool { return s.kind != Etcd }

// written records the state after a write, for failovers.
func (s *server) written() {
	lag := s.sim.sc.Fleet.Server.lag()
	now := s.sim.w.now
	s.history = append(s.history, snapshot{at: now, st: s.st.clone()})
	// Keep the newest snapshot older than the lag and everything after.
	i := 0
	for i+1 < len(s.history) && s.history[i+1].at <= now-lag {
		i++
	}
	s.history = s.history[i:]
}

// loseData restarts the server empty.
func (s *server) loseData() {
	s.st = state{leases: map[int64]leaseKey{}, nodes: map[int64]nodeRecord{}}
	s.history = nil
	s.run++
	s.era++
	s.sim.check.newEra()
}

// failover promotes a replica that lags by the scenario's lag: the writes
// of the last lag are lost (not on etcd), and the server process changes.
func (s *server) failover() {
	s.run++
	if !s.losesOnFailover() {
		return
	}
	cut := s.sim.w.now - s.sim.sc.Fleet.Server.lag()
	st := state{leases: map[int64]leaseKey{}, nodes: map[int64]nodeRecord{}}
	for _, h := range s.history {
		if h.at <= cut {
			st = h.st.clone()
		}
	}
	s.st = st
	s.history = nil
	s.era++
	s.sim.check.newEra()
}

// guard is the start of every request that reads the epoch: it makes a
// missing epoch (when create) and starts the quiet period when the epoch
// was missing or the server process changed. It returns the epoch (0
// when none and !create) and the quiet period left.
func (s *server) guard(create bool) (uint64, time.Duration) {
	now := s.clk.Now()
	fresh := false
	switch {
	case s.st.epoch == 0:
		if !create {
			return 0, 0
		}
		s.epochs++
		s.st.epoch, s.st.run, fresh = s.epochs, s.run, true
	case s.st.run != s.run:
		s.st.run = s.run
		fresh = s.kind == Redis || s.kind == Postgres
	}
	quiet := s.sim.cfg.Quiet()
	if s.sim.faults.noQuiet {
		quiet = 0
	}
	left := s.st.quietUntil.Sub(now)
	if fresh && left < quiet {
		s.st.quietUntil = now.Add(quiet)
		left = quiet
	}
	return s.st.epoch, max(left, 0)
}

// held returns the token holding id now, or "".
func (s *server) held(id int64) string {
	k, ok := s.st.leases[id]
	if !ok || !s.clk.Now().Before(k.expires) {
		delete(s.st.leases, id)
		return ""
	}
	return k.token
}

type acquireReply struct {
	id    int64 // -1: every id is held
	epoch uint64
	quiet time.Duration
}

// acquire takes the lowest free id for token.
func (s *server) acquire(token string, ttl time.Duration) acquireReply {
	epoch, quiet := s.guard(true)
	defer s.written()
	for id := int64(0); id < int64(s.sim.sc.Fleet.ids()); id++ {
		if s.held(id) != "" {
			continue
		}
		s.st.leases[id] = leaseKey{token: token, expires: s.clk.Now().Add(ttl)}
		r := s.st.nodes[id]
		r.token = token
		s.st.nodes[id] = r
		s.sim.trace("server", "acquire id=%d token=%s epoch=%d quiet=%v", id, token, epoch, quiet)
		return acquireReply{id: id, epoch: epoch, quiet: quiet}
	}
	return acquireReply{id: -1, epoch: epoch, quiet: quiet}
}

type renewResult int

const (
	renewed renewResult = iota + 1
	retaken
	heldByOther
	takenSince
	epochLost
)

// renew extends id's lease for token, or takes the id again when its key
// is gone and nobody acquired it since.
func (s *server) renew(id int64, token string, epoch uint64, ttl time.Duration) (renewResult, time.Duration) {
	e, quiet := s.guard(false)
	if e != epoch {
		return epochLost, 0
	}
	cur := s.held(id)
	switch {
	case cur == token:
		s.st.leases[id] = leaseKey{token: token, expires: s.clk.Now().Add(ttl)}
		s.written()
		return renewed, 0
	case cur != "":
		return heldByOther, 0
	case s.st.nodes[id].token != token:
		return takenSince, 0
	}
	s.st.leases[id] = leaseKey{token: token, expires: s.clk.Now().Add(ttl)}
	s.written()
	return retaken, quiet
}

// release deletes id's lease if token holds it.
func (s *server) release(id int64, token string) {
	if s.held(id) == token {
		delete(s.st.leases, id)
		s.written()
	}
}

// saveMark stores m for id while token holds the lease, and only when seq
// is later than the save counter of the mark stored by the same token (a
// save that arrives after a later one of its holder is refused: it would
// move the mark back). closing marks the exact mark of a clean close.
func (s *server) saveMark(id int64, token string, seq uint64, m ringflake.Mark, closing bool) bool {
	if s.held(id) != token {
		return false
	}
	r := s.st.nodes[id]
	if r.markToken == token && seq <= r.markSeq && !s.sim.faults.blindSaves {
		s.sim.trace("server", "save id=%d token=%s seq=%d refused: save %d is stored", id, token, seq, r.markSeq)
		return true // an older save of ours: the newer mark stays
	}
	s.sim.check.markWrite(id, r, token, m, closing)
	r.mark, r.markToken, r.markSeq = m, token, seq
	s.st.nodes[id] = r
	s.written()
	s.sim.trace("server", "save id=%d token=%s seq=%d limit=%s", id, token, seq, stamp(m.Limit))
	return true
}

// loadMark returns id's mark.
func (s *server) loadMark(id int64) ringflake.Mark { return s.st.nodes[id].mark }

func stamp(t time.Time) string {
	if t.IsZero() {
		return "none"
	}
	return t.UTC().Format("15:04:05.000000")
}

func (r renewResult) String() string {
	switch r {
	case renewed:
		return "renewed"
	case retaken:
		return "retaken"
	case heldByOther:
		return "held by another"
	case takenSince:
		return "taken since"
	case epochLost:
		return "epoch lost"
	}
	return fmt.Sprintf("renewResult(%d)", int(r))
}
