package opaque

import (
	"crypto/cipher"
	"encoding/binary"
	"fmt"
	"slices"
	"strconv"

	"github.com/ringflake/ringflake"
)

// MaxTweak is the longest tweak [New] accepts, in bytes.
const MaxTweak = 256

// A Codec turns IDs into public IDs and back, with one key set and one
// tweak. Make one per type of ID (a tweak of "order_" for orders,
// "user_" for users): the same ID gets unrelated public IDs under
// different tweaks, and the text of one type does not decode as another.
//
// A public ID has two forms:
//
//   - the number ([Codec.Encode], [Codec.Decode]): a non-negative int64,
//     the FF1 encryption of the ID's 63 bits under the primary key. Every
//     number in [0, 2^63) is the public ID of exactly one ID, so a number
//     alone cannot tell a mistyped or foreign one, nor its key version.
//
//   - the text ([Codec.Format], [Codec.AppendText], [Codec.Parse]): 18
//     characters of Crockford's base32 alphabet, lower case,
//
//     v pppppppppppppppp c     v: the key version (0-31)
//     p: the public number's 63 bits and a 17-bit keyed check
//     c: a Luhn mod 32 check character
//
//     Parse reads upper case too, and i and l as 1, o as 0. A changed
//     character always fails the check character. Text made with another
//     key or another tweak passes the keyed check with probability 2^-17,
//     a guessed string passes both with 2^-22; what fails is an error,
//     never another ID. [WithoutCheck] drops both checks (14 characters:
//     the version and 13 characters of the number).
//
// Make one with [New]; the zero Codec has no keys: it encodes and decodes
// nothing, and its methods return errors matching [ErrUnknownVersion].
// A Codec is immutable and safe for concurrent use by multiple goroutines.
type Codec struct {
	tweak   []byte
	keys    *Keys
	check   bool
	primary *version
	vers    [MaxVersion + 1]*version // nil where there is no key
}

// version is a key's share of a codec.
type version struct {
	n   byte
	ff1 *ff1Binary
	blk cipher.Block
	mac [16]byte // the keyed check's CBC-MAC state after the domain block and the tweak
}

// An Option changes how [New] builds a codec.
type Option interface{ apply(*Codec) }

type optionFunc func(*Codec)

func (f optionFunc) apply(c *Codec) { f(c) }

// WithoutCheck makes the text form 14 characters, the key version and the
// public number, without the keyed check and the check character: any
// text of the right length and alphabet whose key version the codec has
// decodes to some ID. The numbers are the same with or without it.
func WithoutCheck() Option { return optionFunc(func(c *Codec) { c.check = false }) }

// New returns a codec for keys and tweak. The tweak is not secret; it
// separates types (use a fixed string per type, such as a table name or
// "order_"), and may be empty. Errors match [ErrInvalidOption]: nil or
// zero keys, a tweak longer than [MaxTweak] bytes, a nil option.
func New(keys *Keys, tweak string, opts ...Option) (*Codec, error) {
	if keys == nil || keys.blocks[keys.primary] == nil {
		return nil, fmt.Errorf("%w: no keys (make them with NewKeys or ParseKeys)", ErrInvalidOption)
	}
	if len(tweak) > MaxTweak {
		return nil, fmt.Errorf("%w: tweak of %d bytes, want at most %d", ErrInvalidOption, len(tweak), MaxTweak)
	}
	c := &Codec{tweak: []byte(tweak), keys: keys, check: true}
	for _, o := range opts {
		if o == nil {
			return nil, fmt.Errorf("%w: nil option", ErrInvalidOption)
		}
		o.apply(c)
	}
	for v, blk := range keys.blocks {
		if blk == nil {
			continue
		}
		c.vers[v] = &version{n: byte(v), ff1: newFF1Binary(blk, c.tweak), blk: blk, mac: checkState(blk, c.tweak)}
	}
	c.primary = c.vers[keys.primary]
	return c, nil
}

// Tweak returns the codec's tweak.
func (c *Codec) Tweak() string { return string(c.tweak) }

// Keys returns the codec's key set.
func (c *Codec) Keys() *Keys { return c.keys }

// TextLen returns the length of every public ID in text: 18, or 14
// [WithoutCheck].
func (c *Codec) TextLen() int {
	if c.check {
		return checkedLen
	}
	return uncheckedLen
}

// Encode returns the public number of id under the primary key: a
// non-negative int64, distinct for distinct IDs. A negative id is an error
// matching [ErrNegative].
func (c *Codec) Encode(id ringflake.ID) (int64, error) {
	if c.primary == nil {
		return 0, errNoKeys
	}
	if id < 0 {
		return 0, negativeError(id)
	}
	return int64(c.primary.ff1.encrypt(new([16]byte), uint64(id))), nil
}

// errNoKeys is the error of the zero Codec, which has no key to encode or
// decode with.
var errNoKeys = fmt.Errorf("%w: the zero Codec has no keys; make one with New", ErrUnknownVersion)

// Decode returns the ID whose public number under the primary key is n.
// Every non-negative n is some ID's public number; a negative n is a
// [*DecodeError] matching [ErrMalformed].
func (c *Codec) Decode(n int64) (ringflake.ID, error) {
	if c.primary == nil {
		return 0, errNoKeys
	}
	return c.decodeNumber(c.primary, n)
}

