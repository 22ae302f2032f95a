package encodings

import (
	"fmt"
	"math"
	"math/bits"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/ringflake/ringflake"
)

// An Encoding writes IDs as text and reads them back. Get one from
// [Decimal], [Hex], [Base32], [Base58],
// [Base62], [Base64], [Base2], [Base36],
// [Base58Flickr], [ZBase32] or [Parse]. The zero
// Encoding is the decimal one, so an Encoding field left unset in a
// configuration struct means decimal.
//
//	encoding       width  sorts like IDs  alphabet                 2^63-1 (the largest ID)
//	dec            1-19   no              0-9                      9223372036854775807
//	hex            16     yes             0-9 a-f                  7fffffffffffffff
//	base32         13     yes             Crockford: 0-9 A-Z       7ZZZZZZZZZZZZ
//	                                      less I L O U
//	base58         11     yes             Bitcoin: 1-9 A-Z a-z     NQm6nKp8qFC
//	                                      less 0 I O l
//	base62         11     yes             0-9 A-Z a-z              AzL8n0Y58m7
//	base64         11     no              RFC 4648 base64url:      f_________8
//	                                      A-Z a-z 0-9 - _
//	base2          1-63   no              0 1                      111…111 (63 ones)
//	base36         1-13   no              0-9 a-z                  1y2p0ij32e8e7
//	base58-flickr  1-11   no              Flickr: 1-9 a-z A-Z      npL6MjP8Qfc
//	                                      less 0 l I O
//	zbase32        1-13   no              z-base-32:               8999999999999
//	                                      ybndrfg8ejkmcpqxot1uwisza345h769
//
// The last four are the text forms of github.com/bwmarrin/snowflake
// (its Base2, Base36, Base58 and Base32): they write every ID exactly as
// bwmarrin does, without padding, and read every string bwmarrin writes,
// so IDs stored by bwmarrin's library keep their text. Beware: base58 and
// base58-flickr use the same 58 characters in a different order, so each
// reads the other's text as a different, valid ID — bwmarrin's
// "4jgmnx8Js8A" is 1428076403798048768 in base58-flickr and
// 1609467648527167071 in base58. Nothing in the text tells them apart;
// read bwmarrin's Base58 strings with base58-flickr only.
//
// Hex, base32, base58, base62 and base64 write every ID with the same
// number of characters, padding with their zero digit, and their Parse
// accepts exactly that many: a truncated or extended ID is an error, never
// another ID. The others (decimal and bwmarrin's forms) write no leading
// zero digits, so their width varies up to [Encoding.MaxWidth]; their
// Parse accepts 1 to MaxWidth characters, leading zero digits included, so
// a zero-padded ID reads back and longer input is an error however many
// of its digits are zeros.
// Where the table says an encoding sorts like IDs, the byte-wise order of
// the formatted text (strings.Compare, SQL ORDER BY under the "C"
// collation, a sorted key-value store) is the numeric order of the IDs.
// Text of varying width sorts like IDs only among IDs with the same
// number of digits; base58-flickr and zbase32 not even then, as their
// alphabets are not in ASCII order. Base64 cannot sort: RFC 4648 puts the
// letters before the digits, '-' and '_', unlike ASCII.
//
// Formatting is canonical: hex and base36 are lowercase, base32 uppercase.
// Parsing is strict — only the alphabet, only the width; no sign, spaces,
// padding or prefix — except that hex and base36 accept upper case,
// base32 follows Crockford's decoding rules (lower case accepted; I, i, L
// and l read as 1; O and o as 0; no hyphens, no check symbol), and the
// encodings of varying width allow leading zero digits within their
// MaxWidth, as [ringflake.Parse] does. Zbase32 is lower case only, as bwmarrin's
// reader is.
//
// Hex and base64 write the ID's 8 bytes in big-endian order, so any hex or
// base64url decoder reads them (base64 without padding: the 11th
// character's 2 low bits are zero); the others write the ID as a number
// in their base. In particular zbase32 is not the z-base-32 of the ID's
// bytes (bwmarrin writes the number, as base58 does), and base32 is not
// RFC 4648's.
//
// A negative ID is never valid: every encoding writes it (those of varying
// width with a minus sign, as strconv.FormatInt does, the others as its
// two's-complement uint64) and no Parse reads it back.
//
// As an [encoding.TextMarshaler] and [encoding.TextUnmarshaler] an
// Encoding is its name ([Encoding.String], [Parse]), so it reads
// from JSON or YAML configuration by name and, with [flag.TextVar], from a
// command-line flag.
//
// An Encoding is a small value, safe to copy, compare with == and use from
// many goroutines at once.
type Encoding struct {
	kind encodingKind
}

