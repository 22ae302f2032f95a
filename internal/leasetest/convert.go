package leasetest

import (
	"time"

	"github.com/ringflake/ringflake/internal/leasekeep"
)

// A driver converts between the suite's types and its module's, whose
// fields have the same names, types and order: the helpers below do it for
// any module, and fail to compile when a module's type drifts.

// Acquired returns what a module's Acquire returned, with a nil *Lease as
// a nil [Lease].
func Acquired[L Lease](l L, err error) (Lease, error) {
	if err != nil {
		return nil, err
	}
	return l, nil
}

// Listed converts what a module's List returned.
func Listed[H ~struct {
	Node   int64
	Holder string
	TTL    time.Duration
	Mark   time.Time
}](list []H, err error) ([]Holding, error) {
	out := make([]Holding, len(list))
	for i, h := range list {
		out[i] = Holding(h)
	}
	return out, err
}

// event is the shape of a module's Event, whose kind is K.
type event[K ~int] = struct {
	Kind       K
	Node       int64
	At         time.Time
	ValidUntil time.Time
	Err        error
}

// OnEvent returns a module's OnEvent that passes its events, converted,
// to f; nil when f is nil.
func OnEvent[E ~event[K], K ~int](f func(leasekeep.Event)) func(E) {
	if f == nil {
		return nil
	}
	return func(e E) {
		v := event[K](e)
		f(leasekeep.Event{Kind: leasekeep.EventKind(v.Kind), Node: v.Node, At: v.At, ValidUntil: v.ValidUntil, Err: v.Err})
	}
}