// EncodeVersion is [Codec.Encode] with the key of version v rather than
// the primary one. A version the codec has no key for is an error
// matching [ErrUnknownVersion].
func (c *Codec) EncodeVersion(v int, id ringflake.ID) (int64, error) {
	ver, err := c.version(v)
	if err != nil {
		return 0, err
	}
	if id < 0 {
		return 0, negativeError(id)
	}
	return int64(ver.ff1.encrypt(new([16]byte), uint64(id))), nil
}

// DecodeVersion is [Codec.Decode] with the key of version v rather than
// the primary one. A version the codec has no key for is an error
// matching [ErrUnknownVersion].
func (c *Codec) DecodeVersion(v int, n int64) (ringflake.ID, error) {
	ver, err := c.version(v)
	if err != nil {
		return 0, err
	}
	return c.decodeNumber(ver, n)
}

func (c *Codec) version(v int) (*version, error) {
	if v < 0 || v > MaxVersion || c.vers[v] == nil {
		return nil, fmt.Errorf("%w %d: the codec has %s", ErrUnknownVersion, v, c.keys.versionList())
	}
	return c.vers[v], nil
}

func (c *Codec) decodeNumber(ver *version, n int64) (ringflake.ID, error) {
	if n < 0 {
		return 0, decodeError(ErrMalformed, strconv.FormatInt(n, 10), -1, "negative")
	}
	return ringflake.ID(ver.ff1.decrypt(new([16]byte), uint64(n))), nil
}

// Format returns the text form of id under the primary key. A negative id
// is an error matching [ErrNegative].
func (c *Codec) Format(id ringflake.ID) (string, error) {
	b, err := c.AppendText(make([]byte, 0, checkedLen+16), id)
	return string(b), err
}

// AppendText appends the text form of id under the primary key to dst. It
// allocates nothing when dst has room for 34 more bytes (the text and a
// block of scratch space), and grows dst once otherwise. A negative id is
// an error matching [ErrNegative], and leaves dst as it was.
func (c *Codec) AppendText(dst []byte, id ringflake.ID) ([]byte, error) {
	if c.primary == nil {
		return dst, errNoKeys
	}
	if id < 0 {
		return dst, negativeError(id)
	}
	// The AES block is an interface, so its buffer escapes: use the room
	// past the text in dst, which is on the heap (or the caller's) already.
	n := len(dst)
	dst = slices.Grow(dst, checkedLen+16)
	buf := (*[16]byte)(dst[n+checkedLen : n+checkedLen+16])
	ver := c.primary
	pub := ver.ff1.encrypt(buf, uint64(id))
	if !c.check {
		clear(buf[:]) // leave no cipher output in the caller's spare room
		return appendUnchecked(dst, ver.n, pub), nil
	}
	tag := ver.tag(buf, pub)
	clear(buf[:])
	return appendChecked(dst, ver.n, pub, tag), nil
}

// Parse reads the text form of a public ID and returns its ID. Errors are
// [*DecodeError] values, which match [ringflake.ErrInvalidID] and one of
// [ErrMalformed] (empty, the wrong length, a character outside the
// alphabet), [ErrCheckFailed] (a mistyped character, text of another key
// or tweak, a guess) and [ErrUnknownVersion] (a key version the codec does
// not have). Parse allocates nothing when it succeeds.
func (c *Codec) Parse(s string) (ringflake.ID, error) { return parseText(c, s) }

// ParseBytes is [Codec.Parse] for a byte slice, which it does not copy
// when it succeeds.
func (c *Codec) ParseBytes(b []byte) (ringflake.ID, error) { return parseText(c, b) }

// Version returns the key version a public ID in text was made with, as
// Parse would read it, and whether the codec holds that version. It checks
// nothing else; use it to find text made with a retiring key.
func (c *Codec) Version(s string) (v int, known bool) {
	if len(s) == 0 {
		return -1, false
	}
	d := base32Decode[s[0]]
	if d == invalid {
		return -1, false
	}
	return int(d), c.vers[d] != nil
}

// checkState returns the keyed check's CBC-MAC state after its first
// block, 02 "ringflakeop" [t]^4, and the tweak padded with zeros to whole
// blocks. The first block differs from every FF1 message's (which starts
// 01 02 01), and all messages with the same first block have the same
// length, so the messages of FF1 and of the check, under one key, form a
// prefix-free set, on which CBC-MAC is a pseudorandom function.
func checkState(blk cipher.Block, tweak []byte) [16]byte {
	var state [16]byte
	copy(state[:], "\x02ringflakeop")
	binary.BigEndian.PutUint32(state[12:], uint32(len(tweak)))
	blk.Encrypt(state[:], state[:])
	for j := 0; j < len(tweak); j += 16 {
		for z := 0; z < 16 && j+z < len(tweak); z++ {
			state[z] ^= tweak[j+z]
		}
		blk.Encrypt(state[:], state[:])
	}
	return state
}

// tag returns the keyed check of pub: the first checkBits bits of the
// CBC-MAC's last block, [version]^1 0^7 [pub]^8; buf is scratch space.
func (ver *version) tag(buf *[16]byte, pub uint64) uint64 {
	*buf = ver.mac
	buf[0] ^= ver.n
	x := binary.BigEndian.Uint64(buf[8:]) ^ pub
	binary.BigEndian.PutUint64(buf[8:], x)
	ver.blk.Encrypt(buf[:], buf[:])
	return binary.BigEndian.Uint64(buf[:8]) >> (64 - checkBits)
}
