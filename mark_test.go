package ringflake_test

import (
	"context"
	"errors"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ringflake/ringflake"
	"github.com/ringflake/ringflake/hostlocal"
	"github.com/ringflake/ringflake/simclock"
	"github.com/ringflake/ringflake/strategies"
)

// recordingStore is a MarkStore in memory that remembers every save and
// can be told to fail.
type recordingStore struct {
	mu    sync.Mutex
	mark  ringflake.Mark
	saves []ringflake.Mark
	fail  error
}

func (s *recordingStore) LoadMark(context.Context) (ringflake.Mark, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.mark, nil
}

func (s *recordingStore) SaveMark(_ context.Context, mark ringflake.Mark) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.fail != nil {
		return s.fail
	}
	s.mark = mark
	s.saves = append(s.saves, mark)
	return nil
}

// snapshot returns the Limit of the mark saved last, and how many saves
// there were.
func (s *recordingStore) snapshot() (time.Time, int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.mark.Limit, len(s.saves)
}

func TestGeneratorWritesMarkAhead(t *testing.T) {
	clk := simclock.New(start)
	store := &recordingStore{}
	g, err := ringflake.New(0, ringflake.WithClock(clk), ringflake.WithMarkStore(store), ringflake.WithMarkAhead(100*time.Millisecond))
	require.NoError(t, err)
	mark, saves := store.snapshot()
	assert.Equal(t, 1, saves, "New saves the first mark")
	assert.Equal(t, start.Add(100*time.Millisecond), mark)

	// 400 ms of traffic: the mark stays ahead of every ID, and is written
	// about twice per interval, not per ID.
	l := g.Layout()
	for range 400 {
		for range 20 {
			id, err := g.Next()
			require.NoError(t, err)
			mark, _ := store.snapshot()
			require.False(t, id.Time(l).After(mark), "ID at %v is past the saved mark %v", id.Time(l), mark)
		}
		clk.Add(time.Millisecond)
	}
	_, saves = store.snapshot()
	assert.GreaterOrEqual(t, saves, 5)
	assert.LessOrEqual(t, saves, 12)

	// Close replaces the ahead mark by the exact one.
	last, err := g.Next()
	require.NoError(t, err)
	require.NoError(t, g.Close(context.Background()))
	mark, _ = store.snapshot()
	assert.Equal(t, last.Time(l), mark)
	_, err = g.Next()
	require.ErrorIs(t, err, ringflake.ErrClosed)
	require.NoError(t, g.Close(context.Background()), "closing twice is harmless")
}

func TestGeneratorStopsWhenTheMarkCannotBeSaved(t *testing.T) {
	clk := simclock.New(start)
	store := &recordingStore{}
	g, err := ringflake.New(0, ringflake.WithClock(clk), ringflake.WithMarkStore(store), ringflake.WithMarkAhead(10*time.Millisecond))
	require.NoError(t, err)
	diskFull := errors.New("disk full")
	store.mu.Lock()
	store.fail = diskFull
	store.mu.Unlock()

	var failed error
	for range 30 {
		if _, err := g.Next(); err != nil {
			failed = err
			break
		}
		clk.Add(time.Millisecond)
	}
	require.ErrorIs(t, failed, diskFull, "past the saved mark, calls fail with the store's error")
	require.ErrorIs(t, failed, ringflake.ErrMarkNotSaved)
	mark, _ := store.snapshot()
	assert.Equal(t, start.Add(10*time.Millisecond), mark)

	store.mu.Lock()
	store.fail = nil
	store.mu.Unlock()
	_, err = g.Next()
	require.NoError(t, err, "the next call saves again")
}

func TestNewRejectsMarkOptions(t *testing.T) {
	_, err := ringflake.New(0, ringflake.WithMarkStore(nil))
	require.ErrorIs(t, err, ringflake.ErrInvalidOption)
	_, err = ringflake.New(0, ringflake.WithMarkStore(&recordingStore{}), ringflake.WithMarkAhead(time.Millisecond))
	require.ErrorIs(t, err, ringflake.ErrInvalidOption)
	// On a layout of 1 s ticks the default (1 s) becomes two ticks; an
	// explicit second is refused.
	coarse, err := ringflake.ParseLayout("twitter,unit=1s,time=33,node=10,seq=20")
	require.NoError(t, err)
	_, err = ringflake.New(0, ringflake.WithLayout(coarse), ringflake.WithMarkStore(&recordingStore{}), ringflake.WithMarkAhead(time.Second))
	require.ErrorIs(t, err, ringflake.ErrInvalidOption)
	coarseStore := &recordingStore{}
	g, err := ringflake.New(0, ringflake.WithClock(simclock.New(start)), ringflake.WithLayout(coarse), ringflake.WithMarkStore(coarseStore))
	require.NoError(t, err, "the default mark ahead on a layout of 1 s ticks")
	id, err := g.Next()
	require.NoError(t, err)
	coarseStore.mu.Lock()
	limit := coarseStore.mark.Limit
	coarseStore.mu.Unlock()
	assert.Equal(t, id.Time(coarse).Add(2*time.Second), limit, "the mark is two ticks ahead")

	past := ringflake.TwitterLayout().Last().Add(time.Hour)
	store := &recordingStore{mark: ringflake.Mark{Limit: past, Since: past}}
	_, err = ringflake.New(0, ringflake.WithClock(simclock.New(start)), ringflake.WithMarkStore(store))
	require.ErrorIs(t, err, ringflake.ErrLayoutExpired)
}

