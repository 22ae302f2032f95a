package resp

import (
	"bufio"
	"context"
	"crypto/sha1"
	"crypto/tls"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"os"
	"strconv"
	"sync"
	"time"
)

// A Client sends commands to one Redis server over one connection, one
// command at a time: it dials when first used, and again after an error
// that may have left the connection out of step (a timeout, a cancelled
// context, a closed or broken connection, a reply that is not RESP2).
// Before it reuses a connection it checks (where the system allows) that
// the server has not closed it, so that an idle connection dropped by a
// restarted server costs no failed call. It never retries a command: a
// command whose answer was lost may still have run. It logs nothing.
//
// A Client is safe for concurrent use by multiple goroutines; their calls
// take turns on the connection, each waiting for its turn no longer than
// its context allows.
type Client struct {
	opts Options
	turn chan struct{} // holds a token while a call uses the connection
	life context.Context
	end  context.CancelFunc // Close ends life, and with it every call

	mu     sync.Mutex // guards cn and closed, so that Close need not wait for a turn
	cn     *conn      // nil before the first dial and after an error
	closed bool
}

// conn is a connection and its read buffer.
type conn struct {
	nc    net.Conn
	br    *bufio.Reader
	isTLS bool
}

// New returns a client of the server opts names. It checks opts and
// applies their defaults; it does not dial. Errors match
// [ErrInvalidOption]: no Addr, an Addr that is not HOST:PORT, a negative
// DB, timeout or MaxReply.
func New(opts Options) (*Client, error) {
	o, err := opts.check()
	if err != nil {
		return nil, err
	}
	life, end := context.WithCancel(context.Background())
	return &Client{opts: o, turn: make(chan struct{}, 1), life: life, end: end}, nil
}

// Addr returns the server's HOST:PORT.
func (c *Client) Addr() string { return c.opts.Addr }

// Do sends the command args (its name, then its arguments) and returns
// the reply: an integer as int64, a simple or bulk string as string, a
// nil bulk string or array as nil, an array as []any of these (with an
// error nested in it as a *[Error]). An error reply is returned as a
// *[Error]. Other errors: ctx's (context.Canceled, DeadlineExceeded),
// the dial's, a timeout (matching os.ErrDeadlineExceeded), a closed
// connection (io.EOF, io.ErrUnexpectedEOF), [ErrProtocol], [ErrClosed].
func (c *Client) Do(ctx context.Context, args ...string) (any, error) {
	if len(args) == 0 {
		return nil, invalidf("Do without a command")
	}
	return c.call(ctx, func(ctx context.Context, cn *conn) (any, error) {
		return c.exchange(ctx, cn, args)
	})
}

// RunScript runs a Lua script with keys as KEYS and args as ARGV: EVALSHA
// with the script's SHA-1 digest, then, when the server answers NOSCRIPT
// (it does not have the script cached yet), EVAL with its text, on the
// same connection. The reply and errors are those of [Client.Do]. It
// implements package lualease's ScriptRunner.
func (c *Client) RunScript(ctx context.Context, script string, keys []string, args ...string) (any, error) {
	sum := sha1.Sum([]byte(script))
	cmd := make([]string, 0, 3+len(keys)+len(args))
	cmd = append(cmd, "EVALSHA", hex.EncodeToString(sum[:]), strconv.Itoa(len(keys)))
	cmd = append(append(cmd, keys...), args...)
	return c.call(ctx, func(ctx context.Context, cn *conn) (any, error) {
		v, err := c.exchange(ctx, cn, cmd)
		if e := (*Error)(nil); errors.As(err, &e) && e.Code() == "NOSCRIPT" {
			cmd[0], cmd[1] = "EVAL", script
			return c.exchange(ctx, cn, cmd)
		}
		return v, err
	})
}

// Close closes the connection, at once: a call in progress (or its dial)
// fails, and every later call returns [ErrClosed]. Closing twice returns
// nil.
func (c *Client) Close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return nil
	}
	c.closed = true
	c.end()
	if c.cn != nil {
		err := c.cn.nc.Close()
		c.cn = nil
		return err
	}
	return nil
}

