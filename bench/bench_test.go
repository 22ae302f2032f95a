package bench_test

import (
	"context"
	"testing"
	"time"

	"github.com/bwmarrin/snowflake"
	"github.com/google/uuid"
	"github.com/oklog/ulid/v2"
	"github.com/rs/xid"
	"github.com/sony/sonyflake/v2"

	"github.com/ringflake/ringflake"
	"github.com/ringflake/ringflake/bench"
)

// Every benchmark issues one ID per iteration, sequentially (b.Loop) and
// from GOMAXPROCS goroutines (b.RunParallel; BenchmarkOversubscribed: four
// per CPU), and reports allocations.
// Names read Benchmark{Seq,Par,Oversubscribed}/<subject>, with no further
// slash, so that -bench patterns match whole subjects; see BENCHMARKS.md
// for what each subject is. Each subject calls its generator directly, not through a
// func value, so that no row pays an indirect call the others do not.
//
// Capped subjects (12-bit ringflake strategies but logical, bwmarrin,
// sonyflake) measure their layout's cap in a tight loop: 244 ns/ID for
// 4,096,000 IDs/s, 39 µs/ID for Sonyflake's 25,600 IDs/s.

func BenchmarkSeq(b *testing.B) {
	for _, s := range bench.Strategies {
		b.Run("ringflake-"+s.Name, func(b *testing.B) { seqRingflake(b, s.Config, "twitter") })
	}
	b.Run("ringflake-wide", func(b *testing.B) { seqRingflake(b, "ring,wait:5ms,error", bench.WideLayout) })
	b.Run("ringflake-rollback-normal", func(b *testing.B) { seqRollback(b, false) })
	b.Run("ringflake-rollback-ring", func(b *testing.B) { seqRollback(b, true) })
	b.Run("bwmarrin", func(b *testing.B) {
		n := must[*snowflake.Node](b)(bench.NewBwmarrin())
		seqBwmarrin(b, n)
	})
	b.Run("bwmarrin-wide", func(b *testing.B) {
		n := must[*snowflake.Node](b)(bench.NewBwmarrinWide())
		seqBwmarrin(b, n)
	})
	b.Run("sonyflake", func(b *testing.B) { seqSonyflake(b, newSonyflake(b, false)) })
	b.Run("sonyflake-wide", func(b *testing.B) { seqSonyflake(b, newSonyflake(b, true)) })
	b.Run("xid", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			_ = xid.New()
		}
	})
	b.Run("uuidv7", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := uuid.NewV7(); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("ulid", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			_ = ulid.Make()
		}
	})
	for _, p := range stdlibPeers {
		b.Run(p.name, p.seq)
	}
	// One read of the monotonic clock, as the system clock's Next makes:
	// the floor of an ID's cost.
	b.Run("time-since", func(b *testing.B) {
		start := time.Now()
		b.ReportAllocs()
		for b.Loop() {
			_ = time.Since(start)
		}
	})
}

func BenchmarkPar(b *testing.B) {
	for _, s := range bench.Strategies {
		b.Run("ringflake-"+s.Name, func(b *testing.B) { parRingflake(b, s.Config, "twitter") })
	}
	b.Run("ringflake-wide", func(b *testing.B) { parRingflake(b, "ring,wait:5ms,error", bench.WideLayout) })
	b.Run("ringflake-rollback-normal", func(b *testing.B) { parRollback(b, false) })
	b.Run("ringflake-rollback-ring", func(b *testing.B) { parRollback(b, true) })
	b.Run("bwmarrin", func(b *testing.B) { parBwmarrin(b, must[*snowflake.Node](b)(bench.NewBwmarrin())) })
	b.Run("bwmarrin-wide", func(b *testing.B) { parBwmarrin(b, must[*snowflake.Node](b)(bench.NewBwmarrinWide())) })
	b.Run("sonyflake", func(b *testing.B) { parSonyflake(b, newSonyflake(b, false)) })
	b.Run("sonyflake-wide", func(b *testing.B) { parSonyflake(b, newSonyflake(b, true)) })
	b.Run("xid", func(b *testing.B) {
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				_ = xid.New()
			}
		})
	})
	b.Run("uuidv7", func(b *testing.B) {
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				if _, err := uuid.NewV7(); err != nil {
					b.Error(err)
					return
				}
			}
		})
	})
	b.Run("ulid", func(b *testing.B) {
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				_ = ulid.Make()
			}
		})
	})
	for _, p := range stdlibPeers {
		b.Run(p.name, p.par)
	}
}

// stdlibPeer is a peer from the standard library, which only newer Go
// releases have: its sequential and parallel benchmarks, which BenchmarkSeq
// and BenchmarkPar run as <name> beside the other peers. stdlibPeers lists
// them (stdlib_go127_test.go: uuid.NewV7 from Go 1.27 on).
type stdlibPeer struct {
	name     string
	seq, par func(b *testing.B)
}

