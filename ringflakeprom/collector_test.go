package ringflakeprom_test

import (
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/require"

	"github.com/ringflake/ringflake"
	"github.com/ringflake/ringflake/ringflakeprom"
	"github.com/ringflake/ringflake/simclock"
	"github.com/ringflake/ringflake/strategies"
)

func TestCollector(t *testing.T) {
	start := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	clk := simclock.New(start)
	g, err := ringflake.New(3, ringflake.WithClock(clk), ringflake.WithStrategy(strategies.Chain(strategies.Ring(), strategies.Error())))
	require.NoError(t, err)
	for range 5 {
		_, err := g.Next()
		require.NoError(t, err)
	}
	clk.Step(-2 * time.Millisecond)
	clk.Add(time.Millisecond)
	for range 4 {
		_, err := g.Next() // from spare room of tick 0
		require.NoError(t, err)
	}

	c, err := ringflakeprom.NewCollector(g, prometheus.Labels{"node": "3"})
	require.NoError(t, err)
	reg := prometheus.NewPedanticRegistry()
	require.NoError(t, reg.Register(c))
	expected := `
# HELP ringflake_ids_issued_total IDs issued.
# TYPE ringflake_ids_issued_total counter
ringflake_ids_issued_total{node="3"} 9
# HELP ringflake_clock_rollbacks_total Times the wall clock was seen to step back by at least one tick.
# TYPE ringflake_clock_rollbacks_total counter
ringflake_clock_rollbacks_total{node="3"} 1
# HELP ringflake_clock_freezes_total Times the wall clock was seen to stand still while the monotonic clock ran on (not rollbacks).
# TYPE ringflake_clock_freezes_total counter
ringflake_clock_freezes_total{node="3"} 0
# HELP ringflake_clock_rollback_largest_seconds Largest step back of the wall clock seen.
# TYPE ringflake_clock_rollback_largest_seconds gauge
ringflake_clock_rollback_largest_seconds{node="3"} 0.002
# HELP ringflake_ring_reuses_total IDs issued from spare sequence numbers of earlier ticks during a rollback.
# TYPE ringflake_ring_reuses_total counter
ringflake_ring_reuses_total{node="3"} 4
# HELP ringflake_errors_total Failed calls by kind.
# TYPE ringflake_errors_total counter
ringflake_errors_total{kind="before_epoch",node="3"} 0
ringflake_errors_total{kind="canceled",node="3"} 0
ringflake_errors_total{kind="closed",node="3"} 0
ringflake_errors_total{kind="expired",node="3"} 0
ringflake_errors_total{kind="frozen",node="3"} 0
ringflake_errors_total{kind="lease_lost",node="3"} 0
ringflake_errors_total{kind="other",node="3"} 0
ringflake_errors_total{kind="rollback",node="3"} 0
# HELP ringflake_layout_time_left_seconds Time until the layout runs out (the end of its last tick); 0 once it has.
# TYPE ringflake_layout_time_left_seconds gauge
ringflake_layout_time_left_seconds{node="3"} 1.69250943021e+09
`
	require.NoError(t, testutil.GatherAndCompare(reg, strings.NewReader(expected),
		"ringflake_ids_issued_total", "ringflake_clock_rollbacks_total", "ringflake_clock_freezes_total", "ringflake_clock_rollback_largest_seconds",
		"ringflake_ring_reuses_total", "ringflake_errors_total", "ringflake_layout_time_left_seconds"))
	unlabelled, err := ringflakeprom.NewCollector(g, nil)
	require.NoError(t, err)
	require.Equal(t, 14, testutil.CollectAndCount(unlabelled)-7, "14 metric families, errors_total with 8 kinds")
}

func TestNewCollectorRejects(t *testing.T) {
	g, err := ringflake.New(3, ringflake.WithClock(simclock.New(time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC))))
	require.NoError(t, err)

	c, err := ringflakeprom.NewCollector(nil, prometheus.Labels{"node": "3"})
	require.ErrorIs(t, err, ringflakeprom.ErrNilGenerator)
	require.Nil(t, c)

	for _, tc := range []struct {
		name   string
		labels prometheus.Labels
	}{
		{"empty name", prometheus.Labels{"": "3"}},
		{"reserved name", prometheus.Labels{"__name__": "x"}},
		{"name not UTF-8", prometheus.Labels{"\xff": "3"}},
		{"value not UTF-8", prometheus.Labels{"node": "\xff"}},
		{"kind, the errors' own label", prometheus.Labels{"kind": "x"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := ringflakeprom.NewCollector(g, tc.labels)
			require.ErrorIs(t, err, ringflakeprom.ErrInvalidLabels)
			require.Nil(t, c)
		})
	}
}

// Whatever NewCollector accepts registers and scrapes without a panic.
func TestNewCollectorAccepts(t *testing.T) {
	g, err := ringflake.New(3, ringflake.WithClock(simclock.New(time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC))))
	require.NoError(t, err)
	for _, labels := range []prometheus.Labels{nil, {}, {"node": "3"}, {"node": ""}, {"service": "orders", "node": "3"}} {
		c, err := ringflakeprom.NewCollector(g, labels)
		require.NoError(t, err, labels)
		reg := prometheus.NewPedanticRegistry()
		require.NoError(t, reg.Register(c), labels)
		_, err = reg.Gather()
		require.NoError(t, err, labels)
	}
}
