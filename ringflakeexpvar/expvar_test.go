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
