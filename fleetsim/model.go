package fleetsim

import (
	"fmt"
	"maps"
	"time"

	"github.com/ringflake/ringflake"
	"github.com/ringflake/ringflake/lease"
)

// A model is what a lease server keeps for redislease, etcdlease or
// pglease, with the rules of redislease's Lua scripts, etcdlease's
// transactions and pglease's SQL functions, as plain Go on plain maps:
// per key prefix, a lease per node id (the holder's token, expiring after
// its TTL on the server's clock), a record per node id that outlives the
// lease (the latest acquirer's token and holder, the node's high-water
// mark, and the token and number of the save that stored it), and an
// epoch. A missing epoch (a first start, a server that lost its data) or,
// where the module looks for it, a changed server (Redis's run_id after a
// restart or a failover, PostgreSQL's timeline after a promotion) starts
// a quiet period during which an id taken is not held.
//
// The simulation runs it on the server's simulated clock, one request at
// a time; the lease/leasetest conformance suite runs it through a lease
// module of its own (conformance_test.go), so that the rules here are
// held to the same tests as the real servers. A model is not safe for
// concurrent use: callers serialise requests.
type model struct {
	kind  string
	clock func() time.Time // the server's clock
	// proc counts server processes: a restart or a failover starts a
	// new one, with a new Redis run_id. history counts PostgreSQL
	// histories: a failover (a promotion) or a rebuilt server starts a
	// new timeline or system identifier; a restart does not.
	proc, history uint64
	spaces        map[string]*space
	epochs        uint64 // epoch values handed out

	noQuiet    bool // injected bug: no quiet period
	blindSaves bool // injected bug: every mark save is applied, however late
}

// space is what the server keeps under one key prefix.
type space struct {
	epoch      uint64 // 0: none
	seen       uint64 // the server (see model.ident) the epoch record last saw
	quietUntil time.Time
	leases     map[int64]leaseKey
	nodes      map[int64]nodeRecord
}

type leaseKey struct {
	token   string
	expires time.Time // on the server's clock; zero: never (a key written by hand)
}

type nodeRecord struct {
	token     string // the latest acquirer's
	holder    string // its lease.Options.Holder
	mark      ringflake.Mark
	corrupt   string // when not "": the stored mark's text, which is not a mark
	markToken string // who saved the mark
	markSeq   uint64 // the number of the save that stored it
}

func newModel(kind string, clock func() time.Time) *model {
	return &model{kind: kind, clock: clock, proc: 1, history: 1, spaces: map[string]*space{}}
}

func newSpace() *space {
	return &space{leases: map[int64]leaseKey{}, nodes: map[int64]nodeRecord{}}
}

func (s *space) clone() *space {
	c := *s
	c.leases, c.nodes = maps.Clone(s.leases), maps.Clone(s.nodes)
	return &c
}

// space returns the prefix's space, made empty when missing.
func (m *model) space(prefix string) *space {
	s, ok := m.spaces[prefix]
	if !ok {
		s = newSpace()
		m.spaces[prefix] = s
	}
	return s
}

// ident is what the module compares to notice a changed server: Redis's
// run_id, PostgreSQL's system identifier and timeline; etcd loses no
// committed write and is never compared.
func (m *model) ident() uint64 {
	switch m.kind {
	case Redis:
		return m.proc
	case Postgres:
		return m.history
	}
	return 0
}

// detectsRestart reports whether a restart of the server with its data
// starts a quiet period: only Redis's run_id changes with one.
func (m *model) detectsRestart() bool { return m.kind == Redis }

// restart restarts the server process with its data.
func (m *model) restart() { m.proc++ }

// promote is a failover: another server process, with another history;
// what the new primary has is its caller's to set.
func (m *model) promote() { m.proc++; m.history++ }

// loseData restarts the server empty: a new process and a new history
// (PostgreSQL: initdb makes a new system identifier).
func (m *model) loseData() {
	m.spaces = map[string]*space{}
	m.promote()
}

// quietOf is the quiet period the server keeps for a client's quiet.
func (m *model) quietOf(quiet time.Duration) time.Duration {
	if m.noQuiet {
		return 0
	}
	return serverQuiet(m.kind, quiet)
}

// serverQuiet is the quiet period a server of kind keeps for a client's
// quiet: etcd keeps it on a lease of whole seconds.
func serverQuiet(kind string, quiet time.Duration) time.Duration {
	if kind == Etcd {
		return (quiet + time.Second - 1) / time.Second * time.Second
	}
	return quiet
}

// guard is the start of every request that reads the epoch: it makes a
// missing epoch (when create) and starts the quiet period when the epoch
// was missing or the server changed. It returns the epoch (0 when none
// and !create) and the quiet period left.
func (m *model) guard(s *space, create bool, quiet time.Duration) (uint64, time.Duration) {
	now := m.clock()
	fresh := false
	switch {
	case s.epoch == 0:
		if !create {
			return 0, 0
		}
		m.epochs++
		s.epoch, s.seen, fresh = m.epochs, m.ident(), true
	case s.seen != m.ident():
		s.seen, fresh = m.ident(), true
	}
	quiet = m.quietOf(quiet)
	left := s.quietUntil.Sub(now)
	if fresh && left < quiet {
		s.quietUntil = now.Add(quiet)
		left = quiet
	}
	return s.epoch, max(left, 0)
}

