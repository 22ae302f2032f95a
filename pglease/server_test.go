package pglease_test

import (
	"context"
	"fmt"
	"net/url"
	"testing"
	"time"

	"github.com/benbjohnson/clock"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sync/errgroup"

	"github.com/ringflake/ringflake"
	"github.com/ringflake/ringflake/lease"
	"github.com/ringflake/ringflake/lease/leasetest"
	"github.com/ringflake/ringflake/pglease"
)

// TestServerHistoryChanged plays a failover to a replica, or a recovery
// from a backup: the server's system identifier or WAL timeline is not
// the one the prefix's epoch row recorded (the test writes another into
// the row). A holder whose row survived keeps its id; an id taken anew,
// or again after its lease expired, waits out a quiet period of TTL +
// Margin + MaxLead, since the server may have lost a later holder's row.
func TestServerHistoryChanged(t *testing.T) {
	ctx := context.Background()
	c := driver{}.Connect(t).(conn)
	prefix := leasetest.Prefix(t)
	c.Settle(t, prefix)
	held := mustAcquire(t, c, prefix)
	require.True(t, held.Held())
	expiring := mustAcquire(t, c, prefix)

	c.exec(t, `UPDATE ringflake_node_epochs SET server = 'another/00000002' WHERE prefix = $1`, prefix)

	fresh := mustAcquire(t, c, prefix)
	assert.Equal(t, int64(2), fresh.Node())
	assert.False(t, fresh.Held(), "a new id after a failover: quiet period")
	c.Expire(t, prefix, expiring.Node())

	held.next(t, lease.Renewed)
	assert.True(t, held.Held(), "a row that survived keeps its id")
	e := expiring.next(t, lease.Retaken)
	assert.False(t, expiring.Held(), "taken again after a failover: quiet period")
	assert.NoError(t, e.Err)

	for range 3 {
		fresh.next(t, lease.Renewed)
		assert.False(t, fresh.Held(), "quiet period, though renewed")
	}
	quiet := time.Minute + time.Minute/100 + 2*time.Millisecond + lease.DefaultMaxLead
	fresh.clk.Set(leasetest.Start.Add(quiet + time.Second))
	assert.True(t, fresh.Held(), "after the quiet period")
	require.NoError(t, fresh.WaitHeld(ctx))
}

// holder is a lease on a mock clock, with its events.
type holder struct {
	*pglease.Lease
	clk    *clock.Mock
	events chan lease.Event
}

func mustAcquire(t *testing.T, c conn, prefix string) *holder {
	t.Helper()
	h := &holder{clk: clock.NewMock(), events: make(chan lease.Event, 16)}
	h.clk.Set(leasetest.Start)
	l, err := pglease.Acquire(context.Background(), c.p, pglease.Options{Prefix: prefix, TTL: time.Minute, Clock: h.clk,
		OnEvent: func(e lease.Event) { h.events <- e }})
	require.NoError(t, err)
	t.Cleanup(func() { _ = l.Close(context.Background()) })
	h.Lease = l
	return h
}

// next moves the lease's clock by RenewEvery and returns the renewal's
// event, which must be of kind want.
func (h *holder) next(t *testing.T, want lease.EventKind) lease.Event {
	t.Helper()
	h.clk.Add(20 * time.Second)
	select {
	case e := <-h.events:
		require.Equal(t, want, e.Kind, "%+v", e)
		return e
	case <-time.After(30 * time.Second):
		t.Fatal("no lease event within 30s")
		return lease.Event{}
	}
}

// TestMigrateTwiceAtOnce: Migrate is idempotent, and processes that
// migrate at the same time wait for each other instead of failing.
func TestMigrateTwiceAtOnce(t *testing.T) {
	for _, d := range []driver{{}, {bouncer: true}} {
		c := d.Connect(t).(conn)
		var g errgroup.Group
		for range 4 {
			g.Go(func() error { return pglease.Migrate(context.Background(), c.p) })
		}
		require.NoError(t, g.Wait(), "bouncer %v", d.bouncer)
	}
	require.ErrorIs(t, pglease.Migrate(context.Background(), nil), ringflake.ErrInvalidOption)
}

// TestNoSchema: a lease on a database without the tables fails with
// ErrNoSchema, which says to run Migrate.
func TestNoSchema(t *testing.T) {
	ctx := context.Background()
	c := driver{}.Connect(t).(conn)
	schema := fmt.Sprintf("empty_%d", time.Now().UnixNano())
	c.exec(t, "CREATE SCHEMA "+schema)
	t.Cleanup(func() { c.exec(t, "DROP SCHEMA "+schema+" CASCADE") })
	u, err := url.Parse(leasetest.RequireEnv(t, leasetest.PostgresDSNEnv))
	require.NoError(t, err)
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	p := newPool(t, u.String())

	_, err = pglease.Acquire(ctx, p, pglease.Options{Prefix: "none"})
	require.ErrorIs(t, err, pglease.ErrNoSchema)
	_, err = pglease.Claim(ctx, p, 3, pglease.Options{Prefix: "none"})
	require.ErrorIs(t, err, pglease.ErrNoSchema)
	_, err = pglease.List(ctx, p, pglease.Options{Prefix: "none"})
	require.ErrorIs(t, err, pglease.ErrNoSchema)

	require.NoError(t, pglease.Migrate(ctx, p))
	l, err := pglease.Acquire(ctx, p, pglease.Options{Prefix: "none"})
	require.NoError(t, err, "after Migrate, in the connection's schema")
	require.NoError(t, l.Close(ctx))
}

