package ringflake_test

import (
	"io"
	"log/slog"
	"testing"

	"github.com/ringflake/ringflake"
)

// BenchmarkNext measures one ID on the system clock with the uncapped
// layout of the peer comparison (bench/), sequentially and from
// GOMAXPROCS goroutines, with and without observers: a rollback hook and a
// slog logger cost nothing until a rollback happens. Compare the rows
// with benchstat:
//
//	go test -run '^$' -bench Next -count 6 . | tee next.txt && benchstat -col /observers next.txt
//
// The peer comparison itself lives in the nested module bench/.
func BenchmarkNext(b *testing.B) {
	wide, err := ringflake.ParseLayout("twitter,node=0,seq=22")
	if err != nil {
		b.Fatal(err)
	}
	for _, bc := range []struct {
		name string
		opts []ringflake.Option
	}{
		{"observers=none", nil},
		{"observers=hook+slog", []ringflake.Option{
			ringflake.WithRollbackHook(func(ringflake.RollbackEvent) {}),
			ringflake.WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil))),
		}},
	} {
		newGen := func(b *testing.B) *ringflake.Generator {
			g, err := ringflake.New(0, append([]ringflake.Option{ringflake.WithLayout(wide)}, bc.opts...)...)
			if err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			return g
		}
		b.Run("seq/"+bc.name, func(b *testing.B) {
			g := newGen(b)
			for b.Loop() {
				if _, err := g.Next(); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run("par/"+bc.name, func(b *testing.B) {
			g := newGen(b)
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					if _, err := g.Next(); err != nil {
						b.Error(err)
						return
					}
				}
			})
		})
	}
}

// BenchmarkObserve measures Observe on the system clock: of an ID behind
// the generator's floor (the common case: nothing moves), and a hop of a
// causal chain between two generators — Observe the other's newest ID,
// then Next — in a layout whose sequence sorts above the node, so that a
// hop within one tick takes the next sequence number, not the next tick.
func BenchmarkObserve(b *testing.B) {
	layout, err := ringflake.ParseLayout("twitter,node=1,seq=21,order=time,seq,node")
	if err != nil {
		b.Fatal(err)
	}
	newGen := func(b *testing.B, node int64) *ringflake.Generator {
		g, err := ringflake.New(node, ringflake.WithLayout(layout))
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { _ = g.Close(b.Context()) })
		return g
	}
	b.Run("behind", func(b *testing.B) {
		g := newGen(b, 0)
		old, err := g.Next()
		if err != nil {
			b.Fatal(err)
		}
		b.ReportAllocs()
		for b.Loop() {
			if err := g.Observe(old); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("hop", func(b *testing.B) {
		gs := [2]*ringflake.Generator{newGen(b, 0), newGen(b, 1)}
		var prev ringflake.ID
		i := 0
		b.ReportAllocs()
		for b.Loop() {
			g := gs[i&1]
			i++
			if err := g.Observe(prev); err != nil {
				b.Fatal(err)
			}
			id, err := g.Next()
			if err != nil {
				b.Fatal(err)
			}
			if id <= prev {
				b.Fatalf("hop %d: %d after %d", i, id, prev)
			}
			prev = id
		}
	})
}
