package gateway_test

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ringflake/ringflake"
	"github.com/ringflake/ringflake/etcdlease/gateway"
	"github.com/ringflake/ringflake/etcdlease/txnlease"
)

// These tests put the client in front of fakes (httptest servers) that
// answer what etcd never does: garbage, errors, silence, a token that
// expired.

// fakeServer serves handler until the test ends.
func fakeServer(t *testing.T, handler http.HandlerFunc) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(handler)
	t.Cleanup(srv.Close)
	return srv
}

// answering returns a fake that answers every request with status and
// body.
func answering(t *testing.T, status int, body string) *httptest.Server {
	return fakeServer(t, func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(status)
		_, _ = io.WriteString(w, body)
	})
}

// calls are the client's requests, each as one call that returns only
// its error.
var calls = map[string]func(ctx context.Context, c *gateway.Client) error{
	"txn": func(ctx context.Context, c *gateway.Client) error {
		_, err := c.Txn(ctx, txnlease.Txn{If: []txnlease.Compare{txnlease.Absent("k")},
			Then: []txnlease.Op{txnlease.Put("k", "v", 0)},
			Else: []txnlease.Op{txnlease.Get("k"), txnlease.Nest(txnlease.Txn{Then: []txnlease.Op{txnlease.Get("j")}})}})
		return err
	},
	"range":  func(ctx context.Context, c *gateway.Client) error { _, err := c.Range(ctx, "k", ""); return err },
	"put":    func(ctx context.Context, c *gateway.Client) error { return c.Put(ctx, "k", "v", 0) },
	"delete": func(ctx context.Context, c *gateway.Client) error { _, err := c.Delete(ctx, "k", ""); return err },
	"grant":  func(ctx context.Context, c *gateway.Client) error { _, err := c.Grant(ctx, 10); return err },
	"revoke": func(ctx context.Context, c *gateway.Client) error { return c.Revoke(ctx, 7) },
	"keepalive": func(ctx context.Context, c *gateway.Client) error {
		_, err := c.KeepAliveOnce(ctx, 7)
		return err
	},
	"timetolive": func(ctx context.Context, c *gateway.Client) error {
		_, err := c.TimeToLive(ctx, 7)
		return err
	},
}

// TestGarbageAnswers: an answer with status 200 that is not etcd's
// answer to the request is a *ResponseError, never a result and never a
// panic: garbage for every request, then answers that fit some requests
// but not the one sent.
func TestGarbageAnswers(t *testing.T) {
	for name, body := range map[string]string{
		"empty":            "",
		"not JSON":         "<html>gateway timeout</html>",
		"null":             "null",
		"an array":         "[1,2]",
		"an empty object":  "{}",
		"truncated":        `{"header":{"revision":"3"},"kvs":[{"key":"aw==`,
		"a number header":  `{"header":5,"result":5}`,
		"a string":         `"header"`,
		"a header of null": `{"header":null,"result":null}`,
	} {
		t.Run(name, func(t *testing.T) {
			c := newClient(t, answering(t, http.StatusOK, body).URL)
			for call, f := range calls {
				var bad *gateway.ResponseError
				require.ErrorAs(t, f(ctx(t), c), &bad, "%s answered %q", call, body)
			}
		})
	}
	for _, tc := range []struct{ name, call, body string }{
		{"bad base64", "range", `{"header":{},"kvs":[{"key":"!!!"}]}`},
		{"a partial range", "range", `{"header":{},"more":true}`},
		{"a revision that is not a number", "range", `{"header":{},"kvs":[{"key":"aw==","mod_revision":"x"}]}`},
		{"an int64 out of range", "range", `{"header":{},"kvs":[{"key":"aw==","lease":"9223372036854775808"}]}`},
		{"lease id 0", "grant", `{"header":{},"ID":"0","TTL":"10"}`},
		{"lease id not a number", "grant", `{"header":{},"ID":"seven","TTL":"10"}`},
		{"TTL 0 granted", "grant", `{"header":{},"ID":"8","TTL":"0"}`},
		{"another lease's TTL", "timetolive", `{"header":{},"ID":"8","TTL":"10"}`},
		{"another lease kept alive", "keepalive", `{"result":{"header":{},"ID":"8","TTL":"10"}}`},
		{"a keep-alive without a result", "keepalive", `{"header":{},"ID":"7","TTL":"10"}`},
		{"a negative count", "delete", `{"header":{},"deleted":"-1"}`},
		{"responses of null", "txn", `{"header":{},"succeeded":false,"responses":null}`},
		{"transactions nested deep", "txn", strings.Repeat(`{"header":{},"responses":[{"response_txn":`, 200) + "{}" + strings.Repeat("}]}", 200)},
		{"nested beyond JSON's limit", "txn", strings.Repeat(`{"responses":[{"response_txn":`, 6000) + "{}" + strings.Repeat("}]}", 6000)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var bad *gateway.ResponseError
			require.ErrorAs(t, calls[tc.call](ctx(t), newClient(t, answering(t, http.StatusOK, tc.body).URL)), &bad)
		})
	}
}

