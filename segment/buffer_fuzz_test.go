package segment

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ringflake/ringflake/simclock"
)

// FuzzBufferSwitch plays calls and database answers, chosen by the fuzzer,
// against an allocator whose loads stop at every step (stepper), and
// checks each call against a model of the two buffers: the numbers are
// exactly the ranges the database handed out, in order — never a
// duplicate, strictly increasing, none skipped while the allocator is
// open —, a load starts exactly when a call takes a range's trigger offset
// (or finds both buffers empty with no load running), a load asks for the
// adaptive step and waits the backoff of the model, a call fails only
// when both buffers are empty (with ErrUnavailable after a failed attempt,
// with its canceled context while a load runs), and Stats tell the same.
//
// Byte 0 picks the prefetch fraction (0 to 0.9), byte 1 the row's step (1
// to 16), byte 2 the largest step (1 to 4 times the row's); then pairs
// (op, arg): a call of Next, of NextN, a successful or failed answer to a
// waiting load, the end of a backoff, the clock moving on.
func FuzzBufferSwitch(f *testing.F) {
	f.Add([]byte{1, 9, 1, 0, 0, 0, 0, 2, 0, 1, 30})                          // one switch after a prefetch
	f.Add([]byte{0, 0, 3, 0, 0, 2, 1, 0, 0, 2, 0, 0, 0, 2, 0})               // one-number ranges, growing
	f.Add([]byte{5, 7, 0, 1, 4, 3, 0, 1, 20, 4, 0, 3, 1, 4, 0, 2, 2, 1, 30}) // failures, overflow, recovery
	f.Add([]byte{9, 15, 2, 1, 31, 5, 4, 2, 0, 5, 1, 1, 31, 2, 3, 5, 2})      // the clock moves: grow and shrink
	f.Fuzz(playBuffers)
}

// playBuffers is FuzzBufferSwitch's body.
func playBuffers(t *testing.T, data []byte) {
	if len(data) < 3 {
		return
	}
	cfg := defaultConfig()
	cfg.prefetchAt = float64(data[0]%10) / 10
	cfg.targetDuration = time.Minute
	rowStep := int64(data[1]%16) + 1
	cfg.maxStep = rowStep * (int64(data[2]%4) + 1)
	first := rng{first: 1, size: rowStep, rowStep: rowStep}
	h := newStepper(t, cfg, first)
	m := &bufferModel{cfg: cfg, clk: h.clk, rowStep: rowStep, ranges: []rng{first}, step: rowStep,
		lastLoad: stepperStart, backoff: cfg.minBackoff, nextFirst: first.first + first.size, taken: 1}

	ops := data[3:]
	if len(ops) > 200 {
		ops = ops[:200]
	}
	for i := 0; i+1 < len(ops); i += 2 {
		arg := int64(ops[i+1])
		switch ops[i] % 6 {
		case 0:
			m.call(t, h, 1)
		case 1:
			m.call(t, h, arg%32+1)
		case 2:
			if m.loader == taking {
				r := rng{first: m.nextFirst + arg%4, size: m.asked, rowStep: rowStep} // arg%4: others took numbers before
				m.nextFirst = r.first + r.size
				h.answer(r, nil)
				m.loaded(r)
			}
		case 3:
			if m.loader == taking {
				cause := error(errors.New("connection refused"))
				if arg%2 == 1 {
					cause = ErrOverflow
				}
				e := h.answer(rng{}, cause)
				require.Equal(t, m.failed(cause), e.sleep, "backoff")
			}
		case 4:
			if m.loader == sleeping {
				e := h.wake()
				m.loader = taking
				require.Equal(t, m.asked, e.step, "step asked again after a failure")
			}
		case 5:
			h.clk.Add(time.Duration(arg%5) * cfg.targetDuration / 2)
		}
		m.checkStats(t, h.a.Stats())
	}

	require.NoError(t, h.a.Close())
	_, err := h.a.Next(context.Background())
	require.ErrorIs(t, err, ErrClosed)
	n, err := h.a.NextN(context.Background(), make([]int64, 3))
	require.ErrorIs(t, err, ErrClosed)
	require.Zero(t, n)
	require.Zero(t, h.a.Stats().Left)
}

type loaderPhase int

const (
	idle     loaderPhase = iota
	taking               // waiting in take
	sleeping             // waiting to retry
)

