package gateway

import (
	"bytes"
	"cmp"
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Defaults of [Config].
const (
	DefaultDialTimeout      = 5 * time.Second
	DefaultMaxResponseBytes = 16 << 20
)

// A Config configures a [Client]. The zero value of every field but
// Endpoints is its default.
type Config struct {
	// Endpoints are etcd's client URLs, http://HOST:PORT or
	// https://HOST:PORT (HOST:PORT alone means http://): members of one
	// cluster. Requests go to one of them, the next in turn when it
	// cannot be connected to.
	Endpoints []string
	// TLS configures the connections to https endpoints: nil verifies
	// the server with the system's roots. A client certificate in it
	// authenticates the client.
	TLS *tls.Config
	// Username and Password, when Username is not empty, authenticate
	// to etcd (/v3/auth/authenticate) before the first request, and
	// again when etcd rejects the token.
	Username, Password string
	// DialTimeout bounds each connection attempt (DefaultDialTimeout).
	// A request's context bounds the request.
	DialTimeout time.Duration
	// MaxResponseBytes bounds each answer read
	// (DefaultMaxResponseBytes): a longer one fails with
	// [ErrResponseTooLarge].
	MaxResponseBytes int64
}

// A Client is a client of etcd's JSON gateway: the requests of etcd's v3
// API a lease needs, as HTTP/1.1 POSTs of JSON to /v3/kv/… and
// /v3/lease/…, with net/http and encoding/json only. It implements
// [txnlease.Client].
//
// A request goes to the endpoint that answered last; when that one
// cannot be connected to ([UnreachableError] lists why), to the next.
// A request that reached an endpoint is never sent again elsewhere: a
// transaction must not run twice. Requests end when their context does.
//
// A Client is safe for concurrent use by multiple goroutines.
type Client struct {
	endpoints []string
	http      *http.Client
	max       int64
	user, pw  string
	current   atomic.Int64 // the index of the endpoint that answered last

	authMu sync.Mutex
	token  string // etcd's auth token, under authMu
}

// New returns a client of the etcd gateway at cfg.Endpoints. It connects
// to nothing yet. Errors: a [*ConfigError] (it matches
// ringflake.ErrInvalidOption) for no endpoints, an endpoint that is not
// http(s)://HOST:PORT, or a negative DialTimeout or MaxResponseBytes.
func New(cfg Config) (*Client, error) {
	if len(cfg.Endpoints) == 0 {
		return nil, &ConfigError{Reason: "no endpoints"}
	}
	if cfg.DialTimeout < 0 || cfg.MaxResponseBytes < 0 {
		return nil, &ConfigError{Reason: "a negative DialTimeout or MaxResponseBytes"}
	}
	c := &Client{max: cfg.MaxResponseBytes, user: cfg.Username, pw: cfg.Password}
	if c.max == 0 {
		c.max = DefaultMaxResponseBytes
	}
	for i, ep := range cfg.Endpoints {
		norm, err := endpoint(ep)
		if err != nil {
			return nil, &ConfigError{Reason: fmt.Sprintf("endpoint %d, %q: %v", i+1, ep, err)}
		}
		c.endpoints = append(c.endpoints, norm)
	}
	dialer := &net.Dialer{Timeout: cmp.Or(cfg.DialTimeout, DefaultDialTimeout), KeepAlive: 30 * time.Second}
	dial := func(ctx context.Context, network, addr string) (net.Conn, error) {
		conn, err := dialer.DialContext(ctx, network, addr)
		if err != nil {
			return nil, &dialError{err}
		}
		return conn, nil
	}
	tlsConfig := cfg.TLS
	if tlsConfig == nil {
		tlsConfig = &tls.Config{MinVersion: tls.VersionTLS12}
	}
	transport := &http.Transport{
		Proxy:       nil, // etcd is reached directly, whatever HTTP_PROXY says
		DialContext: dial,
		// The handshake is part of connecting: a failed one moves to the
		// next endpoint. HTTP/1.1 only.
		DialTLSContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			raw, err := dial(ctx, network, addr)
			if err != nil {
				return nil, err
			}
			conf := tlsConfig.Clone()
			conf.NextProtos = []string{"http/1.1"}
			if conf.ServerName == "" {
				conf.ServerName, _, _ = net.SplitHostPort(addr)
			}
			conn := tls.Client(raw, conf)
			if err := conn.HandshakeContext(ctx); err != nil {
				_ = raw.Close()
				return nil, &dialError{err}
			}
			return conn, nil
		},
		MaxIdleConnsPerHost: 16,
		IdleConnTimeout:     90 * time.Second,
	}
	c.http = &http.Client{Transport: transport}
	return c, nil
}

// endpoint checks ep and returns it as SCHEME://HOST:PORT.
func endpoint(ep string) (string, error) {
	if !strings.Contains(ep, "://") {
		ep = "http://" + ep
	}
	u, err := url.Parse(ep)
	switch {
	case err != nil:
		return "", errors.New("not a URL")
	case u.Scheme != "http" && u.Scheme != "https":
		return "", fmt.Errorf("scheme %q: want http or https", u.Scheme)
	case u.User != nil || u.RawQuery != "" || u.Fragment != "" || (u.Path != "" && u.Path != "/"):
		return "", errors.New("want SCHEME://HOST:PORT, with nothing after it")
	}
	host, port, err := net.SplitHostPort(u.Host)
	if n, perr := strconv.Atoi(port); err != nil || host == "" || perr != nil || n < 1 || n > 65535 {
		return "", errors.New("not HOST:PORT")
	}
	return u.Scheme + "://" + u.Host, nil
}

