package main

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/ringflake/ringflake"
)

// One outage is told in as few lines as say what happened: its start with
// the cause, each other cause once, and its end; "ringflake:" once a line.
func TestOutageLogLines(t *testing.T) {
	var buf bytes.Buffer
	at := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	o := newOutageLog(&buf)
	o.now = func() time.Time { return at }

	lost := fmt.Errorf("%w: %w", ringflake.ErrMarkNotSaved,
		fmt.Errorf("%w: redislease: node 2 is not held by this lease", ringflake.ErrLeaseLost))
	o.resumed() // no outage: nothing to tell
	for range 30 {
		o.failed(lost, "waiting for the lease to hold its id again")
		at = at.Add(100 * time.Millisecond)
	}
	refused := fmt.Errorf("%w: redislease: dial tcp 127.0.0.1:6379: connection refused", ringflake.ErrMarkNotSaved)
	o.failed(refused, "trying again, up to 3 times")
	o.failed(fmt.Errorf("%w: redislease: context deadline exceeded", ringflake.ErrMarkNotSaved), "trying again, up to 3 times")
	o.failed(lost, "waiting for the lease to hold its id again")
	o.resumed()
	o.resumed()

	assert.Equal(t, []string{
		"ringflake: high-water mark not saved: node id lease lost: redislease: node 2 is not held by this lease; waiting for the lease to hold its id again",
		"ringflake: high-water mark not saved: redislease: dial tcp 127.0.0.1:6379: connection refused; trying again, up to 3 times",
		"ringflake: issuing again after 3s",
	}, strings.Split(strings.TrimSpace(buf.String()), "\n"), "one line per kind of failure: another server's words are the same cause")

	buf.Reset()
	o.failed(lost, "waiting for the lease to hold its id again")
	assert.Equal(t, 1, strings.Count(buf.String(), "\n"), "a new outage is told again")
}
