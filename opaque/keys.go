package opaque

import (
	"crypto/aes"
	"crypto/cipher"
	"encoding/base64"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// MaxVersion is the greatest key version. A version is one character of
// the text form, so there are 32 (0 to 31); a version is given again to a
// new key once every public ID of its old key has been retired.
const MaxVersion = 31

// A Key is one AES key and its version. The secret's length picks the
// cipher: 16 bytes AES-128, 24 AES-192, 32 AES-256. Generate it with a
// cryptographic random source, e.g. `head -c 32 /dev/urandom | base64`.
type Key struct {
	Version int
	Secret  []byte
}

// String describes k without its secret: "key 2 (AES-256)".
func (k Key) String() string {
	return fmt.Sprintf("key %d (AES-%d)", k.Version, 8*len(k.Secret))
}

// GoString describes k without its secret, for %#v.
func (k Key) GoString() string {
	return fmt.Sprintf("opaque.Key{Version: %d, Secret: <%d bytes>}", k.Version, len(k.Secret))
}

// Format writes k as [Key.GoString] does for %#v and as [Key.String] does
// for every other verb, so that no verb prints the secret.
func (k Key) Format(f fmt.State, verb rune) {
	if verb == 'v' && f.Flag('#') {
		fmt.Fprint(f, k.GoString())
		return
	}
	fmt.Fprint(f, k.String())
}

// Keys is a set of versioned keys: one, the primary, encodes; every one
// decodes. Rotation is a change of the set: add a new key as a secondary
// everywhere, then make it the primary, then, once no public ID of the old
// key is in use, drop the old one. Build it with [NewKeys] or
// [ParseKeys]; it holds the AES key schedules, not the secrets. A Keys is
// immutable and safe for concurrent use.
type Keys struct {
	primary int
	blocks  [MaxVersion + 1]cipher.Block // nil where there is no key
	bits    [MaxVersion + 1]int          // AES key size in bits
}

// NewKeys returns the key set whose primary key is primary and whose other
// keys, which only decode, are others. It copies nothing it does not need:
// the secrets may be wiped after it returns. Errors are [*KeyError] values
// matching [ErrInvalidKey]: a version outside 0 to [MaxVersion], a version
// given twice, a secret that is not 16, 24 or 32 bytes.
func NewKeys(primary Key, others ...Key) (*Keys, error) {
	ks := &Keys{primary: primary.Version}
	for i, k := range append([]Key{primary}, others...) {
		if k.Version < 0 || k.Version > MaxVersion {
			return nil, &KeyError{Entry: i, Reason: fmt.Sprintf("version %d is not from 0 to %d", k.Version, MaxVersion)}
		}
		if ks.blocks[k.Version] != nil {
			return nil, &KeyError{Entry: i, Reason: fmt.Sprintf("version %d is given twice", k.Version)}
		}
		switch len(k.Secret) {
		case 16, 24, 32:
		default:
			return nil, &KeyError{Entry: i, Reason: fmt.Sprintf("version %d: secret of %d bytes, want 16, 24 or 32 (AES-128, -192, -256)", k.Version, len(k.Secret))}
		}
		blk, err := aes.NewCipher(k.Secret)
		if err != nil { // not reached: the length was checked
			return nil, &KeyError{Entry: i, Reason: err.Error()}
		}
		ks.blocks[k.Version] = blk
		ks.bits[k.Version] = 8 * len(k.Secret)
	}
	return ks, nil
}

// ParseKeys reads a key set written as entries VERSION:SECRET, separated
// by commas or white space (so a key file may hold one entry a line). The
// first entry is the primary key; the others only decode. SECRET is
// base64 of 16, 24 or 32 bytes, standard or URL-safe, padded or not. An
// entry without "VERSION:" has version 0, so a single bare base64 key is a
// key set too. For example, during a rotation from version 1 to 2:
//
//	2:<base64 of the new 32 bytes>,1:<base64 of the old 32 bytes>
//
// Errors are [*KeyError] values matching [ErrInvalidKey]; they name the entry by
// its position and never quote a secret.
func ParseKeys(text string) (*Keys, error) {
	entries := strings.FieldsFunc(text, func(r rune) bool {
		return r == ',' || r == ' ' || r == '\t' || r == '\n' || r == '\r'
	})
	if len(entries) == 0 {
		return nil, &KeyError{Entry: -1, Reason: "no key: want VERSION:BASE64[,VERSION:BASE64...]"}
	}
	keys := make([]Key, len(entries))
	for i, e := range entries {
		version, secret, found := strings.Cut(e, ":")
		if !found {
			version, secret = "0", e
		}
		v, err := strconv.Atoi(version)
		if err != nil || v < 0 || v > MaxVersion || version != strconv.Itoa(v) {
			return nil, &KeyError{Entry: i, Reason: fmt.Sprintf("version %q is not a number from 0 to %d", version, MaxVersion)}
		}
		// Either base64 alphabet, with or without padding.
		s := strings.NewReplacer("-", "+", "_", "/").Replace(strings.TrimRight(secret, "="))
		b, err := base64.RawStdEncoding.DecodeString(s)
		if !found && (err != nil || (len(b) != 16 && len(b) != 24 && len(b) != 32)) {
			// Not a bare key either: a file of something else, say
			// "garbage", which is neither VERSION:SECRET nor a secret.
			return nil, &KeyError{Entry: i, Reason: "not a key: want VERSION:BASE64, or the base64 of a 16, 24 or 32 byte secret alone"}
		}
		if err != nil {
			return nil, &KeyError{Entry: i, Reason: fmt.Sprintf("version %d: secret is not base64", v)}
		}
		keys[i] = Key{Version: v, Secret: b}
	}
	ks, err := NewKeys(keys[0], keys[1:]...)
	for _, k := range keys {
		clear(k.Secret)
	}
	return ks, err
}

// Primary returns the version of the key that encodes.
func (ks *Keys) Primary() int { return ks.primary }

// Versions returns the versions of every key, the primary first, then the
// others in increasing order; nil for a nil Keys (a zero Codec's).
func (ks *Keys) Versions() []int {
	if ks == nil {
		return nil
	}
	vs := []int{ks.primary}
	for v, blk := range ks.blocks {
		if blk != nil && v != ks.primary {
			vs = append(vs, v)
		}
	}
	return vs
}

// String describes the set without its secrets: "keys 2 (AES-256,
// primary), 1 (AES-128)".
func (ks *Keys) String() string {
	var b strings.Builder
	b.WriteString("keys ")
	for i, v := range ks.Versions() {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%d (AES-%d", v, ks.bits[v])
		if v == ks.primary {
			b.WriteString(", primary")
		}
		b.WriteString(")")
	}
	return b.String()
}

// versionList is "1, 2 and 5", for messages.
func (ks *Keys) versionList() string {
	vs := ks.Versions()
	slices.Sort(vs)
	s := make([]string, len(vs))
	for i, v := range vs {
		s[i] = strconv.Itoa(v)
	}
	switch len(s) {
	case 0:
		return "no keys"
	case 1:
		return s[0]
	}
	return strings.Join(s[:len(s)-1], ", ") + " and " + s[len(s)-1]
}
