package fleetsim

import (
	"context"
	"time"

	"github.com/ringflake/ringflake/internal/calltrace"
)

// waits is what a call waited for, as the generator tells it. It is the
// one place that knows how: today through the context (internal/
// calltrace), which the replay of package scenario uses too.
type waits struct{ c calltrace.Call }

// withWaits returns ctx carrying w, for every call made with it.
func withWaits(ctx context.Context, w *waits) context.Context { return calltrace.With(ctx, &w.c) }

func (w *waits) reset() { w.c = calltrace.Call{} }

// strategy returns how long the call slept for its strategy.
func (w *waits) strategy() time.Duration { return w.c.Strategy }
