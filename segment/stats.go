package segment

// Stats are an allocator's counters since [New] and the state of its
// buffers, as [Allocator.Stats] returns them. Counting costs nothing on
// the way to a number: the counters move when a range is loaded or a call
// finds its buffer used up.
type Stats struct {
	// Left is how many numbers are left in the two buffers: the calls the
	// allocator can answer without the database.
	Left int64

	// NextReady tells whether the second buffer holds a range; Loading,
	// whether a load is running (taking a range, or waiting to try
	// again); Failing, whether the last attempt to take a range failed.
	NextReady, Loading, Failing bool

	// Step is the size of the newest range taken: the current step.
	Step int64

	// Ranges is how many ranges were taken (New's included), Prefetches
	// how many loads started in the background before the current range
	// ran out, and RoundTrips how many statements went to the database.
	Ranges, Prefetches, RoundTrips uint64

	// Errors is how many attempts to take a range failed.
	Errors uint64

	// Waits is how many times a call found both buffers empty and waited
	// for a range being loaded; Unavailable, how many calls returned
	// [ErrUnavailable].
	Waits, Unavailable uint64
}
