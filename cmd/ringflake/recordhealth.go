package main

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/ringflake/ringflake/clockhealth"
)

// healthEvery is how often record reads the clock's health: once a
// second, as a clockhealth.Monitor does.
const healthEvery = time.Second

// healthLog keeps what record saw of the clock's health while it
// sampled: the first reading, each change of state (see
// clockhealth.StateChanged), the largest maximum error, and the last
// reading, each with the recording's elapsed time.
type healthLog struct {
	src     clockhealth.Source
	lastAt  time.Duration // elapsed time of the last read
	read    bool
	entries []healthEntry
	last    healthEntry
	largest time.Duration
	reads   int
}

type healthEntry struct {
	at time.Duration
	r  clockhealth.Reading
}

// observe reads the source when elapsed is a second or more past the
// last read (or on the first call, or when force is set).
func (h *healthLog) observe(ctx context.Context, elapsed time.Duration, force bool) {
	if h.read && !force && elapsed-h.lastAt < healthEvery {
		return
	}
	r, _ := h.src.Read(ctx) // a failed read is a Reading of unknown status, kept like any other
	h.read, h.lastAt = true, elapsed
	h.reads++
	e := healthEntry{at: elapsed, r: r}
	if len(h.entries) == 0 || clockhealth.StateChanged(h.last.r, r) {
		h.entries = append(h.entries, e)
	}
	if r.MaxErrorKnown && r.MaxError > h.largest {
		h.largest = r.MaxError
	}
	h.last = e
}

// comment describes the readings for the scenario file's comment.
func (h *healthLog) comment() string {
	if len(h.entries) == 0 {
		return ""
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Clock health, read every %v (%d reads); the first reading and each change:\n", healthEvery, h.reads)
	for _, e := range h.entries {
		fmt.Fprintf(&b, "  at %v: %s\n", e.at.Round(time.Millisecond), e.r)
	}
	if h.last.at != h.entries[len(h.entries)-1].at {
		fmt.Fprintf(&b, "  last, at %v: %s\n", h.last.at.Round(time.Millisecond), h.last.r)
	}
	if h.largest > 0 {
		fmt.Fprintf(&b, "  largest max error seen: %v\n", h.largest)
	}
	return strings.TrimSuffix(b.String(), "\n")
}
