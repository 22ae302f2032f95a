package segment

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/benbjohnson/clock"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// instantSource answers every take at once, leaving a gap of a few
// numbers before each range (other processes took them), and fails every
// failEvery-th take.
type instantSource struct {
	mu        sync.Mutex
	next      int64
	rowStep   int64
	failEvery int
	taken     []rng
	trips     int
}

func (s *instantSource) take(_ context.Context, step int64) (rng, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.trips++
	if s.failEvery > 0 && s.trips%s.failEvery == 0 {
		return rng{}, errors.New("connection reset by peer")
	}
	r := rng{first: s.next + int64(s.trips%3), size: step, rowStep: s.rowStep}
	s.next = r.first + r.size
	s.taken = append(s.taken, r)
	return r, nil
}

func (s *instantSource) roundTrips() uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return uint64(s.trips)
}

// newInstant returns an allocator on an instantSource that retries at
// once after a failure.
func newInstant(t testing.TB, cfg config, rowStep int64, failEvery int) (*Allocator, *instantSource) {
	src := &instantSource{next: 1, rowStep: rowStep, failEvery: failEvery}
	first, err := src.take(context.Background(), rowStep)
	require.NoError(t, err)
	noWait := func(ctx context.Context, _ time.Duration) bool { return ctx.Err() == nil }
	a := newAllocator("test", src, cfg, first, nil, noWait)
	t.Cleanup(func() { _ = a.Close() })
	return a, src
}

// TestConcurrentCallers: 8 goroutines take numbers, one at a time or in
// batches, from ranges of 7 to 64 numbers while a fifth of the takes
// fail. Each goroutine's numbers are strictly increasing, no number comes
// twice, and the numbers handed out are exactly the lowest of the ranges
// taken: none skipped, the rest still in the buffers. The clock is a mock
// that never moves: every load comes at once after the last, so the step
// doubles from 7 up to 64 and stays there.
func TestConcurrentCallers(t *testing.T) {
	cfg := defaultConfig()
	cfg.clock = clock.NewMock()
	cfg.maxStep = 64
	a, src := newInstant(t, cfg, 7, 5)
	const goroutines, perGoroutine = 8, 10_000
	got := make([][]int64, goroutines)
	var wg sync.WaitGroup
	for g := range goroutines {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ctx := context.Background()
			nums := make([]int64, 0, perGoroutine)
			batch := make([]int64, g+1) // goroutine 0 calls Next
			for len(nums) < perGoroutine {
				if g == 0 {
					v, err := a.Next(ctx)
					if err != nil {
						assert.ErrorIs(t, err, ErrUnavailable)
						continue
					}
					nums = append(nums, v)
					continue
				}
				n, err := a.NextN(ctx, batch[:min(len(batch), perGoroutine-len(nums))])
				if err != nil {
					assert.ErrorIs(t, err, ErrUnavailable)
				}
				nums = append(nums, batch[:n]...)
			}
			got[g] = nums
		}()
	}
	wg.Wait()
	require.Eventually(t, func() bool { return !a.Stats().Loading }, 10*time.Second, time.Millisecond)

	var all []int64
	for g, nums := range got {
		require.True(t, isStrictlyIncreasing(nums), "goroutine %d", g)
		all = append(all, nums...)
	}
	slices.Sort(all)
	src.mu.Lock()
	var handed []int64
	for _, r := range src.taken {
		for i := range r.size {
			handed = append(handed, r.first+i)
		}
	}
	src.mu.Unlock()
	require.Equal(t, handed[:len(all)], all, "the lowest numbers of the ranges taken, each once")
	s := a.Stats()
	require.Equal(t, int64(len(handed)-len(all)), s.Left)
	require.Equal(t, uint64(len(src.taken)), s.Ranges)
	require.NotZero(t, s.Errors)
}

func isStrictlyIncreasing(nums []int64) bool {
	for i := 1; i < len(nums); i++ {
		if nums[i] <= nums[i-1] {
			return false
		}
	}
	return true
}

// TestWaitersRespectContext: with both buffers empty and a load waiting
// for the database, a call whose context ends returns its error, and a
// call that keeps waiting gets the first number of the range when it
// arrives.
func TestWaitersRespectContext(t *testing.T) {
	cfg := defaultConfig()
	cfg.prefetchAt = 0.5
	h := newStepper(t, cfg, rng{first: 1, size: 4, rowStep: 4})
	ctx := context.Background()
	dst := make([]int64, 4)
	n, err := h.a.NextN(ctx, dst)
	require.NoError(t, err)
	require.Equal(t, []int64{1, 2, 3, 4}, dst[:n])
	e := h.await(atTake) // the prefetch at offset 2
	require.Equal(t, int64(8), e.step, "the range lasted no time: twice the step")

	short, cancel := context.WithCancel(ctx)
	shortErr := make(chan error)
	go func() {
		_, err := h.a.Next(short)
		shortErr <- err
	}()
	patient := make(chan int64)
	go func() {
		v, err := h.a.Next(ctx)
		assert.NoError(t, err)
		patient <- v
	}()
	require.Eventually(t, func() bool { return h.a.Stats().Waits == 2 }, 10*time.Second, time.Millisecond)
	cancel()
	require.ErrorIs(t, <-shortErr, context.Canceled)
	h.answer(rng{first: 100, size: 8, rowStep: 4}, nil)
	require.Equal(t, int64(100), <-patient)
}

