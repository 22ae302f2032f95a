package opaque

import (
	"fmt"
	"strconv"
	"unicode/utf8"

	"github.com/ringflake/ringflake"
)

// The text form: a key version character, then the public number (and,
// with the check, a keyed tag) as a number in base 32, then, with the
// check, a Luhn mod 32 check character.
const (
	alphabet     = "0123456789abcdefghjkmnpqrstvwxyz" // Crockford's base32, lower case
	checkBits    = 17                                 // keyed tag bits
	checkedBody  = (idBits + checkBits) / 5           // 16 characters: 80 bits
	checkedLen   = 1 + checkedBody + 1                // 18
	uncheckedLen = 1 + 13                             // the version and 65 bits, the top 2 zero
	invalid      = 0xff
)

// base32Decode maps a byte to its digit: either case, i and l as 1, o as
// 0, as Crockford's decoding asks; invalid for any other byte.
var base32Decode = func() (t [256]byte) {
	for i := range t {
		t[i] = invalid
	}
	for i := 0; i < len(alphabet); i++ {
		c := alphabet[i]
		t[c] = byte(i)
		if 'a' <= c && c <= 'z' {
			t[c-'a'+'A'] = byte(i)
		}
	}
	for _, alias := range []string{"i1", "I1", "l1", "L1", "o0", "O0"} {
		t[alias[0]] = t[alias[1]]
	}
	return t
}()

// luhn returns the Luhn mod 32 sum of digits, doubling every other digit
// from the right starting with the last when double is set. A check digit
// makes the sum of the digits and itself 0 (mod 32); as doubling (with the
// carry folded back in) permutes the digits, changing any one digit
// changes the sum, so every single substitution is caught, as are most
// swaps of neighbours.
func luhn(digits []byte, double bool) int {
	sum := 0
	for i := len(digits) - 1; i >= 0; i-- {
		d := int(digits[i])
		if double {
			d *= 2
			d = d/32 + d%32
		}
		sum += d
		double = !double
	}
	return sum % 32
}

// appendChecked appends the checked text of pub with the tag of version.
func appendChecked(dst []byte, ver byte, pub, tag uint64) []byte {
	var d [checkedLen]byte
	d[0] = ver
	// The 80-bit number pub<<17 | tag, as (hi, lo).
	hi, lo := pub>>(64-checkBits), pub<<checkBits|tag
	for i := checkedBody; i >= 1; i-- {
		d[i] = byte(lo & 31)
		lo = lo>>5 | hi<<59
		hi >>= 5
	}
	d[checkedLen-1] = byte((32 - luhn(d[:checkedLen-1], true)) % 32)
	for _, x := range d {
		dst = append(dst, alphabet[x])
	}
	return dst
}

// appendUnchecked appends the unchecked text of pub.
func appendUnchecked(dst []byte, ver byte, pub uint64) []byte {
	var d [uncheckedLen]byte
	d[0] = ver
	for i := uncheckedLen - 1; i >= 1; i-- {
		d[i] = byte(pub & 31)
		pub >>= 5
	}
	for _, x := range d {
		dst = append(dst, alphabet[x])
	}
	return dst
}

func parseText[T ~string | ~[]byte](c *Codec, s T) (ringflake.ID, error) {
	want := c.TextLen()
	switch {
	case len(s) == 0:
		return 0, decodeError(ErrMalformed, s, -1, "empty")
	case len(s) > 1024:
		return 0, decodeError(ErrMalformed, s, -1, fmt.Sprintf("%d bytes, want %d characters", len(s), want))
	case len(s) != want:
		return 0, decodeError(ErrMalformed, s, -1, fmt.Sprintf("%d characters, want %d", utf8.RuneCountInString(string(s)), want))
	}
	var d [checkedLen]byte
	for i := 0; i < len(s); i++ {
		d[i] = base32Decode[s[i]]
		if d[i] == invalid {
			r, _ := utf8.DecodeRuneInString(string(s[i:min(len(s), i+utf8.UTFMax)]))
			return 0, decodeError(ErrMalformed, s, i, "not a base32 character "+strconv.QuoteRune(r))
		}
	}
	if c.check && luhn(d[:checkedLen], false) != 0 {
		return 0, decodeError(ErrCheckFailed, s, -1, "a character is mistyped (the last character does not match)")
	}
	ver := c.vers[d[0]]
	if ver == nil {
		return 0, decodeError(ErrUnknownVersion, s, 0,
			fmt.Sprintf("key version %d, but the codec has %s", d[0], c.keys.versionList()))
	}
	if !c.check {
		if d[1] > 7 {
			return 0, decodeError(ErrMalformed, s, 1, "larger than 2^63-1")
		}
		var pub uint64
		for _, x := range d[1:uncheckedLen] {
			pub = pub<<5 | uint64(x)
		}
		return ringflake.ID(ver.ff1.decrypt(new([16]byte), pub)), nil
	}
	var hi, lo uint64
	for _, x := range d[1 : checkedBody+1] {
		hi = hi<<5 | lo>>59
		lo = lo<<5 | uint64(x)
	}
	pub := hi<<(64-checkBits) | lo>>checkBits
	buf := new([16]byte)
	if ver.tag(buf, pub) != lo&(1<<checkBits-1) {
		return 0, decodeError(ErrCheckFailed, s, -1,
			fmt.Sprintf("not made with key version %d and tweak %q, or mistyped", ver.n, c.tweak))
	}
	return ringflake.ID(ver.ff1.decrypt(buf, pub)), nil
}