// A restarted generator starts after the previous run's mark, whatever the
// strategy: the ring knows nothing of the previous run, so it counts
// everything up to the mark as issued.
func TestRestartNeverReissues(t *testing.T) {
	for _, sc := range strategyCases {
		t.Run(sc.name, func(t *testing.T) {
			s, err := strategies.Parse(sc.name)
			require.NoError(t, err)
			clk := simclock.New(start)
			store := hostlocal.NewMarkFile(filepath.Join(t.TempDir(), "mark"))
			firstRun := &process{store: store}
			opts := []ringflake.Option{ringflake.WithClock(clk), ringflake.WithStrategy(s)}
			first, err := ringflake.New(4, append(opts, ringflake.WithMarkStore(firstRun))...)
			require.NoError(t, err)
			seen := map[ringflake.ID]bool{}
			for range 200 {
				id, err := first.Next()
				require.NoError(t, err)
				seen[id] = true
				clk.Add(100 * time.Microsecond)
			}
			clk.Step(-30 * time.Millisecond) // restart in the middle of a rollback
			require.NoError(t, first.SyncMark(context.Background()))
			firstRun.crash()
			second, err := ringflake.New(4, append(opts, ringflake.WithMarkStore(store))...)
			require.NoError(t, err)
			issued := 0
			for range 3000 {
				id, err := second.Next()
				clk.Add(time.Millisecond)
				if err != nil {
					require.ErrorIs(t, err, ringflake.ErrClockRollback)
					continue
				}
				require.False(t, seen[id], "ID %d issued by both runs", id)
				seen[id] = true
				issued++
			}
			assert.Positive(t, issued)
			require.NoError(t, second.Close(context.Background()))
		})
	}
}

// fakeLease is a Lease whose holding a test switches.
type fakeLease struct {
	node int64
	mu   sync.Mutex
	held bool
}

func (l *fakeLease) Node() int64 { return l.node }
func (l *fakeLease) Held() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.held
}
func (l *fakeLease) set(held bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.held = held
}

func TestLeaseFencesTheGenerator(t *testing.T) {
	lease := &fakeLease{node: 12, held: true}
	g, err := ringflake.New(12, ringflake.WithClock(simclock.New(start)), ringflake.WithLease(lease))
	require.NoError(t, err)
	_, err = g.Next()
	require.NoError(t, err)

	lease.set(false)
	_, err = g.Next()
	require.ErrorIs(t, err, ringflake.ErrLeaseLost)
	batch := make([]ringflake.ID, 100)
	n, err := g.NextN(context.Background(), batch)
	require.ErrorIs(t, err, ringflake.ErrLeaseLost, "NextN is fenced as Next is")
	assert.Zero(t, n)

	lease.set(true)
	n, err = g.NextN(context.Background(), batch)
	require.NoError(t, err)
	assert.Equal(t, len(batch), n)
	id, err := g.Next()
	require.NoError(t, err)
	assert.Equal(t, int64(12), id.Node(g.Layout()))

	_, err = ringflake.New(13, ringflake.WithLease(lease))
	require.ErrorIs(t, err, ringflake.ErrInvalidOption, "the lease holds another node")
	_, err = ringflake.New(12, ringflake.WithLease(nil))
	require.ErrorIs(t, err, ringflake.ErrInvalidOption)
}

// leaseWithMarks is a lease that keeps the node's mark, as the Redis and
// etcd leases do.
type leaseWithMarks struct {
	fakeLease
	recordingStore
}

func TestLeaseKeepsTheMark(t *testing.T) {
	clk := simclock.New(start)
	lease := &leaseWithMarks{fakeLease: fakeLease{node: 2, held: true}}
	previous := start.Add(2 * time.Second) // the id's previous holder ran on a clock 2 s ahead
	lease.mark = ringflake.Mark{Limit: previous, Since: previous}
	g, err := ringflake.New(2, ringflake.WithClock(clk), ringflake.WithLease(lease), ringflake.WithStrategy(strategies.Logical(5*time.Second)))
	require.NoError(t, err)
	id, err := g.Next()
	require.NoError(t, err)
	assert.True(t, id.Time(g.Layout()).After(previous), "the new holder starts after the previous holder's mark")
	mark, _ := lease.recordingStore.snapshot()
	assert.True(t, mark.After(previous))
}

