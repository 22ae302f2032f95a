package resp

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
)

// The reader's bounds. A reply is read as it arrives, so that a length
// the server announces costs nothing until the bytes come; these bound
// what the bytes that do come may cost.
const (
	// readBuffer is the size of a connection's read buffer, and the
	// longest line of a reply (a simple string, an error, a length).
	readBuffer = 16 << 10
	// maxDepth is how deeply arrays may nest.
	maxDepth = 32
	// elemCost is what each element of an array counts against the
	// reply's bound besides its bytes: the memory of its slot.
	elemCost = 16
	// bulkChunk is how much of a bulk string is allocated and read at
	// first; the buffer doubles as the data keeps coming.
	bulkChunk = 64 << 10
)

// appendCommand appends args as a RESP command — an array of bulk
// strings — to b.
func appendCommand(b []byte, args []string) []byte {
	b = append(b, '*')
	b = strconv.AppendInt(b, int64(len(args)), 10)
	b = append(b, '\r', '\n')
	for _, a := range args {
		b = append(b, '$')
		b = strconv.AppendInt(b, int64(len(a)), 10)
		b = append(b, '\r', '\n')
		b = append(b, a...)
		b = append(b, '\r', '\n')
	}
	return b
}

// A replyReader reads one RESP2 reply, within a budget of bytes.
type replyReader struct {
	r    *bufio.Reader
	left int // bytes the rest of the reply may take
}

// readReply reads one reply from r: an integer as int64, a simple or bulk
// string as string, a nil bulk string or array as nil, an array as []any
// of these, an error nested in an array as *Error. An error reply at the
// top is returned as the error, a *Error; the connection is still in
// step. Any other error leaves the connection out of step: one that
// matches ErrProtocol for bytes that are not a RESP2 reply or a reply
// larger than max bytes (roughly: each element of an array counts
// elemCost more), else the reader's, with io.ErrUnexpectedEOF for a
// reply cut short.
func readReply(r *bufio.Reader, max int) (any, error) {
	rr := replyReader{r: r, left: max}
	v, err := rr.reply(0)
	if err != nil {
		return nil, err
	}
	if e, ok := v.(*Error); ok {
		return nil, e
	}
	return v, nil
}

// reply reads a reply at the given depth of nesting.
func (rr *replyReader) reply(depth int) (any, error) {
	line, err := rr.line(depth)
	if err != nil {
		return nil, err
	}
	switch line[0] {
	case '+':
		return string(line[1:]), nil
	case '-':
		return &Error{Message: string(line[1:])}, nil
	case ':':
		n, err := parseInt(line[1:])
		if err != nil {
			return nil, err
		}
		return n, nil
	case '$':
		return rr.bulk(line[1:])
	case '*':
		return rr.array(line[1:], depth)
	}
	return nil, protocolf("unexpected reply type %q", line[0])
}

// line reads a line of the reply and returns it without its CRLF; it has
// at least its type byte. At the start of a reply (depth 0, nothing read
// yet), a connection closed by the server is io.EOF.
func (rr *replyReader) line(depth int) ([]byte, error) {
	line, err := rr.r.ReadSlice('\n')
	switch {
	case errors.Is(err, bufio.ErrBufferFull):
		return nil, protocolf("a line longer than %d bytes", readBuffer)
	case err == io.EOF && (depth > 0 || len(line) > 0):
		return nil, io.ErrUnexpectedEOF
	case err != nil:
		return nil, err
	}
	if len(line) < 3 || line[len(line)-2] != '\r' {
		return nil, protocolf("a line %q that does not end in CRLF after its type", truncate(line))
	}
	if err := rr.spend(len(line)); err != nil {
		return nil, err
	}
	return line[:len(line)-2], nil
}

// spend counts n bytes against the reply's bound.
func (rr *replyReader) spend(n int) error {
	if n > rr.left {
		return protocolf("a reply larger than its bound")
	}
	rr.left -= n
	return nil
}

// bulk reads a bulk string whose length line is n: the data as it
// arrives, in chunks that double, so that a length the server does not
// send costs no memory.
func (rr *replyReader) bulk(n []byte) (any, error) {
	size, err := parseInt(n)
	switch {
	case err != nil:
		return nil, err
	case size == -1:
		return nil, nil
	case size < 0:
		return nil, protocolf("bulk string length %d", size)
	case size > int64(rr.left)-2:
		return nil, protocolf("a bulk string of %d bytes, more than the reply's bound", size)
	}
	total := int(size) + 2
	_ = rr.spend(total) // checked above
	b := make([]byte, 0, min(total, bulkChunk))
	for len(b) < total {
		if len(b) == cap(b) {
			b = slices.Grow(b, min(total-len(b), len(b))) // twice as much, at most the rest
		}
		m, err := io.ReadFull(rr.r, b[len(b):min(cap(b), total)])
		b = b[:len(b)+m]
		if err == io.EOF {
			return nil, io.ErrUnexpectedEOF
		} else if err != nil {
			return nil, err
		}
	}
	if b[total-2] != '\r' || b[total-1] != '\n' {
		return nil, protocolf("a bulk string of %d bytes not followed by CRLF", size)
	}
	return string(b[:size]), nil
}

// array reads an array whose length line is n, at depth.
func (rr *replyReader) array(n []byte, depth int) (any, error) {
	size, err := parseInt(n)
	switch {
	case err != nil:
		return nil, err
	case size == -1:
		return nil, nil
	case size < 0:
		return nil, protocolf("array length %d", size)
	case depth >= maxDepth:
		return nil, protocolf("arrays nested deeper than %d", maxDepth)
	case size > int64(rr.left/(elemCost+3)): // each element takes 3 bytes at least
		return nil, protocolf("an array of %d elements, more than the reply's bound", size)
	}
	_ = rr.spend(int(size) * elemCost) // checked above
	out := make([]any, 0, min(int(size), 1024))
	for range size {
		v, err := rr.reply(depth + 1)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, nil
}

// parseInt parses a RESP integer: an optional minus sign and decimal
// digits, within int64.
func parseInt(b []byte) (int64, error) {
	digits := b
	if len(digits) > 0 && digits[0] == '-' {
		digits = digits[1:]
	}
	if len(digits) == 0 || len(digits) > 19 {
		return 0, protocolf("%q is not an integer", truncate(b))
	}
	for _, c := range digits {
		if c < '0' || c > '9' {
			return 0, protocolf("%q is not an integer", truncate(b))
		}
	}
	n, err := strconv.ParseInt(string(b), 10, 64)
	if err != nil {
		return 0, protocolf("%q is not an integer", truncate(b))
	}
	return n, nil
}

// truncate shortens what an error quotes of a reply.
func truncate(b []byte) []byte {
	if len(b) > 40 {
		return b[:40]
	}
	return b
}

// protocolf returns an error matching ErrProtocol.
func protocolf(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrProtocol, fmt.Sprintf(format, args...))
}