type encodingKind uint8

const (
	decimalKind encodingKind = iota
	hexKind
	base32Kind
	base58Kind
	base62Kind
	base64Kind
	base2Kind
	base36Kind
	flickrKind
	zbase32Kind
	numKinds
)

// spec describes one encoding: name, fixed width (0 when it varies), the
// most characters Parse reads, the digits in value order and the table
// that maps a byte back to its value (invalid is not a digit).
type spec struct {
	name     string
	width    int
	maxWidth int
	sortable bool
	alphabet string
	decode   *[256]byte
}

const invalid = 0xff

const (
	decimalDigits = "0123456789"
	hexDigits     = "0123456789abcdef"
	crockford     = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"
	bitcoin58     = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz"
	base62Digits  = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
	base64URL     = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
	binaryDigits  = "01"
	base36Digits  = "0123456789abcdefghijklmnopqrstuvwxyz"
	// bwmarrin/snowflake's encodeBase58Map (Flickr's alphabet) and
	// encodeBase32Map (z-base-32's), from its snowflake.go.
	flickr58 = "123456789abcdefghijkmnopqrstuvwxyzABCDEFGHJKLMNPQRSTUVWXYZ"
	zbase32  = "ybndrfg8ejkmcpqxot1uwisza345h769"
)

// specs lists the encodings in the order [All] returns them. The
// maxWidth of an encoding of varying width is the digits of 2^63-1, the
// largest ID, in its base.
var specs = [numKinds]spec{
	decimalKind: {name: "dec", maxWidth: 19, alphabet: decimalDigits, decode: decodeTable(decimalDigits, false)},
	hexKind: {name: "hex", width: 16, maxWidth: 16, sortable: true, alphabet: hexDigits,
		decode: decodeTable(hexDigits, true)},
	// Crockford: case-insensitive, I and L are 1, O is 0.
	base32Kind: {name: "base32", width: 13, maxWidth: 13, sortable: true, alphabet: crockford,
		decode: decodeTable(crockford, true, "I1", "L1", "O0")},
	base58Kind: {name: "base58", width: 11, maxWidth: 11, sortable: true, alphabet: bitcoin58,
		decode: decodeTable(bitcoin58, false)},
	base62Kind: {name: "base62", width: 11, maxWidth: 11, sortable: true, alphabet: base62Digits,
		decode: decodeTable(base62Digits, false)},
	base64Kind: {name: "base64", width: 11, maxWidth: 11, alphabet: base64URL,
		decode: decodeTable(base64URL, false)},
	base2Kind: {name: "base2", maxWidth: 63, alphabet: binaryDigits, decode: decodeTable(binaryDigits, false)},
	// strconv.ParseInt, bwmarrin's reader, takes either case.
	base36Kind: {name: "base36", maxWidth: 13, alphabet: base36Digits, decode: decodeTable(base36Digits, true)},
	flickrKind: {name: "base58-flickr", maxWidth: 11, alphabet: flickr58, decode: decodeTable(flickr58, false)},
	// bwmarrin's reader rejects upper case.
	zbase32Kind: {name: "zbase32", maxWidth: 13, alphabet: zbase32, decode: decodeTable(zbase32, false)},
}

// decodeTable maps each byte of alphabet to its index, and every other
// byte to invalid. With caseless, letters count in either case. Each alias
// "xy" makes x read as the digit y.
func decodeTable(alphabet string, caseless bool, aliases ...string) *[256]byte {
	var t [256]byte
	for i := range t {
		t[i] = invalid
	}
	set := func(c, v byte) {
		t[c] = v
		if caseless && 'A' <= c && c <= 'Z' {
			t[c+'a'-'A'] = v
		} else if caseless && 'a' <= c && c <= 'z' {
			t[c-'a'+'A'] = v
		}
	}
	for i := 0; i < len(alphabet); i++ {
		set(alphabet[i], byte(i))
	}
	for _, a := range aliases {
		set(a[0], t[a[1]])
	}
	return &t
}

