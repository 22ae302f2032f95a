package lease

import (
	"fmt"
	"os"
	"time"

	"github.com/benbjohnson/clock"

	"github.com/ringflake/ringflake"
	"github.com/ringflake/ringflake/strategies"
)

// Defaults of [Options].
const (
	DefaultPrefix = "ringflake"
	DefaultTTL    = 10 * time.Second
	// DefaultMaxLead is the lead of strategies.Logical without a limit;
	// no other built-in strategy runs ahead of the clock.
	DefaultMaxLead = strategies.DefaultLead
)

// Options configure a lease of a lease module — redislease.Acquire and
// Claim, etcdlease.Acquire and Claim, and their List. The zero value of
// every field means its documented default. Leases that share a Prefix
// must share a Layout's node range, should share a TTL, and must all have
// a MaxLead at least as large as the lead of any generator of the prefix.
//
// The modules name Options as their own (redislease.Options is an alias of
// this type).
type Options struct {
	// Prefix names the set of node ids the leases share; every key a
	// module writes starts with it (the modules list theirs). Default
	// [DefaultPrefix].
	Prefix string

	// Layout gives the range of ids: [0, Layout.MaxNode()]. Default
	// ringflake.TwitterLayout(), like ringflake.New.
	Layout ringflake.Layout

	// TTL is how long the id stays held on the server without a renewal:
	// the time a crashed holder's id stays unusable, and the longest a
	// holder cut off from the server keeps issuing. Redis takes whole
	// milliseconds; etcd whole seconds, and may grant more (its minimum
	// is 1.5 election timeouts, 2 s with etcd's defaults), which the lease
	// then uses. Default [DefaultTTL].
	TTL time.Duration

	// RenewEvery is the renewal interval. Default TTL/3, so that two
	// renewals in a row may fail before the lease may have expired.
	RenewEvery time.Duration

	// Margin is subtracted from every TTL when the lease computes how long
	// it certainly holds the id, for the holder's clock running slower than
	// the server's. Default TTL/100 + 2ms (the allowance Redlock uses).
	Margin time.Duration

	// MaxLead is the longest any generator of the prefix may stamp an ID
	// ahead of its clock (a strategies.Logical lead): the fleet's, not
	// this holder's alone. After the server lost data, and on a prefix's
	// first start, a lease that takes an id waits out a quiet period of
	// TTL + Margin + MaxLead, so that a holder the server forgot has
	// stopped, and the clock has passed every ID it may have issued
	// ahead, before the new holder issues. ringflake.New refuses a
	// generator on the lease whose strategy may lead by more, or states
	// no lead (strategies.PromiseOf). Every lease of a prefix must use the
	// same MaxLead or more: the quiet period is the MaxLead of the lease
	// that finds the loss. Default [DefaultMaxLead].
	MaxLead time.Duration

	// MaxSkew is how far this host's clock may be from the lease
	// server's, for a module whose server has a clock to read (Redis's
	// TIME; etcd has none). The lease measures the offset ([Offset]) when
	// it acquires or claims an id and at every renewal. An acquire or
	// claim whose measurement puts the clock certainly further —
	// |offset| − uncertainty > MaxSkew — fails with a [*SkewError]
	// (matching [ErrClockSkew]) before it takes an id. A holder whose
	// renewal finds it further reports a [ClockSkewed] event and keeps
	// its lease: its IDs stay unique (the node id and the fenced mark do
	// that), only their order against other hosts' IDs suffers, while
	// stopping every holder would turn a step of the server's own clock
	// into an outage of the whole fleet. Stop on the event yourself
	// (close the lease) if order matters more to you than availability.
	// Default [DefaultMaxSkew] (1 s); any negative value turns the
	// measurement off. With a module whose server has no clock, a
	// positive MaxSkew is an error, and the zero value turns it off.
	MaxSkew time.Duration

	// Timeout bounds every request the lease makes: each request of
	// Acquire, Claim and List, renewals, marks loaded and saved for a
	// generator, the release of Close. The lease enforces it itself, also
	// with a client that ignores context deadlines (go-redis without
	// ContextTimeoutEnabled). Default RenewEvery.
	Timeout time.Duration

	// Holder describes the holder for List, and for the error of a Claim
	// of an id someone else holds. Default "HOSTNAME/PID".
	Holder string

	// Clock times renewals and expiry. Default clock.New(), the system
	// clock; tests pass a *clock.Mock.
	Clock clock.Clock

	// OnEvent, when set, is called with every renewal, failure, expiry,
	// retake and loss, one at a time, in order, from the lease's renewal
	// goroutine: it must return quickly. None follows Lost or the return
	// of Close.
	OnEvent func(Event)
}