// Endpoints returns the client's endpoints, SCHEME://HOST:PORT.
func (c *Client) Endpoints() []string { return append([]string(nil), c.endpoints...) }

// Close closes the client's idle connections. The client still works
// after it. It returns nil.
func (c *Client) Close() error {
	c.http.CloseIdleConnections()
	return nil
}

// dialError is a connection attempt that failed: the request was not
// sent.
type dialError struct{ err error }

func (e *dialError) Error() string { return e.err.Error() }
func (e *dialError) Unwrap() error { return e.err }

// An answer is what an endpoint answered to a request.
type answer struct {
	endpoint string
	status   int
	body     []byte
}

// call POSTs req, as JSON, to path, and returns the answer: from the
// endpoint that answered last or, when that cannot be connected to, the
// next. With idempotent, net/http may send the request again on a new
// connection when a kept-alive one turns out to be closed. It
// authenticates first when the client has a user, and once more when
// etcd rejects the token.
func (c *Client) call(ctx context.Context, path string, req any, idempotent bool) (answer, error) {
	body, err := json.Marshal(req)
	if err != nil {
		return answer{}, fmt.Errorf("etcd gateway: %s: %w", path, err)
	}
	token, err := c.authToken(ctx, "")
	if err != nil {
		return answer{}, err
	}
	a, err := c.post(ctx, path, body, token, idempotent)
	if err == nil && token != "" && a.status != http.StatusOK && decodeError(a.status, a.body).Code == codeUnauthenticated {
		// The token expired, or belongs to a member that restarted:
		// etcd ran nothing; authenticate again and send it once more.
		if token, err = c.authToken(ctx, token); err == nil {
			a, err = c.post(ctx, path, body, token, idempotent)
		}
	}
	return a, err
}

// authToken returns the auth token, "" without a user: the one the
// client has unless it is stale, else a new one.
func (c *Client) authToken(ctx context.Context, stale string) (string, error) {
	if c.user == "" {
		return "", nil
	}
	c.authMu.Lock()
	defer c.authMu.Unlock()
	if c.token != "" && c.token != stale {
		return c.token, nil
	}
	body, err := json.Marshal(wireAuth{Name: c.user, Password: c.pw})
	if err != nil {
		return "", err
	}
	const path = "/v3/auth/authenticate"
	a, err := c.post(ctx, path, body, "", false)
	if err != nil {
		return "", fmt.Errorf("authenticating as %q: %w", c.user, err)
	}
	if a.status != http.StatusOK {
		return "", fmt.Errorf("authenticating as %q: %w", c.user, a.err(path))
	}
	var w wireAuthResponse
	if err := decode(a.body, &w); err != nil || w.Header == nil || w.Token == "" {
		return "", fmt.Errorf("authenticating as %q: %w", c.user, &ResponseError{Endpoint: a.endpoint, Path: path, Reason: "no token"})
	}
	c.token = w.Token
	return w.Token, nil
}

// err returns a's error: etcd's, with its endpoint and path.
func (a answer) err(path string) *Error {
	e := decodeError(a.status, a.body)
	e.Endpoint, e.Path = a.endpoint, path
	return e
}

// post sends body to path, failing over to the next endpoint while one
// cannot be connected to, and reads the answer.
func (c *Client) post(ctx context.Context, path string, body []byte, token string, idempotent bool) (answer, error) {
	start := int(c.current.Load())
	var unreachable []error
	for i := range c.endpoints {
		n := (start + i) % len(c.endpoints)
		ep := c.endpoints[n]
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, ep+path, bytes.NewReader(body))
		if err != nil {
			return answer{}, fmt.Errorf("etcd gateway: %w", err)
		}
		req.Header.Set("Content-Type", "application/json")
		if token != "" {
			req.Header.Set("Authorization", token)
		}
		if idempotent {
			req.Header["Idempotency-Key"] = []string{} // retried by net/http, not sent
		}
		resp, err := c.http.Do(req)
		var dial *dialError
		switch {
		case err != nil && ctx.Err() != nil:
			return answer{}, ctxError(ctx, err)
		case errors.As(err, &dial):
			unreachable = append(unreachable, err)
			continue
		case err != nil:
			return answer{}, fmt.Errorf("etcd gateway: %w", err)
		}
		c.current.Store(int64(n))
		data, err := io.ReadAll(io.LimitReader(resp.Body, c.max+1))
		_ = resp.Body.Close()
		switch {
		case err != nil && ctx.Err() != nil:
			return answer{}, ctxError(ctx, err)
		case err != nil:
			return answer{}, fmt.Errorf("etcd gateway: %s%s: reading the answer: %w", ep, path, err)
		case int64(len(data)) > c.max:
			return answer{}, &ResponseError{Endpoint: ep, Path: path, Reason: fmt.Sprintf("longer than %d bytes", c.max), Err: ErrResponseTooLarge}
		}
		return answer{endpoint: ep, status: resp.StatusCode, body: data}, nil
	}
	return answer{}, &UnreachableError{Errs: unreachable}
}

// ctxError returns err, a request's error after ctx ended, so that it
// matches ctx's error.
func ctxError(ctx context.Context, err error) error {
	if errors.Is(err, ctx.Err()) {
		return fmt.Errorf("etcd gateway: %w", err)
	}
	return fmt.Errorf("etcd gateway: %w (%w)", ctx.Err(), err)
}
