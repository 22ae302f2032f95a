package opaque

import (
	"errors"
	"fmt"

	"github.com/ringflake/ringflake"
)

// ErrInvalidKey is matched by errors about a key or a key list: a secret
// that is not 16, 24 or 32 bytes, a version outside 0 to 31, a version
// given twice, base64 that does not decode, no key at all. Details are in
// a [*KeyError]; the secret itself never appears in a message.
var ErrInvalidKey = errors.New("opaque: invalid key")

// ErrInvalidOption is matched by errors about a tweak or an option given
// to [New]: a tweak longer than [MaxTweak] bytes, nil keys.
var ErrInvalidOption = errors.New("opaque: invalid option")

// ErrNegative is matched by the error [Codec.Encode], [Codec.AppendText]
// and [Codec.Format] return for a negative ID, which is never valid.
var ErrNegative = errors.New("opaque: negative ID")

// ErrMalformed is matched by errors about a public ID that cannot be one
// in any key: empty, the wrong length, a character outside the alphabet,
// a negative number. Details are in a [*DecodeError].
var ErrMalformed = errors.New("opaque: malformed public ID")

// ErrUnknownVersion is matched by errors about a public ID whose key
// version the codec does not hold (a key retired, or never given), and by
// [Codec.EncodeVersion] and [Codec.DecodeVersion] for such a version.
var ErrUnknownVersion = errors.New("opaque: unknown key version")

// ErrCheckFailed is matched by errors about a public ID in text whose
// check does not match: a mistyped or changed character, a guess, or text
// made with another key or another tweak (another type). Details are in a
// [*DecodeError].
var ErrCheckFailed = errors.New("opaque: check failed")

// ErrNoCodec is matched by the error [Text.UnmarshalText] returns when the
// Text has no codec to read with, and [Text.MarshalText] too.
var ErrNoCodec = errors.New("opaque: Text has no codec")

// KeyError reports what is wrong with a key. It matches [ErrInvalidKey].
type KeyError struct {
	Entry  int // the entry's index in a key list (from 0), or -1
	Reason string
}

func (e *KeyError) Error() string {
	if e.Entry >= 0 {
		return fmt.Sprintf("opaque: invalid key: entry %d: %s", e.Entry+1, e.Reason)
	}
	return "opaque: invalid key: " + e.Reason
}

// Is reports whether target is [ErrInvalidKey].
func (e *KeyError) Is(target error) bool { return target == ErrInvalidKey }

// DecodeError reports why a public ID (text, or a number written in
// decimal) does not decode. Err is [ErrMalformed], [ErrUnknownVersion] or
// [ErrCheckFailed]; the error matches it and also
// [ringflake.ErrInvalidID], so code that handles bad IDs of every
// encoding handles these too.
type DecodeError struct {
	Input  string // the public ID as given, cut to 64 bytes
	Offset int    // byte offset of the problem in Input, or -1
	Reason string
	Err    error
}

func (e *DecodeError) Error() string {
	what := "invalid public ID"
	switch e.Err {
	case ErrUnknownVersion:
		what = "unknown key version in public ID"
	case ErrCheckFailed:
		what = "check failed for public ID"
	}
	if e.Offset >= 0 {
		return fmt.Sprintf("opaque: %s %q: %s at offset %d", what, e.Input, e.Reason, e.Offset)
	}
	return fmt.Sprintf("opaque: %s %q: %s", what, e.Input, e.Reason)
}

// Unwrap returns Err and [ringflake.ErrInvalidID].
func (e *DecodeError) Unwrap() []error { return []error{e.Err, ringflake.ErrInvalidID} }

// maxQuoted is how much of a bad input a DecodeError keeps.
const maxQuoted = 64

func decodeError[T ~string | ~[]byte](err error, input T, offset int, reason string) *DecodeError {
	s := string(input[:min(len(input), maxQuoted)])
	if len(input) > maxQuoted {
		s += "…"
	}
	return &DecodeError{Input: s, Offset: offset, Reason: reason, Err: err}
}

func negativeError(id ringflake.ID) error { return fmt.Errorf("%w: %d", ErrNegative, int64(id)) }
