package gateway_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/benbjohnson/clock"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ringflake/ringflake"
	"github.com/ringflake/ringflake/etcdlease/gateway"
	"github.com/ringflake/ringflake/etcdlease/txnlease"
	"github.com/ringflake/ringflake/lease/leasetest"
)

// These tests run against the shared etcd (leasetest.EtcdEndpointsEnv)
// and one of their own, with authentication; they fail without them.

// TestTxn sends the kinds of transaction the leases send — comparisons of
// values and of create revisions, puts attached to a lease, prefix reads
// without values, nested transactions — and checks etcd's answers as the
// client reads them.
func TestTxn(t *testing.T) {
	c, p := sharedClient(t), leasetest.Prefix(t)
	grant, err := c.Grant(ctx(t), 60)
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Revoke(context.Background(), grant.ID) })

	put, err := c.Txn(ctx(t), txnlease.Txn{
		If:   []txnlease.Compare{txnlease.Absent(p + "/a")},
		Then: []txnlease.Op{txnlease.Put(p+"/a", "1", grant.ID), txnlease.Put(p+"/b", "2", 0)},
		Else: []txnlease.Op{txnlease.Get(p + "/a")},
	})
	require.NoError(t, err)
	assert.True(t, put.Succeeded)
	assert.Len(t, put.Responses, 2)

	again, err := c.Txn(ctx(t), txnlease.Txn{
		If:   []txnlease.Compare{txnlease.Absent(p + "/a")},
		Then: []txnlease.Op{txnlease.Put(p+"/a", "other", 0)},
		Else: []txnlease.Op{txnlease.Get(p + "/a"), txnlease.GetPrefix(p+"/", true)},
	})
	require.NoError(t, err)
	require.False(t, again.Succeeded, "the key exists")
	a := again.Kvs(0)
	require.Len(t, a, 1)
	assert.Equal(t, "1", a[0].Value)
	assert.Equal(t, grant.ID, a[0].Lease)
	assert.Positive(t, a[0].CreateRevision)
	keys := again.Kvs(1)
	require.Len(t, keys, 2)
	assert.Equal(t, []string{p + "/a", p + "/b"}, []string{keys[0].Key, keys[1].Key})
	assert.Empty(t, keys[0].Value+keys[1].Value, "keys only")

	// The shape of SaveMark's: a transaction nested twice in Else.
	nested, err := c.Txn(ctx(t), txnlease.Txn{
		If: []txnlease.Compare{txnlease.ValueIs(p+"/b", txnlease.Greater, "2")},
		Else: []txnlease.Op{txnlease.Nest(txnlease.Txn{
			If: []txnlease.Compare{txnlease.ValueIs(p+"/missing", txnlease.Less, "z")}, // a missing key's value compares false
			Else: []txnlease.Op{txnlease.Nest(txnlease.Txn{
				If:   []txnlease.Compare{txnlease.ValueIs(p+"/b", txnlease.NotEqual, "3"), txnlease.ValueIs(p+"/a", txnlease.Less, "2")},
				Then: []txnlease.Op{txnlease.Put(p+"/c", "3", 0), txnlease.Get(p + "/c")},
			})},
		})},
	})
	require.NoError(t, err)
	assert.False(t, nested.Succeeded)
	assert.False(t, nested.Nested(0).Succeeded)
	inner := nested.Nested(0).Nested(0)
	assert.True(t, inner.Succeeded)
	require.Len(t, inner.Kvs(1), 1)
	assert.Equal(t, "3", inner.Kvs(1)[0].Value)
}

// TestLeaseCalls: grant, time to live, keep-alive and revoke, and what
// each answers for a lease that is gone: errors that match
// txnlease.ErrLeaseNotFound, and a TTL of -1.
func TestLeaseCalls(t *testing.T) {
	c, p := sharedClient(t), leasetest.Prefix(t)
	grant, err := c.Grant(ctx(t), 60)
	require.NoError(t, err)
	assert.Equal(t, int64(60), grant.TTL)
	ttl, err := c.TimeToLive(ctx(t), grant.ID)
	require.NoError(t, err)
	assert.True(t, ttl >= 0 && ttl <= 60, "ttl %d", ttl)
	ttl, err = c.KeepAliveOnce(ctx(t), grant.ID)
	require.NoError(t, err)
	assert.Equal(t, int64(60), ttl)
	require.NoError(t, c.Put(ctx(t), p+"/k", "v", grant.ID))

	require.NoError(t, c.Revoke(ctx(t), grant.ID))
	kvs, err := c.Range(ctx(t), p+"/k", "")
	require.NoError(t, err)
	assert.Empty(t, kvs, "revoking the lease deleted its key")
	_, err = c.KeepAliveOnce(ctx(t), grant.ID)
	require.ErrorIs(t, err, txnlease.ErrLeaseNotFound)
	err = c.Revoke(ctx(t), grant.ID)
	require.ErrorIs(t, err, txnlease.ErrLeaseNotFound)
	var etcdErr *gateway.Error
	require.ErrorAs(t, err, &etcdErr)
	assert.Equal(t, http.StatusNotFound, etcdErr.Status)
	ttl, err = c.TimeToLive(ctx(t), grant.ID)
	require.NoError(t, err)
	assert.Equal(t, int64(-1), ttl)
	require.ErrorIs(t, c.Put(ctx(t), p+"/k", "v", grant.ID), txnlease.ErrLeaseNotFound)

	n, err := c.Delete(ctx(t), p+"/", txnlease.PrefixEnd(p+"/"))
	require.NoError(t, err)
	assert.Zero(t, n)
}

