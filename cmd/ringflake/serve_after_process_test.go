//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package main

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ringflake/ringflake"
)

// Two real servers on node ids 1 and 2 of one host, called alternately
// 1,000 times each. Without after= the IDs do not increase: within one
// millisecond the node bits decide, so node 1's ID after node 2's sorts
// before it. With after= the previous answer, every ID is greater than the
// one before.
func TestServeProcessAfter(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), processTimeout) // hang guard
	defer cancel()
	servers := []*process{startServe(t, "-node", "2"), startServe(t, "-node", "1")}
	defer func() {
		for _, p := range servers {
			p.terminate()
		}
	}()
	client := &http.Client{Timeout: time.Minute}
	defer client.CloseIdleConnections()
	l := ringflake.TwitterLayout()

	call := func(p *process, after ringflake.ID) ringflake.ID {
		t.Helper()
		target := p.base + "/v1/id"
		if after != 0 {
			target += "?after=" + after.String()
		}
		got, err := fetch(ctx, client, target)
		require.NoError(t, err, target)
		require.Len(t, got, 1)
		id, err := ringflake.Parse(got[0])
		require.NoError(t, err)
		return id
	}

	// Without after=: some answer sorts below the one before it.
	var prev ringflake.ID
	down, sameTick := 0, 0
	for i := range 2000 {
		id := call(servers[i%2], 0)
		if i > 0 && id < prev {
			down++
			if id.Time(l).Equal(prev.Time(l)) {
				sameTick++
			}
		}
		prev = id
	}
	assert.Positive(t, down, "without after= the IDs of two nodes interleave out of order")
	assert.Positive(t, sameTick, "within one millisecond, node 1's ID sorts below node 2's")

	// With after=: strictly increasing.
	prev = 0
	for i := range 2000 {
		id := call(servers[i%2], prev)
		require.Greater(t, id, prev, "call %d", i)
		prev = id
	}
	t.Logf("without after=: %d of 1999 answers below the one before (%d in the same millisecond); with after=: none", down, sameTick)
}
