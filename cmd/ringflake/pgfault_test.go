//go:build unix

package main

import (
	"context"
	"fmt"
	"net/url"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ringflake/ringflake"
	"github.com/ringflake/ringflake/lease/leasetest"
	"github.com/ringflake/ringflake/pglease"
)

// The PostgreSQL fault tests run gen as processes of their own against a
// cluster (and a PgBouncer) of their own, which they kill, restart and
// wipe by PID, and check every ID of every process together. Every wait
// is on a condition, with a bound.

// pgFleet runs gen processes on one PostgreSQL lease URL.
type pgFleet struct {
	t     *testing.T
	node  string // the -node URL
	procs []*child
}

// start starts a gen that prints n IDs of the Sonyflake layout, with
// strategy s ("" for the default).
func (f *pgFleet) start(name string, n int, s string) *child {
	args := []string{"-n", fmt.Sprint(n), "-node", f.node, "-layout", "sonyflake"}
	if s != "" {
		args = append(args, "-strategy", s)
	}
	c := startGen(f.t, name, args...)
	f.procs = append(f.procs, c)
	return c
}

// issuing waits until every process printed an ID.
func (f *pgFleet) issuing() {
	f.t.Helper()
	require.Eventually(f.t, func() bool {
		for _, c := range f.procs {
			select {
			case <-c.done:
				return true // reported below
			default:
			}
			if n, _ := c.progress(); n == 0 {
				return false
			}
		}
		return true
	}, time.Minute, 10*time.Millisecond, "every process issues")
	for _, c := range f.procs {
		select {
		case <-c.done:
			f.t.Fatalf("%s exited (status %d) before the fault: %s", c.name, c.exit, c.stderr.String())
		default:
		}
	}
}

// finish waits for every process to end: it printed all its IDs and exited
// 0, or it exited 1 with a one-line error. It checks every ID of every
// process together and returns how many processes failed.
func (f *pgFleet) finish(want map[*child]int) (failed int) {
	t := f.t
	t.Helper()
	for _, c := range f.procs {
		switch code := c.wait(t, 2*time.Minute); code {
		case 0:
			n, _ := c.progress()
			assert.Equal(t, want[c], n, "%s printed every ID it was asked for", c.name)
		case 1:
			failed++
			t.Logf("%s: %s", c.name, lastErrorLine(t, c))
		default:
			t.Errorf("%s exited with status %d: %s", c.name, code, c.stderr.String())
		}
	}
	total, dups := duplicates(f.procs...)
	t.Logf("%d IDs from %d processes (%d failed with an error), %d duplicates", total, len(f.procs), failed, dups)
	require.Zero(t, dups, "IDs issued twice")
	return failed
}

// pgCluster starts a cluster of the test's own with the lease tables.
func pgCluster(t *testing.T) *leasetest.PostgresServer {
	t.Helper()
	s := leasetest.StartPostgres(t)
	pgBackend(t, s.DSN) // migrates
	return s
}

// TestFaultPostgresKilled kills PostgreSQL with SIGKILL — every server
// process at once, as the OOM killer or a crash of the machine's
// container would — while four gen processes issue at full speed, starts
// it again (crash recovery), and starts two more processes. The leases
// and marks PostgreSQL acknowledged survive the crash (the lease functions
// commit with synchronous_commit on). A gen whose mark save fails while
// the server is away (five times in a row) stops with a one-line error;
// one that needs no save meanwhile waits while its lease may have expired
// and goes on. The processes started after the restart finish; no ID is
// issued twice.
func TestFaultPostgresKilled(t *testing.T) {
	const n = 100_000 // about 4 s at the Sonyflake layout's 25,600 IDs/s
	s := pgCluster(t)
	b := pgBackend(t, s.DSN)
	prefix := newPrefix()
	b.settle(t, prefix)
	f := &pgFleet{t: t, node: b.url(prefix, url.Values{"ttl": {"2s"}})}
	want := map[*child]int{}
	for i := range 4 {
		want[f.start(fmt.Sprintf("before %d", i), n, "")] = n
	}
	f.issuing()
	s.Kill(t)
	s.Start(t)
	for i := range 2 {
		want[f.start(fmt.Sprintf("after %d", i), n/2, "")] = n / 2
	}
	f.finish(want)
}

