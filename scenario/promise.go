package scenario

import (
	"strings"
	"time"

	"github.com/ringflake/ringflake/strategies"
)

// Promise is what a strategy promises in its doc comment, in the form a
// replay checks on every call. Every strategy promises unique IDs; the
// other fields come from the steps of the strategy (see [PromiseOf]).
type Promise struct {
	// Known reports that every step is a built-in strategy. For a strategy
	// with a step of another kind only uniqueness is checked.
	Known bool `json:"known"`
	// Monotonic: every ID is greater than every ID returned before its
	// call started (error, wait and logical, and chains of them only).
	Monotonic bool `json:"monotonic"`
	// MaxStall is the longest a rollback may stall one call: the longest
	// wait of the chain. One tick more is allowed for the ordinary wait
	// when a tick's sequence is used up, as for every strategy.
	MaxStall time.Duration `json:"max_stall_ns"`
	// MaxLead is how far ahead of the wall clock an ID may be stamped:
	// the longest lead of a logical step.
	MaxLead time.Duration `json:"max_lead_ns"`
	// Ring: IDs may also be stamped up to the newest tick already issued,
	// however far that is ahead of the clock (a ring step).
	Ring bool `json:"ring"`
}

// PromiseOf derives the promise of s from its steps ([strategies.Flatten])
// as written by their String methods:
//
//	error          monotonic
//	wait:D         monotonic, stalls ≤ D
//	logical:D      monotonic, leads ≤ D
//	ring           not monotonic, never past the newest tick issued
//
// A chain is monotonic when every step is; its stall and lead bounds are
// the largest of its steps' (a chain's waits share one budget: each wait
// step sleeps only while the call's total sleep stays within its own
// bound). A step of any other kind makes the promise unknown: only
// uniqueness is checked.
func PromiseOf(s strategies.Strategy) Promise {
	p := Promise{Known: s != nil, Monotonic: true}
	if s == nil {
		return Promise{}
	}
	for _, step := range strategies.Flatten(s) {
		if step == nil {
			return Promise{}
		}
		name, arg, _ := strings.Cut(step.String(), ":")
		switch name {
		case "error":
		case "ring":
			p.Ring, p.Monotonic = true, false
		case "wait", "logical":
			d, err := time.ParseDuration(arg)
			if err != nil {
				return Promise{}
			}
			if name == "wait" {
				p.MaxStall = max(p.MaxStall, d)
			} else {
				p.MaxLead = max(p.MaxLead, d)
			}
		default:
			return Promise{}
		}
	}
	return p
}

// String describes the promise, for example
// "unique, monotonic, stalls ≤ 5ms" or "unique, never past the newest ID".
func (p Promise) String() string {
	if !p.Known {
		return "unique"
	}
	parts := []string{"unique"}
	if p.Monotonic {
		parts = append(parts, "monotonic")
	}
	if p.MaxStall > 0 {
		parts = append(parts, "stalls ≤ "+formatDuration(p.MaxStall))
	}
	if p.MaxLead > 0 {
		parts = append(parts, "leads ≤ "+formatDuration(p.MaxLead))
	}
	if p.Ring {
		parts = append(parts, "never past the newest ID")
	}
	return strings.Join(parts, ", ")
}

// Builtin returns the strategies `ringflake replay --all-strategies`
// replays, besides those a file has expectations for: error, wait:5ms,
// logical:1s, ring and the default chain ring,wait:5ms,error.
func Builtin() []strategies.Strategy {
	return []strategies.Strategy{
		strategies.Error(),
		strategies.Wait(strategies.DefaultWait),
		strategies.Logical(strategies.DefaultLead),
		strategies.Ring(),
		strategies.Default(),
	}
}
