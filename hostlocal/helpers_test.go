package hostlocal_test

import "time"

// start is where the tests' simulated clocks start.
var start = time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
