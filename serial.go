package ringflake

import "sync"

// serial is the state of serial mode: while calls collide on the ring
// (ring.contended), they take mu around the fast path. The two fields
// after mu belong to its holder.
//
// Every ID takes one compare-and-swap on the slot of its tick, so calls
// from goroutines on different CPUs move that slot's cache line between
// them on every ID, and a failed swap moves it again: on our 2-core VMs a
// contended atomic costs about 57 ns, more than a whole uncontended call.
// So once a swap fails, calls take a mutex around the fast path, the clock
// read included: its holder keeps the line while the others wait, as a
// mutex-based generator's do, and IDs come out at about the rate of one
// uncontended CPU instead of at the rate of cache-line transfers. The slow
// path — waits above all — runs outside the mutex. Serial mode ends at the
// first call that gets the mutex without waiting once no call has waited
// for it in the last two ticks, and at a call that waits for the next
// tick: while the layout's cap bounds the rate, serialising gains nothing
// and its hand-offs cost CPU. Uniqueness and order never depend on the
// mutex: every ID still comes from the ring's compare-and-swap.
type serial struct {
	mu         sync.Mutex
	collided   bool  // the holder had to wait for mu
	collidedAt int64 // the tick at which a holder last had to wait
}

// fastSerial is fast under the mutex of serial mode. The mutex is
// released by a deferred call, so that a panic in the clock or the lease,
// recovered by the caller, cannot leave it locked.
func (g *Generator) fastSerial() (id ID, ok bool, r reading) {
	g.lock()
	defer func() { g.unlock(r.now) }()
	return g.fast()
}

// fastRunSerial is fastRun under the mutex of serial mode.
func (g *Generator) fastRunSerial(want uint64) (rn run, r reading) {
	g.lock()
	defer func() { g.unlock(r.now) }()
	return g.fastRun(want)
}

// lock serialises the fast path while calls collide on the ring.
func (g *Generator) lock() {
	s := &g.serial
	if !s.mu.TryLock() {
		s.mu.Lock()
		s.collided = true
	}
}

// unlock releases the mutex taken by lock, for a call whose clock read tick
// now, and ends serial mode after a tick in which no call had to wait.
func (g *Generator) unlock(now int64) {
	s := &g.serial
	switch {
	case s.collided:
		s.collided, s.collidedAt = false, now
	case now < s.collidedAt:
		s.collidedAt = now // the clock stepped back: count the tick from here
	case now > s.collidedAt+1:
		g.ring.contended.Store(false)
	}
	s.mu.Unlock()
}