// call runs f on the connection, dialled if need be, once it is this
// call's turn, with ctx ended by Close too, and drops the connection
// after an error that may have left it out of step.
func (c *Client) call(ctx context.Context, f func(context.Context, *conn) (any, error)) (any, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	defer context.AfterFunc(c.life, cancel)()
	select {
	case c.turn <- struct{}{}:
	case <-ctx.Done():
		return nil, c.why(ctx.Err())
	}
	defer func() { <-c.turn }()
	if err := ctx.Err(); err != nil {
		return nil, c.why(err)
	}
	cn, err := c.conn(ctx)
	if err != nil {
		return nil, c.why(err)
	}
	stop := interruptOnDone(ctx, cn.nc)
	v, err := f(ctx, cn)
	interrupted := !stop()
	var serverErr *Error
	if interrupted || (err != nil && !errors.As(err, &serverErr)) {
		// The reply may be on its way still, or half read: the next
		// command must not take it for its own.
		c.drop(cn)
	}
	if err != nil && serverErr == nil {
		return nil, c.why(err)
	}
	return v, err
}

// why returns err, the error of a call, or ErrClosed when the client was
// closed meanwhile.
func (c *Client) why(err error) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return ErrClosed
	}
	return err
}

// conn returns the connection, checked, or a new one.
func (c *Client) conn(ctx context.Context) (*conn, error) {
	c.mu.Lock()
	closed, cn := c.closed, c.cn
	c.mu.Unlock()
	switch {
	case closed:
		return nil, ErrClosed
	case cn != nil && cn.br.Buffered() == 0 && alive(cn.nc, cn.isTLS):
		return cn, nil
	case cn != nil:
		c.drop(cn) // closed by the server, or bytes nobody asked for
	}
	cn, err := c.dial(ctx)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		_ = cn.nc.Close()
		return nil, ErrClosed
	}
	c.cn = cn
	return cn, nil
}

// drop closes cn, and forgets it unless it was replaced already.
func (c *Client) drop(cn *conn) {
	c.mu.Lock()
	if c.cn == cn {
		c.cn = nil
	}
	c.mu.Unlock()
	_ = cn.nc.Close()
}

// dial connects to the server and prepares the connection — TLS
// handshake, AUTH, SELECT — within DialTimeout and ctx.
func (c *Client) dial(ctx context.Context) (*conn, error) {
	dctx, cancel := context.WithTimeout(ctx, c.opts.DialTimeout)
	defer cancel()
	d := net.Dialer{Timeout: c.opts.DialTimeout}
	nc, err := d.DialContext(dctx, "tcp", c.opts.Addr)
	if err != nil {
		return nil, c.dialError(ctx, err)
	}
	stop := interruptOnDone(dctx, nc)
	cn, err := c.prepare(dctx, nc)
	if !stop() && err == nil {
		err = dctx.Err()
	}
	if err != nil {
		_ = nc.Close()
		return nil, c.dialError(ctx, err)
	}
	return cn, nil
}

// prepare speaks TLS on nc when asked to, and sends AUTH and SELECT.
func (c *Client) prepare(ctx context.Context, nc net.Conn) (*conn, error) {
	cn := &conn{nc: nc}
	if c.opts.TLS != nil {
		tc := tls.Client(nc, c.opts.TLS)
		if err := tc.HandshakeContext(ctx); err != nil {
			return nil, fmt.Errorf("TLS handshake: %w", err)
		}
		cn.nc, cn.isTLS = tc, true
	}
	cn.br = bufio.NewReaderSize(cn.nc, readBuffer)
	if c.opts.Username != "" || c.opts.Password != "" {
		auth := []string{"AUTH", c.opts.Password}
		if c.opts.Username != "" {
			auth = []string{"AUTH", c.opts.Username, c.opts.Password}
		}
		if _, err := c.exchange(ctx, cn, auth); err != nil {
			return nil, fmt.Errorf("AUTH: %w", err)
		}
	}
	if c.opts.DB != 0 {
		if _, err := c.exchange(ctx, cn, []string{"SELECT", strconv.Itoa(c.opts.DB)}); err != nil {
			return nil, fmt.Errorf("SELECT %d: %w", c.opts.DB, err)
		}
	}
	return cn, nil
}

