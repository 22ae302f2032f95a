package resp

import "bufio"

// ReadReply reads one reply from r, for the tests' fake servers, which
// read commands (arrays of bulk strings) with it.
func ReadReply(r *bufio.Reader) (any, error) { return readReply(r, DefaultMaxReply) }