// TestFaultPostgresTableLost drops the lease tables (DROP … CASCADE) and
// makes them again (pglease.Migrate) — data loss, as a restore of a
// backup from before the prefix existed — while four gen processes on
// logical:1s run ahead of the clock at full speed (maxlead=1s, TTL 2 s),
// and starts two new processes right after. The old processes learn of the
// loss at their next renewal and stop, each with a one-line error; the new
// ones take node ids the old ones held and wait out a quiet period of TTL
// + Margin + MaxLead. Every ID of the union is unique, and on every node
// id the new processes' IDs are above the old ones'.
func TestFaultPostgresTableLost(t *testing.T) {
	const (
		lead  = time.Second
		fresh = 30_000
	)
	l := ringflake.SonyflakeLayout()
	s := pgCluster(t)
	b := pgBackend(t, s.DSN)
	prefix := newPrefix()
	b.settle(t, prefix)
	f := &pgFleet{t: t, node: b.url(prefix, url.Values{"ttl": {"2s"}, "maxlead": {lead.String()}})}
	var old []*child
	for i := range 4 {
		old = append(old, f.start(fmt.Sprintf("old %d", i), 1_000_000_000, "logical:1s"))
	}
	require.Eventually(t, func() bool {
		for _, c := range old {
			if n, newest := c.progress(); n == 0 || time.Until(newest.Time(l)) < lead/2 {
				return false
			}
		}
		return true
	}, 2*time.Minute, 10*time.Millisecond, "the old processes run ahead of the clock by half their lead")

	lost := time.Now()
	pool, err := pgxpool.New(context.Background(), s.DSN)
	require.NoError(t, err)
	defer pool.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	_, err = pool.Exec(ctx, `DROP TABLE ringflake_node_leases, ringflake_node_epochs CASCADE`, pgx.QueryExecModeSimpleProtocol)
	require.NoError(t, err)
	require.NoError(t, pglease.Migrate(ctx, pool))
	want := map[*child]int{}
	var young []*child
	for i := range 2 {
		c := f.start(fmt.Sprintf("new %d", i), fresh, "logical:1s")
		young = append(young, c)
		want[c] = fresh
	}
	for _, c := range old {
		require.Equal(t, 1, c.wait(t, time.Minute), "%s stops once it learns of the loss", c.name)
	}
	assert.Equal(t, len(old), f.finish(want), "the old processes, and only they, fail")

	oldMax, youngMin := map[int64]ringflake.ID{}, map[int64]ringflake.ID{}
	var oldNewest time.Time
	for _, c := range old {
		for _, id := range c.ids {
			oldMax[id.Node(l)] = max(oldMax[id.Node(l)], id)
			if at := id.Time(l); at.After(oldNewest) {
				oldNewest = at
			}
		}
	}
	for _, c := range young {
		for _, id := range c.ids {
			if m, ok := youngMin[id.Node(l)]; !ok || id < m {
				youngMin[id.Node(l)] = id
			}
		}
	}
	t.Logf("the old processes' newest ID is %v after the loss", oldNewest.Sub(lost).Round(time.Millisecond))
	shared := 0
	for node, first := range youngMin {
		if last, ok := oldMax[node]; ok {
			shared++
			assert.Greater(t, first, last, "node %d: the new holder's first ID is above the old holder's last", node)
		}
	}
	assert.Positive(t, shared, "the new processes took node ids the old ones held")
}