// TestEtcdError: a request etcd refuses is an *Error with etcd's code
// (3, InvalidArgument) that is not a missing lease.
func TestEtcdError(t *testing.T) {
	err := sharedClient(t).Put(ctx(t), "", "v", 0)
	var etcdErr *gateway.Error
	require.ErrorAs(t, err, &etcdErr)
	assert.Equal(t, 3, etcdErr.Code)
	assert.Equal(t, http.StatusBadRequest, etcdErr.Status)
	assert.NotErrorIs(t, err, txnlease.ErrLeaseNotFound)
}

// TestFailover: an endpoint that refuses connections is skipped, and the
// next request goes straight to the one that answered; with none
// reachable, the error lists each endpoint's.
func TestFailover(t *testing.T) {
	dead := fmt.Sprintf("127.0.0.1:%d", leasetest.FreePort(t))
	shared := leasetest.RequireEnv(t, leasetest.EtcdEndpointsEnv)
	c := newClient(t, dead, shared)
	for range 2 {
		_, err := c.Range(ctx(t), "failover", "")
		require.NoError(t, err)
	}

	_, err := newClient(t, dead, dead).Range(ctx(t), "failover", "")
	var unreachable *gateway.UnreachableError
	require.ErrorAs(t, err, &unreachable)
	assert.Len(t, unreachable.Errs, 2)
}

// TestAuth runs an etcd of its own with authentication on: a client
// without a user, or with a wrong password, gets etcd's refusal; one with
// the right password leases node ids.
func TestAuth(t *testing.T) {
	s := leasetest.StartEtcd(t)
	for _, req := range []struct{ path, body string }{
		{"/v3/auth/user/add", `{"name":"root","password":"secret"}`},
		{"/v3/auth/role/add", `{"name":"root"}`},
		{"/v3/auth/user/grant", `{"user":"root","role":"root"}`},
		{"/v3/auth/enable", `{}`},
	} {
		resp, err := http.Post(s.Endpoint+req.path, "application/json", bytes.NewBufferString(req.body))
		require.NoError(t, err)
		_ = resp.Body.Close()
		require.Equal(t, http.StatusOK, resp.StatusCode, req.path)
	}
	for _, tc := range []struct {
		name, user, password string
	}{{"no user", "", ""}, {"wrong password", "root", "guess"}} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := gateway.New(gateway.Config{Endpoints: []string{s.Endpoint}, Username: tc.user, Password: tc.password})
			require.NoError(t, err)
			_, err = c.Range(ctx(t), "k", "")
			var etcdErr *gateway.Error
			require.ErrorAs(t, err, &etcdErr)
			assert.Equal(t, 3, etcdErr.Code, "InvalidArgument: %v", err)
		})
	}
	c, err := gateway.New(gateway.Config{Endpoints: []string{s.Endpoint}, Username: "root", Password: "secret"})
	require.NoError(t, err)
	opts := txnlease.Options{Prefix: leasetest.Prefix(t), Clock: clock.NewMock()}
	require.NoError(t, c.Put(ctx(t), opts.Prefix+"/epoch", "settled", 0))
	l, err := txnlease.Acquire(ctx(t), c, opts)
	require.NoError(t, err)
	assert.True(t, l.Held())
	require.NoError(t, l.SaveMark(ctx(t), ringflake.Mark{Limit: leasetest.Start, Since: leasetest.Start}))
	require.NoError(t, l.Close(ctx(t)))
}

// TestRequestEndsWithItsContext: a request to an etcd that does not
// answer (a fake whose handler waits) ends with its context's error.
func TestRequestEndsWithItsContext(t *testing.T) {
	release := make(chan struct{})
	srv := fakeServer(t, func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.ReadAll(r.Body) // then the server notices the client hanging up
		select {
		case <-r.Context().Done():
		case <-release:
		}
	})
	t.Cleanup(func() { close(release) }) // before the server's Close
	c := newClient(t, srv.URL)
	short, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	_, err := c.KeepAliveOnce(short, 1)
	require.ErrorIs(t, err, context.DeadlineExceeded)

	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	_, err = c.Txn(cancelled, txnlease.Txn{Then: []txnlease.Op{txnlease.Get("k")}})
	require.ErrorIs(t, err, context.Canceled)
	assert.False(t, errors.Is(err, context.DeadlineExceeded))
}
