package leasetest

import (
	"bytes"
	"encoding/base64"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// A Delay holds back a client's request to save a mark and delivers it to
// the server late, after later requests, as a stalled network can: TCP
// queues, a connection that hangs while the client opens another, a pool
// that moved on. A driver's [Driver.ConnectDelayed] returns one with its
// client; [Proxy] is the one for servers reached over TCP.
type Delay interface {
	// HoldSave holds back the client's next request that carries a mark
	// (its text, [ringflake.Mark.MarshalText]), and every later request
	// on the same connection.
	HoldSave()
	// Abandon waits until a save is held back, then breaks its
	// connection on the client's side, as a client that gives up on a
	// request does: the request fails, and the client opens a new
	// connection for its next requests. The held requests stay on their
	// way to the server.
	Abandon(t *testing.T)
	// Deliver hands the held requests to the server and returns once it
	// has answered them (the answers go nowhere).
	Deliver(t *testing.T)
}

// A Proxy is a loopback TCP proxy in front of a server: a [Delay] for
// clients that connect to [Proxy.Addr]. It passes bytes through both ways
// until [Proxy.HoldSave]; then it holds back the first chunk a client
// sends that contains a mark's text ("limit=") — or the text's start in
// base64 ("bGltaXQ9"), as a JSON API such as etcd's gateway carries
// values — and everything after it on that connection, and passes
// everything else on.
type Proxy struct {
	// Addr is where clients connect: 127.0.0.1:PORT.
	Addr string

	target string
	http2  bool
	ln     net.Listener

	mu     sync.Mutex
	closed bool // the test ended: no new connections
	conns  map[*proxyConn]struct{}
	hold   bool          // the next chunk with a mark is held back
	held   *proxyConn    // the connection whose requests are held back
	heldCh chan struct{} // closed when a chunk is held back
}

// markText is what a request that saves a mark carries: the start of the
// mark's text. markText64 is how a JSON API that sends bytes in base64
// (etcd's gateway) carries it: a value that starts with a mark's text
// starts with these eight characters, since "limit=" is two whole groups
// of three bytes.
var (
	markText   = []byte("limit=")
	markText64 = []byte(base64.StdEncoding.EncodeToString(markText))
)

// StartProxy starts a proxy to the server at target (HOST:PORT) on a free
// loopback port, and stops it when the test ends. With http2, the
// connections carry HTTP/2 (gRPC: etcd), on which [Proxy.Deliver] waits
// for the server to end a stream. Without, [Proxy.Deliver] waits for the
// server's first bytes: the answer of Redis, PostgreSQL, or an HTTP/1.1
// server (etcd's JSON gateway), whose client waits for the answer to one
// request before it sends the next on the connection.
func StartProxy(t *testing.T, target string, http2 bool) *Proxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	p := &Proxy{Addr: ln.Addr().String(), target: target, http2: http2, ln: ln,
		conns: map[*proxyConn]struct{}{}, heldCh: make(chan struct{})}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go p.serve(c)
		}
	}()
	t.Cleanup(func() {
		_ = ln.Close()
		<-done
		p.mu.Lock()
		defer p.mu.Unlock()
		p.closed = true
		for c := range p.conns {
			c.close()
		}
	})
	return p
}

// A proxyConn is one client's connection through the proxy.
type proxyConn struct {
	client, server net.Conn

	// Under Proxy.mu:
	frozen    bool     // client bytes are held back
	held      [][]byte // what was held back, in order
	cut       bool     // Abandon closed the client's side
	delivered bool     // Deliver ran: the next end of a stream is its answer

	answered chan struct{} // closed when the server answered the delivery
	answer   sync.Once
	gone     chan struct{} // closed when the server's side is closed
}

func (c *proxyConn) close() {
	_ = c.client.Close()
	_ = c.server.Close()
}

func (c *proxyConn) answeredNow() { c.answer.Do(func() { close(c.answered) }) }

func (p *Proxy) serve(client net.Conn) {
	server, err := net.Dial("tcp", p.target)
	if err != nil {
		_ = client.Close()
		return
	}
	c := &proxyConn{client: client, server: server, answered: make(chan struct{}), gone: make(chan struct{})}
	p.mu.Lock()
	closed := p.closed
	p.conns[c] = struct{}{}
	p.mu.Unlock()
	if closed {
		c.close()
		return
	}
	go p.toClient(c)
	buf := make([]byte, 64<<10)
	for {
		n, err := client.Read(buf)
		if n > 0 && !p.pass(c, bytes.Clone(buf[:n])) {
			continue
		}
		if n > 0 {
			if _, werr := server.Write(buf[:n]); werr != nil {
				err = werr
			}
		}
		if err != nil {
			p.mu.Lock()
			frozen := c.frozen
			p.mu.Unlock()
			if !frozen {
				c.close() // a held connection stays open to the server, for Deliver
			}
			return
		}
	}
}

