package fleetsim

import (
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ringflake/ringflake"
	"github.com/ringflake/ringflake/lease"
)

// The server model's rules that the conformance suite (conformance_test.go)
// does not reach: it moves no server clock and makes no failover.

func testServer(t *testing.T, kind string) (*Sim, *server) {
	t.Helper()
	s, err := newSim(&Scenario{Start: time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC), Duration: time.Minute,
		Fleet: Fleet{Nodes: 2, IDs: 3, Server: Server{Kind: kind, TTL: 2 * time.Second}, Strategy: "ring,wait:5ms,error"}}, faults{})
	require.NoError(t, err)
	return s, s.srv
}

func (s *Sim) advance(d time.Duration) { s.w.now += d }

// The quiet period of a first start and the lease keys' TTLs run on the
// server's clock.
func TestServerTimesOnItsClock(t *testing.T) {
	for _, kind := range []string{Redis, Etcd, Postgres} {
		t.Run(kind, func(t *testing.T) {
			sim, srv := testServer(t, kind)
			quiet := srv.m.quietOf(sim.cfg.Quiet())
			r := srv.acquire(0, 2, "a")
			assert.Equal(t, quiet, r.quiet, "a prefix without an epoch")
			sim.advance(time.Second)
			r = srv.acquire(0, 2, "b")
			assert.Equal(t, quiet-time.Second, r.quiet, "the quiet period runs on the server's clock")
			sim.advance(sim.cfg.TTL - time.Second - time.Millisecond)
			assert.Equal(t, int64(2), srv.acquire(0, 2, "c").id, "a's key lives a TTL")
			sim.advance(time.Millisecond)
			assert.Equal(t, int64(0), srv.acquire(0, 2, "d").id, "and then expires")
			res, _ := srv.renew(0, "a", r.epoch)
			assert.Equal(t, heldByOther, res)
		})
	}
}

// A save that reaches the server after a later save of the same lease is
// answered as the lease modules answer it — lease.ErrStaleSave — and
// changes nothing.
func TestServerLateSaveIsStale(t *testing.T) {
	for _, kind := range []string{Redis, Etcd, Postgres} {
		t.Run(kind, func(t *testing.T) {
			sim, srv := testServer(t, kind)
			m := func(ms int) ringflake.Mark {
				return ringflake.Mark{Limit: sim.sc.Start.Add(time.Duration(ms) * time.Millisecond)}
			}
			require.Equal(t, int64(0), srv.acquire(0, 2, "a").id)
			require.NoError(t, saveErr(0, srv.saveMark(0, "a", 2, m(200), false)))
			err := saveErr(0, srv.saveMark(0, "a", 1, m(100), false))
			require.ErrorIs(t, err, lease.ErrStaleSave)
			assert.False(t, errors.Is(err, ringflake.ErrLeaseLost), "the lease still holds the id")
			r, ours := srv.m.loadMark(prefix, 0, "a")
			require.True(t, ours)
			assert.Equal(t, m(200), r.mark, "the late save changed nothing")
			require.ErrorIs(t, saveErr(0, srv.saveMark(0, "b", 3, m(300), false)), ringflake.ErrLeaseLost, "a token that does not hold the id")
			assert.Zero(t, sim.check.counts["mark_regressions"])
		})
	}
}

func TestServerFailover(t *testing.T) {
	for _, tc := range []struct {
		kind        string
		losesWrites bool
		quiet       bool
	}{{Redis, true, true}, {Postgres, true, true}, {Etcd, false, false}} {
		t.Run(tc.kind, func(t *testing.T) {
			sim, srv := testServer(t, tc.kind)
			srv.acquire(0, 2, "a")
			sim.advance(srv.m.quietOf(sim.cfg.Quiet())) // the quiet period of the first start is over; a's key expired
			b := srv.acquire(0, 2, "b")                 // b takes a's id
			sim.advance(100 * time.Millisecond)         // within the replica's lag
			srv.failover()
			r := srv.acquire(0, 2, "c")
			if tc.losesWrites {
				assert.Equal(t, b.id, r.id, "b's acquisition was lost")
			} else {
				assert.NotEqual(t, b.id, r.id)
			}
			assert.Equal(t, tc.quiet, r.quiet > 0, "a quiet period after a failover, where the module notices it")
		})
	}
}