// TestTxnAnswerMustMatch: a transaction's answer whose responses do not
// match the branch's operations is a *ResponseError: the lease would read
// a missing response as a missing key.
func TestTxnAnswerMustMatch(t *testing.T) {
	txn := txnlease.Txn{If: []txnlease.Compare{txnlease.Absent("k")},
		Then: []txnlease.Op{txnlease.Put("k", "v", 0)},
		Else: []txnlease.Op{txnlease.Get("k"), txnlease.Nest(txnlease.Txn{Then: []txnlease.Op{txnlease.Get("j")}})}}
	for name, body := range map[string]string{
		"too few":            `{"header":{},"responses":[{"response_range":{"header":{}}}]}`,
		"too many":           `{"header":{},"succeeded":true,"responses":[{"response_put":{}},{"response_put":{}}]}`,
		"a put for a range":  `{"header":{},"responses":[{"response_put":{}},{"response_txn":{"succeeded":true,"responses":[{"response_range":{}}]}}]}`,
		"nested short":       `{"header":{},"responses":[{"response_range":{}},{"response_txn":{"succeeded":true}}]}`,
		"nested other side":  `{"header":{},"responses":[{"response_range":{}},{"response_txn":{"responses":[{"response_range":{}}]}}]}`,
		"two kinds in one":   `{"header":{},"responses":[{"response_range":{},"response_put":{}},{"response_txn":{"succeeded":true,"responses":[{"response_range":{}}]}}]}`,
		"a partial range":    `{"header":{},"responses":[{"response_range":{"more":true}},{"response_txn":{"succeeded":true,"responses":[{"response_range":{}}]}}]}`,
		"no header":          `{"responses":[{"response_range":{}},{"response_txn":{"succeeded":true,"responses":[{"response_range":{}}]}}]}`,
		"a null put":         `{"header":{},"succeeded":true,"responses":[{"response_put":null}]}`,
		"a txn of the wrong": `{"header":{},"responses":[{"response_txn":{}},{"response_range":{}}]}`,
	} {
		t.Run(name, func(t *testing.T) {
			_, err := newClient(t, answering(t, http.StatusOK, body).URL).Txn(ctx(t), txn)
			var bad *gateway.ResponseError
			require.ErrorAs(t, err, &bad)
		})
	}
	// The same shape, right, is read.
	ok := `{"header":{},"responses":[{"response_range":{"kvs":[{"key":"aw==","value":"dg==","lease":"9"}]}},{"response_txn":{"succeeded":true,"responses":[{"response_range":{}}]}}]}`
	resp, err := newClient(t, answering(t, http.StatusOK, ok).URL).Txn(ctx(t), txn)
	require.NoError(t, err)
	assert.Equal(t, []txnlease.KeyValue{{Key: "k", Value: "v", Lease: 9}}, resp.Kvs(0))
	assert.True(t, resp.Nested(1).Succeeded)
}

