package scenario

import (
	"context"
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ringflake/ringflake"
)

// However long a save of the mark takes in real time, a replay reports the
// same: simulated time stands still while the replay waits for it.
func TestSlowMarkSaves(t *testing.T) {
	s, err := ReadFile("../scenarios/crash-restart-during-rollback.yaml")
	require.NoError(t, err)
	slow := withSlowSaves(func() {
		for range 1000 {
			runtime.Gosched()
		}
	})
	for _, st := range Builtin() {
		t.Run(st.String(), func(t *testing.T) {
			fast, err := Replay(context.Background(), s, st, WithTrace())
			require.NoError(t, err)
			slowly, err := Replay(context.Background(), s, st, WithTrace(), slow)
			require.NoError(t, err)
			assert.Equal(t, fast, slowly)
		})
	}
}

func TestMarkStore(t *testing.T) {
	ctx := context.Background()
	store := newMarkStore(nil)
	mark, err := store.LoadMark(ctx)
	require.NoError(t, err)
	assert.True(t, mark.IsZero(), "no mark before the first save")

	run := &process{store: store}
	at := ringflake.Mark{Limit: time.Unix(1, 0), Since: time.Unix(1, 0)}
	require.NoError(t, run.SaveMark(ctx, at))
	assert.Equal(t, at, store.saved())

	run.dead.Store(true)
	later := ringflake.Mark{Limit: time.Unix(2, 0), Since: time.Unix(2, 0)}
	require.ErrorIs(t, run.SaveMark(ctx, later), errCrashed, "a dead run saves nothing")
	mark, err = (&process{store: store}).LoadMark(ctx)
	require.NoError(t, err)
	assert.Equal(t, at, mark, "the next run loads the last mark saved")

	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	require.ErrorIs(t, store.SaveMark(cancelled, at), context.Canceled)
	_, err = store.LoadMark(cancelled)
	require.ErrorIs(t, err, context.Canceled)
}
