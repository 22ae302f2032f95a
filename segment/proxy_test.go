package segment_test

import (
	"database/sql"
	"errors"
	"io"
	"net"
	"strconv"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/stretchr/testify/require"
)

// A proxy forwards TCP connections on 127.0.0.1 to a server, and can lose
// the server's next reply: the connection it comes on is closed instead,
// after the server has done the work, as when a network drops between a
// commit and its answer.
type proxy struct {
	ln     net.Listener
	target string

	mu          sync.Mutex
	loseReply   bool
	lostReplies int
	conns       []net.Conn
	wg          sync.WaitGroup
}

// startProxy starts a proxy to the server of dsn and returns a pool that
// connects through it; both end with the test.
func startProxy(t *testing.T, dsn string) (*proxy, *sql.DB) {
	t.Helper()
	cfg, err := pgx.ParseConfig(dsn)
	require.NoError(t, err)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	p := &proxy{ln: ln, target: net.JoinHostPort(cfg.Host, strconv.Itoa(int(cfg.Port)))}
	p.wg.Add(1)
	go p.accept()
	t.Cleanup(p.close)
	cfg.Host, cfg.Port = "127.0.0.1", uint16(ln.Addr().(*net.TCPAddr).Port)
	db := stdlib.OpenDB(*cfg)
	t.Cleanup(func() { _ = db.Close() })
	return p, db
}

func (p *proxy) accept() {
	defer p.wg.Done()
	for {
		client, err := p.ln.Accept()
		if err != nil {
			return
		}
		server, err := net.Dial("tcp", p.target)
		if err != nil {
			_ = client.Close()
			continue
		}
		p.mu.Lock()
		p.conns = append(p.conns, client, server)
		p.mu.Unlock()
		p.wg.Add(2)
		go func() {
			defer p.wg.Done()
			_, _ = io.Copy(server, client)
			_ = server.Close()
		}()
		go func() {
			defer p.wg.Done()
			p.replies(client, server)
		}()
	}
}

// replies forwards what the server sends, unless the proxy is told to
// lose the next reply.
func (p *proxy) replies(client, server net.Conn) {
	defer client.Close()
	defer server.Close()
	buf := make([]byte, 32<<10)
	for {
		n, err := server.Read(buf)
		if n > 0 {
			p.mu.Lock()
			lose := p.loseReply
			if lose {
				p.loseReply = false
				p.lostReplies++
			}
			p.mu.Unlock()
			if lose {
				return
			}
			if _, werr := client.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			if !errors.Is(err, io.EOF) {
				_ = client.Close()
			}
			return
		}
	}
}

// loseNextReply makes the proxy close, instead of forwarding, the next
// bytes any server sends.
func (p *proxy) loseNextReply() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.loseReply = true
}

func (p *proxy) lost() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.lostReplies
}

func (p *proxy) close() {
	_ = p.ln.Close()
	p.mu.Lock()
	for _, c := range p.conns {
		_ = c.Close()
	}
	p.mu.Unlock()
	p.wg.Wait()
}
