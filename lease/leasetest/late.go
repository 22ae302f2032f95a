package leasetest

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ringflake/ringflake"
	"github.com/ringflake/ringflake/simclock"
	"github.com/ringflake/ringflake/strategies"
)

// testLateSave: a save the client gave up on, which reaches the server
// after the holder's later saves, changes nothing — even when the last of
// those saves is an exact mark below the late one's, as a generator's
// Close saves.
func testLateSave(t *testing.T, d Driver) {
	ctx := context.Background()
	c, delay := d.ConnectDelayed(t)
	opts := withPrefix(settled(t, c))
	opts.Timeout = 10 * time.Second // Abandon ends the late save long before
	h := mustAcquire(t, c, opts)
	at := func(ms int) ringflake.Mark {
		return ringflake.Mark{Limit: Start.Add(time.Duration(ms) * time.Millisecond), Since: Start, Node: h.Node(), Layout: "twitter"}
	}
	require.NoError(t, h.SaveMark(ctx, at(100)))

	delay.HoldSave()
	late := make(chan error, 1)
	go func() { late <- h.SaveMark(ctx, at(200)) }()
	delay.Abandon(t)
	require.Error(t, <-late, "the client gave up on the save")

	require.NoError(t, h.SaveMark(ctx, at(300)), "the next save, on a new connection")
	exact := markAt(Start.Add(150 * time.Millisecond))
	exact.Node, exact.Layout = h.Node(), "twitter"
	require.NoError(t, h.SaveMark(ctx, exact), "an exact mark below the reservation, as Close saves it")
	delay.Deliver(t)

	mark, err := h.LoadMark(ctx)
	require.NoError(t, err)
	assert.Equal(t, exact, mark, "the late save must not replace the holder's last one")
}

// testRestartAfterALateSave: holder A issues an ID a millisecond while its
// generator saves marks 100 ms ahead; one of those saves is held back,
// fails on the client and reaches the server after A's later saves. A
// crashes, and B takes the id with its clock back at A's start. B waits
// out the mark it loads — A's last — and issues none of A's IDs. (With a
// server that applied the late save, B loads a mark 100 ms below A's
// newest ID and issues a hundred of A's IDs again.)
func testRestartAfterALateSave(t *testing.T, d Driver) {
	ctx := context.Background()
	c, delay := d.ConnectDelayed(t)
	opts := withPrefix(settled(t, c))
	opts.Timeout = 10 * time.Second
	a := mustAcquire(t, c, opts)
	clkA := simclock.New(Start)
	ga, err := ringflake.New(a.Node(), ringflake.WithLease(a.Lease), ringflake.WithClock(clkA),
		ringflake.WithMarkAhead(100*time.Millisecond))
	require.NoError(t, err)

	issued := map[ringflake.ID]bool{}
	next := func() {
		t.Helper()
		var err error
		for range 3 { // the abandoned save's error reaches one call
			var id ringflake.ID
			if id, err = ga.Next(); err == nil {
				require.False(t, issued[id], "A issued %v twice", id)
				issued[id] = true
				return
			}
		}
		require.NoError(t, err)
	}
	for range 51 { // up to 00.050; the saved mark reaches 00.100
		next()
		clkA.Add(time.Millisecond)
	}
	delay.HoldSave()
	next() // 00.051 starts saving a mark ahead to 00.151: held back
	delay.Abandon(t)
	for range 199 { // up to 00.250, saving marks again
		clkA.Add(time.Millisecond)
		next()
	}
	require.NoError(t, ga.SyncMark(ctx))
	delay.Deliver(t)
	c.Expire(t, opts.Prefix, a.Node()) // A crashed: its lease ran out

	b := mustAcquire(t, d.Connect(t), opts)
	require.Equal(t, a.Node(), b.Node(), "the same id")
	clkB := simclock.New(Start) // 250 ms behind A's newest ID
	gb, err := ringflake.New(b.Node(), ringflake.WithLease(b.Lease), ringflake.WithClock(clkB),
		ringflake.WithStrategy(strategies.Wait(time.Minute)), ringflake.WithMarkAhead(100*time.Millisecond))
	require.NoError(t, err)
	duplicates := 0
	for range 400 {
		id, err := gb.Next()
		require.NoError(t, err)
		if issued[id] {
			duplicates++
		}
		clkB.Add(time.Millisecond)
	}
	t.Logf("%d IDs of A, 400 of B after the restart: %d issued twice", len(issued), duplicates)
	assert.Zero(t, duplicates, "B issued IDs of A again")
	require.NoError(t, gb.Close(ctx))
}
