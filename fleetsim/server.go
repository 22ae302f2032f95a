package fleetsim

import (
	"fmt"
	"time"

	"github.com/ringflake/ringflake"
	"github.com/ringflake/ringflake/lease"
)

// Server kinds.
const (
	Redis    = "redis"
	Etcd     = "etcd"
	Postgres = "postgres"
)

// prefix is the key prefix of a simulated fleet.
const prefix = "fleet"

// server is the simulation's lease server: a [model] of its kind on the
// server's own clock, the history of its writes that a failover's
// replica lags behind, and the checks of what it stores.
type server struct {
	sim  *Sim
	kind string
	clk  *hostClock
	m    *model
	era  int // counts data losses (and failovers that lose writes)

	history []snapshot // the state after each write, for a failover's replica
}

type snapshot struct {
	at time.Duration
	sp *space
}

func newServer(sim *Sim) *server {
	s := &server{sim: sim, kind: sim.sc.Fleet.Server.Kind, clk: newHostClock(sim.w, sim.sc.Start)}
	s.m = newModel(s.kind, s.clk.Now)
	s.m.noQuiet, s.m.blindSaves = sim.faults.noQuiet, sim.faults.blindSaves
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
	s.history = append(s.history, snapshot{at: now, sp: s.m.space(prefix).clone()})
	// Keep the newest snapshot older than the lag and everything after.
	i := 0
	for i+1 < len(s.history) && s.history[i+1].at <= now-lag {
		i++
	}
	s.history = s.history[i:]
}

// loseData restarts the server empty.
func (s *server) loseData() {
	s.m.loseData()
	s.history = nil
	s.era++
	s.sim.check.newEra()
}

// failover promotes a replica that lags by the scenario's lag: the writes
// of the last lag are lost (not on etcd), and the server changes.
func (s *server) failover() {
	s.m.promote()
	if !s.losesOnFailover() {
		return
	}
	cut := s.sim.w.now - s.sim.sc.Fleet.Server.lag()
	sp := newSpace()
	for _, h := range s.history {
		if h.at <= cut {
			sp = h.sp.clone()
		}
	}
	s.m.spaces[prefix] = sp
	s.history = nil
	s.era++
	s.sim.check.newEra()
}

// acquire takes the lowest free id of [from, to] for token.
func (s *server) acquire(from, to int64, token string) acquireReply {
	cfg := s.sim.cfg
	r := s.m.acquire(prefix, from, to, token, cfg.Holder, cfg.TTL, cfg.Quiet())
	s.written()
	if r.id >= 0 {
		s.sim.trace("server", "acquire id=%d token=%s epoch=%d quiet=%v", r.id, token, r.epoch, r.quiet)
	}
	return r
}

// renew extends id's lease for token, or takes it again.
func (s *server) renew(id int64, token string, epoch uint64) (renewResult, time.Duration) {
	cfg := s.sim.cfg
	res, quiet := s.m.renew(prefix, id, token, epoch, cfg.TTL, cfg.Quiet())
	if res == renewed || res == retaken {
		s.written()
	}
	return res, quiet
}

// release deletes id's lease if token holds it.
func (s *server) release(id int64, token string) {
	if s.m.release(prefix, id, token) {
		s.written()
	}
}

// saveMark stores m for id as save seq of token (see model.saveMark);
// closing marks the exact mark of a clean close, for the checks.
func (s *server) saveMark(id int64, token string, seq uint64, m ringflake.Mark, closing bool) saveResult {
	prev := s.m.space(prefix).nodes[id]
	res := s.m.saveMark(prefix, id, token, seq, m)
	switch res {
	case staleSave:
		s.sim.trace("server", "save id=%d token=%s seq=%d refused: save %d is stored", id, token, seq, prev.markSeq)
	case saved:
		s.sim.check.markWrite(id, prev, token, m, closing)
		s.written()
		s.sim.trace("server", "save id=%d token=%s seq=%d limit=%s", id, token, seq, stamp(m.Limit))
	}
	return res
}

// The answers of a model, as the lease modules turn their servers'
// answers into a lease's renewals and errors: the simulation's leases
// and the conformance suite's (conformance_test.go) share them.

// renewal returns what the keeper makes of a renewal of node sent at
// sent, with the lease's ttl, that got res and quiet, or failed with err;
// now reads the lease's clock.
func renewal(node int64, res renewResult, quiet time.Duration, err error, sent time.Time, ttl time.Duration, now func() time.Time) lease.Renewal {
	r := lease.Renewal{Sent: sent, TTL: ttl}
	switch {
	case err != nil:
		r.Kind, r.Err = lease.RenewFailed, fmt.Errorf("fleetsim: renewing node %d: %w", node, err)
	case res == renewed:
		r.Kind = lease.Renewed
	case res == retaken:
		r.Kind = lease.Retaken
		if quiet > 0 {
			r.NotBefore = now().Add(quiet)
		}
	case res == epochLost:
		r.Kind, r.Err = lease.Lost, fmt.Errorf("%w: %w: node %d", ringflake.ErrLeaseLost, lease.ErrDataLost, node)
	case res == heldByOther:
		r.Kind, r.Err = lease.Lost, fmt.Errorf("%w: fleetsim: node %d is held by another holder", ringflake.ErrLeaseLost, node)
	default:
		r.Kind, r.Err = lease.Lost, fmt.Errorf("%w: fleetsim: node %d expired and another holder acquired it since", ringflake.ErrLeaseLost, node)
	}
	return r
}

// saveErr returns the error of a mark save of node that got res.
func saveErr(node int64, res saveResult) error {
	switch res {
	case saved:
		return nil
	case staleSave:
		return fmt.Errorf("%w: fleetsim: node %d: mark not saved", lease.ErrStaleSave, node)
	}
	return fmt.Errorf("%w: fleetsim: node %d is not held by this lease; mark not saved", ringflake.ErrLeaseLost, node)
}

// loadedMark returns the mark of a load of node's record r, where names
// where the model keeps it; ours reports whether the lease is the
// latest acquirer.
func loadedMark(node int64, r nodeRecord, ours bool, where string) (ringflake.Mark, error) {
	switch {
	case !ours:
		return ringflake.Mark{}, fmt.Errorf("%w: fleetsim: node %d was acquired by another holder", ringflake.ErrLeaseLost, node)
	case r.corrupt != "":
		return ringflake.Mark{}, &ringflake.MarkError{Path: where, Reason: fmt.Sprintf("%q is not a mark", r.corrupt)}
	}
	return r.mark, nil
}

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