// TestFaultPostgresTablesDropped drops the lease tables the way pglease's
// documentation names (DROP TABLE … CASCADE, which leaves functions
// behind), and makes nothing again, while four gen processes issue at full
// speed, and starts two new processes right after. The new ones find no
// schema (pglease.ErrNoSchema), make it again themselves, take node ids
// the old ones held and wait out the quiet period of a server that lost
// its data; the old ones learn of the loss at their next renewal and
// stop, each with a one-line error. Every ID of the union is unique.
func TestFaultPostgresTablesDropped(t *testing.T) {
	const fresh = 30_000
	s := pgCluster(t)
	b := pgBackend(t, s.DSN)
	prefix := newPrefix()
	b.settle(t, prefix)
	f := &pgFleet{t: t, node: b.url(prefix, url.Values{"ttl": {"2s"}})}
	var old []*child
	for i := range 4 {
		old = append(old, f.start(fmt.Sprintf("old %d", i), 1_000_000_000, ""))
	}
	f.issuing()

	pool, err := pgxpool.New(context.Background(), s.DSN)
	require.NoError(t, err)
	defer pool.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	_, err = pool.Exec(ctx, `DROP TABLE ringflake_node_epochs, ringflake_node_leases CASCADE`, pgx.QueryExecModeSimpleProtocol)
	require.NoError(t, err)
	want := map[*child]int{}
	for i := range 2 {
		want[f.start(fmt.Sprintf("new %d", i), fresh, "")] = fresh
	}
	for _, c := range old {
		require.Equal(t, 1, c.wait(t, time.Minute), "%s stops once it learns of the loss", c.name)
	}
	assert.Equal(t, len(old), f.finish(want), "the old processes, and only they, fail")
}

// TestFaultPostgresFrozenHolder freezes a gen that guards node 5 (SIGSTOP,
// as a stopped VM would) until its lease expires on the database's clock,
// and starts another gen that claims node 5 meanwhile: it gets it, starts
// above the frozen one's mark, and finishes. Continued (SIGCONT), the
// frozen gen finds it no longer holds node 5 and stops with a one-line
// error. Every ID of both is unique.
func TestFaultPostgresFrozenHolder(t *testing.T) {
	l := ringflake.SonyflakeLayout()
	s := pgCluster(t)
	b := pgBackend(t, s.DSN)
	prefix := newPrefix()
	b.settle(t, prefix)
	guard := b.url(prefix, url.Values{"ttl": {"2s"}})
	a := startGen(t, "frozen", "-n", "1000000000", "-node", "5", "-guard", guard, "-layout", "sonyflake")
	f := &pgFleet{t: t, procs: []*child{a}}
	f.issuing()

	require.NoError(t, a.cmd.Process.Signal(syscall.SIGSTOP))
	require.Eventually(t, func() bool { return !b.exists(t, prefix, 5) }, time.Minute, 10*time.Millisecond,
		"the frozen gen's lease expires on the database's clock")
	const n = 50_000
	// The claimant stands for a process on another host: its host-local
	// locks are elsewhere (the frozen process still holds its own).
	t.Setenv(nodeDirEnv, t.TempDir())
	c := startGen(t, "claimant", "-n", fmt.Sprint(n), "-node", "5", "-guard", guard, "-layout", "sonyflake")
	f.procs = append(f.procs, c)
	require.Equal(t, 0, c.wait(t, 2*time.Minute), "the claimant gets node 5: %s", c.stderr.String())
	require.NoError(t, a.cmd.Process.Signal(syscall.SIGCONT))

	assert.Equal(t, 1, f.finish(map[*child]int{c: n}), "the frozen gen fails")
	assert.Contains(t, lastErrorLine(t, a), "lease lost")
	_, aNewest := a.progress()
	c.mu.Lock()
	first := c.ids[0]
	c.mu.Unlock()
	assert.Greater(t, first, aNewest, "the claimant starts above every ID of the frozen gen")
	for _, p := range f.procs {
		for _, id := range p.ids {
			require.Equal(t, int64(5), id.Node(l))
		}
	}
}

// TestFaultPgBouncerRestarted restarts the PgBouncer in transaction
// pooling mode that three gen processes lease their node ids through —
// every client connection is closed — and starts a fourth right after.
// The pools reconnect; every process finishes, or stops with a one-line
// error; no ID is issued twice.
func TestFaultPgBouncerRestarted(t *testing.T) {
	const n = 100_000
	s := pgCluster(t)
	bouncer := leasetest.StartPgBouncer(t, s.Port)
	b := pgBackend(t, bouncer.DSN)
	prefix := newPrefix()
	b.settle(t, prefix)
	f := &pgFleet{t: t, node: b.url(prefix, url.Values{"ttl": {"2s"}})}
	want := map[*child]int{}
	for i := range 3 {
		want[f.start(fmt.Sprintf("before %d", i), n, "")] = n
	}
	f.issuing()
	bouncer.Stop(t)
	bouncer.Start(t)
	want[f.start("after", n/2, "")] = n / 2
	f.finish(want)
}
