package ringflake_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ringflake/ringflake"
	"github.com/ringflake/ringflake/simclock"
	"github.com/ringflake/ringflake/strategies"
)

// orderedStore is a MarkStore that applies saves in the order they are
// made, as a correct store does, and keeps them, so that a test can check
// the generator's side of the contract: every save of a run is at least
// every earlier save of that run, except Close's exact mark as the run's
// last. A gate, when set, holds each save until the test lets it through.
type orderedStore struct {
	mu      sync.Mutex
	mark    ringflake.Mark
	runs    [][]ringflake.Mark // the saves of each run (each LoadMark starts one)
	gate    chan struct{}      // nil: saves go through at once
	started chan struct{}      // receives when a save reaches the gate
}

func (s *orderedStore) LoadMark(context.Context) (ringflake.Mark, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.runs = append(s.runs, nil)
	return s.mark, nil
}

func (s *orderedStore) SaveMark(_ context.Context, m ringflake.Mark) error {
	s.mu.Lock()
	gate, started := s.gate, s.started
	s.mu.Unlock()
	if gate != nil {
		started <- struct{}{}
		<-gate
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.mark = m
	s.runs[len(s.runs)-1] = append(s.runs[len(s.runs)-1], m)
	return nil
}

// lowered returns the saves of the latest run that went below an earlier
// save of it (Limit or Since); closed says the run ended with Close,
// whose exact mark, the last save, may be lower.
func (s *orderedStore) lowered(closed bool) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	saves := s.runs[len(s.runs)-1]
	if closed && len(saves) > 0 {
		saves = saves[:len(saves)-1]
	}
	var out []string
	var high ringflake.Mark
	for i, m := range saves {
		if m.Limit.Before(high.Limit) || m.Since.Before(high.Since) {
			out = append(out, fmt.Sprintf("save %d: limit %v since %v after limit %v since %v",
				i, m.Limit.Sub(start), m.Since.Sub(start), high.Limit.Sub(start), high.Since.Sub(start)))
		}
		high.Limit, high.Since = later(high.Limit, m.Limit), later(high.Since, m.Since)
	}
	return out
}

// waitingContext reports when a call first waits on it.
type waitingContext struct {
	context.Context
	once    sync.Once
	waiting chan struct{}
}

func (c *waitingContext) Done() <-chan struct{} {
	c.once.Do(func() { close(c.waiting) })
	return c.Context.Done()
}

// A call that waited for another call's save and then saved again from
// its own older tick stored a mark below the one just saved: with the
// Sonyflake layout, ring and WithMarkAhead(20ms), saves landed with limits
// 00.020, 00.080, 00.050, below the ID issued at 00.070, and the next run
// after a crash issued that ID again.
func TestMarkNeverGoesBackWithinARun(t *testing.T) {
	layout := ringflake.SonyflakeLayout()
	clk := simclock.New(start)
	store := &orderedStore{}
	g, err := ringflake.New(1, ringflake.WithClock(clk), ringflake.WithLayout(layout), ringflake.WithStrategy(strategies.Ring()),
		ringflake.WithMarkStore(store), ringflake.WithMarkAhead(20*time.Millisecond))
	require.NoError(t, err)
	store.mu.Lock()
	store.gate, store.started = make(chan struct{}), make(chan struct{})
	store.mu.Unlock()

	// A: the clock at 00.060, past the saved mark (00.020): a save ahead of
	// it (00.080) starts and waits at the gate, and so does A, until its
	// context is cancelled.
	clk.Add(60 * time.Millisecond)
	type result struct {
		id  ringflake.ID
		err error
	}
	actx, cancel := context.WithCancel(context.Background())
	awaits := &waitingContext{Context: actx, waiting: make(chan struct{})}
	a := make(chan result, 1)
	go func() {
		id, err := g.NextContext(awaits)
		a <- result{id, err}
	}()
	<-store.started
	<-awaits.waiting

	// B: an observed ID at 00.070 makes B lead from there; B needs the
	// tick after the saved mark first, and waits for A's save.
	obs, err := layout.Compose(start.Add(70*time.Millisecond), 2, 0)
	require.NoError(t, err)
	require.NoError(t, g.Observe(obs))
	bwaits := &waitingContext{Context: context.Background(), waiting: make(chan struct{})}
	b := make(chan result, 1)
	go func() {
		id, err := g.NextContext(bwaits)
		b <- result{id, err}
	}()
	<-bwaits.waiting
	cancel()
	ra := <-a
	require.ErrorIs(t, ra.err, context.Canceled)

	go func() { // let every later save through
		for range store.started {
			store.gate <- struct{}{}
		}
	}()
	store.gate <- struct{}{}
	rb := <-b
	require.NoError(t, rb.err)
	require.NoError(t, g.SyncMark(context.Background()))
	assert.Empty(t, store.lowered(false))

	// A crash: the next run starts with the clock back at 00.060.
	issued := map[ringflake.ID]bool{rb.id: true}
	store.mu.Lock()
	store.gate = nil
	store.mu.Unlock()
	next, err := ringflake.New(1, ringflake.WithClock(clk), ringflake.WithLayout(layout), ringflake.WithStrategy(strategies.Ring()),
		ringflake.WithMarkStore(store), ringflake.WithMarkAhead(20*time.Millisecond))
	require.NoError(t, err)
	for range 50 {
		id, err := next.Next()
		require.NoError(t, err)
		require.False(t, issued[id], "ID %d (%v) issued again after the restart", id, id.Time(layout).Sub(start))
		clk.Add(time.Millisecond)
	}
}

// Many callers on one generator whose mark store applies saves in order:
// however the callers' readings interleave with the saves, no save of the
// run is below an earlier one, and Close's exact mark is the last.
func TestMarkSavesOnlyGoUpUnderConcurrentCalls(t *testing.T) {
	for _, sname := range []string{"ring", "error", "logical:50ms", "ring,wait:5ms,error"} {
		t.Run(sname, func(t *testing.T) {
			s, err := strategies.Parse(sname)
			require.NoError(t, err)
			layout := testLayout(t, "sonyflake,node=20,seq=4")
			clk := simclock.New(start)
			store := &orderedStore{}
			g, err := ringflake.New(1, ringflake.WithClock(clk), ringflake.WithLayout(layout), ringflake.WithStrategy(s),
				ringflake.WithMarkStore(store), ringflake.WithMarkAhead(20*time.Millisecond))
			require.NoError(t, err)
			var wg sync.WaitGroup
			for w := range 6 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					buf := make([]ringflake.ID, 3)
					for i := range 300 {
						var err error
						if w%2 == 0 {
							_, err = g.NextN(context.Background(), buf[:1+i%3])
						} else {
							_, err = g.Next()
						}
						if err != nil {
							// Goroutines move the simulated clock between
							// another's monotonic and wall reads: a call may
							// meet what looks like a step or a freeze.
							assert.True(t, errors.Is(err, ringflake.ErrClockRollback) || errors.Is(err, ringflake.ErrClockFrozen), "%v", err)
						}
						if i%7 == w {
							clk.Add(3 * time.Millisecond)
						}
					}
				}()
			}
			wg.Wait()
			require.NoError(t, g.Close(context.Background()))
			assert.Empty(t, store.lowered(true))
		})
	}
}
