package segment_test

import (
	"context"
	"testing"

	"github.com/ringflake/ringflake/segment"
)

// BenchmarkPostgres takes numbers from every CPU at once from one
// allocator on the shared server, on the real clock: how fast calls go
// while ranges come and go, and how many statements it takes. Reported
// per run: calls/s, roundtrips/1M (statements per 1,000,000 numbers) and
// waits/1M (calls that found both buffers empty and waited for the
// database: 0 when the prefetch is always in time).
func BenchmarkPostgres(b *testing.B) {
	for _, bc := range []struct {
		name string
		opts []segment.Option
	}{
		{"step1000", []segment.Option{segment.WithMaxStep(1000)}}, // a range lasts less than a round trip
		{"step100000", []segment.Option{segment.WithStep(100_000), segment.WithMaxStep(1)}},
		{"step100000-prefetch0.99", []segment.Option{segment.WithStep(100_000), segment.WithMaxStep(1), segment.WithPrefetchAt(0.99)}},
		{"adaptive", nil}, // row step 1000, growing to 1,000,000 while ranges last less than 15 minutes
	} {
		b.Run(bc.name, func(b *testing.B) {
			db := sharedDB(b)
			a := newAllocator(b, db, newTag(b), bc.opts...)
			ctx := context.Background()
			before := a.Stats()
			b.ReportAllocs()
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					if _, err := a.Next(ctx); err != nil {
						b.Error(err)
						return
					}
				}
			})
			b.StopTimer()
			s := a.Stats()
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "calls/s")
			b.ReportMetric(float64(s.RoundTrips-before.RoundTrips)*1e6/float64(b.N), "roundtrips/1M")
			b.ReportMetric(float64(s.Waits-before.Waits)*1e6/float64(b.N), "waits/1M")
		})
	}
}
