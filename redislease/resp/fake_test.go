package resp_test

import (
	"bufio"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ringflake/ringflake/redislease/resp"
)

// A fakeServer is a loopback server whose answers a test scripts: for
// each connection it accepts, it reads commands and writes what answer
// returns for them, raw. It is for what a real Redis will not do on
// demand: garbage, a connection closed mid-reply, no answer at all.
type fakeServer struct {
	addr   string
	conns  atomic.Int64  // connections accepted so far
	closed chan struct{} // a value each time the server closed a connection

	mu       sync.Mutex
	commands [][]string // every command received, in order
}

// Answers of a fakeServer besides raw replies.
const (
	hangUp = "hang up" // close the connection without answering
	silent = "silent"  // never answer; the connection stays open
)

// thenHangUp is an answer that writes reply, then closes the connection.
func thenHangUp(reply string) string { return "\x00" + reply }

// startFake starts a fake server that answers a command on its n-th
// connection (from 1) with answer(n, command), until the test ends.
func startFake(t *testing.T, answer func(n int64, cmd []string) string) *fakeServer {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	f := &fakeServer{addr: ln.Addr().String(), closed: make(chan struct{}, 100)}
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		open []net.Conn
	)
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			open = append(open, c)
			mu.Unlock()
			n := f.conns.Add(1)
			wg.Add(1)
			go func() {
				defer wg.Done()
				f.serve(c, n, answer)
				_ = c.Close()
				select {
				case f.closed <- struct{}{}:
				default:
				}
			}()
		}
	}()
	t.Cleanup(func() {
		_ = ln.Close()
		mu.Lock()
		for _, c := range open {
			_ = c.Close()
		}
		mu.Unlock()
		wg.Wait()
	})
	return f
}

// serve answers the commands of connection n until it closes.
func (f *fakeServer) serve(c net.Conn, n int64, answer func(int64, []string) string) {
	r := bufio.NewReader(c)
	for {
		v, err := resp.ReadReply(r)
		if err != nil {
			return
		}
		var cmd []string
		for _, a := range v.([]any) {
			cmd = append(cmd, a.(string))
		}
		f.mu.Lock()
		f.commands = append(f.commands, cmd)
		f.mu.Unlock()
		switch a := answer(n, cmd); a {
		case hangUp:
			return
		case silent:
			_, _ = c.Read(make([]byte, 1)) // until the client closes
			return
		default:
			reply, last := strings.CutPrefix(a, "\x00")
			if _, err := c.Write([]byte(reply)); err != nil || last {
				return
			}
		}
	}
}

// received returns the commands received so far.
func (f *fakeServer) received() [][]string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([][]string(nil), f.commands...)
}

// client returns a client of the fake server with options o (Addr set),
// closed when the test ends.
func (f *fakeServer) client(t *testing.T, o resp.Options) *resp.Client {
	t.Helper()
	o.Addr = f.addr
	c, err := resp.New(o)
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// pong answers every command with +PONG.
func pong(int64, []string) string { return "+PONG\r\n" }
