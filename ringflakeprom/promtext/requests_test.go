package promtext_test

import (
	"math"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ringflake/ringflake/idserver"
	"github.com/ringflake/ringflake/ringflakeprom/promtext"
)

// Requests counts every request observed from many goroutines at once:
// each series' count, the IDs, and each route's durations.
func TestRequestsConcurrent(t *testing.T) {
	r, err := promtext.NewRequests(nil)
	require.NoError(t, err)
	require.Empty(t, r.Families(), "no series before a request")
	const goroutines, requests = 8, 200
	var wg sync.WaitGroup
	for range goroutines {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range requests {
				if i%2 == 0 {
					r.Observe(idserver.Outcome{Route: idserver.RouteIDs, Status: 200, IDs: 10, Duration: time.Millisecond})
				} else {
					r.Observe(idserver.Outcome{Status: 404, Code: idserver.CodeNotFound, Duration: 20 * time.Second})
				}
			}
		}()
	}
	wg.Wait()

	families := r.Families()
	require.Len(t, families, 3)
	reqs, ids, dur := families[0], families[1], families[2]
	require.Len(t, reqs.Series, 2)
	assert.Equal(t, []promtext.Label{{"code", ""}, {"route", "/v1/ids"}, {"status", "200"}}, reqs.Series[0].Labels)
	assert.Equal(t, []promtext.Label{{"code", "not_found"}, {"route", "other"}, {"status", "404"}}, reqs.Series[1].Labels)
	assert.Equal(t, float64(goroutines*requests/2), reqs.Series[0].Value)
	assert.Equal(t, float64(goroutines*requests/2), reqs.Series[1].Value)
	require.Len(t, ids.Series, 1, "a response without IDs adds no series")
	assert.Equal(t, float64(goroutines*requests/2*10), ids.Series[0].Value)

	require.Len(t, dur.Series, 2)
	batch, other := dur.Series[0], dur.Series[1]
	assert.Equal(t, uint64(goroutines*requests/2), batch.Count)
	assert.InDelta(t, goroutines*requests/2*0.001, batch.Sum, 1e-9)
	for _, b := range batch.Buckets {
		want := uint64(0)
		if b.UpperBound >= 0.001 {
			want = batch.Count
		}
		assert.Equal(t, want, b.Count, "le=%v", b.UpperBound)
	}
	assert.Equal(t, uint64(goroutines*requests/2), other.Count)
	for _, b := range other.Buckets {
		assert.Zero(t, b.Count, "20 s is above every bound (le=%v)", b.UpperBound)
		assert.False(t, math.IsInf(b.UpperBound, 1))
	}
}