// dialError says what failed when connecting: ctx's error when ctx
// ended, a timeout when DialTimeout ran out, else err (the dialer's
// errors name the address already).
func (c *Client) dialError(ctx context.Context, err error) error {
	var opErr *net.OpError
	if d, ok := ctx.Deadline(); ok && ctx.Err() == nil && !time.Now().Before(d) {
		return fmt.Errorf("resp: connecting to %s: %w", c.opts.Addr, context.DeadlineExceeded)
	}
	switch {
	case ctx.Err() != nil:
		return fmt.Errorf("resp: connecting to %s: %w", c.opts.Addr, ctx.Err())
	case errors.Is(err, context.DeadlineExceeded) || errors.Is(err, os.ErrDeadlineExceeded):
		return fmt.Errorf("resp: connecting to %s: no answer within %v: %w", c.opts.Addr, c.opts.DialTimeout, os.ErrDeadlineExceeded)
	case errors.As(err, &opErr) && opErr.Op == "dial":
		return err
	}
	return fmt.Errorf("resp: connecting to %s: %w", c.opts.Addr, err)
}

// exchange sends one command on cn and reads its reply, each within its
// timeout and ctx's deadline.
func (c *Client) exchange(ctx context.Context, cn *conn, args []string) (any, error) {
	err := setDeadline(ctx, cn.nc.SetWriteDeadline, c.opts.WriteTimeout)
	if err == nil {
		_, err = cn.nc.Write(appendCommand(nil, args))
	}
	if err != nil {
		return nil, fmt.Errorf("resp: sending %s to %s: %w", args[0], c.opts.Addr, cause(ctx, err))
	}
	v, err := any(nil), setDeadline(ctx, cn.nc.SetReadDeadline, c.opts.ReadTimeout)
	if err == nil {
		v, err = readReply(cn.br, c.opts.MaxReply)
	}
	var serverErr *Error
	if err != nil && !errors.As(err, &serverErr) {
		return nil, fmt.Errorf("resp: reading the reply to %s from %s: %w", args[0], c.opts.Addr, cause(ctx, err))
	}
	return v, err
}

// cause returns err, an I/O error, as what caused it: ctx's error when
// ctx ended (the client set a deadline in the past to interrupt the I/O)
// or when the deadline that passed was ctx's.
func cause(ctx context.Context, err error) error {
	if !errors.Is(err, os.ErrDeadlineExceeded) {
		return err
	}
	if ctx.Err() != nil {
		return ctx.Err()
	}
	if d, ok := ctx.Deadline(); ok && !time.Now().Before(d) {
		return context.DeadlineExceeded
	}
	return err
}

// setDeadline sets a deadline timeout from now, or ctx's when earlier.
// It then checks ctx: a ctx that ended before the deadline was set may
// have had its interruption (interruptOnDone) overwritten.
func setDeadline(ctx context.Context, set func(time.Time) error, timeout time.Duration) error {
	t := time.Now().Add(timeout)
	if d, ok := ctx.Deadline(); ok && d.Before(t) {
		t = d
	}
	if err := set(t); err != nil {
		return err
	}
	return ctx.Err()
}

// interruptOnDone makes nc's reads and writes fail at once when ctx ends,
// by setting a deadline in the past; stop reports whether it had not yet.
func interruptOnDone(ctx context.Context, nc net.Conn) (stop func() bool) {
	return context.AfterFunc(ctx, func() { _ = nc.SetDeadline(time.Unix(1, 0)) })
}
