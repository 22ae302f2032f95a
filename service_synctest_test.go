//go:build go1.25

package ringflake_test

import (
	"context"
	"os"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ringflake/ringflake"
	"github.com/ringflake/ringflake/simclock"
)

// The service tests that docs/testing.md shows, as they run: the text
// between the markers is quoted there (TestTestingDocQuotesTheServiceTests).

// docs/testing.md: begin

// orders is a service that stamps each order with an ID, and gives up on
// an order that cannot get one within 50 ms.
type orders struct{ ids *ringflake.Generator }

func (o orders) place(ctx context.Context) (ringflake.ID, error) {
	ctx, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	defer cancel()
	return o.ids.NextContext(ctx)
}

// With testing/synctest the service runs as in production, on the system
// clock: its timeouts, sleeps and the generator's waits for the next tick
// all run on the bubble's fake clock, instantly and deterministically.
func TestOrdersBurst(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		// A bubble's clock starts at 2000-01-01, before the Twitter epoch.
		time.Sleep(time.Until(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)))
		start := time.Now()
		ids, err := ringflake.New(980)
		require.NoError(t, err)
		defer ids.Close(context.Background())
		svc := orders{ids}

		for range 10_000 { // 2.4 ticks' worth of a 12-bit sequence
			_, err := svc.place(t.Context())
			require.NoError(t, err)
		}
		assert.Equal(t, 2*time.Millisecond, time.Since(start), "two tick waits, on the bubble's clock")
		assert.Equal(t, uint64(2), ids.Stats().TickWaits)
	})
}

// With simclock the test hands the generator a clock it can step back:
// what a bubble's clock never does.
func TestOrdersThroughARollback(t *testing.T) {
	clk := simclock.New(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	ids, err := ringflake.New(1, ringflake.WithClock(clk))
	require.NoError(t, err)
	defer ids.Close(context.Background())
	svc := orders{ids}

	var placed []ringflake.ID
	for _, step := range []time.Duration{0, 10 * time.Millisecond, -3 * time.Millisecond} {
		clk.Step(step)            // -3 ms: an NTP step back
		clk.Add(time.Millisecond) // and time goes on
		id, err := svc.place(t.Context())
		require.NoError(t, err, "the default strategy keeps the service available")
		placed = append(placed, id)
	}
	assert.NotContains(t, placed[:2], placed[2])
	assert.Less(t, placed[2], placed[1], "an ID the ring reused: unique, not in order")
	assert.Equal(t, uint64(1), ids.Stats().Rollbacks)
}

// docs/testing.md: end

// TestTestingDocQuotesTheServiceTests: docs/testing.md shows the tests
// above as they are.
func TestTestingDocQuotesTheServiceTests(t *testing.T) {
	src, err := os.ReadFile("service_synctest_test.go")
	require.NoError(t, err)
	_, quoted, ok := strings.Cut(string(src), "// docs/testing.md: begin\n\n")
	require.True(t, ok)
	quoted, _, ok = strings.Cut(quoted, "\n// docs/testing.md: end")
	require.True(t, ok)
	doc, err := os.ReadFile("docs/testing.md")
	require.NoError(t, err)
	assert.Contains(t, string(doc), quoted)
}
