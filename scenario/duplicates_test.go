package scenario

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ringflake/ringflake/strategies"
)

// The generator never issues an ID twice, so no replay can show the
// duplicate check at work; this test feeds it duplicates directly.
func TestDuplicates(t *testing.T) {
	ids := []issued{{id: 7, call: 1, at: 10}, {id: 9, call: 2, at: 20}, {id: 7, call: 3, at: 30}, {id: 8, call: 4, at: 40}, {id: 7, call: 5, at: 50}}
	assert.Equal(t, []Violation{
		{Promise: "unique", Call: 3, At: 30, Detail: "ID 7 was already returned by call 1"},
		{Promise: "unique", Call: 5, At: 50, Detail: "ID 7 was already returned by call 3"},
	}, duplicates(ids, nil))
	assert.Empty(t, duplicates([]issued{{id: 1}, {id: 2}}, nil))
	assert.Empty(t, duplicates(nil, nil))
}

// A duplicate across a restart also counts in the restart that started the
// run of the copy.
func TestDuplicatesAcrossRestarts(t *testing.T) {
	restarts := []RestartReport{{At: 20}, {At: 40}}
	ids := []issued{{id: 7, call: 1, at: 10}, {id: 8, call: 2, at: 30, run: 1}, {id: 7, call: 3, at: 50, run: 2},
		{id: 8, call: 4, at: 51, run: 2}, {id: 9, call: 5, at: 52, run: 2}, {id: 9, call: 6, at: 53, run: 2}}
	assert.Equal(t, []Violation{
		{Promise: "unique", Call: 3, At: 50, Detail: "ID 7 was already returned by call 1, before the restart at 40ns"},
		{Promise: "unique", Call: 4, At: 51, Detail: "ID 8 was already returned by call 2, before the restart at 40ns"},
		{Promise: "unique", Call: 6, At: 53, Detail: "ID 9 was already returned by call 5"},
	}, duplicates(ids, restarts))
	assert.Equal(t, []RestartReport{{At: 20}, {At: 40, Duplicates: 2}}, restarts)
}

// The order check, fed directly: a call that started earlier but was
// served after a call that started later breaks the promise; calls served
// at the same instant do not, in any order.
func TestServedOutOfOrder(t *testing.T) {
	inOrder := []issued{{call: 1, at: 10}, {call: 3, at: 20}, {call: 2, at: 20}, {call: 4, at: 20}, {call: 5, at: 30}}
	assert.Empty(t, servedOutOfOrder(inOrder))
	starved := []issued{{call: 2, at: 10}, {call: 3, at: 10}, {call: 5, at: 20}, {call: 1, at: 30}, {call: 4, at: 30}}
	assert.Equal(t, []Violation{
		{Promise: "order", Call: 1, At: 30, Detail: "served after call 5, which started later and was served before it"},
		{Promise: "order", Call: 4, At: 30, Detail: "served after call 5, which started later and was served before it"},
	}, servedOutOfOrder(starved))
	assert.Empty(t, servedOutOfOrder(nil))
}

// Callers in a long line sleep until their turn may have come, not once
// per tick: 1,024 callers queue for a layout of 2 IDs per tick, and the
// generator's sleeps stay within a few per call. (Each caller woke at every
// tick before, about 500 sleeps per call here.)
func TestQueuedCallersSleepUntilTheirTurn(t *testing.T) {
	s, err := Parse("herd.yaml", []byte(`start: 2026-11-22T12:00:00Z
duration: 100ms
layout: twitter,seq=1,node=21
load: {rate: 50/ms, goroutines: 1024}
`))
	require.NoError(t, err)
	for _, name := range []string{"error", "ring,wait:5ms,error"} {
		st, err := strategies.Parse(name)
		require.NoError(t, err)
		rep, err := Replay(context.Background(), s, st)
		require.NoError(t, err)
		require.Equal(t, int64(5000), rep.Calls, name)
		assert.Equal(t, rep.Calls, rep.Issued, name)
		assert.True(t, rep.OK(), "%s: %v", name, rep.Violations)
		assert.Positive(t, rep.MaxQueue, "%s: the callers queued", name)
		assert.LessOrEqual(t, rep.sleeps, 3*rep.Calls, "%s: sleeps of %d calls", name, rep.Calls)
	}
}