// held returns the token holding id now, or "", and deletes an expired
// key.
func (m *model) held(s *space, id int64) string {
	k, ok := s.leases[id]
	if !ok {
		return ""
	}
	if !k.expires.IsZero() && !m.clock().Before(k.expires) {
		delete(s.leases, id)
		return ""
	}
	return k.token
}

type acquireReply struct {
	id     int64 // -1: every id of the range is held
	epoch  uint64
	quiet  time.Duration
	holder string // when id is -1: the holder of the range's last id, when known
}

// acquire takes the lowest id of [from, to] that no live lease holds for
// token (Claim asks for one id: from = to).
func (m *model) acquire(prefix string, from, to int64, token, holder string, ttl, quiet time.Duration) acquireReply {
	s := m.space(prefix)
	epoch, left := m.guard(s, true, quiet)
	for id := from; id <= to; id++ {
		if m.held(s, id) != "" {
			continue
		}
		s.leases[id] = leaseKey{token: token, expires: m.clock().Add(ttl)}
		r := s.nodes[id]
		r.token, r.holder = token, holder
		s.nodes[id] = r
		return acquireReply{id: id, epoch: epoch, quiet: left}
	}
	rep := acquireReply{id: -1, epoch: epoch, quiet: left}
	if r := s.nodes[to]; r.token != "" && r.token == m.held(s, to) {
		rep.holder = r.holder
	}
	return rep
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
// is gone and nobody acquired it since. It returns the quiet period left
// with retaken, when the module reports one: PostgreSQL and Redis do
// (their server may have changed), etcd does not.
func (m *model) renew(prefix string, id int64, token string, epoch uint64, ttl, quiet time.Duration) (renewResult, time.Duration) {
	s := m.space(prefix)
	if m.kind == Postgres && s.epoch == epoch && s.seen == m.ident() && m.held(s, id) == token && s.nodes[id].token == token {
		// The common case touches only the id's row.
		s.leases[id] = leaseKey{token: token, expires: m.clock().Add(ttl)}
		return renewed, 0
	}
	e, left := s.epoch, time.Duration(0)
	if m.kind != Etcd {
		e, left = m.guard(s, false, quiet)
	}
	if e != epoch || e == 0 {
		return epochLost, 0
	}
	cur := m.held(s, id)
	r, ok := s.nodes[id]
	switch {
	case cur == token:
		s.leases[id] = leaseKey{token: token, expires: m.clock().Add(ttl)}
		return renewed, 0
	case cur != "":
		return heldByOther, 0
	case !ok && m.kind == Postgres:
		// The row was deleted by hand: nobody acquired the id since (an
		// acquisition leaves its row behind).
		s.nodes[id] = nodeRecord{token: token}
	case r.token != token:
		return takenSince, 0
	}
	s.leases[id] = leaseKey{token: token, expires: m.clock().Add(ttl)}
	if m.kind == Etcd {
		left = 0
	}
	return retaken, left
}

// release deletes id's lease if token holds it.
func (m *model) release(prefix string, id int64, token string) bool {
	s := m.space(prefix)
	if m.held(s, id) != token {
		return false
	}
	delete(s.leases, id)
	return true
}

type saveResult int

const (
	saved     saveResult = iota + 1
	notHeld              // the token does not hold the id: nothing saved
	staleSave            // a later save of the token was stored first: nothing saved
)

// saveMark stores mark for id as save number seq of token while, and
// only while, token holds the id, and only when no later save of the
// same token was stored before.
func (m *model) saveMark(prefix string, id int64, token string, seq uint64, mark ringflake.Mark) saveResult {
	s := m.space(prefix)
	if m.held(s, id) != token {
		return notHeld
	}
	r := s.nodes[id]
	if r.markToken == token && seq <= r.markSeq && !m.blindSaves {
		return staleSave
	}
	r.mark, r.corrupt, r.markToken, r.markSeq = mark, "", token, seq
	s.nodes[id] = r
	return saved
}

// loadMark returns id's record when token is its latest acquirer.
func (m *model) loadMark(prefix string, id int64, token string) (nodeRecord, bool) {
	r, ok := m.space(prefix).nodes[id]
	return r, ok && r.token == token
}

// list returns the ids of [0, maxNode] that a live key holds, in order.
func (m *model) list(prefix string, maxNode int64) []lease.Holding {
	s := m.space(prefix)
	var out []lease.Holding
	for id := int64(0); id <= maxNode; id++ {
		tok := m.held(s, id)
		if tok == "" {
			continue
		}
		h := lease.Holding{Node: id}
		if k := s.leases[id]; !k.expires.IsZero() {
			h.TTL = k.expires.Sub(m.clock())
		}
		r := s.nodes[id]
		if r.token == tok {
			h.Holder = r.holder
		}
		if r.corrupt == "" {
			h.Mark = r.mark.Limit
		}
		out = append(out, h)
	}
	return out
}

// where names the place a module's MarkError names for id's mark.
func (m *model) where(prefix string, id int64) string {
	switch m.kind {
	case Redis:
		return fmt.Sprintf("redis {%s}:node:%d mark", prefix, id)
	case Etcd:
		return fmt.Sprintf("etcd %s/mark/%d", prefix, id)
	}
	return fmt.Sprintf("postgres ringflake_node_leases prefix %q node %d", prefix, id)
}
