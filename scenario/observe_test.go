package scenario

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// An observe event makes the service observe an ID stamped ahead of its
// clock: every strategy then issues above it (the lead shows it), and a
// restarted process has observed nothing.
func TestObserveEvent(t *testing.T) {
	s, err := Parse("observe.yaml", []byte(`start: 2026-11-27T12:00:00Z
duration: 2s
load: {rate: 1/ms}
events:
  - {at: 500ms, observe: 300ms}
  - {at: 1s, step: -100ms}
  - {at: 1.5s, restart: clean}
  - {at: 1.6s, observe: -50ms}
`))
	require.NoError(t, err)
	require.Equal(t, Observe, s.Events[0].Kind)
	require.Equal(t, 300*time.Millisecond, s.Events[0].D)
	for _, st := range Builtin() {
		t.Run(st.String(), func(t *testing.T) {
			r, err := Replay(context.Background(), s, st)
			require.NoError(t, err)
			assert.True(t, r.OK(), "%v", r.Problems())
			assert.GreaterOrEqual(t, r.MaxLead, 300*time.Millisecond, "IDs went above the observed one")
		})
	}
	var b bytes.Buffer
	_, err = s.WriteTo(&b)
	require.NoError(t, err)
	assert.Contains(t, b.String(), "{at: 500ms, observe: 300ms}")
	back, err := Parse("back.yaml", b.Bytes())
	require.NoError(t, err)
	assert.Equal(t, s.Events, back.Events)
}
