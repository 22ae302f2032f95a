package ringflake

import (
	"context"
	"time"

	"github.com/ringflake/ringflake/strategies"
)

// Observe makes the IDs of every call of [Generator.Next],
// [Generator.NextContext] and [Generator.NextN] that starts after it
// returns nil greater than id, an ID of the same layout issued by any
// node (a call already under way may still return a smaller ID): a
// hybrid logical clock on top
// of the ring. Call it with the newest ID a request, message or reply
// carried before issuing the IDs it causes, and those IDs sort after
// their cause even when this host's clock is behind the one that issued
// id, or when both fall in one tick and the node bits would decide.
//
// It moves the generator's floor to id — to id itself, not only its
// tick: at id's tick the generator issues only sequence numbers whose
// IDs are greater than id in the layout's field order, or none when its
// node bits sort below id's (time,node,seq order) — and never moves it
// back. When id is above the newest ID issued and the clock reads behind
// its tick, calls issue at that tick, and at the next one once its
// sequence is used up, borrowing those ticks ahead of the clock; a
// borrowed tick is covered by the saved high-water mark before any ID is
// issued there (calls wait for the save), so a crash and restart never
// repeats one. With both used up, calls wait for the clock, as they do at
// capacity without Observe: the lead never grows past the observed ID.
// Observe itself issues nothing, saves nothing and never waits. An id at
// or below the newest ID issued only keeps later IDs above it (the ring
// strategy never reuses below it); it starts no lead.
//
// How it composes with the strategies: the lead Observe causes is not a
// rollback, so no strategy is asked about it. The ring strategy (and a
// chain's ring step) never reuses a tick below the floor. A rollback while
// the generator leads is absorbed while the observed tick and the next
// have room and the newest tick stays within WithMaxForward of the clock
// (it is still counted in [Stats].Rollbacks); beyond that the strategy
// decides as for any rollback, and still never goes below the floor. The
// lead shows in [Stats].Borrowed and MaxLead, and the observations in the
// Observe* fields.
//
// Errors:
//   - [ErrObservedTooFar] (a [*strategies.AheadError] telling how far
//     ahead): id is stamped further ahead of the generator's clock than
//     WithMaxForward. The generator is left exactly as it was.
//   - [ErrInvalidID]: id is negative or does not fit the layout.
//   - [ErrClosed]: after [Generator.Close].
//
// Observe is safe for concurrent use with every other method, and costs
// a clock read and a few atomic operations; it allocates nothing unless
// it fails.
func (g *Generator) Observe(id ID) error {
	if g.unmade() {
		return errUnmade
	}
	c := &g.stats
	c.observed.Add(1)
	if g.closed.Load() {
		c.observeRefused.Add(1)
		return ErrClosed
	}
	l := g.layout
	if id < 0 || int64(id)>>l.width != 0 {
		c.observeRefused.Add(1)
		_, err := l.Decompose(id)
		return err
	}
	t := id.tick(l)
	if t < g.floor.Load() {
		return nil // no call issues below the floor any more: nothing to do
	}
	e, now := g.src.readTick()
	if t-now > g.forward {
		c.observeRefused.Add(1)
		return &strategies.AheadError{Ahead: time.Duration(t)*l.unit - time.Duration(e), Max: time.Duration(g.forward) * l.unit}
	}
	// In this order: the pairs at t that would sort at or below id are
	// taken out of the ring first, then the lead, the newest tick and the
	// floor move, so that a call that sees any of them finds t's slot
	// ready, a call that finds the newest tick at t knows it leads there,
	// and an Observe that finds the floor at or above t (and returns at
	// once) finds the newest tick there too. Only an ID above the newest one issued makes the generator
	// lead — one at a later tick, or at the newest tick above the pairs
	// issued there (burned) — so that one at or below it leaves nothing
	// a later step back could borrow across.
	newest := g.newest.Load()
	burned := g.burnBelow(id, t)
	if t > newest || t == newest && burned {
		storeMax(&g.observedLead, t)
	}
	_, raised := g.raiseFrom(t)
	prevFloor := g.floor.Load()
	storeMax(&g.floor, t)
	if burned || raised || t > prevFloor {
		c.observeMoved.Add(1)
		storeMax(&c.observeJump, t-now)
	}
	return nil
}

// burnBelow takes out of the ring every pair of tick t whose ID would sort
// at or below id, so that no call issues one; it reports whether it took
// any. The pairs are not issued (Stats.Issued leaves them out).
func (g *Generator) burnBelow(id ID, t int64) bool {
	r := &g.ring
	// The first sequence number whose ID at t is greater than id: the
	// sequence's bits and the node's do not overlap, so the ID of
	// sequence s is base + s<<seqShift, which grows with s in either
	// field order.
	base := g.id(uint64(t+1) << r.seqBits) // (t, 0)
	lo := uint64(0)
	if base <= id {
		lo = min(uint64(id-base)>>(g.seqShift&63)+1, r.maxSeq+1)
	}
	if lo == 0 {
		return false // every ID of t is above id
	}
	packed := uint64(t+1) << r.seqBits
	target := packed + lo - 1 // the greatest pair at or below id
	if target < r.first(t, packed) {
		return false // t's first pair is above it already
	}
	n, ok := r.burn(t, target)
	if ok {
		r.burned.Add(n)
	}
	return ok
}

// leads reports whether a call leads because of an observed ID (see
// lead): its clock reads behind the newest tick, and the newest tick is
// no further than one tick past the greatest observed ID that was above
// the newest tick when it was observed.
func (g *Generator) leads(c *call) (lead int64, ok bool) {
	lead = g.observedLead.Load()
	return lead, lead >= 0 && c.newest <= lead+1 && c.now < max(lead, c.newest)
}

// lead issues for a call whose clock reads behind the tick of an observed
// ID (lead, see leads): at the newest tick and on from there, up to the
// tick after lead — the observed tick, and the next where its sequence is
// used up — and the clock plus WithMaxForward, through issue (so under the
// saved mark). It reports whether it took care of the call (ok false: the
// clock stepped back, and the strategy decides, never below the floor). With no room left it
// waits for the clock's next tick, as a call at capacity does without an
// observed ID: the lead never grows past the observed ID's next tick, so
// it never reaches the bound and looks like a rollback.
func (g *Generator) lead(ctx context.Context, c *call, lead int64) (out run, ok bool, err error) {
	from := max(g.floor.Load(), c.newest)
	limit := min(lead+1, addSat(c.now, g.forward), g.last)
	if from <= limit {
		out, err = g.issue(ctx, c, from, limit)
		if err != nil || out.n > 0 {
			return out, true, err
		}
	}
	// No room (or the call's readings are older than an observation):
	// a step back goes to the strategy; otherwise the call waits for the
	// clock (await reads it again first when its reading is an estimate).
	if g.src.steppedBack() {
		return run{}, false, nil
	}
	s := g.situation(c)
	return run{}, true, g.await(ctx, c, s, pause{d: max(s.Until(c.now+1), 1), tick: -1, cause: waitCapacity})
}
