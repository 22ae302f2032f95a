package gateway

import (
	"context"
	"net/http"

	"github.com/ringflake/ringflake/etcdlease/txnlease"
)

var _ txnlease.Client = (*Client)(nil)

// Txn runs txn (POST /v3/kv/txn) and returns its response, once it has
// checked that the response answers txn: one response per operation of
// the branch that ran, each of the operation's kind ([txnlease.Txn.Matches]),
// else a [*ResponseError]. Errors: a [*ResponseError] too for a
// transaction this package cannot send (an unknown kind, target or
// result); etcd's as an [*Error]; an [*UnreachableError]; ctx's.
func (c *Client) Txn(ctx context.Context, txn txnlease.Txn) (txnlease.TxnResponse, error) {
	const path = "/v3/kv/txn"
	req, err := encodeTxn(txn, 0)
	if err != nil {
		return txnlease.TxnResponse{}, &ResponseError{Path: path, Reason: "not sent: " + err.Error()}
	}
	a, err := c.call(ctx, path, req, readOnly(txn))
	if err != nil {
		return txnlease.TxnResponse{}, err
	}
	if a.status != http.StatusOK {
		return txnlease.TxnResponse{}, a.err(path)
	}
	resp, err := decodeTxn(txn, a.body)
	if err != nil {
		return txnlease.TxnResponse{}, &ResponseError{Endpoint: a.endpoint, Path: path, Reason: err.Error()}
	}
	return resp, nil
}

// readOnly reports whether txn writes nothing, so that sending it twice
// does no harm.
func readOnly(txn txnlease.Txn) bool {
	for _, ops := range [][]txnlease.Op{txn.Then, txn.Else} {
		for _, op := range ops {
			if op.Kind == txnlease.OpPut || op.Kind == txnlease.OpTxn && (op.Txn == nil || !readOnly(*op.Txn)) {
				return false
			}
		}
	}
	return true
}

// Range returns the key key or, when end is not empty, the keys in
// [key, end) (POST /v3/kv/range), read at one revision; end
// [txnlease.PrefixEnd](p) with key p reads the keys that start with p.
func (c *Client) Range(ctx context.Context, key, end string) ([]txnlease.KeyValue, error) {
	const path = "/v3/kv/range"
	a, err := c.call(ctx, path, wireRange{Key: []byte(key), RangeEnd: []byte(end)}, true)
	if err != nil {
		return nil, err
	}
	if a.status != http.StatusOK {
		return nil, a.err(path)
	}
	kvs, err := decodeRange(a.body)
	if err != nil {
		return nil, &ResponseError{Endpoint: a.endpoint, Path: path, Reason: err.Error()}
	}
	return kvs, nil
}

// Put writes value into key, attached to etcd lease lease (0: none)
// (POST /v3/kv/put).
func (c *Client) Put(ctx context.Context, key, value string, lease int64) error {
	const path = "/v3/kv/put"
	return c.headerOnly(ctx, path, wirePut{Key: []byte(key), Value: []byte(value), Lease: i64(lease)}, false)
}

// Delete deletes the key key or, when end is not empty, the keys in
// [key, end) (POST /v3/kv/deleterange), and returns how many it deleted.
func (c *Client) Delete(ctx context.Context, key, end string) (int64, error) {
	const path = "/v3/kv/deleterange"
	a, err := c.call(ctx, path, wireDelete{Key: []byte(key), RangeEnd: []byte(end)}, false)
	if err != nil {
		return 0, err
	}
	if a.status != http.StatusOK {
		return 0, a.err(path)
	}
	var w wireDeleteResponse
	if err := decode(a.body, &w); err != nil || w.Header == nil || w.Deleted < 0 {
		return 0, &ResponseError{Endpoint: a.endpoint, Path: path, Reason: reason(err, "no header, or a negative count")}
	}
	return int64(w.Deleted), nil
}

