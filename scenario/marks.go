package scenario

import (
	"context"
	"sync"
	"sync/atomic"

	"github.com/ringflake/ringflake"
)

// markStore is the ringflake.MarkStore of a replay that keeps a high-water
// mark: what the mark file on disk is to a service, this is to the
// generators of the replay's successive runs. It lives in memory and never
// fails. It is safe for concurrent use: a generator saves its marks ahead
// from a goroutine of its own.
type markStore struct {
	mu   sync.Mutex
	mark ringflake.Mark
	slow func() // when set, runs inside every SaveMark: a store that takes its time
}

func newMarkStore(slow func()) *markStore { return &markStore{slow: slow} }

// LoadMark returns the mark saved last, or the zero Mark before the first
// save.
func (s *markStore) LoadMark(ctx context.Context) (ringflake.Mark, error) {
	if err := ctx.Err(); err != nil {
		return ringflake.Mark{}, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.mark, nil
}

// SaveMark replaces the mark.
func (s *markStore) SaveMark(ctx context.Context, mark ringflake.Mark) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if s.slow != nil {
		s.slow()
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.mark = mark
	return nil
}

// saved returns the mark saved last.
func (s *markStore) saved() ringflake.Mark {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.mark
}

// process is one run's handle on the replay's markStore: each generator
// saves through its own, so that a crashed run's saves can be refused.
type process struct {
	store *markStore
	dead  atomic.Bool
}

func (p *process) LoadMark(ctx context.Context) (ringflake.Mark, error) {
	return p.store.LoadMark(ctx)
}

// SaveMark saves through to the store, unless the run crashed.
func (p *process) SaveMark(ctx context.Context, mark ringflake.Mark) error {
	if p.dead.Load() {
		return errCrashed
	}
	return p.store.SaveMark(ctx, mark)
}
