package ringflakeexpvar_test

import (
	"encoding/json"
	"expvar"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ringflake/ringflake"
	"github.com/ringflake/ringflake/lease"
	"github.com/ringflake/ringflake/ringflakeexpvar"
	"github.com/ringflake/ringflake/simclock"
)

func TestPublish(t *testing.T) {
	g, err := ringflake.New(1, ringflake.WithClock(simclock.New(time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC))))
	require.NoError(t, err)
	for range 7 {
		_, err := g.Next()
		require.NoError(t, err)
	}
	name := fmt.Sprintf("ringflake_test_%p", g) // expvar names are process-wide: one per run of the test
	require.NoError(t, ringflakeexpvar.Publish(name, g))
	var s ringflake.Stats
	require.NoError(t, json.Unmarshal([]byte(expvar.Get(name).String()), &s))
	assert.Equal(t, uint64(7), s.Issued)

	require.ErrorIs(t, ringflakeexpvar.Publish(name, g), ringflake.ErrInvalidOption, "names are published once")
	require.ErrorIs(t, ringflakeexpvar.Publish("", g), ringflake.ErrInvalidOption)
	require.ErrorIs(t, ringflakeexpvar.Publish(name+"_nil", nil), ringflake.ErrInvalidOption)
}

func TestPublishLease(t *testing.T) {
	var rec lease.Recorder
	at := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	beyond := lease.Offset{Offset: -2 * time.Second, Uncertainty: 150 * time.Microsecond, RoundTrip: 300 * time.Microsecond, At: at, Samples: 5}
	rec.Record(lease.Event{Kind: lease.ClockSkewed, Offset: beyond})
	rec.Record(lease.Event{Kind: lease.Renewed, Offset: beyond})
	name := fmt.Sprintf("ringflake_lease_test_%p", &rec)
	require.NoError(t, ringflakeexpvar.PublishLease(name, &rec))
	var s lease.EventStats
	require.NoError(t, json.Unmarshal([]byte(expvar.Get(name).String()), &s))
	assert.Equal(t, lease.EventStats{Renewed: 1, ClockSkewed: 1, Offset: beyond, Skewed: true}, s)

	rec.Record(lease.Event{Kind: lease.RenewFailed}) // read each time
	require.NoError(t, json.Unmarshal([]byte(expvar.Get(name).String()), &s))
	assert.Equal(t, uint64(1), s.RenewFailed)

	require.ErrorIs(t, ringflakeexpvar.PublishLease(name, &rec), ringflake.ErrInvalidOption, "names are published once")
	require.ErrorIs(t, ringflakeexpvar.PublishLease("", &rec), ringflake.ErrInvalidOption)
	require.ErrorIs(t, ringflakeexpvar.PublishLease(name+"_nil", nil), ringflake.ErrInvalidOption)
}

// Example serves a generator's counters on /debug/vars.
func Example() {
	g, err := ringflake.New(7)
	if err != nil {
		panic(err)
	}
	if err := ringflakeexpvar.Publish("ids", g); err != nil {
		panic(err)
	}
	// go http.ListenAndServe("127.0.0.1:8080", nil) // /debug/vars now shows "ids"
}
