package opaque

import (
	"crypto/cipher"
	"encoding/binary"
	"errors"
	"math/big"
	"slices"
)

// This file is FF1 of NIST SP 800-38G (Dworkin, "Recommendation for Block
// Cipher Modes of Operation: Methods for Format-Preserving Encryption",
// March 2016, and Revision 1, February 2019), section 6.2, for any radix
// and length, written from the specification with math/big. It is the
// reference the fast radix-2 path of binary.go is tested against, and the
// one NIST's sample vectors test.

// errFF1 is returned for a radix, length or numeral that FF1 rejects.
var errFF1 = errors.New("opaque: FF1: invalid input")

// ff1 encrypts (or, with decrypt, decrypts) the numeral string x in radix
// under the AES block blk and the tweak.
func ff1(blk cipher.Block, tweak []byte, radix int, x []int, decrypt bool) ([]int, error) {
	n := len(x)
	if radix < 2 || radix > 1<<16 || n < 2 || len(tweak) > 1<<31 {
		return nil, errFF1
	}
	r := big.NewInt(int64(radix))
	if new(big.Int).Exp(r, big.NewInt(int64(n)), nil).Cmp(big.NewInt(1_000_000)) < 0 {
		return nil, errFF1 // radix^n ≥ 10^6 (Revision 1)
	}
	for _, d := range x {
		if d < 0 || d >= radix {
			return nil, errFF1
		}
	}
	// 1-4: the halves and the byte lengths b and d.
	u := n / 2
	v := n - u
	a, b := slices.Clone(x[:u]), slices.Clone(x[u:])
	// b = ⌈⌈v·log2(radix)⌉/8⌉, with ⌈log2(radix^v)⌉ the bit length of radix^v − 1.
	rv := new(big.Int).Exp(r, big.NewInt(int64(v)), nil)
	bytesB := (new(big.Int).Sub(rv, big.NewInt(1)).BitLen() + 7) / 8
	bytesD := 4*((bytesB+3)/4) + 4
	// 5: P.
	t := len(tweak)
	p := make([]byte, 16)
	p[0], p[1], p[2] = 1, 2, 1
	p[3], p[4], p[5] = byte(radix>>16), byte(radix>>8), byte(radix)
	p[6] = 10
	p[7] = byte(u % 256)
	binary.BigEndian.PutUint32(p[8:], uint32(n))
	binary.BigEndian.PutUint32(p[12:], uint32(t))
	pad := ((-t-bytesB-1)%16 + 16) % 16
	q := make([]byte, t+pad+1+bytesB)
	copy(q, tweak)
	mod := [2]*big.Int{ // radix^u for even rounds, radix^v for odd ones
		new(big.Int).Exp(r, big.NewInt(int64(u)), nil), rv,
	}
	// 6: ten rounds, in reverse order to decrypt, with the roles of A and B
	// swapped.
	for k := range 10 {
		i := k
		if decrypt {
			i = 9 - k
		}
		in := b // the half that feeds the round function
		if decrypt {
			in = a
		}
		// i: Q = T || 0^pad || [i]^1 || [NUM(in)]^b.
		q[t+pad] = byte(i)
		num(in, r).FillBytes(q[t+pad+1:])
		// ii: R = PRF(P || Q), CBC-MAC with a zero IV.
		rb := prf(blk, p, q)
		// iii: S = the first d bytes of R || CIPH(R ⊕ [1]^16) || CIPH(R ⊕ [2]^16) …
		s := append([]byte(nil), rb...)
		for j := 1; len(s) < bytesD; j++ {
			var blkj [16]byte
			binary.BigEndian.PutUint64(blkj[8:], uint64(j))
			for z := range blkj {
				blkj[z] ^= rb[z]
			}
			blk.Encrypt(blkj[:], blkj[:])
			s = append(s, blkj[:]...)
		}
		// iv-vii: y = NUM(S); c = NUM(A) ± y mod radix^m; C = STR(c).
		y := new(big.Int).SetBytes(s[:bytesD])
		m := u
		if i%2 == 1 {
			m = v
		}
		c := new(big.Int)
		if decrypt {
			c.Sub(num(b, r), y)
		} else {
			c.Add(num(a, r), y)
		}
		c.Mod(c, mod[i%2])
		out := str(c, r, m)
		// viii-ix: shift the halves.
		if decrypt {
			b, a = a, out
		} else {
			a, b = b, out
		}
	}
	return append(a, b...), nil
}

// prf is CBC-MAC over p || q, whose length is a multiple of 16 bytes.
func prf(blk cipher.Block, p, q []byte) []byte {
	y := make([]byte, 16)
	msg := append(append([]byte(nil), p...), q...)
	for j := 0; j < len(msg); j += 16 {
		for z := range 16 {
			y[z] ^= msg[j+z]
		}
		blk.Encrypt(y, y)
	}
	return y
}

// num is NUM_radix(x): x read as a number in radix, most significant
// numeral first.
func num(x []int, r *big.Int) *big.Int {
	n := new(big.Int)
	for _, d := range x {
		n.Mul(n, r)
		n.Add(n, big.NewInt(int64(d)))
	}
	return n
}

// str is STR^m_radix(c): c as m numerals in radix, most significant first.
func str(c, r *big.Int, m int) []int {
	out := make([]int, m)
	c = new(big.Int).Set(c)
	d := new(big.Int)
	for i := m - 1; i >= 0; i-- {
		c.DivMod(c, r, d)
		out[i] = int(d.Int64())
	}
	return out
}
