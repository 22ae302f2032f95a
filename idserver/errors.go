package idserver

import (
	"context"
	"errors"
	"strings"

	"github.com/ringflake/ringflake"
)

// The codes of an error response's "code" field. Every error response
// has one: the codes of a 503 say what kind of generator error, or reason
// for not being ready, it reports; those of a 400, 404 and 405 say what was
// wrong with the request. They are stable across versions; callers branch
// on them, never on the message.
const (
	// CodeClockRollback: the clock reads behind the newest ID issued and
	// the strategy fails rather than wait or reuse (ringflake.ErrClockRollback).
	// The response has Retry-After: how far behind, in whole seconds,
	// rounded up.
	CodeClockRollback = "clock_rollback"
	// CodeClockFrozen: the clock stood still, the tick's sequence numbers
	// are used up, and the strategy fails rather than wait or borrow
	// (ringflake.ErrClockFrozen). A frozen clock is not a rollback.
	CodeClockFrozen = "clock_frozen"
	// CodeLeaseLost: the lease does not hold the node id (ringflake.ErrLeaseLost).
	CodeLeaseLost = "lease_lost"
	// CodeLayoutExpired: the clock is past the layout's last
	// representable time (ringflake.ErrLayoutExpired).
	CodeLayoutExpired = "layout_expired"
	// CodeBeforeEpoch: the clock reads before the layout's epoch
	// (ringflake.ErrBeforeEpoch).
	CodeBeforeEpoch = "before_epoch"
	// CodeClosed: the generator is closed; the server is shutting down
	// (ringflake.ErrClosed).
	CodeClosed = "closed"
	// CodeMarkNotSaved: the call needed a later high-water mark and the
	// store could not save it (ringflake.ErrMarkNotSaved): a full disk, a
	// read-only file, a store server away. The next call tries again.
	CodeMarkNotSaved = "mark_not_saved"
	// CodeReserving: the generator waits out the time a previous run
	// reserved ahead of its IDs before it crashed (ErrReserving): /readyz
	// says so until the clock has passed the reservation, so that no
	// request waits for it.
	CodeReserving = "reserving"
	// CodeCanceled: the request ended before the generator gave an ID.
	CodeCanceled = "canceled"
	// CodeTimeout: a deadline passed before the generator gave an ID (a
	// readiness probe that took longer than ProbeTimeout).
	CodeTimeout = "timeout"
	// CodeUnavailable: any other generator error, such as an error of a
	// strategy of your own.
	CodeUnavailable = "unavailable"

	// CodeBadRequest (400): the request's query or ID is wrong — a count
	// that is not a number from 1 to the maximum, an unknown format or
	// layout, a malformed ID, a query parameter the route does not take
	// or one given twice. The message says which.
	CodeBadRequest = "bad_request"
	// CodeTooFarAhead (400): the ID of after= is further ahead of the
	// server's clock than its bound (ringflake.ErrObservedTooFar): the
	// caller's clock, or the ID, is off. Nothing was issued.
	CodeTooFarAhead = "too_far_ahead"
	// CodeNotFound (404): no route serves the path.
	CodeNotFound = "not_found"
	// CodeMethodNotAllowed (405): the route does not take the method; the
	// Allow header names those it does.
	CodeMethodNotAllowed = "method_not_allowed"
)

// ErrorCode returns the code of a generator error (one of the Code
// constants): the code of the first sentinel err matches, in the order
// the constants are listed, and [CodeUnavailable] for anything else,
// including nil.
func ErrorCode(err error) string {
	switch {
	case errors.Is(err, ringflake.ErrClockRollback):
		return CodeClockRollback
	case errors.Is(err, ringflake.ErrClockFrozen):
		return CodeClockFrozen
	case errors.Is(err, ringflake.ErrLeaseLost):
		return CodeLeaseLost
	case errors.Is(err, ringflake.ErrLayoutExpired):
		return CodeLayoutExpired
	case errors.Is(err, ringflake.ErrBeforeEpoch):
		return CodeBeforeEpoch
	case errors.Is(err, ringflake.ErrClosed):
		return CodeClosed
	case errors.Is(err, ringflake.ErrMarkNotSaved):
		return CodeMarkNotSaved
	case errors.Is(err, ErrReserving):
		return CodeReserving
	case errors.Is(err, context.Canceled):
		return CodeCanceled
	case errors.Is(err, context.DeadlineExceeded):
		return CodeTimeout
	}
	return CodeUnavailable
}

// ErrReserving is the reason [Handler.Ready] gives while the generator's
// clock has not passed the time a previous run reserved ahead of its IDs
// (ringflake.Stats.Reserved): a request then would wait for it.
var ErrReserving = errors.New("ringflake: waiting out the previous run's reservation")

// message is err's text for a response, without the "ringflake: " its
// sentinels start with.
func message(err error) string { return strings.TrimPrefix(err.Error(), "ringflake: ") }
