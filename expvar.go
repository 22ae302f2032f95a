package ringflake

import (
	"expvar"
	"fmt"
	"sync"
)

// publishMu makes checking a name and publishing it one step.
var publishMu sync.Mutex

// PublishExpvar publishes g's [Stats] as the expvar variable name, a JSON
// object computed each time it is read (for example when /debug/vars is
// served). expvar names are process-wide and cannot be withdrawn, so
// publish each generator once; a name already in use is an error matching
// [ErrInvalidOption] rather than expvar's panic.
func PublishExpvar(name string, g *Generator) error {
	if g == nil {
		return fmt.Errorf("%w: PublishExpvar(%q, nil)", ErrInvalidOption, name)
	}
	publishMu.Lock()
	defer publishMu.Unlock()
	if name == "" || expvar.Get(name) != nil {
		return fmt.Errorf("%w: expvar name %q is empty or already published", ErrInvalidOption, name)
	}
	expvar.Publish(name, expvar.Func(func() any { return g.Stats() }))
	return nil
}
