//go:build linux

package ringflake

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// counts returns how many callers wait in q and how many threads sleep
// for it.
func (q *waitq) counts() (waiting, sleeping int) {
	q.mu.Lock()
	defer q.mu.Unlock()
	return len(q.waiting), len(q.sleepers)
}

// Threads sleep for the queue at most one per distinct deadline, not one
// per caller: 2,000 callers due before the first sleeper's deadline share
// one more sleeper, and 100 due earlier still at most one more (a sleeper
// that finds an earlier one sleeping for every deadline left stops
// sleeping for the queue, so there may be fewer). A cancelled context
// ends the wait of sleepers and followers alike and leaves nothing behind.
// Deadlines are seconds away, so that nothing comes due while the test
// looks.
func TestWaitqSleepsOnePerDeadline(t *testing.T) {
	q := &waitq{start: time.Now()}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var wg sync.WaitGroup
	errs := make(chan error, 2101)
	wait := func(at int64) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs <- q.wait(ctx, at)
		}()
	}
	settled := func(waiting, sleeping int) {
		t.Helper()
		require.Eventually(t, func() bool { w, _ := q.counts(); return w == waiting }, time.Minute, time.Millisecond)
		_, s := q.counts()
		assert.Positive(t, s, "a thread sleeps for %d callers", waiting)
		assert.LessOrEqual(t, s, sleeping, "threads sleeping for %d callers", waiting)
	}
	now := q.now()
	wait(now + int64(20*time.Second))
	settled(1, 1)
	for i := range 2000 {
		// A tick's callers: deadlines within the readings' noise.
		wait(now + int64(10*time.Second) + int64(i%40)*int64(time.Microsecond))
	}
	settled(2001, 2)
	for range 100 {
		wait(now + int64(5*time.Second))
	}
	settled(2101, 3)

	cancel()
	wg.Wait()
	close(errs)
	for err := range errs {
		require.ErrorIs(t, err, context.Canceled)
	}
	w, _ := q.counts()
	assert.Zero(t, w, "callers left in the queue")
	require.Eventually(t, func() bool { _, s := q.counts(); return s == 0 }, time.Minute, time.Millisecond,
		"a sleeper that goes on for the queue stops once nobody waits")
}

// Every caller returns at or after its deadline, whichever sleeper wakes
// it; callers of two deadlines, the later one first, share two sleepers.
func TestWaitqWakesEachCallerAtItsDeadline(t *testing.T) {
	q := &waitq{start: time.Now()}
	now := q.now()
	var wg sync.WaitGroup
	late := make(chan int64, 200)
	for i := range 200 {
		at := now + int64(4*time.Millisecond)
		if i >= 100 {
			at = now + int64(2*time.Millisecond) // due before the first sleeper's deadline
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			// assert, not require: FailNow must not run off the test's
			// goroutine.
			if assert.NoError(t, q.wait(context.Background(), at)) {
				late <- q.now() - at
			}
		}()
	}
	wg.Wait()
	close(late)
	for d := range late {
		assert.GreaterOrEqual(t, d, int64(0), "a caller returned before its deadline")
	}
	w, _ := q.counts()
	assert.Zero(t, w)
	require.Eventually(t, func() bool { _, s := q.counts(); return s == 0 }, time.Minute, time.Millisecond, "sleepers left")
}

// Closing the generator wakes every caller at once, sleepers and
// followers, and later calls do not wait.
// (A sleeper whose context cannot be cancelled sleeps out its sleep, at
// most preciseWait; the hour-long deadline here is for the test, with a
// context that makes the sleeper look every cancelSlice.)
func TestWaitqWakeAll(t *testing.T) {
	q := &waitq{start: time.Now()}
	at := q.now() + int64(time.Hour)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var wg sync.WaitGroup
	for range 50 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			assert.NoError(t, q.wait(ctx, at))
		}()
	}
	require.Eventually(t, func() bool { w, _ := q.counts(); return w == 50 }, time.Minute, time.Millisecond)
	q.wakeAll()
	wg.Wait()
	require.NoError(t, q.wait(context.Background(), at), "a closed queue does not wait")
}

// After another call re-synced across a step back of 300 ms, a short wait
// computed from a reading taken before the re-sync lasts at most its own
// length: its deadline was the reading's instant under the new offset,
// 300 ms later, and the caller sleeping for it in the kernel could not be
// ended by Close either.
func TestShortWaitAfterAStepLastsWhatItSays(t *testing.T) {
	g, err := New(922) // the system clock: short waits go through the waitq
	require.NoError(t, err)
	defer g.Close(context.Background())
	e, _ := g.src.readTick()
	g.src.offset.Add(-int64(300 * time.Millisecond)) // what a re-sync across a step back of 300 ms leaves
	const d = 2 * time.Millisecond
	done := make(chan error, 1)
	go func() {
		_, err := g.sleep(context.Background(), e, d)
		done <- err
	}()
	var left int64 // the deadline of the wait, from when the test saw it
	require.Eventually(t, func() bool {
		select {
		case err := <-done:
			require.NoError(t, err)
			return true // over already
		default:
		}
		g.waits.mu.Lock()
		defer g.waits.mu.Unlock()
		if len(g.waits.waiting) == 0 {
			return false
		}
		left = g.waits.waiting[0].at - g.waits.now()
		return true
	}, time.Minute, 50*time.Microsecond)
	assert.LessOrEqual(t, left, int64(d), "the wait's deadline is at most d away")
}