// TestOutage: the database fails while both buffers hold numbers. Calls
// are served until the buffers are empty, then fail at once with
// ErrUnavailable wrapping the database's error (no call waits for a
// retry), and succeed again once a retry has taken a range.
func TestOutage(t *testing.T) {
	cfg := defaultConfig()
	h := newStepper(t, cfg, rng{first: 1, size: 10, rowStep: 10})
	ctx := context.Background()
	v, err := h.a.Next(ctx) // offset 0
	require.NoError(t, err)
	require.Equal(t, int64(1), v)
	_, err = h.a.Next(ctx) // offset 1: the prefetch
	require.NoError(t, err)
	h.await(atTake)
	h.answer(rng{first: 11, size: 20, rowStep: 10}, nil)
	require.Equal(t, int64(28), h.a.Stats().Left)

	down := errors.New("dial tcp 127.0.0.1:5432: connect: connection refused")
	served := 0
	for {
		v, err := h.a.Next(ctx)
		if err != nil {
			require.ErrorIs(t, err, ErrUnavailable)
			require.ErrorIs(t, err, down)
			var ue *UnavailableError
			require.ErrorAs(t, err, &ue)
			require.Equal(t, "test", ue.Tag)
			break
		}
		served++
		require.Equal(t, int64(2+served), v)
		if v == 13 { // offset 2 of the second range: its prefetch
			h.await(atTake)
			require.Equal(t, 10*time.Millisecond, h.answer(rng{}, down).sleep)
		}
	}
	require.Equal(t, 28, served, "every number left in the buffers")
	s := h.a.Stats()
	require.True(t, s.Failing)
	require.Equal(t, uint64(1), s.Unavailable)

	require.Equal(t, int64(40), h.wake().step, "the same step again")
	require.Equal(t, 20*time.Millisecond, h.answer(rng{}, down).sleep, "the backoff doubles")
	_, err = h.a.Next(ctx)
	require.ErrorIs(t, err, ErrUnavailable)
	h.wake()
	h.answer(rng{first: 50, size: 40, rowStep: 10}, nil)
	v, err = h.a.Next(ctx)
	require.NoError(t, err)
	require.Equal(t, int64(50), v)
	require.False(t, h.a.Stats().Failing)
}

// TestCloseEndsALoad: Close cancels a load that waits for the database,
// and calls fail with ErrClosed even while numbers are left.
func TestCloseEndsALoad(t *testing.T) {
	h := newStepper(t, defaultConfig(), rng{first: 1, size: 10, rowStep: 10})
	for range 2 {
		_, err := h.a.Next(context.Background())
		require.NoError(t, err)
	}
	h.await(atTake)
	require.NoError(t, h.a.Close())
	h.await(finished)
	_, err := h.a.Next(context.Background())
	require.ErrorIs(t, err, ErrClosed)
	require.NoError(t, h.a.Close(), "closing again")
}

// TestAdaptStep: the step doubles while ranges last less than the target
// duration, up to the maximum, holds between one and two targets, and
// halves down to the row's step after that; a row step above the
// maximum wins.
func TestAdaptStep(t *testing.T) {
	step := int64(100)
	for _, tc := range []struct {
		lasted time.Duration
		want   int64
	}{
		{time.Second, 200}, {59 * time.Second, 400}, {0, 800}, {0, 1000}, {0, 1000},
		{time.Minute, 1000}, {119 * time.Second, 1000},
		{2 * time.Minute, 500}, {time.Hour, 250}, {time.Hour, 125}, {time.Hour, 100}, {time.Hour, 100},
	} {
		got := adaptStep(step, 100, 1000, tc.lasted, time.Minute)
		require.Equal(t, tc.want, got, "after a range of %d that lasted %v", step, tc.lasted)
		step = got
	}
	require.Equal(t, int64(5000), adaptStep(1000, 5000, 1000, 0, time.Minute), "a row step above the maximum")
}

// TestMaxIDWentBack: a range below one already taken (the row's max_id
// went back, as after a restore from an old backup) is refused, never
// handed out.
func TestMaxIDWentBack(t *testing.T) {
	h := newStepper(t, defaultConfig(), rng{first: 100, size: 10, rowStep: 10})
	ctx := context.Background()
	requireNext := func(want int64) {
		t.Helper()
		v, err := h.a.Next(ctx)
		require.NoError(t, err)
		require.Equal(t, want, v)
	}
	requireNext(100)
	requireNext(101) // the prefetch
	h.await(atTake)
	h.answerThen(rng{first: 50, size: 20, rowStep: 10}, nil, atSleep) // refused: a failure
	for v := int64(102); v < 110; v++ {
		requireNext(v)
	}
	_, err := h.a.Next(ctx)
	require.ErrorIs(t, err, ErrUnavailable)
	require.ErrorIs(t, err, ErrInvalidRow)
	require.ErrorContains(t, err, "from 50, below the end of an earlier one, 110")

	h.wake()
	h.answer(rng{first: 110, size: 20, rowStep: 10}, nil)
	requireNext(110)
}