// TestErrorAnswers: an answer with another status is an *Error with
// etcd's code and message when it has them (grpc-gateway v1 and v2
// bodies), the start of the body otherwise.
func TestErrorAnswers(t *testing.T) {
	for _, tc := range []struct {
		name, body string
		status     int
		code       int
		message    string
		notFound   bool
	}{
		{"no leader", `{"error":"etcdserver: no leader","message":"etcdserver: no leader","code":14}`, 503, 14, "etcdserver: no leader", false},
		{"v2 body", `{"code":5,"message":"etcdserver: requested lease not found","details":[]}`, 404, 5, "etcdserver: requested lease not found", true},
		{"v1 error only", `{"error":"etcdserver: too many requests","code":8}`, 429, 8, "etcdserver: too many requests", false},
		{"not JSON", "Bad Gateway\n", 502, 0, `not an error of etcd's: "Bad Gateway"`, false},
		{"JSON without a message", `{"error":7}`, 500, 0, `an error without a message: "{\"error\":7}"`, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := answering(t, tc.status, tc.body)
			err := newClient(t, srv.URL).Revoke(ctx(t), 7)
			var etcdErr *gateway.Error
			require.ErrorAs(t, err, &etcdErr)
			assert.Equal(t, gateway.Error{Endpoint: srv.URL, Path: "/v3/lease/revoke", Status: tc.status, Code: tc.code, Message: tc.message}, *etcdErr)
			assert.Equal(t, tc.notFound, assert.ErrorIs(&testing.T{}, err, txnlease.ErrLeaseNotFound))
			assert.NotContains(t, err.Error(), "\n", "one line")
		})
	}
}

// TestKeepAliveAnswers: the keep-alive stream answers a TTL of 0 for a
// lease that is gone, or ends with an error.
func TestKeepAliveAnswers(t *testing.T) {
	for _, tc := range []struct {
		name, body string
		notFound   bool
	}{
		{"TTL 0", `{"result":{"header":{},"ID":"7"}}` + "\n", true},
		{"v1 stream error", `{"error":{"grpc_code":5,"http_code":404,"message":"etcdserver: requested lease not found","http_status":"Not Found"}}`, true},
		{"v2 stream error", `{"error":{"code":14,"message":"etcdserver: no leader"}}`, false},
		{"neither", `{"header":{}}`, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := newClient(t, answering(t, http.StatusOK, tc.body).URL).KeepAliveOnce(ctx(t), 7)
			require.Error(t, err)
			assert.Equal(t, tc.notFound, assert.ErrorIs(&testing.T{}, err, txnlease.ErrLeaseNotFound), "%v", err)
		})
	}
	ttl, err := newClient(t, answering(t, http.StatusOK, `{"result":{"header":{},"ID":"7","TTL":"10"}}`+"\n").URL).KeepAliveOnce(ctx(t), 7)
	require.NoError(t, err)
	assert.Equal(t, int64(10), ttl)
}

// TestResponseTooLarge: an answer longer than MaxResponseBytes is not
// read.
func TestResponseTooLarge(t *testing.T) {
	srv := answering(t, http.StatusOK, `{"header":{},"kvs":[{"key":"`+strings.Repeat("QUFB", 100)+`"}]}`)
	c, err := gateway.New(gateway.Config{Endpoints: []string{srv.URL}, MaxResponseBytes: 256})
	require.NoError(t, err)
	_, err = c.Range(ctx(t), "k", "")
	require.ErrorIs(t, err, gateway.ErrResponseTooLarge)
}

