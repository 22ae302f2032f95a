package etcdlease

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"

	"github.com/ringflake/ringflake/etcdlease/gateway"
	"github.com/ringflake/ringflake/etcdlease/txnlease"
	"github.com/ringflake/ringflake/lease/leasetest"
)

// TestTransportsAgree sends the same transactions through both
// transports — clientv3 (gRPC) and the JSON gateway — to the shared
// etcd, and requires the same responses: what the lease reads does not
// depend on the transport.
func TestTransportsAgree(t *testing.T) {
	endpoints := strings.Split(leasetest.RequireEnv(t, leasetest.EtcdEndpointsEnv), ",")
	cli, err := clientv3.New(clientv3.Config{Endpoints: endpoints, DialTimeout: 10 * time.Second, Logger: zap.NewNop()})
	require.NoError(t, err)
	t.Cleanup(func() { _ = cli.Close() })
	gw, err := gateway.New(gateway.Config{Endpoints: endpoints})
	require.NoError(t, err)
	transports := map[string]txnlease.Client{"clientv3": adapt(cli), "gateway": gw}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	p := leasetest.Prefix(t)
	grant, err := gw.Grant(ctx, 60)
	require.NoError(t, err)
	t.Cleanup(func() { _ = gw.Revoke(context.Background(), grant.ID) })
	_, err = gw.Txn(ctx, txnlease.Txn{Then: []txnlease.Op{
		txnlease.Put(p+"/a", "1", grant.ID), txnlease.Put(p+"/b", "2", 0), txnlease.Put(p+"/c", "", 0)}})
	require.NoError(t, err)

	for name, txn := range map[string]txnlease.Txn{
		"reads": {Then: []txnlease.Op{txnlease.Get(p + "/a"), txnlease.Get(p + "/none"), txnlease.GetPrefix(p+"/", false), txnlease.GetPrefix(p+"/", true)}},
		"every result": {If: []txnlease.Compare{
			txnlease.ValueIs(p+"/a", txnlease.Equal, "1"), txnlease.ValueIs(p+"/a", txnlease.NotEqual, "2"),
			txnlease.ValueIs(p+"/b", txnlease.Greater, "1"), txnlease.ValueIs(p+"/b", txnlease.Less, "3"),
			txnlease.ValueIs(p+"/c", txnlease.Equal, ""), txnlease.Absent(p + "/none")},
			Then: []txnlease.Op{txnlease.Get(p + "/c")}},
		"a value compared on a missing key": {If: []txnlease.Compare{txnlease.ValueIs(p+"/none", txnlease.Less, "z")},
			Else: []txnlease.Op{txnlease.Get(p + "/b")}},
		"a create revision": {If: []txnlease.Compare{txnlease.Absent(p + "/a")}, Else: []txnlease.Op{txnlease.Get(p + "/a")}},
		"nested": {If: []txnlease.Compare{txnlease.ValueIs(p+"/a", txnlease.Equal, "x")},
			Else: []txnlease.Op{txnlease.Nest(txnlease.Txn{If: []txnlease.Compare{txnlease.Absent(p + "/none")},
				Then: []txnlease.Op{txnlease.Nest(txnlease.Txn{Else: []txnlease.Op{txnlease.Get(p + "/b")}}), txnlease.Get(p + "/a")}})}},
	} {
		t.Run(name, func(t *testing.T) {
			v3, err := transports["clientv3"].Txn(ctx, txn)
			require.NoError(t, err)
			json, err := transports["gateway"].Txn(ctx, txn)
			require.NoError(t, err)
			assert.Equal(t, v3, json)
			assert.True(t, txn.Matches(v3))
		})
	}

	// Writes, each transport under a key of its own; then each reads
	// what both wrote.
	for name, c := range transports {
		put := txnlease.Txn{If: []txnlease.Compare{txnlease.Absent(p + "/w/" + name)},
			Then: []txnlease.Op{txnlease.Put(p+"/w/"+name, "v", grant.ID), txnlease.Nest(txnlease.Txn{Then: []txnlease.Op{txnlease.Put(p+"/n/"+name, "", 0)}})}}
		resp, err := c.Txn(ctx, put)
		require.NoError(t, err)
		assert.True(t, resp.Succeeded)
		assert.True(t, resp.Nested(1).Succeeded)
		resp, err = c.Txn(ctx, put)
		require.NoError(t, err)
		assert.False(t, resp.Succeeded, "%s: the key exists", name)
	}
	read := txnlease.Txn{Then: []txnlease.Op{txnlease.GetPrefix(p+"/w/", false), txnlease.GetPrefix(p+"/n/", false)}}
	v3, err := transports["clientv3"].Txn(ctx, read)
	require.NoError(t, err)
	json, err := transports["gateway"].Txn(ctx, read)
	require.NoError(t, err)
	assert.Equal(t, v3, json)
	assert.Len(t, v3.Kvs(0), 2)

	// Leases.
	for name, c := range transports {
		g, err := c.Grant(ctx, 30)
		require.NoError(t, err, name)
		ttl, err := c.KeepAliveOnce(ctx, g.ID)
		require.NoError(t, err, name)
		assert.Equal(t, int64(30), ttl, name)
		require.NoError(t, c.Revoke(ctx, g.ID), name)
		_, err = c.KeepAliveOnce(ctx, g.ID)
		require.ErrorIs(t, err, txnlease.ErrLeaseNotFound, name)
		require.ErrorIs(t, c.Revoke(ctx, g.ID), txnlease.ErrLeaseNotFound, name)
		ttl, err = c.TimeToLive(ctx, g.ID)
		require.NoError(t, err, name)
		assert.Equal(t, int64(-1), ttl, name)
	}
}
