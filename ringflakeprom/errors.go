package ringflakeprom

import "errors"

// ErrNilGenerator is returned by [NewCollector] for a nil generator.
var ErrNilGenerator = errors.New("ringflakeprom: nil generator")

// ErrNilAllocator is returned by [NewSegmentCollector] for a nil
// allocator.
var ErrNilAllocator = errors.New("ringflakeprom: nil segment allocator")

// ErrInvalidLabels is matched by the error [NewCollector] and
// [NewSegmentCollector] return for labels Prometheus refuses: an empty
// name, a name starting with "__" or not valid UTF-8, a value not valid
// UTF-8, or (for NewCollector) the name "kind", which
// ringflake_errors_total uses itself. The error wraps Prometheus's own.
var ErrInvalidLabels = errors.New("ringflakeprom: invalid labels")

// ErrNilMonitor is returned by [NewClockCollector] for a nil monitor.
var ErrNilMonitor = errors.New("ringflakeprom: nil clock health monitor")
