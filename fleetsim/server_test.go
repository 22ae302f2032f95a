package fleetsim

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ringflake/ringflake"
)

// The server model's rules, case by case, as lease/leasetest states them
// for the real servers (the suite itself needs server processes: see
// docs/fleet-sim.md for which of its cases these mirror).

func testServer(t *testing.T, kind string) (*Sim, *server) {
	t.Helper()
	s, err := newSim(&Scenario{Start: time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC), Duration: time.Minute,
		Fleet: Fleet{Nodes: 2, IDs: 3, Server: Server{Kind: kind, TTL: 2 * time.Second}, Strategy: "ring,wait:5ms,error"}}, faults{})
	require.NoError(t, err)
	return s, s.srv
}

func (s *Sim) advance(d time.Duration) { s.w.now += d }

func TestServerAcquireTakesTheLowestFreeID(t *testing.T) {
	for _, kind := range []string{Redis, Etcd, Postgres} {
		t.Run(kind, func(t *testing.T) {
			_, srv := testServer(t, kind)
			for want := int64(0); want < 3; want++ {
				r := srv.acquire("t"+string(rune('a'+want)), 2*time.Second)
				assert.Equal(t, want, r.id)
			}
			assert.Equal(t, int64(-1), srv.acquire("td", 2*time.Second).id, "exhausted range")
			srv.release(1, "tb")
			assert.Equal(t, int64(1), srv.acquire("te", 2*time.Second).id, "a released id is handed out again")
		})
	}
}

func TestServerFirstStartIsQuiet(t *testing.T) {
	sim, srv := testServer(t, Redis)
	r := srv.acquire("a", 2*time.Second)
	assert.Equal(t, sim.cfg.Quiet(), r.quiet, "a prefix without an epoch")
	sim.advance(time.Second)
	r = srv.acquire("b", 2*time.Second)
	assert.Equal(t, sim.cfg.Quiet()-time.Second, r.quiet, "the quiet period runs on the server's clock")
}

func TestServerExpiredIDIsHandedOutAgain(t *testing.T) {
	sim, srv := testServer(t, Etcd)
	require.Equal(t, int64(0), srv.acquire("a", 2*time.Second).id)
	sim.advance(2 * time.Second)
	assert.Equal(t, int64(0), srv.acquire("b", 2*time.Second).id)
	res, _ := srv.renew(0, "a", 1, 2*time.Second)
	assert.Equal(t, heldByOther, res, "the first holder lost it for good")
	sim.advance(3 * time.Second)
	res, _ = srv.renew(0, "a", 1, 2*time.Second)
	assert.Equal(t, takenSince, res, "and after b's key expired too: b acquired it since")
}

func TestServerRenewals(t *testing.T) {
	sim, srv := testServer(t, Redis)
	a := srv.acquire("a", 2*time.Second)
	sim.advance(time.Second)
	res, _ := srv.renew(0, "a", a.epoch, 2*time.Second)
	assert.Equal(t, renewed, res)
	sim.advance(2500 * time.Millisecond) // the key expires; nobody took the id
	res, _ = srv.renew(0, "a", a.epoch, 2*time.Second)
	assert.Equal(t, retaken, res)
	srv.st.leases[0] = leaseKey{token: "thief", expires: srv.clk.Now().Add(time.Minute)}
	res, _ = srv.renew(0, "a", a.epoch, 2*time.Second)
	assert.Equal(t, heldByOther, res, "a stolen lease")
	srv.loseData()
	res, _ = srv.renew(0, "a", a.epoch, 2*time.Second)
	assert.Equal(t, epochLost, res, "the server lost the prefix's data")
}

func TestServerMarksAreFencedAndOrdered(t *testing.T) {
	sim, srv := testServer(t, Postgres)
	srv.acquire("a", 2*time.Second)
	m := func(ms int) ringflake.Mark {
		return ringflake.Mark{Limit: sim.sc.Start.Add(time.Duration(ms) * time.Millisecond)}
	}
	assert.True(t, srv.saveMark(0, "a", 2, m(200), false))
	assert.True(t, srv.saveMark(0, "a", 1, m(100), false), "a late save is answered")
	assert.Equal(t, m(200), srv.loadMark(0), "but does not lower the mark")
	assert.False(t, srv.saveMark(0, "b", 3, m(300), false), "a token that does not hold the id saves nothing")
	sim.advance(3 * time.Second)
	srv.acquire("c", 2*time.Second)
	assert.Equal(t, m(200), srv.loadMark(0), "the mark outlives the lease: the next holder loads it")
	assert.Zero(t, sim.check.counts["mark_regressions"])
}

func TestServerFailover(t *testing.T) {
	for _, tc := range []struct {
		kind        string
		losesWrites bool
		quiet       bool
	}{{Redis, true, true}, {Postgres, true, true}, {Etcd, false, false}} {
		t.Run(tc.kind, func(t *testing.T) {
			sim, srv := testServer(t, tc.kind)
			srv.acquire("a", 2*time.Second)
			sim.advance(4 * time.Second)         // the quiet period of the first start is over
			b := srv.acquire("b", 2*time.Second) // a's lease expired: b takes its id
			sim.advance(100 * time.Millisecond)  // within the replica's lag
			srv.failover()
			r := srv.acquire("c", 2*time.Second)
			if tc.losesWrites {
				assert.Equal(t, b.id, r.id, "b's acquisition was lost")
			} else {
				assert.NotEqual(t, b.id, r.id)
			}
			assert.Equal(t, tc.quiet, r.quiet > 0, "a quiet period after a server process change")
		})
	}
}