// BenchmarkOversubscribed runs the uncapped subjects from four goroutines
// per CPU (b.SetParallelism(4)): more callers than CPUs, as in a service
// whose every handler asks for IDs, where waiting for a mutex means being
// parked and woken.
func BenchmarkOversubscribed(b *testing.B) {
	b.Run("ringflake-wide", func(b *testing.B) {
		b.SetParallelism(4)
		parRingflake(b, "ring,wait:5ms,error", bench.WideLayout)
	})
	b.Run("ringflake-logical", func(b *testing.B) {
		b.SetParallelism(4)
		parRingflake(b, bench.LogicalStrategy, "twitter")
	})
	b.Run("bwmarrin-wide", func(b *testing.B) {
		b.SetParallelism(4)
		parBwmarrin(b, must[*snowflake.Node](b)(bench.NewBwmarrinWide()))
	})
}

func must[T any](b *testing.B) func(T, error) T {
	return func(v T, err error) T {
		b.Helper()
		if err != nil {
			b.Fatal(err)
		}
		return v
	}
}

func seqRingflake(b *testing.B, strategy, layout string) {
	g := must[*ringflake.Generator](b)(bench.NewRingflake(strategy, layout))
	b.Cleanup(func() { _ = g.Close(context.Background()) }) // frees node 1 for the next benchmark
	b.ReportAllocs()
	for b.Loop() {
		if _, err := g.Next(); err != nil {
			b.Fatal(err)
		}
	}
}

func parRingflake(b *testing.B, strategy, layout string) {
	g := must[*ringflake.Generator](b)(bench.NewRingflake(strategy, layout))
	b.Cleanup(func() { _ = g.Close(context.Background()) }) // frees node 1 for the next benchmark
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, err := g.Next(); err != nil {
				b.Error(err)
				return
			}
		}
	})
}

// seqRollback measures the ring path during an ongoing rollback (step) or
// the same generator and clock on the normal path, and reports the share
// of IDs the ring path issued, from the generator's own counter
// (ring-reuses/op: 1 during the rollback, which is checked; near 0
// otherwise — in parallel, a call whose clock reading is a tick behind
// another's takes the ring path too).
func seqRollback(b *testing.B, step bool) {
	r := must[*bench.Rollback](b)(bench.NewRollback(step))
	before := r.RingReuses()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := r.Gen.Next(); err != nil {
			b.Fatal(err)
		}
	}
	checkReuses(b, step, r.RingReuses()-before)
}

func parRollback(b *testing.B, step bool) {
	r := must[*bench.Rollback](b)(bench.NewRollback(step))
	before := r.RingReuses()
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, err := r.Gen.Next(); err != nil {
				b.Error(err)
				return
			}
		}
	})
	b.StopTimer()
	checkReuses(b, step, r.RingReuses()-before)
}

func checkReuses(b *testing.B, step bool, reuses uint64) {
	b.Helper()
	b.ReportMetric(float64(reuses)/float64(b.N), "ring-reuses/op")
	if step && reuses != uint64(b.N) {
		b.Fatalf("only %d of %d IDs came from the ring path", reuses, b.N)
	}
}

func seqBwmarrin(b *testing.B, n *snowflake.Node) {
	b.ReportAllocs()
	for b.Loop() {
		_ = n.Generate()
	}
}

func parBwmarrin(b *testing.B, n *snowflake.Node) {
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			_ = n.Generate()
		}
	})
}

// newSonyflake returns a Sonyflake v2 with its defaults (10 ms units, 8
// bits of sequence, 16 of machine: 25,600 IDs/s), or wide: 1 ms units,
// 22 bits of sequence and 1 of machine (40 bits of time since 2025-01-01),
// uncapped like the other wide subjects.
func newSonyflake(b *testing.B, wide bool) *sonyflake.Sonyflake {
	st := sonyflake.Settings{MachineID: func() (int, error) { return 1, nil }}
	if wide {
		st.BitsSequence, st.BitsMachineID, st.TimeUnit = 22, 1, time.Millisecond
	}
	return must[*sonyflake.Sonyflake](b)(sonyflake.New(st))
}

func seqSonyflake(b *testing.B, sf *sonyflake.Sonyflake) {
	b.ReportAllocs()
	for b.Loop() {
		if _, err := sf.NextID(); err != nil {
			b.Fatal(err)
		}
	}
}

func parSonyflake(b *testing.B, sf *sonyflake.Sonyflake) {
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, err := sf.NextID(); err != nil {
				b.Error(err)
				return
			}
		}
	})
}
