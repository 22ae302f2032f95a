package ringflakeprom

import "errors"

// ErrNilGenerator is returned by [NewCollector] for a nil generator.
var ErrNilGenerator = errors.New("ringflakeprom: nil generator")

// ErrNilAllocator is returned by [NewSegmentCollector] for a nil
// allocator.
var ErrNilAllocator = errors.New("ringflakeprom: nil segment allocator")

// ErrNilRecorder is returned by [NewLeaseCollector] for a nil recorder.
var ErrNilRecorder = errors.New("ringflakeprom: nil lease recorder")

// ErrInvalidLabels is matched by the error [NewCollector],
// [NewSegmentCollector], [NewLeaseCollector] and [NewRequestCollector]
// return for labels Prometheus refuses: an empty name, a name starting
// with "__" or not valid UTF-8, a value not valid UTF-8, or a name a
// metric of the collector uses itself: "kind" (of ringflake_errors_total
// and ringflake_lease_events_total) for NewCollector and
// NewLeaseCollector, "route", "status" and "code" for NewRequestCollector.
// The error wraps Prometheus's own.
var ErrInvalidLabels = errors.New("ringflakeprom: invalid labels")

// ErrNilMonitor is returned by [NewClockCollector] for a nil monitor.
var ErrNilMonitor = errors.New("ringflakeprom: nil clock health monitor")
