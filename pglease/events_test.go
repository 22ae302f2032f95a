package pglease_test

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/benbjohnson/clock"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ringflake/ringflake"
	"github.com/ringflake/ringflake/lease"
	"github.com/ringflake/ringflake/lease/leasetest"
	"github.com/ringflake/ringflake/pglease"
	"github.com/ringflake/ringflake/simclock"
)

// TestEventsReachSlogAndStats: what observes a lease is not particular to
// PostgreSQL. The lease's events reach Options.OnEvent — here a slog
// logger — with the same kinds as the other modules', and a generator on
// the lease counts the IDs it refused once the lease was lost in its
// Stats (Errors.LeaseLost), which ringflakeprom exports as
// ringflake_errors_total{kind="lease_lost"} and ringflakeexpvar publishes
// with the rest of the Stats.
func TestEventsReachSlogAndStats(t *testing.T) {
	for _, d := range []driver{{}, {bouncer: true}} {
		name := "direct"
		if d.bouncer {
			name = "pgbouncer"
		}
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			c := d.Connect(t).(conn)
			prefix := leasetest.Prefix(t)
			c.Settle(t, prefix)
			var logs bytes.Buffer
			logger := slog.New(slog.NewJSONHandler(&logs, nil))
			events := make(chan lease.Event, 16)
			clk := clock.NewMock()
			clk.Set(leasetest.Start)
			l, err := pglease.Acquire(ctx, c.p, pglease.Options{Prefix: prefix, TTL: time.Minute, Clock: clk, OnEvent: func(e lease.Event) {
				logger.Info("lease", "event", e.Kind.String(), "node", e.Node, "err", e.Err)
				events <- e
			}})
			require.NoError(t, err)
			defer l.Close(ctx)
			g, err := ringflake.New(l.Node(), ringflake.WithLease(l), ringflake.WithClock(simclock.New(leasetest.Start)))
			require.NoError(t, err)
			_, err = g.Next()
			require.NoError(t, err)

			next := func(want lease.EventKind) lease.Event {
				t.Helper()
				clk.Add(20 * time.Second) // RenewEvery: TTL/3
				select {
				case e := <-events:
					require.Equal(t, want, e.Kind, "%+v", e)
					return e
				case <-time.After(30 * time.Second):
					t.Fatal("no lease event within 30s")
					return lease.Event{}
				}
			}
			next(lease.Renewed)
			c.Put(t, prefix, l.Node(), "intruder")
			e := next(lease.Lost)
			require.ErrorIs(t, e.Err, ringflake.ErrLeaseLost)
			_, err = g.Next()
			require.ErrorIs(t, err, ringflake.ErrLeaseLost)
			assert.Equal(t, uint64(1), g.Stats().Errors.LeaseLost)

			var kinds []string
			for _, line := range strings.Split(strings.TrimSpace(logs.String()), "\n") {
				var rec map[string]any
				require.NoError(t, json.Unmarshal([]byte(line), &rec), line)
				kinds = append(kinds, rec["event"].(string))
			}
			assert.Equal(t, []string{"renewed", "lost"}, kinds)
		})
	}
}
