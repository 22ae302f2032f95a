package ringflake

import (
	"fmt"
	"math"
	"math/bits"
	"strconv"
	"unicode/utf8"
)

// maxDecimal is the most digits a decimal ID has: 2^63-1 has 19.
const maxDecimal = 19

// parseDecimal reads the decimal form of an ID, for strings and byte
// slices alike, so that [ID.UnmarshalText] need not copy its input. It
// allocates nothing when it succeeds.
func parseDecimal[T ~string | ~[]byte](s T) (ID, error) {
	switch {
	case len(s) == 0:
		return 0, &SyntaxError{Input: "", Offset: -1, Reason: "empty"}
	case len(s) > maxDecimal:
		return 0, &SyntaxError{Input: string(s), Offset: -1,
			Reason: fmt.Sprintf("%d characters, want at most %d decimal digits", utf8.RuneCountInString(string(s)), maxDecimal)}
	}
	var n uint64
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < '0' || c > '9' {
			r, _ := utf8.DecodeRuneInString(string(s[i:]))
			return 0, &SyntaxError{Input: string(s), Offset: i, Reason: "not a decimal digit " + strconv.QuoteRune(r)}
		}
		hi, lo := bits.Mul64(n, 10)
		lo, carry := bits.Add64(lo, uint64(c-'0'), 0)
		if hi|carry != 0 || lo > math.MaxInt64 {
			return 0, &SyntaxError{Input: string(s), Offset: i, Reason: "larger than 2^63-1"}
		}
		n = lo
	}
	return ID(n), nil
}
