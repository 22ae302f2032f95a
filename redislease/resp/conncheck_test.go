//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package resp_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ringflake/ringflake/redislease/resp"
)

// A connection the server closed while it was idle (a restart, an idle
// timeout) is noticed before it is used: the next call dials again and
// succeeds, rather than failing once.
func TestIdleConnectionClosedByTheServer(t *testing.T) {
	f := startFake(t, func(n int64, _ []string) string {
		if n == 1 {
			return thenHangUp("+PONG\r\n")
		}
		return "+PONG\r\n"
	})
	c := f.client(t, resp.Options{})
	for i := range 3 {
		v, err := c.Do(context.Background(), "PING")
		require.NoError(t, err)
		assert.Equal(t, "PONG", v)
		if i == 0 {
			<-f.closed // the server closed the connection after answering
		}
	}
	assert.Equal(t, int64(2), f.conns.Load())
}
