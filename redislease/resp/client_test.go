package resp_test

import (
	"context"
	"crypto/sha1"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ringflake/ringflake/lease/leasetest"
	"github.com/ringflake/ringflake/redislease/resp"
)

// An error reply is the server's answer, not a broken connection: the
// next command goes on the same one.
func TestErrorReplyKeepsTheConnection(t *testing.T) {
	f := startFake(t, func(_ int64, cmd []string) string {
		if cmd[0] == "GET" {
			return "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n"
		}
		return "+PONG\r\n"
	})
	c := f.client(t, resp.Options{})
	ctx := context.Background()
	_, err := c.Do(ctx, "GET", "k")
	var e *resp.Error
	require.ErrorAs(t, err, &e)
	assert.Equal(t, "WRONGTYPE", e.Code())
	v, err := c.Do(ctx, "PING")
	require.NoError(t, err)
	assert.Equal(t, "PONG", v)
	assert.Equal(t, int64(1), f.conns.Load())
}

// A reply that is not RESP2, or that the server cuts short by closing
// the connection, fails the call; the next call dials again.
func TestBrokenRepliesDropTheConnection(t *testing.T) {
	for _, tc := range []struct {
		name, first string
		want        error
	}{
		{"garbage", "!garbage\r\n", resp.ErrProtocol},
		{"RESP3", "%1\r\n+a\r\n+b\r\n", resp.ErrProtocol},
		{"a length out of bounds", "$99999999999\r\n", resp.ErrProtocol},
		{"closed before the reply", hangUp, io.EOF},
		{"closed in the reply", thenHangUp("*2\r\n:1\r\n$10\r\nabc"), io.ErrUnexpectedEOF},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := startFake(t, func(n int64, _ []string) string {
				if n == 1 {
					return tc.first
				}
				return "+PONG\r\n"
			})
			c := f.client(t, resp.Options{})
			_, err := c.Do(context.Background(), "PING")
			require.ErrorIs(t, err, tc.want)
			v, err := c.Do(context.Background(), "PING")
			require.NoError(t, err)
			assert.Equal(t, "PONG", v)
			assert.Equal(t, int64(2), f.conns.Load())
		})
	}
}

// hanging returns a fake server that never answers on its first
// connection, and tells on the channel when that connection received a
// command; on later connections it answers +PONG.
func hanging(t *testing.T) (*fakeServer, <-chan struct{}) {
	got := make(chan struct{}, 1)
	f := startFake(t, func(n int64, _ []string) string {
		if n == 1 {
			got <- struct{}{}
			return silent
		}
		return "+PONG\r\n"
	})
	return f, got
}

// A context that ends interrupts a call waiting for its reply at once,
// with the context's error; the next call dials again, so that it cannot
// take the late reply for its own.
func TestContextEndsACall(t *testing.T) {
	t.Run("cancelled", func(t *testing.T) {
		f, got := hanging(t)
		c := f.client(t, resp.Options{ReadTimeout: time.Hour})
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() {
			_, err := c.Do(ctx, "PING")
			done <- err
		}()
		<-got
		cancel()
		require.ErrorIs(t, <-done, context.Canceled)
		v, err := c.Do(context.Background(), "PING")
		require.NoError(t, err)
		assert.Equal(t, "PONG", v)
		assert.Equal(t, int64(2), f.conns.Load())
	})
	t.Run("deadline", func(t *testing.T) {
		f, _ := hanging(t)
		c := f.client(t, resp.Options{ReadTimeout: time.Hour})
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
		defer cancel()
		_, err := c.Do(ctx, "PING")
		require.ErrorIs(t, err, context.DeadlineExceeded)
		_, err = c.Do(context.Background(), "PING")
		require.NoError(t, err)
	})
	t.Run("ended before the call", func(t *testing.T) {
		f := startFake(t, pong)
		c := f.client(t, resp.Options{})
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		_, err := c.Do(ctx, "PING")
		require.ErrorIs(t, err, context.Canceled)
		assert.Zero(t, f.conns.Load(), "nothing dialled")
	})
}

// ReadTimeout bounds a call whose context has no deadline; the error is a
// timeout, not the context's.
func TestReadTimeout(t *testing.T) {
	f, _ := hanging(t)
	c := f.client(t, resp.Options{ReadTimeout: 20 * time.Millisecond})
	_, err := c.Do(context.Background(), "PING")
	require.ErrorIs(t, err, os.ErrDeadlineExceeded)
	require.NotErrorIs(t, err, context.DeadlineExceeded)
	_, err = c.Do(context.Background(), "PING")
	require.NoError(t, err, "dialled again")
}

