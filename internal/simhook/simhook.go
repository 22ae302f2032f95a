// Package simhook lets package fleetsim run a generator's background mark
// saves, and a call's waits for them, inside its deterministic event loop,
// where only one goroutine runs at a time and the loop must know of every
// goroutine that will ask it for something. A [MarkStore] with the method
// Sim() Runner — only a type of this module can name Runner — gets its
// saves started through Go and the waits for them announced through Wait;
// any other store gets a plain go statement and nothing announced.
//
// [MarkStore]: https://pkg.go.dev/github.com/ringflake/ringflake#MarkStore
package simhook

// A Runner runs a generator's background work under a simulation.
type Runner interface {
	// Go runs f on a goroutine of the simulation's choosing, when the
	// simulation lets it; it does not wait for f.
	Go(f func())
	// Wait is called before a call blocks until done is closed (or its
	// context ends); it returns when the call may look again.
	Wait(done <-chan struct{})
}

// Of returns the Runner of store, or nil when it has none.
func Of(store any) Runner {
	if s, ok := store.(interface{ Sim() Runner }); ok {
		return s.Sim()
	}
	return nil
}
