//go:build unix

package main

import (
	"fmt"
	"net/url"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ringflake/ringflake"
	"github.com/ringflake/ringflake/lease/leasetest"
)

// The fault tests run gen as processes of their own (the binary built once
// per run) against servers of their own, on loopback, which they stop,
// pause, kill and wipe by PID. Every wait is on a condition, with a bound.

// TestFaultGenRidesOutAPause stops a running gen (SIGSTOP, as a stopped
// VM or a long pause would) until its lease key expires on the server,
// and continues it: gen finds that its lease may have expired, waits until
// a renewal takes the id again (nobody took it meanwhile), and goes on,
// printing all the IDs it was asked for, each once.
func TestFaultGenRidesOutAPause(t *testing.T) {
	const n = 100_000 // about 4 s at the Sonyflake layout's 25,600 IDs/s
	s := leasetest.StartRedis(t, true)
	b := redisBackend(t, s.Addr)
	prefix := newPrefix()
	b.settle(t, prefix)
	c := startGen(t, "gen", "-n", fmt.Sprint(n), "-layout", "sonyflake", "-node", b.url(prefix, url.Values{"ttl": {"1s"}}))
	require.Eventually(t, func() bool { got, _ := c.progress(); return got > 0 }, 30*time.Second, 10*time.Millisecond, "gen issues")

	require.NoError(t, c.cmd.Process.Signal(syscall.SIGSTOP))
	require.Eventually(t, func() bool { return !b.exists(t, prefix, 0) }, 30*time.Second, 10*time.Millisecond,
		"the stopped gen's lease key expires on the server")
	require.NoError(t, c.cmd.Process.Signal(syscall.SIGCONT))

	require.Equal(t, 0, c.wait(t, time.Minute), "gen goes on: %s", c.stderr.String())
	total, dups := duplicates(c)
	assert.Equal(t, n, total)
	assert.Zero(t, dups)
	// Whether gen saw its lease expired depends on which of its goroutines
	// ran first after SIGCONT: the one issuing IDs, normally.
	t.Logf("gen's standard error: %q", c.stderr.String())
}

// TestFaultServerLosesData is issue 16's scenario: four gen processes on
// logical:1s and four on logical:30s issue at full speed on the Sonyflake
// layout, with leases of one prefix (maxlead=30s, the fleet's largest
// lead; TTL 2 s); the lease server loses everything — Redis killed with
// SIGKILL and restarted without persistence on the same port, etcd
// restarted on an empty data directory — and four new processes start
// right after, as an orchestrator restarts its workers. The old processes
// learn of the loss and stop; the new ones take node ids the old ones held
// and wait out a quiet period of TTL + Margin + MaxLead. Every ID of the
// union is unique, and on every node id the new processes' IDs are above
// the old ones'.
func TestFaultServerLosesData(t *testing.T) {
	for _, tc := range []struct {
		name  string
		start func(t *testing.T) (backend, func(t *testing.T))
	}{
		{"redis killed and restarted empty", func(t *testing.T) (backend, func(t *testing.T)) {
			s := leasetest.StartRedis(t, false)
			return redisBackend(t, s.Addr), func(t *testing.T) { s.Kill(t); s.Start(t) }
		}},
		{"etcd restarted on an empty data directory", func(t *testing.T) (backend, func(t *testing.T)) {
			s := leasetest.StartEtcd(t)
			return etcdBackend(t, s.Endpoint), func(t *testing.T) { s.Kill(t); s.StartEmpty(t) }
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b, wipe := tc.start(t)
			serverLosesData(t, b, wipe)
		})
	}
}

