package gateway

import (
	"errors"
	"fmt"
	"strings"

	"github.com/ringflake/ringflake"
	"github.com/ringflake/ringflake/etcdlease/txnlease"
)

// gRPC status codes that etcd's answers carry and this package acts on.
const (
	codeNotFound        = 5
	codeUnauthenticated = 16
)

// An Error is an error etcd answered with: an HTTP status other than 200
// OK, or an error on a stream (a keep-alive). Code is the gRPC status
// code etcd gave (5 NotFound, 9 FailedPrecondition, 14 Unavailable, 16
// Unauthenticated…; 0 when it gave none) and Message its message
// ("etcdserver: requested lease not found"). An Error about an etcd lease
// that does not exist matches [txnlease.ErrLeaseNotFound].
type Error struct {
	Endpoint string // the endpoint that answered, http(s)://HOST:PORT
	Path     string // the request's path, /v3/kv/txn
	Status   int    // the HTTP status
	Code     int
	Message  string
}

// Error names the endpoint, the request and what etcd said.
func (e *Error) Error() string {
	return fmt.Sprintf("etcd gateway: %s%s: %s (code %d, HTTP %d)", e.Endpoint, e.Path, e.Message, e.Code, e.Status)
}

// Is reports whether target is txnlease.ErrLeaseNotFound and e is
// etcd's NotFound to a key-value or lease request: the only NotFound of
// those APIs is "requested lease not found" (a renewal, a revocation, a
// put attached to a lease that does not exist).
func (e *Error) Is(target error) bool {
	return target == txnlease.ErrLeaseNotFound && e.Code == codeNotFound &&
		(strings.HasPrefix(e.Path, "/v3/lease/") || strings.HasPrefix(e.Path, "/v3/kv/"))
}

// ErrResponseTooLarge is what a [*ResponseError] wraps when an answer is
// longer than [Config.MaxResponseBytes].
var ErrResponseTooLarge = errors.New("etcd gateway: response too large")

// A ResponseError is an answer with status 200 OK that is not etcd's
// answer to the request: not JSON, JSON of another shape (a transaction
// response whose responses do not match the request's operations, a lease
// response about another lease), or too large. Nothing in it is used.
type ResponseError struct {
	Endpoint string
	Path     string
	Reason   string
	Err      error // ErrResponseTooLarge, or nil
}

// Error names the endpoint, the request and what was wrong.
func (e *ResponseError) Error() string {
	return fmt.Sprintf("etcd gateway: %s%s: a bad answer: %s", e.Endpoint, e.Path, e.Reason)
}

// Unwrap returns Err.
func (e *ResponseError) Unwrap() error { return e.Err }

// An UnreachableError reports that no endpoint could be connected to
// (connection refused, no route, DNS, a TLS handshake that failed, no
// connection within Config.DialTimeout): the request was sent nowhere.
// Errs holds each endpoint's error, in the order they were tried.
type UnreachableError struct {
	Errs []error
}

// Error lists every endpoint's error, on one line.
func (e *UnreachableError) Error() string {
	msgs := make([]string, len(e.Errs))
	for i, err := range e.Errs {
		msgs[i] = err.Error()
	}
	return "etcd gateway: no endpoint reachable: " + strings.Join(msgs, "; ")
}

// Unwrap returns Errs.
func (e *UnreachableError) Unwrap() []error { return e.Errs }

// A ConfigError reports a [Config] that cannot work. It matches
// ringflake.ErrInvalidOption.
type ConfigError struct {
	Reason string
}

// Error tells the reason.
func (e *ConfigError) Error() string {
	return fmt.Sprintf("%v: etcd gateway: %s", ringflake.ErrInvalidOption, e.Reason)
}

// Is reports whether target is ringflake.ErrInvalidOption.
func (e *ConfigError) Is(target error) bool { return target == ringflake.ErrInvalidOption }
