package ringflake

import (
	"fmt"

	"github.com/ringflake/ringflake/strategies"
)

// An Option configures a [Generator] in [New].
type Option interface {
	apply(*config)
}

type config struct {
	layout   Layout
	strategy strategies.Strategy
	clock    Clock
	err      error
}

type optionFunc func(*config)

func (f optionFunc) apply(c *config) { f(c) }

func invalidOption(c *config, format string, args ...any) {
	if c.err == nil {
		c.err = fmt.Errorf("%w: "+format, append([]any{ErrInvalidOption}, args...)...)
	}
}

// WithClock makes the generator read time from c instead of the system
// clock: any github.com/benbjohnson/clock clock (clock.New() or a
// *clock.Mock), a *simclock.Clock, or your own [Clock]. A nil c makes [New]
// fail with [ErrInvalidOption].
func WithClock(c Clock) Option {
	return optionFunc(func(cfg *config) {
		if c == nil {
			invalidOption(cfg, "WithClock(nil)")
			return
		}
		cfg.clock = c
	})
}

// WithStrategy sets what the generator does when its clock steps back or a
// tick's sequence is used up; the default is [strategies.Default]
// ("ring,wait:5ms,error"). [New] validates s against the layout and fails
// with [ErrInvalidStrategy] for a nil strategy, an empty chain, a wait of
// zero or a lead shorter than one tick.
func WithStrategy(s strategies.Strategy) Option {
	return optionFunc(func(cfg *config) { cfg.strategy = s })
}

// WithLayout sets the ID layout; the default is [TwitterLayout]. The zero
// Layout makes [New] fail with [ErrInvalidLayout].
func WithLayout(l Layout) Option {
	return optionFunc(func(cfg *config) { cfg.layout = l })
}