// aheadLease is a lease that keeps the mark and suggests the lead to write
// it with.
type aheadLease struct {
	leaseWithMarks
	ahead time.Duration
}

func (l *aheadLease) MarkAhead() time.Duration { return l.ahead }

// A lease that keeps the mark sets the mark's lead unless WithMarkAhead
// does, and cannot be combined with a store of the generator's own: the
// next holder of the id would not see that store's mark.
func TestLeaseSuggestsTheMarkLead(t *testing.T) {
	clk := simclock.New(start)
	lease := &aheadLease{leaseWithMarks: leaseWithMarks{fakeLease: fakeLease{node: 3, held: true}}, ahead: 4 * time.Second}
	_, err := ringflake.New(3, ringflake.WithClock(clk), ringflake.WithLease(lease))
	require.NoError(t, err)
	mark, _ := lease.recordingStore.snapshot()
	assert.Equal(t, start.Add(4*time.Second), mark, "the first mark is the lease's lead ahead")

	_, err = ringflake.New(3, ringflake.WithClock(clk), ringflake.WithLease(lease), ringflake.WithMarkAhead(300*time.Millisecond))
	require.NoError(t, err)
	mark, saves := lease.recordingStore.snapshot()
	assert.Equal(t, []any{start.Add(4 * time.Second), 1}, []any{mark, saves},
		"a previous mark ahead of the clock covers the start: no save, so that restarts never push it further")

	clk.Add(5 * time.Second) // the previous run's mark is in the past
	_, err = ringflake.New(3, ringflake.WithClock(clk), ringflake.WithLease(lease), ringflake.WithMarkAhead(300*time.Millisecond))
	require.NoError(t, err)
	mark, _ = lease.recordingStore.snapshot()
	assert.Equal(t, start.Add(5300*time.Millisecond), mark, "WithMarkAhead wins: 300 ms ahead of the clock")

	fresh := &aheadLease{leaseWithMarks: leaseWithMarks{fakeLease: fakeLease{node: 3, held: true}}, ahead: 4 * time.Second}
	_, err = ringflake.New(3, ringflake.WithClock(clk), ringflake.WithLease(fresh), ringflake.WithMarkAhead(300*time.Millisecond))
	require.NoError(t, err)
	mark, _ = fresh.recordingStore.snapshot()
	assert.Equal(t, start.Add(5300*time.Millisecond), mark, "WithMarkAhead wins over the lease's lead")

	_, err = ringflake.New(3, ringflake.WithClock(clk), ringflake.WithLease(fresh), ringflake.WithMarkStore(&recordingStore{}))
	require.ErrorIs(t, err, ringflake.ErrInvalidOption)
}

// gateStore is a MarkStore whose saves wait for the test to open a gate.
type gateStore struct {
	recordingStore
	gate chan struct{}
}

func (s *gateStore) SaveMark(ctx context.Context, mark ringflake.Mark) error {
	<-s.gate
	return s.recordingStore.SaveMark(ctx, mark)
}

func TestSyncMarkWaitsForTheSaveUnderWay(t *testing.T) {
	clk := simclock.New(start)
	store := &gateStore{gate: make(chan struct{}, 1)}
	store.gate <- struct{}{} // New's own save goes through
	g, err := ringflake.New(0, ringflake.WithClock(clk), ringflake.WithMarkStore(store), ringflake.WithMarkAhead(10*time.Millisecond))
	require.NoError(t, err)
	require.NoError(t, g.SyncMark(context.Background()), "nothing under way")

	clk.Add(6 * time.Millisecond) // past the horizon: a save of the next mark starts in the background
	_, err = g.Next()
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	require.ErrorIs(t, g.SyncMark(ctx), context.Canceled, "the save waits at the gate")

	store.gate <- struct{}{}
	require.NoError(t, g.SyncMark(context.Background()))
	mark, saves := store.snapshot()
	assert.Equal(t, 2, saves)
	assert.Equal(t, start.Add(16*time.Millisecond), mark)

	// A failed save is reported.
	broken := errors.New("broken disk")
	store.mu.Lock()
	store.fail = broken
	store.mu.Unlock()
	clk.Add(6 * time.Millisecond)
	_, err = g.Next()
	require.NoError(t, err, "the saved mark still covers this tick")
	store.gate <- struct{}{}
	require.ErrorIs(t, g.SyncMark(context.Background()), broken)

	plain, err := ringflake.New(0, ringflake.WithClock(clk))
	require.NoError(t, err)
	require.NoError(t, plain.SyncMark(context.Background()), "no store, nothing to wait for")
}
