package ringflakeprom_test

import (
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/require"

	"github.com/ringflake/ringflake/ringflakeprom"
	"github.com/ringflake/ringflake/segment"
)

// fixedStats is a SegmentAllocator whose Stats are s: the collector's
// tests need no database.
type fixedStats segment.Stats

func (f *fixedStats) Stats() segment.Stats { return segment.Stats(*f) }

func TestSegmentCollector(t *testing.T) {
	s := &fixedStats{Left: 1899, NextReady: true, Failing: true, Step: 1000, Ranges: 3, Prefetches: 2,
		RoundTrips: 7, Errors: 4, Waits: 5, Unavailable: 6}
	c, err := ringflakeprom.NewSegmentCollector(s, prometheus.Labels{"biz_tag": "orders"})
	require.NoError(t, err)
	reg := prometheus.NewPedanticRegistry()
	require.NoError(t, reg.Register(c))
	expected := `
# HELP ringflake_segment_errors_total Failed attempts to take a range.
# TYPE ringflake_segment_errors_total counter
ringflake_segment_errors_total{biz_tag="orders"} 4
# HELP ringflake_segment_failing 1 when the last attempt to take a range failed.
# TYPE ringflake_segment_failing gauge
ringflake_segment_failing{biz_tag="orders"} 1
# HELP ringflake_segment_loading 1 while a range is being taken, or a failed attempt waits to be retried.
# TYPE ringflake_segment_loading gauge
ringflake_segment_loading{biz_tag="orders"} 0
# HELP ringflake_segment_next_ready 1 when the second buffer holds a range.
# TYPE ringflake_segment_next_ready gauge
ringflake_segment_next_ready{biz_tag="orders"} 1
# HELP ringflake_segment_numbers_left Numbers left in the two buffers: calls the allocator can answer without the database.
# TYPE ringflake_segment_numbers_left gauge
ringflake_segment_numbers_left{biz_tag="orders"} 1899
# HELP ringflake_segment_prefetches_total Loads started in the background before the current range ran out.
# TYPE ringflake_segment_prefetches_total counter
ringflake_segment_prefetches_total{biz_tag="orders"} 2
# HELP ringflake_segment_ranges_total Ranges taken from the database.
# TYPE ringflake_segment_ranges_total counter
ringflake_segment_ranges_total{biz_tag="orders"} 3
# HELP ringflake_segment_round_trips_total Statements sent to the database.
# TYPE ringflake_segment_round_trips_total counter
ringflake_segment_round_trips_total{biz_tag="orders"} 7
# HELP ringflake_segment_step Size of the newest range taken.
# TYPE ringflake_segment_step gauge
ringflake_segment_step{biz_tag="orders"} 1000
# HELP ringflake_segment_unavailable_total Calls that failed because both buffers were empty and the database was failing.
# TYPE ringflake_segment_unavailable_total counter
ringflake_segment_unavailable_total{biz_tag="orders"} 6
# HELP ringflake_segment_waits_total Calls that found both buffers empty and waited for a range.
# TYPE ringflake_segment_waits_total counter
ringflake_segment_waits_total{biz_tag="orders"} 5
`
	require.NoError(t, testutil.GatherAndCompare(reg, strings.NewReader(expected)))

	s.Left, s.Failing = 0, false // read at every scrape
	require.NoError(t, testutil.GatherAndCompare(reg, strings.NewReader(`
# HELP ringflake_segment_failing 1 when the last attempt to take a range failed.
# TYPE ringflake_segment_failing gauge
ringflake_segment_failing{biz_tag="orders"} 0
`), "ringflake_segment_failing"))
}

func TestNewSegmentCollectorRejects(t *testing.T) {
	var nilAllocator *segment.Allocator
	for _, a := range []ringflakeprom.SegmentAllocator{nil, nilAllocator} {
		c, err := ringflakeprom.NewSegmentCollector(a, nil)
		require.ErrorIs(t, err, ringflakeprom.ErrNilAllocator)
		require.Nil(t, c)
	}
	for _, labels := range []prometheus.Labels{{"": "x"}, {"__name__": "x"}, {"\xff": "x"}, {"biz_tag": "\xff"}} {
		c, err := ringflakeprom.NewSegmentCollector(&fixedStats{}, labels)
		require.ErrorIs(t, err, ringflakeprom.ErrInvalidLabels, labels)
		require.Nil(t, c)
	}
	c, err := ringflakeprom.NewSegmentCollector(&fixedStats{}, nil)
	require.NoError(t, err)
	require.Equal(t, 11, testutil.CollectAndCount(c))
}
