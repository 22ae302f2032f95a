package serialno

import (
	"errors"
	"fmt"
)

// ErrInvalidPattern is matched by errors about a serial number pattern
// that [New] cannot use for a layout, and by the errors of the zero
// [Format]. Details are in a [*PatternError].
var ErrInvalidPattern = errors.New("serialno: invalid serial number pattern")

// PatternError reports what is wrong with a serial number pattern, and
// where. It matches [ErrInvalidPattern].
type PatternError struct {
	Pattern string
	Offset  int // byte offset of the problem in Pattern, or -1
	Reason  string
}

func (e *PatternError) Error() string {
	if e.Offset >= 0 {
		return fmt.Sprintf("serialno: invalid pattern %q: %s at offset %d", e.Pattern, e.Reason, e.Offset)
	}
	return fmt.Sprintf("serialno: invalid pattern %q: %s", e.Pattern, e.Reason)
}

// Is reports whether target is [ErrInvalidPattern].
func (e *PatternError) Is(target error) bool { return target == ErrInvalidPattern }
