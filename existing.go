package ringflake

import "time"

// checkExisting makes every ID the generator issues sort above cfg's
// existing ID (WithExistingID), or refuses it. The generator's first tick
// is the clock's, or the one after a loaded high-water mark's reservation:
// nothing it issues first is earlier. When the existing ID's tick (read
// with this layout's bits) is before that tick, every ID is above it
// already; when it is that tick, the IDs of the tick at or below it are
// taken out of the ring, as [Generator.Observe] takes them, so that the
// first ID is above it (a tick whose IDs all sort at or below it is
// skipped whole); when it is later, the generator's IDs would sort below
// it until its clock got there: New fails with an [*ExistingIDError].
func (g *Generator) checkExisting(cfg *config, now time.Time) error {
	if !cfg.existingSet {
		return nil
	}
	l := g.layout
	tick := max(l.Tick(now), g.newest.Load()+1, 0)
	if g.mark != nil {
		tick = max(tick, g.mark.reserved+1) // a previous run's reservation comes first
	}
	existing := cfg.existing
	switch t := int64(existing) >> l.timeShift; { // beyond MaxTick when existing does not fit the layout
	case t < tick:
		return nil
	case t == tick:
		g.burnBelow(existing, tick)
		return nil
	}
	return &ExistingIDError{Existing: existing, First: l.compose(tick, g.node, 0), At: l.TickTime(tick)}
}