// Grant grants a lease of ttl seconds (POST /v3/lease/grant); etcd may
// grant more.
func (c *Client) Grant(ctx context.Context, ttl int64) (txnlease.Grant, error) {
	const path = "/v3/lease/grant"
	a, err := c.call(ctx, path, wireLease{TTL: i64(ttl)}, false)
	if err != nil {
		return txnlease.Grant{}, err
	}
	if a.status != http.StatusOK {
		return txnlease.Grant{}, a.err(path)
	}
	w, err := decodeLease(0, a.body)
	switch {
	case err != nil:
		return txnlease.Grant{}, &ResponseError{Endpoint: a.endpoint, Path: path, Reason: err.Error()}
	case w.Error != "":
		return txnlease.Grant{}, &Error{Endpoint: a.endpoint, Path: path, Status: a.status, Message: w.Error}
	case w.TTL <= 0:
		return txnlease.Grant{}, &ResponseError{Endpoint: a.endpoint, Path: path, Reason: "granted a TTL that is not positive"}
	}
	return txnlease.Grant{ID: int64(w.ID), TTL: int64(w.TTL)}, nil
}

// Revoke revokes lease id (POST /v3/lease/revoke), deleting its keys.
// Its error matches txnlease.ErrLeaseNotFound when the lease does not
// exist.
func (c *Client) Revoke(ctx context.Context, id int64) error {
	return c.headerOnly(ctx, "/v3/lease/revoke", wireLease{ID: i64(id)}, true)
}

// KeepAliveOnce renews lease id once (POST /v3/lease/keepalive, one
// message of the stream) and returns its TTL from now, in seconds. Its
// error matches txnlease.ErrLeaseNotFound when the lease does not exist:
// etcd then answers a TTL of 0.
func (c *Client) KeepAliveOnce(ctx context.Context, id int64) (int64, error) {
	const path = "/v3/lease/keepalive"
	a, err := c.call(ctx, path, wireLease{ID: i64(id)}, true)
	if err != nil {
		return 0, err
	}
	if a.status != http.StatusOK {
		return 0, a.err(path)
	}
	w, streamErr, err := decodeKeepAlive(id, a.body)
	switch {
	case err != nil:
		return 0, &ResponseError{Endpoint: a.endpoint, Path: path, Reason: err.Error()}
	case streamErr != nil:
		streamErr.Endpoint, streamErr.Path = a.endpoint, path
		return 0, streamErr
	case w.TTL <= 0:
		return 0, &Error{Endpoint: a.endpoint, Path: path, Status: a.status, Code: codeNotFound,
			Message: "requested lease not found (the keep-alive answered a TTL of 0)"}
	}
	return int64(w.TTL), nil
}

// TimeToLive returns the remaining TTL of lease id in whole seconds,
// rounded down, or -1 when it expired or does not exist (POST
// /v3/lease/timetolive).
func (c *Client) TimeToLive(ctx context.Context, id int64) (int64, error) {
	const path = "/v3/lease/timetolive"
	a, err := c.call(ctx, path, wireLease{ID: i64(id)}, true)
	if err != nil {
		return 0, err
	}
	if a.status != http.StatusOK {
		return 0, a.err(path)
	}
	w, err := decodeLease(id, a.body)
	if err != nil {
		return 0, &ResponseError{Endpoint: a.endpoint, Path: path, Reason: err.Error()}
	}
	return int64(w.TTL), nil
}

// headerOnly sends a request whose answer carries nothing but a header.
func (c *Client) headerOnly(ctx context.Context, path string, req any, idempotent bool) error {
	a, err := c.call(ctx, path, req, idempotent)
	if err != nil {
		return err
	}
	if a.status != http.StatusOK {
		return a.err(path)
	}
	var w struct {
		Header *wireHeader `json:"header"`
	}
	if err := decode(a.body, &w); err != nil || w.Header == nil {
		return &ResponseError{Endpoint: a.endpoint, Path: path, Reason: reason(err, "no header")}
	}
	return nil
}

// reason is err's message, or otherwise's when err is nil.
func reason(err error, otherwise string) string {
	if err != nil {
		return err.Error()
	}
	return otherwise
}
