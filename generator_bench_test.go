package ringflake_test

import (
	"io"
	"log/slog"
	"testing"

	"github.com/ringflake/ringflake"
)

// BenchmarkNext measures one ID on the system clock with the uncapped
// layout of the peer comparison (bench/), with and without observers: a
// rollback hook and a slog logger cost nothing until a rollback happens.
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
		{"plain", nil},
		{"observed", []ringflake.Option{
			ringflake.WithRollbackHook(func(ringflake.RollbackEvent) {}),
			ringflake.WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil))),
		}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			g, err := ringflake.New(0, append([]ringflake.Option{ringflake.WithLayout(wide)}, bc.opts...)...)
			if err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			for b.Loop() {
				if _, err := g.Next(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
