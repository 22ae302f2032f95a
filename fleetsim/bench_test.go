package fleetsim

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// benchScenario is the fleet of the speed target: 3 nodes for 60 s at
// 2,000 IDs/s each, with messages, a data loss, a step, a pause and a
// crash.
func benchScenario(t testing.TB) *Scenario {
	s, err := Parse("bench.yaml", []byte(`start: 2026-11-27T12:00:00Z
duration: 60s
seed: 1
fleet:
  nodes: 3
  server: {kind: redis, ttl: 2s}
  strategy: "ring,wait:5ms,error"
  load: {rate: 2/ms}
  messages: {rate: 1/ms}
events:
  - {at: 10s, server: lose-data}
  - {at: 20s, node: 2, step: -100ms}
  - {at: 30s, node: 1, pause: 3s}
  - {at: 40s, node: 0, crash: true}
`))
	require.NoError(t, err)
	return s
}

// BenchmarkFleet replays benchScenario; node-s/s is simulated
// node-seconds per wall second.
func BenchmarkFleet(b *testing.B) {
	s := benchScenario(b)
	var ids int64
	start := time.Now()
	for b.Loop() {
		r, err := Run(context.Background(), s)
		require.NoError(b, err)
		require.True(b, r.OK(), "%s", r)
		ids = r.Count("ids")
	}
	wall := time.Since(start).Seconds() / float64(b.N)
	b.ReportMetric(float64(s.Fleet.Nodes)*s.Duration.Seconds()/wall, "node-s/s")
	b.ReportMetric(float64(ids), "ids/op")
}
