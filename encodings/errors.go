package encodings

import (
	"errors"
	"fmt"
)

// ErrUnknown is matched by the error [Parse] returns for a name that is
// not an encoding's. Details are in a [*NameError].
var ErrUnknown = errors.New("encodings: unknown encoding")

// NameError reports a name that is not an encoding's. It matches
// [ErrUnknown].
type NameError struct {
	Name string // the name as given
}

func (e *NameError) Error() string {
	return fmt.Sprintf("encodings: unknown encoding %q: want %s", e.Name, names())
}

// Is reports whether target is [ErrUnknown].
func (e *NameError) Is(target error) bool { return target == ErrUnknown }