// Decimal returns the decimal encoding, the one [ringflake.ID.String], [ringflake.Parse]
// and the text and JSON forms of an ID use: 1 to 19 digits without leading
// zeros. Parse reads 1 to 19 digits, leading zeros included. It does not
// sort like IDs.
func Decimal() Encoding { return Encoding{decimalKind} }

// Hex returns the hexadecimal encoding: 16 lowercase digits, the
// ID's 8 bytes in big-endian order. It sorts like IDs. Parse accepts upper
// case too.
func Hex() Encoding { return Encoding{hexKind} }

// Base32 returns Douglas Crockford's base32 encoding: 13 characters
// from 0-9 and A-Z less I, L, O and U. It sorts like IDs. Parse accepts lower
// case and reads I and L as 1 and O as 0, as Crockford's spec asks.
func Base32() Encoding { return Encoding{base32Kind} }

// Base58 returns the base58 encoding with Bitcoin's alphabet (0-9,
// A-Z and a-z less 0, I, O and l, so no two characters look alike): 11
// characters. It sorts like IDs.
func Base58() Encoding { return Encoding{base58Kind} }

// Base62 returns the base62 encoding with the alphabet 0-9, A-Z,
// a-z: 11 characters, safe in URLs. It sorts like IDs.
func Base62() Encoding { return Encoding{base62Kind} }

// Base64 returns the URL-safe base64 encoding of RFC 4648 without
// padding: the ID's 8 bytes in big-endian order as 11 characters, readable
// by any base64url decoder. It does not sort like IDs.
func Base64() Encoding { return Encoding{base64Kind} }

// Base2 returns the binary encoding of bwmarrin/snowflake's Base2:
// 1 to 63 digits 0 and 1 without leading zeros, as strconv.FormatInt(id, 2)
// writes. Parse reads 1 to 63 digits, leading zeros included. It does not
// sort like IDs.
func Base2() Encoding { return Encoding{base2Kind} }

// Base36 returns the base36 encoding of bwmarrin/snowflake's
// Base36: 1 to 13 characters from 0-9 and a-z without leading zeros, as
// strconv.FormatInt(id, 36) writes. Parse reads 1 to 13 characters,
// leading zeros and upper case included. It does not sort like IDs.
func Base36() Encoding { return Encoding{base36Kind} }

// Base58Flickr returns the base58 encoding of bwmarrin/snowflake's
// Base58, with Flickr's alphabet (1-9, a-z, A-Z less 0, l, I and O): 1 to
// 11 characters without leading zero digits ('1'), exactly as bwmarrin
// writes them. Parse reads 1 to 11 characters, leading '1's included. It
// does not sort like IDs: the alphabet puts a-z before A-Z.
//
// Its alphabet holds the same characters as [Base58]'s, in
// another order, so either reads the other's text as a different, valid
// ID: read bwmarrin's Base58 strings with this encoding only.
func Base58Flickr() Encoding { return Encoding{flickrKind} }

// ZBase32 returns the base32 encoding of bwmarrin/snowflake's
// Base32: the ID as a number in base 32 with the z-base-32 alphabet
// (ybndrfg8ejkmcpqxot1uwisza345h769), 1 to 13 characters without leading
// zero digits ('y'), exactly as bwmarrin writes them. Parse reads 1 to 13
// lower-case characters, leading 'y's included. It does not sort like
// IDs. It is not the z-base-32 of the ID's bytes, nor Crockford's
// [Base32].
func ZBase32() Encoding { return Encoding{zbase32Kind} }

// All returns every encoding, decimal first.
func All() []Encoding {
	all := make([]Encoding, numKinds)
	for k := range all {
		all[k] = Encoding{encodingKind(k)}
	}
	return all
}

// Parse returns the encoding called name: "dec", "hex", "base32",
// "base58", "base62", "base64", "base2", "base36", "base58-flickr" or
// "zbase32", the names [Encoding.String] returns. An unknown name is an
// [*NameError], which matches [ErrUnknown].
func Parse(name string) (Encoding, error) {
	for k := range specs {
		if specs[k].name == name {
			return Encoding{encodingKind(k)}, nil
		}
	}
	return Encoding{}, &NameError{Name: name}
}