// pass reports whether chunk goes on to the server now; when not, it is
// held back.
func (p *Proxy) pass(c *proxyConn, chunk []byte) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	switch {
	case c.frozen:
	case p.hold && (bytes.Contains(chunk, markText) || bytes.Contains(chunk, markText64)):
		p.hold, p.held, c.frozen = false, c, true
		close(p.heldCh)
	default:
		return true
	}
	c.held = append(c.held, chunk)
	return false
}

// toClient copies the server's bytes to the client — or to nowhere, once
// the client's side is cut — and, after a delivery, notes the server's
// answer: its first bytes or, with HTTP/2, the end of a stream.
func (p *Proxy) toClient(c *proxyConn) {
	defer close(c.gone)
	var frames frameReader
	buf := make([]byte, 64<<10)
	for {
		n, err := c.server.Read(buf)
		if n > 0 {
			ends := !p.http2 || frames.endsStream(buf[:n])
			_, _ = c.client.Write(buf[:n]) // fails once the client's side is cut: the answer goes nowhere
			p.mu.Lock()
			delivered := c.delivered
			p.mu.Unlock()
			if ends && delivered {
				c.answeredNow()
			}
		}
		if err != nil {
			_ = c.client.Close()
			return
		}
	}
}

// HoldSave implements [Delay].
func (p *Proxy) HoldSave() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.hold, p.held, p.heldCh = true, nil, make(chan struct{})
}

// WaitHeld waits up to 30 s for a save to be held back, and leaves its
// client waiting for the answer: [Proxy.Deliver] then hands it the
// server's.
func (p *Proxy) WaitHeld(t *testing.T) {
	t.Helper()
	select {
	case <-p.heldCh:
	case <-time.After(30 * time.Second):
		t.Fatal("proxy: no request with a mark within 30s of HoldSave")
	}
}

// Abandon implements [Delay]: it waits up to 30 s for a held save.
func (p *Proxy) Abandon(t *testing.T) {
	t.Helper()
	p.WaitHeld(t)
	p.mu.Lock()
	c := p.held
	c.cut = true
	p.mu.Unlock()
	_ = c.client.Close()
}

// Deliver implements [Delay]: it writes the held bytes to the server and
// waits up to 30 s for the answer: the first bytes the server sends back
// (Redis, PostgreSQL and an HTTP/1.1 server send their answer once they
// have run the request) or, with HTTP/2, the end of a stream. It then
// closes the connection when [Proxy.Abandon] cut it; else the client
// gets the answer, and the connection passes bytes through again.
func (p *Proxy) Deliver(t *testing.T) {
	t.Helper()
	p.mu.Lock()
	c := p.held
	var held [][]byte
	if c != nil {
		held, c.held, c.delivered = c.held, nil, true
	}
	p.mu.Unlock()
	require.NotNil(t, c, "proxy: Deliver without a held request")
	for _, b := range held {
		_, err := c.server.Write(b)
		require.NoError(t, err, "proxy: delivering the held request")
	}
	p.mu.Lock()
	c.frozen = false // the client waits for the answer: it sends nothing meanwhile
	cut := c.cut
	p.mu.Unlock()
	select {
	case <-c.answered:
	case <-c.gone:
		t.Fatal("proxy: the server closed the connection without answering the delivered request")
	case <-time.After(30 * time.Second):
		t.Fatal("proxy: the server did not answer the delivered request within 30s")
	}
	if cut {
		c.close()
	}
}

// A frameReader follows the HTTP/2 frames of one direction of a
// connection from its start (a server sends no preface).
type frameReader struct {
	head [9]byte // the frame header read so far
	have int     // bytes of it read
	skip int     // payload bytes of the current frame still to skip
}

// endsStream reads b and reports whether a frame in it ends a stream: a
// HEADERS or DATA frame with END_STREAM, or RST_STREAM.
func (f *frameReader) endsStream(b []byte) bool {
	ends := false
	for len(b) > 0 {
		if f.skip > 0 {
			n := min(f.skip, len(b))
			f.skip -= n
			b = b[n:]
			continue
		}
		n := copy(f.head[f.have:], b)
		f.have += n
		b = b[n:]
		if f.have < len(f.head) {
			break
		}
		f.have = 0
		length := int(f.head[0])<<16 | int(f.head[1])<<8 | int(f.head[2])
		kind, flags := f.head[3], f.head[4]
		const data, headers, rstStream, endStream = 0x0, 0x1, 0x3, 0x1
		if (kind == data || kind == headers) && flags&endStream != 0 || kind == rstStream {
			ends = true
		}
		f.skip = length
	}
	return ends
}