func serverLosesData(t *testing.T, b backend, wipe func(t *testing.T)) {
	const (
		ttl     = 2 * time.Second
		maxLead = 30 * time.Second
		fresh   = 50_000 // IDs each new process prints
	)
	began := time.Now()
	l := ringflake.SonyflakeLayout()
	prefix := newPrefix()
	b.settle(t, prefix) // a fleet that has been running: no quiet period at its start
	node := b.url(prefix, url.Values{"ttl": {ttl.String()}, "maxlead": {maxLead.String()}})
	gen := func(name, strategy string, n int) *child {
		return startGen(t, name, "-n", fmt.Sprint(n), "-node", node, "-layout", "sonyflake", "-strategy", strategy)
	}
	leads := map[*child]time.Duration{}
	var old []*child
	for i, s := range []string{"logical:1s", "logical:1s", "logical:1s", "logical:1s", "logical:30s", "logical:30s", "logical:30s", "logical:30s"} {
		c := gen(fmt.Sprintf("old %d (%s)", i, s), s, 1_000_000_000)
		leads[c], _ = time.ParseDuration(strings.TrimPrefix(s, "logical:"))
		old = append(old, c)
	}
	// Full speed: every old process runs ahead of the clock by at least
	// half its strategy's lead.
	ahead := func(c *child) bool {
		n, newest := c.progress()
		return n > 0 && time.Until(newest.Time(l)) >= leads[c]/2
	}
	require.Eventually(t, func() bool {
		for _, c := range old {
			select {
			case <-c.done:
				return true // reported below
			default:
			}
			if !ahead(c) {
				return false
			}
		}
		return true
	}, 2*time.Minute, 20*time.Millisecond, "the old processes run ahead of the clock")
	for _, c := range old {
		select {
		case <-c.done:
			t.Fatalf("%s exited before the loss: %s", c.name, c.stderr.String())
		default:
		}
	}

	lost := time.Now()
	wipe(t)
	var young []*child
	for i, s := range []string{"logical:1s", "logical:1s", "logical:30s", "logical:30s"} {
		young = append(young, gen(fmt.Sprintf("new %d (%s)", i, s), s, fresh))
	}
	for _, c := range old {
		// It stops with ErrLeaseLost, or because it cannot save its mark
		// while the server is away.
		assert.Equal(t, 1, c.wait(t, time.Minute), "%s stops once it learns of the loss", c.name)
	}
	for _, c := range young {
		require.Equal(t, 0, c.wait(t, 2*time.Minute), "%s: %s", c.name, c.stderr.String())
	}

	all := append(append([]*child{}, old...), young...)
	// One outage is a few lines, not one per failed call: its start with
	// its cause, each other cause, and the end (issuing again, or the
	// error the process stops with).
	for _, c := range all {
		lines := strings.Count(c.stderr.String(), "\n")
		assert.LessOrEqual(t, lines, 3, "%s: %d lines on stderr:\n%s", c.name, lines, c.stderr.String())
	}
	total, dups := duplicates(all...)
	for _, c := range all {
		n, newest := c.progress()
		t.Logf("%s: %d IDs, newest %v after the loss", c.name, n, newest.Time(l).Sub(lost).Round(time.Millisecond))
	}
	t.Logf("%d IDs from %d processes, %d duplicates, in %v", total, len(all), dups, time.Since(began).Round(time.Millisecond))
	require.Zero(t, dups, "IDs issued twice")
	for _, c := range young {
		n, _ := c.progress()
		assert.Equal(t, fresh, n, c.name)
	}

	// The hazard was real: the old processes issued IDs further past the
	// loss than a quiet period of TTL + Margin covers.
	var oldNewest time.Time
	for _, c := range old {
		_, newest := c.progress()
		if t := newest.Time(l); t.After(oldNewest) {
			oldNewest = t
		}
	}
	assert.Greater(t, oldNewest.Sub(lost), ttl+time.Second, "the old processes' newest ID, after the loss")
	// On every node id, the new holder starts above the old holder's IDs.
	oldMax, youngMin := map[int64]ringflake.ID{}, map[int64]ringflake.ID{}
	for _, c := range old {
		for _, id := range c.ids {
			oldMax[id.Node(l)] = max(oldMax[id.Node(l)], id)
		}
	}
	for _, c := range young {
		for _, id := range c.ids {
			if m, ok := youngMin[id.Node(l)]; !ok || id < m {
				youngMin[id.Node(l)] = id
			}
		}
	}
	for node, first := range youngMin {
		if last, ok := oldMax[node]; ok {
			assert.Greater(t, first, last, "node %d: the new holder's first ID is above the old holder's last", node)
		}
	}
}