func (e Encoding) spec() *spec { return &specs[e.kind] }

// names lists the names Parse knows, for error messages:
// "dec, hex, … or zbase32".
func names() string {
	var b strings.Builder
	for k := range specs {
		switch {
		case k == len(specs)-1:
			b.WriteString(" or ")
		case k > 0:
			b.WriteString(", ")
		}
		b.WriteString(specs[k].name)
	}
	return b.String()
}

// String returns the encoding's name, which [Parse] reads.
func (e Encoding) String() string { return e.spec().name }

// MarshalText returns the encoding's name, as [Encoding.String] does.
func (e Encoding) MarshalText() ([]byte, error) { return []byte(e.spec().name), nil }

// UnmarshalText sets e to the encoding named text, as [Parse]
// reads it. An unknown name is an [*NameError], which matches
// [ErrUnknown], and leaves e as it was.
func (e *Encoding) UnmarshalText(text []byte) error {
	enc, err := Parse(string(text))
	if err != nil {
		return err
	}
	*e = enc
	return nil
}

// Width returns the number of characters of every ID in this encoding, or 0
// for the encodings whose width varies (dec, base2, base36, base58-flickr
// and zbase32; see [Encoding.MaxWidth]).
func (e Encoding) Width() int { return e.spec().width }

// MaxWidth returns the most characters a valid ID takes in this encoding,
// and the most its Parse reads: the Width of a fixed-width encoding, and
// for the others the digits of 2^63-1 (19 for dec, 63 for base2, 13 for
// base36 and zbase32, 11 for base58-flickr).
func (e Encoding) MaxWidth() int { return e.spec().maxWidth }

// Sortable reports whether the byte-wise order of valid IDs formatted in
// this encoding is the numeric order of the IDs: true for hex, base32,
// base58 and base62.
func (e Encoding) Sortable() bool { return e.spec().sortable }

// Format returns id in this encoding.
func (e Encoding) Format(id ringflake.ID) string {
	if e.kind == decimalKind {
		return strconv.FormatInt(int64(id), 10)
	}
	var buf [65]byte // base2 of a negative ID: a sign and 64 digits
	return string(e.Append(buf[:0], id))
}

// Append appends id in this encoding to dst and returns the extended
// buffer. It allocates only when dst has no room.
func (e Encoding) Append(dst []byte, id ringflake.ID) []byte {
	switch e.kind {
	case decimalKind:
		return strconv.AppendInt(dst, int64(id), 10)
	case base2Kind:
		return strconv.AppendInt(dst, int64(id), 2)
	case base36Kind:
		return strconv.AppendInt(dst, int64(id), 36)
	case flickrKind, zbase32Kind:
		return appendNumber(dst, e.spec().alphabet, id)
	}
	s := e.spec()
	n := len(dst)
	dst = slices.Grow(dst, s.width)[:n+s.width]
	out, u := dst[n:], uint64(id)
	switch e.kind {
	case hexKind:
		for i := len(out) - 1; i >= 0; i-- {
			out[i] = s.alphabet[u&15]
			u >>= 4
		}
	case base32Kind:
		for i := len(out) - 1; i >= 0; i-- {
			out[i] = s.alphabet[u&31]
			u >>= 5
		}
	case base58Kind:
		for i := len(out) - 1; i >= 0; i-- {
			out[i] = s.alphabet[u%58]
			u /= 58
		}
	case base62Kind:
		for i := len(out) - 1; i >= 0; i-- {
			out[i] = s.alphabet[u%62]
			u /= 62
		}
	case base64Kind:
		// The 64 bits followed by 2 zero bits, in groups of 6.
		u2 := u << 2
		out[10] = s.alphabet[u2&63]
		u >>= 4
		for i := 9; i >= 0; i-- {
			out[i] = s.alphabet[u&63]
			u >>= 6
		}
	}
	return dst
}