// TestSentRequestNotSentAgain: a write whose connection breaks after it
// was sent fails; it is sent neither again nor to another endpoint,
// since etcd may have run it.
func TestSentRequestNotSentAgain(t *testing.T) {
	var first, second atomic.Int32
	breaking := fakeServer(t, func(w http.ResponseWriter, r *http.Request) {
		first.Add(1)
		_, _ = io.ReadAll(r.Body)
		conn, _, err := http.NewResponseController(w).Hijack()
		if err == nil {
			_ = conn.Close()
		}
	})
	other := fakeServer(t, func(http.ResponseWriter, *http.Request) { second.Add(1) })
	c := newClient(t, breaking.URL, other.URL)
	err := c.Put(ctx(t), "k", "v", 0)
	require.Error(t, err)
	var unreachable *gateway.UnreachableError
	assert.False(t, assert.ErrorAs(&testing.T{}, err, &unreachable), "it reached the endpoint: %v", err)
	assert.Equal(t, int32(1), first.Load())
	assert.Zero(t, second.Load())
}

// TestReauthenticates: when etcd rejects the token (it expired), the
// client authenticates again and sends the request once more.
func TestReauthenticates(t *testing.T) {
	var (
		mu     sync.Mutex
		tokens []string // the tokens handed out
		valid  = "token-2"
		seen   []string // Authorization of each range request
	)
	srv := fakeServer(t, func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		switch r.URL.Path {
		case "/v3/auth/authenticate":
			body, _ := io.ReadAll(r.Body)
			if !strings.Contains(string(body), `"password":"secret"`) {
				w.WriteHeader(http.StatusBadRequest)
				_, _ = io.WriteString(w, `{"error":"etcdserver: authentication failed, invalid user ID or password","message":"etcdserver: authentication failed, invalid user ID or password","code":3}`)
				return
			}
			tokens = append(tokens, "token-"+string(rune('1'+len(tokens))))
			_, _ = io.WriteString(w, `{"header":{},"token":"`+tokens[len(tokens)-1]+`"}`)
		case "/v3/kv/range":
			seen = append(seen, r.Header.Get("Authorization"))
			if r.Header.Get("Authorization") != valid {
				w.WriteHeader(http.StatusUnauthorized)
				_, _ = io.WriteString(w, `{"error":"etcdserver: invalid auth token","message":"etcdserver: invalid auth token","code":16}`)
				return
			}
			_, _ = io.WriteString(w, `{"header":{}}`)
		}
	})
	c, err := gateway.New(gateway.Config{Endpoints: []string{srv.URL}, Username: "root", Password: "secret"})
	require.NoError(t, err)
	for range 2 {
		_, err = c.Range(ctx(t), "k", "")
		require.NoError(t, err)
	}
	assert.Equal(t, []string{"token-1", "token-2"}, tokens)
	assert.Equal(t, []string{"token-1", "token-2", "token-2"}, seen)

	wrong, err := gateway.New(gateway.Config{Endpoints: []string{srv.URL}, Username: "root", Password: "guess"})
	require.NoError(t, err)
	_, err = wrong.Range(ctx(t), "k", "")
	var etcdErr *gateway.Error
	require.ErrorAs(t, err, &etcdErr)
	assert.Equal(t, 3, etcdErr.Code)
}

// TestTLS: https endpoints are verified with Config.TLS (the system's
// roots without it); a handshake that fails counts as an endpoint that
// cannot be connected to, and the client moves on to the next.
func TestTLS(t *testing.T) {
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		_, _ = io.WriteString(w, `{"header":{}}`)
	}))
	t.Cleanup(srv.Close)
	roots := x509.NewCertPool()
	roots.AddCert(srv.Certificate())
	trusting := &tls.Config{RootCAs: roots} // for 127.0.0.1, a name of the certificate

	c, err := gateway.New(gateway.Config{Endpoints: []string{srv.URL}, TLS: trusting})
	require.NoError(t, err)
	require.NoError(t, c.Put(ctx(t), "k", "v", 0))

	c, err = gateway.New(gateway.Config{Endpoints: []string{srv.URL}})
	require.NoError(t, err)
	var unreachable *gateway.UnreachableError
	require.ErrorAs(t, c.Put(ctx(t), "k", "v", 0), &unreachable, "httptest's authority is not among the system's")

	plain := answering(t, http.StatusOK, `{"header":{}}`) // no TLS: the handshake fails
	c, err = gateway.New(gateway.Config{Endpoints: []string{"https://" + plain.Listener.Addr().String(), srv.URL}, TLS: trusting})
	require.NoError(t, err)
	require.NoError(t, c.Put(ctx(t), "k", "v", 0))
}

