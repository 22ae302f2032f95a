package ringflake

import "time"

// checkExisting refuses a generator whose first ID could be at or below
// cfg's existing ID (WithExistingID). The first ID is at the clock's tick,
// or after the newest tick a loaded high-water mark counts as issued, with
// sequence 0: nothing the generator issues first is smaller.
func (g *Generator) checkExisting(cfg *config, now time.Time) error {
	if !cfg.existingSet {
		return nil
	}
	l := g.layout
	tick := max(l.Tick(now), g.newest.Load()+1, 0)
	if g.mark != nil {
		tick = max(tick, g.mark.reserved+1) // a previous run's reservation comes first
	}
	first := l.compose(tick, g.node, 0)
	if first > cfg.existing {
		return nil
	}
	return &ExistingIDError{Existing: cfg.existing, First: first, At: l.TickTime(tick)}
}
