package resp

import (
	"errors"
	"strings"
)

var (
	// ErrClosed is returned by calls on a [Client] after [Client.Close].
	ErrClosed = errors.New("resp: client closed")
	// ErrProtocol matches the error for a reply that is not RESP2 —
	// garbage, a RESP3 type, a line or length out of bounds — or that is
	// larger than [Options].MaxReply. The client then drops the
	// connection.
	ErrProtocol = errors.New("resp: not a valid RESP2 reply")
	// ErrInvalidOption matches the errors of [ParseURL] and [New] for
	// options that cannot work.
	ErrInvalidOption = errors.New("resp: invalid option")
)

// An Error is an error reply of the server, such as "ERR unknown
// command", "NOSCRIPT No matching script" or "WRONGPASS invalid
// username-password pair or user is disabled.". Reach it with errors.As.
// The connection that received it stays usable.
type Error struct {
	// Message is the reply's text, as the server sent it.
	Message string
}

// Error returns the server's message.
func (e *Error) Error() string { return e.Message }

// Code returns the first word of the message, which Redis uses as the
// error's kind: "ERR", "NOSCRIPT", "WRONGPASS", "NOPERM"...
func (e *Error) Code() string {
	code, _, _ := strings.Cut(e.Message, " ")
	return code
}