// TestConfigErrors: a Config that cannot work is refused by New.
func TestConfigErrors(t *testing.T) {
	for name, cfg := range map[string]gateway.Config{
		"no endpoints":         {},
		"an empty endpoint":    {Endpoints: []string{""}},
		"another scheme":       {Endpoints: []string{"grpc://127.0.0.1:2379"}},
		"no port":              {Endpoints: []string{"http://127.0.0.1"}},
		"a port out of range":  {Endpoints: []string{"127.0.0.1:70000"}},
		"a path":               {Endpoints: []string{"http://127.0.0.1:2379/v3"}},
		"credentials":          {Endpoints: []string{"http://u:p@127.0.0.1:2379"}},
		"negative dial":        {Endpoints: []string{"127.0.0.1:2379"}, DialTimeout: -1},
		"negative max answers": {Endpoints: []string{"127.0.0.1:2379"}, MaxResponseBytes: -1},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := gateway.New(cfg)
			require.ErrorIs(t, err, ringflake.ErrInvalidOption)
			var cfgErr *gateway.ConfigError
			require.ErrorAs(t, err, &cfgErr)
		})
	}
	c, err := gateway.New(gateway.Config{Endpoints: []string{"127.0.0.1:2379", "https://[::1]:2379"}})
	require.NoError(t, err)
	assert.Equal(t, []string{"http://127.0.0.1:2379", "https://[::1]:2379"}, c.Endpoints())
}

// TestConcurrentUse: goroutines share one client while etcd rejects its
// token once, midway: every request gets its own answer, and the client
// authenticates again once, not once per goroutine.
func TestConcurrentUse(t *testing.T) {
	const goroutines, each, rotateAt = 8, 25, 60
	var (
		mu       sync.Mutex
		auths    int
		valid    string
		requests int
	)
	srv := fakeServer(t, func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Key []byte `json:"key"`
		}
		_ = json.NewDecoder(r.Body).Decode(&req)
		mu.Lock()
		defer mu.Unlock()
		switch r.URL.Path {
		case "/v3/auth/authenticate":
			auths++
			valid = fmt.Sprintf("token-%d", auths)
			_, _ = fmt.Fprintf(w, `{"header":{},"token":%q}`, valid)
		case "/v3/kv/range":
			if requests++; requests == rotateAt {
				valid = "" // the token expired
			}
			if r.Header.Get("Authorization") != valid {
				w.WriteHeader(http.StatusUnauthorized)
				_, _ = io.WriteString(w, `{"error":"etcdserver: invalid auth token","message":"etcdserver: invalid auth token","code":16}`)
				return
			}
			_, _ = fmt.Fprintf(w, `{"header":{},"kvs":[{"key":%q}]}`, base64.StdEncoding.EncodeToString(req.Key))
		}
	})
	c, err := gateway.New(gateway.Config{Endpoints: []string{srv.URL}, Username: "root", Password: "secret"})
	require.NoError(t, err)
	var wg sync.WaitGroup
	errs := make(chan error, goroutines*each)
	for g := range goroutines {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				key := fmt.Sprintf("k/%d/%d", g, i)
				kvs, err := c.Range(context.Background(), key, "")
				if err == nil && (len(kvs) != 1 || kvs[0].Key != key) {
					err = fmt.Errorf("asked for %s, got %+v", key, kvs)
				}
				errs <- err
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	assert.Equal(t, 2, auths, "one authentication, and one after the token expired")
}
