package bench_test

import (
	"context"
	"strconv"
	"testing"

	"github.com/google/uuid"
	"github.com/rs/xid"

	"github.com/ringflake/ringflake"
	"github.com/ringflake/ringflake/bench"
)

// BenchmarkBatch compares Generator.NextN with batches of 1, 16 and 256 IDs
// against Next, on the uncapped wide layout, with xid and UUIDv7 beside
// them; every row's sec/op is per ID (a batch of k counts as k
// iterations). A batch takes a tick's sequence numbers with one atomic
// operation and reads the clock once, so per ID it costs a fraction of a
// Next. Sequential, and from GOMAXPROCS goroutines.
func BenchmarkBatch(b *testing.B) {
	for _, mode := range []string{"seq", "par"} {
		b.Run(mode+"/ringflake-next", func(b *testing.B) {
			g := must[*ringflake.Generator](b)(bench.NewRingflake("ring,wait:5ms,error", bench.WideLayout))
			defer g.Close(context.Background())
			runBatches(b, mode, 1, func() func(int) {
				return func(int) {
					if _, err := g.Next(); err != nil {
						b.Error(err)
					}
				}
			})
		})
		for _, k := range []int{1, 16, 256} {
			b.Run(mode+"/ringflake-nextn-"+strconv.Itoa(k), func(b *testing.B) {
				g := must[*ringflake.Generator](b)(bench.NewRingflake("ring,wait:5ms,error", bench.WideLayout))
				defer g.Close(context.Background())
				runBatches(b, mode, k, func() func(int) {
					ids := make([]ringflake.ID, k)
					return func(n int) {
						if _, err := g.NextN(context.Background(), ids[:n]); err != nil {
							b.Error(err)
						}
					}
				})
			})
		}
		b.Run(mode+"/xid", func(b *testing.B) {
			runBatches(b, mode, 1, func() func(int) { return func(int) { _ = xid.New() } })
		})
		b.Run(mode+"/uuidv7", func(b *testing.B) {
			runBatches(b, mode, 1, func() func(int) {
				return func(int) {
					if _, err := uuid.NewV7(); err != nil {
						b.Error(err)
					}
				}
			})
		})
	}
}

// runBatches issues b.N IDs in batches of k: each goroutine gets its own
// issue function from newIssue (its own buffer), which issues n <= k IDs
// per call. mode "seq" is one goroutine, "par" GOMAXPROCS of them, each
// issuing a batch once pb has handed it k iterations.
func runBatches(b *testing.B, mode string, k int, newIssue func() func(n int)) {
	b.ReportAllocs()
	if mode == "seq" {
		issue := newIssue()
		b.ResetTimer()
		for n := 0; n < b.N; n += k {
			issue(min(k, b.N-n))
		}
		return
	}
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		issue := newIssue()
		pending := 0
		for pb.Next() {
			if pending++; pending == k {
				issue(k)
				pending = 0
			}
		}
		if pending > 0 {
			issue(pending)
		}
	})
}