// appendNumber appends id as a number in the base of alphabet, zbase32 or
// flickr58, without leading zero digits, after a minus sign when it is
// negative, as strconv.AppendInt does for its bases.
func appendNumber(dst []byte, alphabet string, id ringflake.ID) []byte {
	u := uint64(id)
	if id < 0 {
		dst = append(dst, '-')
		u = -u
	}
	var buf [13]byte // 2^64 in base 32
	i := len(buf)
	if len(alphabet) == 32 {
		for ; u >= 32; u >>= 5 {
			i--
			buf[i] = alphabet[u&31]
		}
	} else {
		const base = uint64(len(flickr58)) // a constant divisor: no division instruction
		for ; u >= base; u /= base {
			i--
			buf[i] = alphabet[u%base]
		}
	}
	i--
	buf[i] = alphabet[u]
	return append(dst, buf[i:]...)
}

// Parse reads an ID in this encoding. Errors match [ringflake.ErrInvalidID]; each is
// a [*ringflake.SyntaxError] that says where the input went wrong: empty input, a
// length other than the encoding's width (for the encodings of varying
// width, more than [Encoding.MaxWidth] characters), a character outside
// the alphabet, a value above 2^63-1 (which includes every negative ID's
// text), or, in base64, a last character whose 2 low bits are not zero.
// Parse allocates nothing when it succeeds.
func (e Encoding) Parse(s string) (ringflake.ID, error) {
	if e.kind == decimalKind {
		return ringflake.Parse(s)
	}
	return parse(e.kind, s)
}

// parse is [Encoding.Parse] for strings and byte slices, so that
// [ringflake.ID.UnmarshalText] need not copy its input.
func parse[T ~string | ~[]byte](kind encodingKind, s T) (ringflake.ID, error) {
	sp := &specs[kind]
	switch {
	case len(s) == 0:
		return 0, &ringflake.SyntaxError{Input: "", Offset: -1, Reason: "empty"}
	case sp.width != 0 && len(s) != sp.width:
		return 0, &ringflake.SyntaxError{Input: string(s), Offset: -1,
			Reason: fmt.Sprintf("%d characters, want %d %s digits", utf8.RuneCountInString(string(s)), sp.width, sp.name)}
	case sp.width == 0 && len(s) > sp.maxWidth:
		return 0, &ringflake.SyntaxError{Input: string(s), Offset: -1,
			Reason: fmt.Sprintf("%d characters, want at most %d %s digits", utf8.RuneCountInString(string(s)), sp.maxWidth, digitName(sp))}
	}
	if kind == base64Kind {
		return parseBase64(sp, s)
	}
	base := uint64(len(sp.alphabet))
	var n uint64 // ≤ 2^63-1, so n*base+d fits in 128 bits
	for i := 0; i < len(s); i++ {
		d := sp.decode[s[i]]
		if d == invalid {
			return 0, notDigit(sp, s, i)
		}
		hi, lo := bits.Mul64(n, base)
		lo, carry := bits.Add64(lo, uint64(d), 0)
		if hi|carry != 0 || lo > math.MaxInt64 {
			return 0, &ringflake.SyntaxError{Input: string(s), Offset: i, Reason: "larger than 2^63-1"}
		}
		n = lo
	}
	return ringflake.ID(n), nil
}

func parseBase64[T ~string | ~[]byte](sp *spec, s T) (ringflake.ID, error) {
	var u uint64
	for i := 0; i < len(s); i++ {
		d := sp.decode[s[i]]
		if d == invalid {
			return 0, notDigit(sp, s, i)
		}
		switch {
		case i == 0 && d >= 32: // the ID's top bit
			return 0, &ringflake.SyntaxError{Input: string(s), Offset: 0, Reason: "larger than 2^63-1"}
		case i == 10 && d&3 != 0:
			return 0, &ringflake.SyntaxError{Input: string(s), Offset: 10,
				Reason: fmt.Sprintf("last character %q sets bits beyond the ID's 64", rune(s[i]))}
		case i == 10:
			u = u<<4 | uint64(d>>2)
		default:
			u = u<<6 | uint64(d)
		}
	}
	return ringflake.ID(u), nil
}

func notDigit[T ~string | ~[]byte](sp *spec, s T, i int) *ringflake.SyntaxError {
	r, _ := utf8.DecodeRuneInString(string(s[i:]))
	return &ringflake.SyntaxError{Input: string(s), Offset: i, Reason: "not a " + digitName(sp) + " digit " + strconv.QuoteRune(r)}
}

// digitName names the encoding's digits in messages.
func digitName(sp *spec) string {
	if sp.name == "dec" {
		return "decimal"
	}
	return sp.name
}