// bufferModel is what the allocator should do, one call at a time.
type bufferModel struct {
	cfg       config
	clk       *simclock.Clock
	rowStep   int64
	ranges    []rng // the current range, then the second buffer's if loaded
	used      int64 // numbers taken from ranges[0]
	loader    loaderPhase
	failing   bool
	step      int64     // size of the newest range
	lastLoad  time.Time // when the newest range's load started
	loadStart time.Time // when the running load started
	asked     int64     // the step the running load asks for
	backoff   time.Duration
	nextFirst int64 // the first number the database has not handed out

	taken                                                 int64 // ranges taken
	prefetches, errors, waits, unavailable, loadsOnDemand int64
}

// call makes a call of n numbers (Next when n is 1, else NextN) with a
// canceled context, which never waits, and checks it against the model.
func (m *bufferModel) call(t *testing.T, h *stepper, n int64) {
	t.Helper()
	ctx := canceled()
	got := []int64{}
	var err error
	if n == 1 {
		var v int64
		if v, err = h.a.Next(ctx); err == nil {
			got = append(got, v)
		}
	} else {
		dst := make([]int64, n)
		var k int
		k, err = h.a.NextN(ctx, dst)
		got = dst[:k]
	}
	loads := m.loader
	want := []int64{}
	var wantErr error
	for range n {
		v, err := m.next()
		if err != nil {
			wantErr = err
			break
		}
		want = append(want, v)
	}
	require.Equal(t, want, got, "numbers")
	if wantErr == nil {
		require.NoError(t, err)
	} else {
		require.ErrorIs(t, err, wantErr)
	}
	require.Equal(t, m.loader != idle, h.a.Stats().Loading, "whether a load runs")
	if loads == idle && m.loader == taking { // this call started a load
		e := h.await(atTake)
		require.Equal(t, m.asked, e.step, "adaptive step")
		require.GreaterOrEqual(t, e.step, m.rowStep)
		require.LessOrEqual(t, e.step, max(m.cfg.maxStep, m.rowStep))
	}
}

// next predicts one number, or the error of the call.
func (m *bufferModel) next() (int64, error) {
	for {
		cur := m.ranges[0]
		if m.used < cur.size {
			v := cur.first + m.used
			if m.used == min(int64(float64(cur.size)*m.cfg.prefetchAt), cur.size-1) && len(m.ranges) == 1 && m.loader == idle {
				m.prefetches++
				m.startLoad()
			}
			m.used++
			return v, nil
		}
		switch {
		case len(m.ranges) > 1:
			m.ranges, m.used = m.ranges[1:], 0
			continue
		case m.failing:
			m.unavailable++
			return 0, ErrUnavailable
		case m.loader == idle:
			m.loadsOnDemand++
			m.startLoad()
		}
		m.waits++
		return 0, context.Canceled
	}
}

// startLoad starts a load, which asks for the adaptive step.
func (m *bufferModel) startLoad() {
	m.loader = taking
	m.loadStart = m.clk.Now()
	m.asked = adaptStep(m.step, m.rowStep, m.cfg.maxStep, m.loadStart.Sub(m.lastLoad), m.cfg.targetDuration)
}

// loaded records a successful answer.
func (m *bufferModel) loaded(r rng) {
	m.ranges = append(m.ranges, r)
	m.loader, m.failing = idle, false
	m.step, m.lastLoad = r.size, m.loadStart
	m.backoff = m.cfg.minBackoff
	m.taken++
}

// failed records a failed answer and returns the backoff the load waits.
func (m *bufferModel) failed(cause error) time.Duration {
	m.loader, m.failing = sleeping, true
	m.errors++
	if errors.Is(cause, ErrOverflow) {
		m.asked = m.rowStep
	}
	d := m.backoff
	m.backoff = min(2*m.backoff, m.cfg.maxBackoff)
	return d
}

func (m *bufferModel) checkStats(t *testing.T, s Stats) {
	t.Helper()
	left := max(m.ranges[0].size-m.used, 0)
	for _, r := range m.ranges[1:] {
		left += r.size
	}
	want := Stats{
		Left: left, NextReady: len(m.ranges) > 1, Loading: m.loader != idle, Failing: m.failing,
		Step: m.step, Ranges: uint64(m.taken), Prefetches: uint64(m.prefetches), RoundTrips: s.RoundTrips,
		Errors: uint64(m.errors), Waits: uint64(m.waits), Unavailable: uint64(m.unavailable),
	}
	require.Equal(t, want, s)
	require.Zero(t, m.loadsOnDemand, "every range's trigger comes before its end, so a load never starts on demand")
}