// Rules are what differs between lease modules' checks of [Options].
type Rules struct {
	// Package names the module's package in errors ("redislease").
	Package string
	// TTLUnit is the server's TTL granularity: a TTL must be a positive
	// whole number of it.
	TTLUnit time.Duration
	// ServerClock reports that the module measures its server's clock
	// ([Options.MaxSkew] applies). Without it, a positive MaxSkew is an
	// [*OptionError] and Config.MaxSkew is negative (off).
	ServerClock bool
}

// A Config is [Options] with every default applied and checked
// ([Options.Resolve]): what a lease module works with.
type Config struct {
	Options
	// Package is the module's package, from [Rules].
	Package string
	// MaxNode is Layout.MaxNode(): ids run from 0 to MaxNode.
	MaxNode int64
}

// MeasuresSkew reports whether leases of c measure the offset to the
// server's clock: MaxSkew is not negative (the module reads its server's
// clock, and [Options.MaxSkew] did not turn it off).
func (c Config) MeasuresSkew() bool { return c.MaxSkew >= 0 }

// Resolve returns o with its defaults applied: Prefix [DefaultPrefix],
// TTL [DefaultTTL], Layout ringflake.TwitterLayout(), RenewEvery TTL/3, Margin
// TTL/100 + 2ms, MaxLead [DefaultMaxLead], MaxSkew [DefaultMaxSkew] (-1,
// off, without r.ServerClock), Timeout RenewEvery, Holder "HOSTNAME/PID",
// Clock the system clock. Options that cannot work are an [*OptionError]
// (it matches ringflake.ErrInvalidOption): a TTL that is not a positive
// whole number of r.TTLUnit, a negative RenewEvery, Margin, MaxLead or
// Timeout, RenewEvery + Margin not shorter than TTL, or a positive
// MaxSkew for a module without r.ServerClock.
func (o Options) Resolve(r Rules) (Config, error) {
	if o.Prefix == "" {
		o.Prefix = DefaultPrefix
	}
	if o.Layout.IsZero() {
		o.Layout = ringflake.TwitterLayout()
	}
	if o.TTL == 0 {
		o.TTL = DefaultTTL
	}
	if o.RenewEvery == 0 {
		o.RenewEvery = o.TTL / 3
	}
	if o.Margin == 0 {
		o.Margin = o.TTL/100 + 2*time.Millisecond
	}
	if o.MaxLead == 0 {
		o.MaxLead = DefaultMaxLead
	}
	if o.Timeout == 0 {
		o.Timeout = o.RenewEvery
	}
	maxSkew := o.MaxSkew
	switch {
	case !r.ServerClock:
		o.MaxSkew = -1
	case o.MaxSkew == 0:
		o.MaxSkew = DefaultMaxSkew
	case o.MaxSkew < 0:
		o.MaxSkew = -1
	}
	if o.Clock == nil {
		o.Clock = clock.New()
	}
	bad := func(format string, args ...any) (Config, error) {
		return Config{}, &OptionError{Package: r.Package, Reason: fmt.Sprintf(format, args...)}
	}
	switch {
	case r.TTLUnit <= 0: // the module's rule, not the user's option
		return bad("Rules.TTLUnit %v: want a positive duration", r.TTLUnit)
	case o.TTL < r.TTLUnit || o.TTL%r.TTLUnit != 0:
		return bad("TTL %v: want a positive whole number of %v", o.TTL, r.TTLUnit)
	case o.RenewEvery < 0 || o.Margin < 0 || o.Timeout < 0 || o.MaxLead < 0:
		return bad("negative RenewEvery, Margin, MaxLead or Timeout")
	case o.RenewEvery+o.Margin >= o.TTL:
		return bad("RenewEvery %v + Margin %v must be shorter than TTL %v", o.RenewEvery, o.Margin, o.TTL)
	case maxSkew > 0 && !r.ServerClock:
		return bad("MaxSkew %v: the server has no clock to measure the skew against (use 0)", maxSkew)
	}
	if o.Holder == "" {
		host, _ := os.Hostname()
		o.Holder = fmt.Sprintf("%s/%d", host, os.Getpid())
	}
	return Config{Options: o, Package: r.Package, MaxNode: o.Layout.MaxNode()}, nil
}

// Quiet is how long a lease that may have taken over an id from a holder
// the server forgot (the server lost data, or the prefix is new) must wait
// before it issues: TTL + Margin + MaxLead. After TTL + Margin every lease
// granted before the loss has expired by its holder's own count, even on
// a holder whose clock runs a little slow, so its holder has stopped
// issuing; its IDs may run up to MaxLead ahead of its clock, so the new
// holder's clock must pass that too before its first ID.
func (c Config) Quiet() time.Duration { return c.TTL + c.Margin + c.MaxLead }

// MarkAhead is the lead a lease suggests for the high-water mark a
// generator keeps with it: TTL/2.
func (c Config) MarkAhead() time.Duration { return c.TTL / 2 }