// A call waiting for its turn behind one that hangs gives up when its
// context ends; Close ends the hanging one, and every later call fails
// with ErrClosed.
func TestTurnsAndClose(t *testing.T) {
	f, got := hanging(t)
	c := f.client(t, resp.Options{ReadTimeout: time.Hour})
	first := make(chan error, 1)
	go func() {
		_, err := c.Do(context.Background(), "PING")
		first <- err
	}()
	<-got
	ctx, cancel := context.WithCancel(context.Background())
	second := make(chan error, 1)
	go func() {
		_, err := c.Do(ctx, "PING")
		second <- err
	}()
	cancel()
	require.ErrorIs(t, <-second, context.Canceled, "gave up waiting for its turn")

	require.NoError(t, c.Close())
	require.ErrorIs(t, <-first, resp.ErrClosed)
	_, err := c.Do(context.Background(), "PING")
	require.ErrorIs(t, err, resp.ErrClosed)
	require.NoError(t, c.Close(), "closing twice")
	assert.Equal(t, int64(1), f.conns.Load())
}

// After a dial, the client authenticates and selects the database before
// the first command; a refused AUTH fails the call with the server's
// error.
func TestAuthAndSelect(t *testing.T) {
	for _, tc := range []struct {
		name  string
		opts  resp.Options
		first [][]string
	}{
		{"password", resp.Options{Password: "pw"}, [][]string{{"AUTH", "pw"}}},
		{"user and password", resp.Options{Username: "u", Password: "pw", DB: 3}, [][]string{{"AUTH", "u", "pw"}, {"SELECT", "3"}}},
		{"database", resp.Options{DB: 15}, [][]string{{"SELECT", "15"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := startFake(t, func(_ int64, cmd []string) string {
				if cmd[0] == "AUTH" && cmd[len(cmd)-1] != "pw" {
					return "-WRONGPASS invalid username-password pair or user is disabled.\r\n"
				}
				return "+OK\r\n"
			})
			_, err := f.client(t, tc.opts).Do(context.Background(), "PING")
			require.NoError(t, err)
			assert.Equal(t, append(tc.first, []string{"PING"}), f.received())
		})
	}
	t.Run("refused", func(t *testing.T) {
		f := startFake(t, func(_ int64, cmd []string) string {
			return "-WRONGPASS invalid username-password pair or user is disabled.\r\n"
		})
		_, err := f.client(t, resp.Options{Username: "u", Password: "bad"}).Do(context.Background(), "PING")
		var e *resp.Error
		require.ErrorAs(t, err, &e)
		assert.Equal(t, "WRONGPASS", e.Code())
		assert.Equal(t, [][]string{{"AUTH", "u", "bad"}}, f.received(), "no command after a refused AUTH")
	})
}

// RunScript asks for the script by its digest, and sends it whole only
// when the server does not have it.
func TestRunScriptFallsBackToEval(t *testing.T) {
	const script = "return #KEYS + #ARGV"
	sum := sha1.Sum([]byte(script))
	f := startFake(t, func(_ int64, cmd []string) string {
		if cmd[0] == "EVALSHA" {
			return "-NOSCRIPT No matching script. Please use EVAL.\r\n"
		}
		return ":3\r\n"
	})
	v, err := f.client(t, resp.Options{}).RunScript(context.Background(), script, []string{"k"}, "a", "b")
	require.NoError(t, err)
	assert.Equal(t, int64(3), v)
	assert.Equal(t, [][]string{
		{"EVALSHA", hex.EncodeToString(sum[:]), "1", "k", "a", "b"},
		{"EVAL", script, "1", "k", "a", "b"},
	}, f.received())
	assert.Equal(t, int64(1), f.conns.Load())
}

// A server that is not there: the dialer's error, one line.
func TestDialRefused(t *testing.T) {
	c, err := resp.New(resp.Options{Addr: fmt.Sprintf("127.0.0.1:%d", leasetest.FreePort(t))})
	require.NoError(t, err)
	defer c.Close()
	_, err = c.Do(context.Background(), "PING")
	require.ErrorIs(t, err, syscall.ECONNREFUSED)
}

func TestNewRejects(t *testing.T) {
	for _, o := range []resp.Options{
		{},
		{Addr: "localhost"},
		{Addr: "127.0.0.1:6379", DB: -1},
		{Addr: "127.0.0.1:6379", ReadTimeout: -time.Second},
		{Addr: "127.0.0.1:6379", MaxReply: -1},
	} {
		_, err := resp.New(o)
		require.ErrorIs(t, err, resp.ErrInvalidOption, "%+v", o)
	}
	c, err := resp.New(resp.Options{Addr: "127.0.0.1:6379"})
	require.NoError(t, err)
	_, err = c.Do(context.Background())
	require.ErrorIs(t, err, resp.ErrInvalidOption, "a call without a command")
	require.False(t, errors.Is(err, resp.ErrClosed))
}

// Close also ends a call that is still preparing its connection (here, a
// server that does not answer AUTH).
func TestCloseDuringDial(t *testing.T) {
	f, got := hanging(t)
	c := f.client(t, resp.Options{Password: "pw", DialTimeout: time.Hour, ReadTimeout: time.Hour})
	done := make(chan error, 1)
	go func() {
		_, err := c.Do(context.Background(), "PING")
		done <- err
	}()
	<-got
	require.NoError(t, c.Close())
	require.ErrorIs(t, <-done, resp.ErrClosed)
	assert.Equal(t, [][]string{{"AUTH", "pw"}}, f.received())
}
