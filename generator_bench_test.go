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
