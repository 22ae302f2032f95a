package segment

import (
	"errors"
	"fmt"
)

// ErrInvalidOption is matched by the error [New] returns for a nil
// database or an option out of its range; the message names the option.
var ErrInvalidOption = errors.New("ringflake: segment: invalid option")

// ErrInvalidTag is matched by the error [New] returns for a business tag
// that is empty, longer than 128 bytes, not valid UTF-8 or contains a NUL
// byte.
var ErrInvalidTag = errors.New("ringflake: segment: invalid biz tag")

// ErrUnavailable is matched by the error an allocator returns when both
// its buffers are empty and its last attempt to take a range from the
// database failed. The error is an [*UnavailableError], which wraps the
// cause: the database's own error, [ErrTagMissing], [ErrOverflow] or
// [ErrInvalidRow]. [New] returns it too when it cannot take the first
// range.
var ErrUnavailable = errors.New("ringflake: segment: no range available")

// ErrTagMissing is the cause of an [*UnavailableError] when the tag's row
// is gone from the table: someone deleted it while allocators were using
// it. The allocator does not create it again (that would start the
// numbers over); it keeps trying until the row is back.
var ErrTagMissing = errors.New("ringflake: segment: the biz tag's row is missing")

// ErrOverflow is the cause of an [*UnavailableError] when the tag's next
// range would pass 2^63-1, the largest number a BIGINT holds. Numbers
// never wrap.
var ErrOverflow = errors.New("ringflake: segment: the biz tag's numbers would pass 2^63-1")

// ErrInvalidRow is the cause of an [*UnavailableError] when the tag's row
// holds values no range can come from: a step below 1 (a table made
// without the CHECK constraints of [Migrate]), or a max_id below the end
// of a range the allocator has already taken (a database restored from an
// old backup, an UPDATE by hand), which would hand out numbers again. The
// message names the values. The allocator keeps trying; each attempt that
// finds max_id too low moves it on by a range.
var ErrInvalidRow = errors.New("ringflake: segment: invalid row")

// ErrClosed is returned by every call on an allocator after [Allocator.Close].
var ErrClosed = errors.New("ringflake: segment: allocator closed")

// UnavailableError is the error of a call that found both buffers empty
// while the database was failing. It matches [ErrUnavailable] and unwraps
// to Err, the error of the last attempt to take a range.
type UnavailableError struct {
	Tag string // the business tag
	Err error  // why the last attempt failed
}

func (e *UnavailableError) Error() string {
	return fmt.Sprintf("ringflake: segment: no range available for %q: %v", e.Tag, e.Err)
}

// Is reports whether target is [ErrUnavailable].
func (e *UnavailableError) Is(target error) bool { return target == ErrUnavailable }

// Unwrap returns the cause.
func (e *UnavailableError) Unwrap() error { return e.Err }
