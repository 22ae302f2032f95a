package segment

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
)

// memoryAllocator returns an allocator whose range (2^40 numbers) lasts
// any benchmark: every call takes the in-memory path.
func memoryAllocator(tb testing.TB) *Allocator {
	a, _ := newInstant(tb, defaultConfig(), 1<<40, 0)
	return a
}

// BenchmarkNext is the in-memory path of Next, beside the two ways to
// hand out numbers from one counter that it is measured against: an
// atomic add (the floor: Next is one, plus loading the current range) and
// a mutex around an increment (what a lock per number would cost).
func BenchmarkNext(b *testing.B) {
	ctx := context.Background()
	b.Run("segment", func(b *testing.B) {
		a := memoryAllocator(b)
		b.ReportAllocs()
		for b.Loop() {
			if _, err := a.Next(ctx); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("segment-parallel", func(b *testing.B) {
		a := memoryAllocator(b)
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				if _, err := a.Next(ctx); err != nil {
					b.Error(err)
					return
				}
			}
		})
	})
	b.Run("segment-NextN-64", func(b *testing.B) { // per number
		a := memoryAllocator(b)
		dst := make([]int64, 64)
		b.ReportAllocs()
		for b.Loop() {
			if _, err := a.NextN(ctx, dst); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(dst)), "ns/number")
	})
	var n atomic.Int64
	b.Run("atomic", func(b *testing.B) {
		for b.Loop() {
			n.Add(1)
		}
	})
	b.Run("atomic-parallel", func(b *testing.B) {
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				n.Add(1)
			}
		})
	})
	var mu sync.Mutex
	var m int64
	b.Run("mutex", func(b *testing.B) {
		for b.Loop() {
			mu.Lock()
			m++
			mu.Unlock()
		}
	})
	b.Run("mutex-parallel", func(b *testing.B) {
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				mu.Lock()
				m++
				mu.Unlock()
			}
		})
	})
}

// TestNextDoesNotAllocate: the in-memory path allocates nothing.
func TestNextDoesNotAllocate(t *testing.T) {
	a := memoryAllocator(t)
	ctx := context.Background()
	dst := make([]int64, 16)
	allocs := testing.AllocsPerRun(1000, func() {
		_, _ = a.Next(ctx)
		_, _ = a.NextN(ctx, dst)
	})
	if allocs != 0 {
		t.Fatalf("%v allocations per Next and NextN", allocs)
	}
}
