package ringflake

import (
	"fmt"
	"time"

	"github.com/ringflake/ringflake/strategies"
)

// An Option configures a [Generator] in [New].
type Option interface {
	apply(*config)
}

type config struct {
	layout    Layout
	strategy  strategies.Strategy
	clock     Clock
	marks     MarkStore
	ahead     time.Duration
	aheadSet  bool // WithMarkAhead was given
	lease     Lease
	hooks     []func(RollbackEvent)
	seqOffset uint64 // WithSequenceOffset
	err       error

	existing    ID   // WithExistingID
	existingSet bool // WithExistingID was given

	maxForward    time.Duration // WithMaxForward
	maxForwardSet bool          // WithMaxForward was given

	nodes NodeSource // WithNodeSource
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
// with [strategies.ErrInvalidStrategy] for a nil strategy, an empty chain, a wait of
// zero or a lead shorter than one tick.
func WithStrategy(s strategies.Strategy) Option {
	return optionFunc(func(cfg *config) { cfg.strategy = s })
}

// WithLayout sets the ID layout; the default is [TwitterLayout]. The zero
// Layout makes [New] fail with [ErrInvalidLayout].
func WithLayout(l Layout) Option {
	return optionFunc(func(cfg *config) { cfg.layout = l })
}

// WithMarkStore makes the generator restart-safe: it persists a high-water
// mark in s, ahead of the IDs it issues (see [MarkStore] and
// [WithMarkAhead]), and on start treats everything up to the previous
// run's mark as issued. A nil s makes [New] fail with [ErrInvalidOption].
func WithMarkStore(s MarkStore) Option {
	return optionFunc(func(cfg *config) {
		if s == nil {
			invalidOption(cfg, "WithMarkStore(nil)")
			return
		}
		cfg.marks = s
	})
}

// WithMarkAhead sets how far ahead of the IDs it issues a generator saves
// its high-water mark; the default is [DefaultMarkAhead], or the lead a
// [Lease] that keeps the mark suggests (see [Lease]). The generator
// saves a new mark in the background once half of the interval is used, so
// it writes about twice per interval; a longer interval writes less often
// but makes a restarted generator wait (or borrow) longer. [New] fails with
// [ErrInvalidOption] for less than two ticks of the layout (the default
// is raised to two ticks instead), negative durations included.
func WithMarkAhead(d time.Duration) Option {
	return optionFunc(func(cfg *config) { cfg.ahead, cfg.aheadSet = d, true })
}

// WithNodeSource makes [New] take the node id from src, asked once for
// the generator's layout, instead of from its node argument, which must
// then be 0: New(0, WithNodeSource(EnvNode("NODE_ID"))) for a replicated
// service whose orchestrator numbers its replicas, or
// WithNodeSource(OrdinalNode("")) for a StatefulSet. New returns the
// source's error as it is (matching [ErrNodeUnavailable] or
// [ErrNodeOutOfRange] for the built-in sources), and fails with
// [ErrInvalidOption] for a nil src or a nonzero node argument beside it. A
// [Lease] is a node source of its own: give it with [WithLease] and its
// Node to New.
func WithNodeSource(src NodeSource) Option {
	return optionFunc(func(cfg *config) {
		if src == nil {
			invalidOption(cfg, "WithNodeSource(nil)")
			return
		}
		cfg.nodes = src
	})
}

// WithLease makes the generator issue under a leased node id: it checks
// l.Held on every call and fails with [ErrLeaseLost] while the lease does
// not hold the id. When l is also a [MarkStore], the generator keeps its
// high-water mark with the lease, so the next holder of the id starts
// after it. [New] fails with [ErrInvalidOption] for a nil l, one whose Node
// differs from the node given to New, a lease that is a MarkStore given
// together with [WithMarkStore], and a lease that bounds its fleet's lead
// (a MaxLead method, as the Redis, etcd and PostgreSQL leases have) with a
// strategy that may stamp IDs further ahead of the clock than that bound,
// or that states no promise (strategies.Promiser) to tell.
func WithLease(l Lease) Option {
	return optionFunc(func(cfg *config) {
		if l == nil {
			invalidOption(cfg, "WithLease(nil)")
			return
		}
		cfg.lease = l
	})
}

// useLease checks the lease of cfg for a generator of node and, when the
// lease keeps the node's mark, makes it the mark store.
func (cfg *config) useLease(node int64) error {
	if cfg.lease == nil {
		return nil
	}
	if cfg.lease.Node() != node {
		return fmt.Errorf("%w: WithLease: the lease holds node %d, not %d", ErrInvalidOption, cfg.lease.Node(), node)
	}
	if err := checkLead(cfg.lease, cfg.strategy); err != nil {
		return err
	}
	if err := cfg.checkForward(); err != nil {
		return err
	}
	store, ok := cfg.lease.(MarkStore)
	if !ok {
		return nil
	}
	if cfg.marks != nil {
		return fmt.Errorf("%w: WithMarkStore with a lease that keeps the mark itself: the next holder of node %d would not see this generator's mark", ErrInvalidOption, node)
	}
	cfg.marks = store
	if a, ok := store.(interface{ MarkAhead() time.Duration }); ok && !cfg.aheadSet {
		cfg.ahead = a.MarkAhead()
	}
	return nil
}

// WithSequenceOffset makes the first sequence number of each tick a number
// drawn uniformly from [0, n) instead of 0 — the same for every call of
// that tick, from a hash of the tick and a seed the generator draws once —
// so that IDs spread evenly over shards chosen by id % shards at any rate:
// at one ID per tick, every ID would otherwise end in sequence 0. Numbers
// below a tick's offset are never issued at that tick, so a tick offers
// n/2 fewer IDs on average (a saturated layout loses that share of its
// capacity); uniqueness does not depend on it, and neither does order. 0
// and 1 mean no offset; n above the layout's sequences per tick means all
// of them. [New] fails with [ErrInvalidOption] for a negative n.
//
// The offset spreads id % shards only where the sequence is the ID's low
// bits: [TimeNodeSequence] order, as in [TwitterLayout]. In
// [TimeSequenceNode] order ([SonyflakeLayout], [SonyflakeV2Layout]) the low
// bits are the node, so id % 16 is the same for every ID of a node: shard
// by [ID.Sequence] % shards, or by (id >> node bits) % shards, instead.
func WithSequenceOffset(n int) Option {
	return optionFunc(func(cfg *config) {
		if n < 0 {
			invalidOption(cfg, "WithSequenceOffset(%d): want 0 or more", n)
			return
		}
		cfg.seqOffset = uint64(n)
	})
}

// WithExistingID makes the IDs a generator issues sort strictly above id,
// the greatest ID already in use — typically MAX(id) read from the table
// the IDs go to, when switching to a new layout, epoch or node id. The
// generator's first tick is the clock's (or the one after a loaded
// high-water mark). When id's tick, read with the generator's layout, is
// before it, every ID is above id already; when it is that tick, New
// skips the IDs of the tick at or below id (an id equal to the first ID
// the generator would issue is fine: the first ID is the next one); when
// it is later, the generator's IDs would sort below id, and [New] fails
// with an [*ExistingIDError] matching [ErrBelowExisting]. A negative id
// makes New fail with [ErrInvalidOption].
//
// The check is made once, in New. Later IDs are above id, except that a
// rollback soon after the start can take a ring strategy to ticks before
// the first one (see package strategies); a strategy without the ring
// never goes there.
// [github.com/ringflake/ringflake/layoutplan.CheckMigration] checks a
// switch between two layouts without a generator.
func WithExistingID(id ID) Option {
	return optionFunc(func(cfg *config) {
		if id < 0 {
			invalidOption(cfg, "WithExistingID(%d): IDs are never negative", id)
			return
		}
		cfg.existing, cfg.existingSet = id, true
	})
}

// defaultMaxForward is how far ahead of its clock an ID may be for
// [Generator.Observe] to follow it, unless [WithMaxForward] says otherwise
// (or a lease's MaxLead is shorter).
const defaultMaxForward = time.Second

// WithMaxForward sets how far ahead of the generator's clock an ID given
// to [Generator.Observe] may be stamped: an ID further ahead is refused
// with [ErrObservedTooFar] and changes nothing, so that one ID from a
// host whose clock is far ahead (or a forged one) cannot drag this
// generator's IDs into the future. It is also the most the generator's
// IDs lead its clock because of what it observed. The default is 1 s, or
// a lease's MaxLead when that is shorter. Zero makes Observe follow only
// IDs that are not ahead of the clock. [New] fails with
// [ErrInvalidOption] for a negative d, and for a d above the MaxLead of
// a lease that bounds its fleet's lead (see [WithLease]): a restarted
// holder of the node id starts only that far above the clock of a holder
// whose lease a forgetful server lost, as for the logical strategy.
func WithMaxForward(d time.Duration) Option {
	return optionFunc(func(cfg *config) {
		if d < 0 {
			invalidOption(cfg, "WithMaxForward(%v): want zero or more", d)
			return
		}
		cfg.maxForward, cfg.maxForwardSet = d, true
	})
}

// checkForward checks WithMaxForward against the lease's bound on the
// lead, and lowers the default to it.
func (cfg *config) checkForward() error {
	bound, ok := cfg.lease.(interface{ MaxLead() time.Duration })
	if !ok {
		return nil
	}
	maxLead := bound.MaxLead()
	if cfg.maxForwardSet && cfg.maxForward > maxLead {
		return fmt.Errorf("%w: WithMaxForward(%v) is more than the lease's MaxLead %v: observed IDs could lead the clock further than the lease allows; use at most %v",
			ErrInvalidOption, cfg.maxForward, maxLead, maxLead)
	}
	cfg.maxForward = min(cfg.maxForward, maxLead)
	return nil
}
