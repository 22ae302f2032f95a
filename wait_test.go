package ringflake_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ringflake/ringflake"
	"github.com/ringflake/ringflake/simclock"
	"github.com/ringflake/ringflake/strategies"
)

// threadsChild makes the test binary run the body of
// TestWaitersHoldNoThreads, in a process of its own.
const threadsChild = "RINGFLAKE_TEST_THREADS_CHILD"

// 2,000 callers that wait for the next tick on the system clock must not
// each hold an OS thread: with the runtime's limit at 200 threads, a
// thread per waiter ends the process with "fatal error: thread
// exhaustion" (it did, before the generator's waitq). JSSafeLayout issues
// 256 IDs per 10 ms tick, so the 6,000 IDs take about 24 ticks, with up to
// 2,000 callers waiting at a time. The child runs in a process of its own
// because the failure kills the process.
func TestWaitersHoldNoThreads(t *testing.T) {
	if os.Getenv(threadsChild) == "1" {
		manyWaiters(t)
		return
	}
	exe, err := os.Executable()
	require.NoError(t, err)
	cmd := exec.Command(exe, "-test.run=^TestWaitersHoldNoThreads$", "-test.count=1")
	cmd.Env = append(os.Environ(), threadsChild+"=1")
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "the child failed:\n%s", out)
	assert.Contains(t, string(out), "6000 unique IDs")
	var peak int
	at := strings.Index(string(out), "peak threads")
	require.GreaterOrEqual(t, at, 0, "the child did not report its peak:\n%s", out)
	_, err = fmt.Sscanf(string(out[at:]), "peak threads %d", &peak)
	require.NoError(t, err, "%s", out)
	if runtime.GOOS == "linux" {
		// A thread each would be well over a hundred; the waitq needs the
		// runtime's own few.
		assert.Less(t, peak, 50, "OS threads at the peak")
	}
	t.Logf("peak OS threads: %d", peak)
}

func manyWaiters(t *testing.T) {
	debug.SetMaxThreads(200)
	g, err := ringflake.New(3, ringflake.WithLayout(ringflake.JSSafeLayout()))
	require.NoError(t, err)
	defer g.Close(context.Background())
	const callers, each = 2000, 3
	ids := make([]ringflake.ID, callers*each)
	var wg sync.WaitGroup
	start := make(chan struct{})
	wg.Add(callers)
	for c := range callers {
		go func() {
			defer wg.Done()
			<-start
			for i := range each {
				id, err := g.Next()
				if err != nil {
					t.Error(err)
					return
				}
				ids[c*each+i] = id
			}
		}()
	}
	peak := make(chan int)
	stop := make(chan struct{})
	go func() { peak <- peakThreads(stop) }()
	close(start)
	wg.Wait()
	close(stop)
	seen := make(map[ringflake.ID]bool, len(ids))
	for _, id := range ids {
		seen[id] = true
	}
	require.Len(t, seen, callers*each)
	fmt.Printf("%d unique IDs\npeak threads %d\n", len(seen), <-peak)
}

// peakThreads returns the largest number of OS threads of the process
// seen on Linux every 100 µs until stop is closed (0 elsewhere).
func peakThreads(stop <-chan struct{}) int {
	tick := time.NewTicker(100 * time.Microsecond)
	defer tick.Stop()
	peak := 0
	for {
		select {
		case <-stop:
			return peak
		case <-tick.C:
			b, _ := os.ReadFile("/proc/self/status")
			for _, line := range strings.Split(string(b), "\n") {
				if n, ok := strings.CutPrefix(line, "Threads:"); ok {
					v, _ := strconv.Atoi(strings.TrimSpace(n))
					peak = max(peak, v)
				}
			}
		}
	}
}

// A caller waits for the next tick and the clock steps back during the
// wait: the strategy decides at once — error and ring fail fast, wait:5ms
// waits out the rest, the default chain too (the ring has nothing spare)
// — instead of every strategy waiting a tick and a half. A step back that
// takes the clock below the reading the wait began at is a rollback. A
// step of half a tick that leaves it above that reading reads exactly as
// a clock that stood still for half the wait (the generator reads nothing
// while it waits): a freeze, and error and ring fail with ErrClockFrozen.
func TestStepDuringTickWaitIsARollback(t *testing.T) {
	for _, tc := range []struct {
		strategy string
		step     time.Duration // at 500 µs of the wait for the tick at 1 ms
		fails    bool
		stall    time.Duration // of the call that waited
	}{
		{"error", -500 * time.Microsecond, true, time.Millisecond},
		{"ring", -500 * time.Microsecond, true, time.Millisecond},
		{"wait:5ms", -500 * time.Microsecond, false, 1500 * time.Microsecond},
		{"ring,wait:5ms,error", -500 * time.Microsecond, false, 1500 * time.Microsecond},
		{"logical:1s", -500 * time.Microsecond, false, 0}, // borrows the next tick instead of waiting
		{"error", -1500 * time.Microsecond, true, time.Millisecond},
		{"wait:5ms", -1500 * time.Microsecond, false, 2500 * time.Microsecond},
	} {
		t.Run(fmt.Sprintf("%s/%v", tc.strategy, tc.step), func(t *testing.T) {
			s, err := strategies.Parse(tc.strategy)
			require.NoError(t, err)
			clk := simclock.New(start)
			require.NoError(t, clk.Schedule(simclock.Event{At: 500 * time.Microsecond, Kind: simclock.Step, D: tc.step}))
			g, err := ringflake.New(1, ringflake.WithClock(clk), ringflake.WithStrategy(s))
			require.NoError(t, err)
			for range 4096 { // use up the first tick
				_, err := g.Next()
				require.NoError(t, err)
			}
			before := clk.Monotonic()
			id, err := g.Next()
			assert.Equal(t, tc.stall, clk.Monotonic()-before, "stall")
			behind := time.Millisecond - (time.Millisecond + tc.step) // short of the tick it waited for
			if tc.fails && tc.step > -time.Millisecond {
				var fe *strategies.FrozenError
				require.ErrorAs(t, err, &fe)
				require.NotErrorIs(t, err, ringflake.ErrClockRollback)
				assert.Equal(t, behind, fe.Behind)
				assert.Zero(t, g.Stats().Rollbacks)
				return
			}
			if tc.fails {
				var re *strategies.RollbackError
				require.ErrorAs(t, err, &re)
				assert.Equal(t, behind, re.Behind)
				assert.Equal(t, uint64(1), g.Stats().Rollbacks)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, start.Add(time.Millisecond), id.Time(g.Layout()))
		})
	}
}