// TestTablesDropped drops the lease tables while a lease holds an id, the
// way the package documentation says to drop them (DROP TABLE …
// CASCADE), which leaves functions behind that use the tables' row types.
// Every call then fails with ErrNoSchema, as on a database that never had
// the tables (not with "type … does not exist"); the holder learns at its
// next renewal that the data is lost; after Migrate a new lease takes
// the id again and waits out the quiet period of a lost server.
func TestTablesDropped(t *testing.T) {
	ctx := context.Background()
	admin := driver{}.Connect(t).(conn)
	schema := fmt.Sprintf("dropped_%d", time.Now().UnixNano())
	admin.exec(t, "CREATE SCHEMA "+schema)
	t.Cleanup(func() { admin.exec(t, "DROP SCHEMA "+schema+" CASCADE") })
	u, err := url.Parse(leasetest.RequireEnv(t, leasetest.PostgresDSNEnv))
	require.NoError(t, err)
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	c := newConn(newPool(t, u.String()))
	migrate(t, c.p)
	prefix := leasetest.Prefix(t)
	c.Settle(t, prefix)
	h := mustAcquire(t, c, prefix)
	require.True(t, h.Held())
	_, err = pglease.List(ctx, c.p, pglease.Options{Prefix: prefix})
	require.NoError(t, err)

	c.exec(t, "DROP TABLE ringflake_node_epochs, ringflake_node_leases CASCADE")

	_, err = pglease.Acquire(ctx, c.p, pglease.Options{Prefix: prefix})
	require.ErrorIs(t, err, pglease.ErrNoSchema)
	_, err = pglease.Claim(ctx, c.p, 3, pglease.Options{Prefix: prefix})
	require.ErrorIs(t, err, pglease.ErrNoSchema)
	_, err = pglease.List(ctx, c.p, pglease.Options{Prefix: prefix})
	require.ErrorIs(t, err, pglease.ErrNoSchema)
	require.ErrorIs(t, h.SaveMark(ctx, ringflake.Mark{Limit: leasetest.Start, Since: leasetest.Start}), pglease.ErrNoSchema)
	e := h.next(t, lease.Lost)
	require.ErrorIs(t, e.Err, lease.ErrDataLost)
	require.ErrorIs(t, e.Err, ringflake.ErrLeaseLost)

	require.NoError(t, pglease.Migrate(ctx, c.p))
	again := mustAcquire(t, c, prefix)
	assert.Equal(t, h.Node(), again.Node(), "the id is free again")
	assert.False(t, again.Held(), "the tables lost the prefix's data: a quiet period")
	quiet := time.Minute + time.Minute/100 + 2*time.Millisecond + lease.DefaultMaxLead
	again.clk.Set(leasetest.Start.Add(quiet + time.Second))
	require.NoError(t, again.WaitHeld(ctx))
}

func TestAcquireNilDB(t *testing.T) {
	_, err := pglease.Acquire(context.Background(), nil, pglease.Options{})
	require.ErrorIs(t, err, ringflake.ErrInvalidOption)
}

// TestSaveOvertakenByALaterOne: a save that reaches the database after a
// later save of the same lease (here, one held back on its connection
// while the next went on another) changes nothing and reports
// lease.ErrStaleSave.
func TestSaveOvertakenByALaterOne(t *testing.T) {
	ctx := context.Background()
	c, delay := driver{}.ConnectDelayed(t)
	proxy := delay.(*leasetest.Proxy)
	prefix := leasetest.Prefix(t)
	c.Settle(t, prefix)
	l, err := c.Acquire(ctx, lease.Options{Prefix: prefix, TTL: time.Minute, Timeout: 30 * time.Second})
	require.NoError(t, err)
	defer l.Close(ctx)
	at := func(ms int) ringflake.Mark {
		limit := leasetest.Start.Add(time.Duration(ms) * time.Millisecond)
		return ringflake.Mark{Limit: limit, Since: limit, Node: l.Node(), Layout: "twitter"}
	}

	proxy.HoldSave()
	first := make(chan error, 1)
	go func() { first <- l.SaveMark(ctx, at(200)) }()
	proxy.WaitHeld(t)
	require.NoError(t, l.SaveMark(ctx, at(100)), "the later save, on another connection")
	proxy.Deliver(t)
	require.ErrorIs(t, <-first, lease.ErrStaleSave)
	mark, err := l.LoadMark(ctx)
	require.NoError(t, err)
	assert.Equal(t, at(100), mark)
}
