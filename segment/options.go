package segment

import (
	"fmt"
	"math"
	"time"

	"github.com/benbjohnson/clock"
)

// An Option configures an [Allocator] in [New].
type Option interface {
	apply(*config)
}

// Defaults of the options. The step, its maximum, the target duration and
// the prefetch fraction are Leaf's.
const (
	DefaultStep           = 1000             // step of a new row
	DefaultMaxStep        = 1_000_000        // largest adaptive step
	DefaultTargetDuration = 15 * time.Minute // how long a range should last
	DefaultPrefetchAt     = 0.1              // fraction of a range used before the next is loaded
	DefaultStart          = 1                // first number of a new row
	DefaultMinBackoff     = 10 * time.Millisecond
	DefaultMaxBackoff     = time.Second
)

// maxStepLimit bounds every step so that doubling one never overflows.
const maxStepLimit = math.MaxInt64 / 4

// A Clock is what an allocator reads time from: the adaptive step and
// the retry backoff use it. The clocks of github.com/benbjohnson/clock
// (clock.New(), *clock.Mock) and ringflake's *simclock.Clock satisfy it.
type Clock interface {
	Now() time.Time
	After(d time.Duration) <-chan time.Time
}

type config struct {
	clock          Clock
	step           int64
	maxStep        int64
	targetDuration time.Duration
	prefetchAt     float64
	start          int64
	minBackoff     time.Duration
	maxBackoff     time.Duration
	err            error
}

func defaultConfig() config {
	return config{
		clock:          clock.New(),
		step:           DefaultStep,
		maxStep:        DefaultMaxStep,
		targetDuration: DefaultTargetDuration,
		prefetchAt:     DefaultPrefetchAt,
		start:          DefaultStart,
		minBackoff:     DefaultMinBackoff,
		maxBackoff:     DefaultMaxBackoff,
	}
}

type optionFunc func(*config)

func (f optionFunc) apply(c *config) { f(c) }

func invalid(c *config, format string, args ...any) {
	if c.err == nil {
		c.err = fmt.Errorf("%w: "+format, append([]any{ErrInvalidOption}, args...)...)
	}
}

// WithClock makes the allocator read time from c instead of the system
// clock, for example a *clock.Mock or a *simclock.Clock in tests. A nil c
// is [ErrInvalidOption].
func WithClock(c Clock) Option {
	return optionFunc(func(cfg *config) {
		if c == nil {
			invalid(cfg, "WithClock(nil)")
			return
		}
		cfg.clock = c
	})
}

// WithStep sets the step of the tag's row when [New] creates it
// (default [DefaultStep], 1000); it is ignored when the row exists. The
// row's step is the smallest range an allocator takes. n must be between
// 1 and 2^61-1.
func WithStep(n int64) Option {
	return stepOption("WithStep", n, func(c *config) { c.step = n })
}

// WithMaxStep bounds the adaptive step (default [DefaultMaxStep],
// 1,000,000, as Leaf's): a range that lasts less than the target
// duration makes the next one twice as large, up to n. A row whose step
// is n or more is never grown, so WithMaxStep(1) turns adaptation off
// whatever the row's step. n must be between 1 and 2^61-1.
func WithMaxStep(n int64) Option {
	return stepOption("WithMaxStep", n, func(c *config) { c.maxStep = n })
}

// stepOption is the option name(n), which set applies to a valid n.
func stepOption(name string, n int64, set func(*config)) Option {
	return optionFunc(func(cfg *config) {
		if n < 1 || n > maxStepLimit {
			invalid(cfg, "%s(%d): the step must be between 1 and %d", name, n, int64(maxStepLimit))
			return
		}
		set(cfg)
	})
}

// WithTargetDuration sets how long a range should last (default
// [DefaultTargetDuration], 15 minutes, as Leaf's): when the time between
// two loads is shorter, the next step doubles (up to the maximum); when
// it is twice as long or more, the next step halves (down to the row's
// step). d must be positive.
func WithTargetDuration(d time.Duration) Option {
	return optionFunc(func(cfg *config) {
		if d <= 0 {
			invalid(cfg, "WithTargetDuration(%v): the duration must be positive", d)
			return
		}
		cfg.targetDuration = d
	})
}

// WithPrefetchAt sets the fraction of a range used before the next range
// is loaded in the background (default [DefaultPrefetchAt], 0.1, as
// Leaf's): the call that takes the number at offset ⌊f·size⌋ of a range
// starts the load. 0 loads the next range as soon as a range comes into
// use. f must be at least 0 and less than 1.
func WithPrefetchAt(f float64) Option {
	return optionFunc(func(cfg *config) {
		if !(f >= 0 && f < 1) { // also refuses NaN
			invalid(cfg, "WithPrefetchAt(%v): the fraction must be at least 0 and less than 1", f)
			return
		}
		cfg.prefetchAt = f
	})
}

// WithStart sets the first number of the tag when [New] creates its row
// (default [DefaultStart], 1); it is ignored when the row exists. To move
// a table off auto-increment, start above its largest id. n must be at
// least 0.
func WithStart(n int64) Option {
	return optionFunc(func(cfg *config) {
		if n < 0 {
			invalid(cfg, "WithStart(%d): the first number must be at least 0", n)
			return
		}
		cfg.start = n
	})
}

// WithBackoff sets how long the allocator waits before it tries again to
// take a range after a failure: min after the first failure, doubling up
// to max (defaults [DefaultMinBackoff] and [DefaultMaxBackoff], 10 ms and
// 1 s). Once the database answers again, the allocator recovers within
// max. Both must be positive and min at most max.
func WithBackoff(min, max time.Duration) Option {
	return optionFunc(func(cfg *config) {
		if min <= 0 || max < min {
			invalid(cfg, "WithBackoff(%v, %v): both must be positive and min at most max", min, max)
			return
		}
		cfg.minBackoff, cfg.maxBackoff = min, max
	})
}
