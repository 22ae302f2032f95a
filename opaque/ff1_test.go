package opaque

import (
	"crypto/aes"
	"encoding/hex"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The nine FF1 samples NIST publishes with SP 800-38G: "FF1 samples",
// Computer Security Resource Center, Cryptographic Standards and
// Guidelines, Examples with Intermediate Values
// (https://csrc.nist.gov/csrc/media/projects/cryptographic-standards-and-guidelines/documents/examples/ff1samples.pdf).
// Samples 1-3 use AES-128, 4-6 AES-192, 7-9 AES-256.
var nistSamples = []struct {
	sample            int
	key, tweak        string // hex
	radix             int
	plain, ciphertext string // numerals as digits, 0-9 then a-z
}{
	{1, key128, "", 10, "0123456789", "2433477484"},
	{2, key128, "39383736353433323130", 10, "0123456789", "6124200773"},
	{3, key128, "3737373770717273373737", 36, "0123456789abcdefghi", "a9tv40mll9kdu509eum"},
	{4, key192, "", 10, "0123456789", "2830668132"},
	{5, key192, "39383736353433323130", 10, "0123456789", "2496655549"},
	{6, key192, "3737373770717273373737", 36, "0123456789abcdefghi", "xbj3kv35jrawxv32ysr"},
	{7, key256, "", 10, "0123456789", "6657667009"},
	{8, key256, "39383736353433323130", 10, "0123456789", "1001623463"},
	{9, key256, "3737373770717273373737", 36, "0123456789abcdefghi", "xs8a0azh2avyalyzuwd"},
}

const (
	key128 = "2b7e151628aed2a6abf7158809cf4f3c"
	key192 = key128 + "ef4359d8d580aa4f"
	key256 = key192 + "7f036d6f04fc6a94"
	digits = "0123456789abcdefghijklmnopqrstuvwxyz"
)

func numerals(s string) []int {
	x := make([]int, len(s))
	for i := range s {
		x[i] = strings.IndexByte(digits, s[i])
	}
	return x
}

func digitString(x []int) string {
	var b strings.Builder
	for _, d := range x {
		b.WriteByte(digits[d])
	}
	return b.String()
}

func TestFF1NISTSamples(t *testing.T) {
	for _, s := range nistSamples {
		t.Run("sample "+string(rune('0'+s.sample)), func(t *testing.T) {
			key, err := hex.DecodeString(s.key)
			require.NoError(t, err)
			tweak, err := hex.DecodeString(s.tweak)
			require.NoError(t, err)
			blk, err := aes.NewCipher(key)
			require.NoError(t, err)
			ct, err := ff1(blk, tweak, s.radix, numerals(s.plain), false)
			require.NoError(t, err)
			assert.Equal(t, s.ciphertext, digitString(ct), "encrypt")
			pt, err := ff1(blk, tweak, s.radix, numerals(s.ciphertext), true)
			require.NoError(t, err)
			assert.Equal(t, s.plain, digitString(pt), "decrypt")
		})
	}
}

func TestFF1RejectsWhatTheSpecRejects(t *testing.T) {
	blk, err := aes.NewCipher(make([]byte, 16))
	require.NoError(t, err)
	for name, tc := range map[string]struct {
		radix int
		x     []int
	}{
		"radix 1":                 {1, []int{0, 0}},
		"radix 2^16+1":            {1<<16 + 1, []int{0, 0}},
		"one numeral":             {1 << 16, []int{0}},
		"radix^n below a million": {10, []int{1, 2, 3, 4, 5}},
		"numeral out of range":    {10, []int{1, 2, 3, 4, 5, 10}},
		"negative numeral":        {10, []int{1, 2, 3, 4, 5, -1}},
	} {
		_, err := ff1(blk, nil, tc.radix, tc.x, false)
		assert.ErrorIs(t, err, errFF1, name)
	}
}

// The fast path of binary.go is FF1 with radix 2 and 63 numerals: it
// agrees with the reference implementation, in both directions, for every
// key size and tweaks of every length around the block boundaries that
// change Q's layout.
func TestFF1BinaryMatchesReference(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, keyHex := range []string{key128, key192, key256} {
		key, err := hex.DecodeString(keyHex)
		require.NoError(t, err)
		blk, err := aes.NewCipher(key)
		require.NoError(t, err)
		for _, tlen := range []int{0, 1, 5, 10, 11, 12, 16, 26, 27, 28, 43, 100, MaxTweak} {
			tweak := make([]byte, tlen)
			for i := range tweak {
				tweak[i] = byte(rng.Uint32())
			}
			f := newFF1Binary(blk, tweak)
			for i := range 40 {
				x := rng.Uint64() >> 1
				switch i {
				case 0:
					x = 0
				case 1:
					x = 1<<63 - 1
				}
				bitsIn := make([]int, 63)
				for j := range bitsIn {
					bitsIn[j] = int(x >> (62 - j) & 1)
				}
				want, err := ff1(blk, tweak, 2, bitsIn, false)
				require.NoError(t, err)
				var w uint64
				for _, b := range want {
					w = w<<1 | uint64(b)
				}
				got := f.encrypt(new([16]byte), x)
				require.Equal(t, w, got, "AES-%d, tweak of %d bytes, x=%d", 4*len(keyHex), tlen, x)
				require.Equal(t, x, f.decrypt(new([16]byte), got))
			}
		}
	}
}
