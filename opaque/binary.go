package opaque

import (
	"crypto/cipher"
	"encoding/binary"
)

// FF1 over the 63-bit ID space: radix 2 and n = 63 numerals, the ID's bits
// with the most significant first, so that the domain is exactly the 2^63
// non-negative int64 values and no cycle-walking is needed. Then
//
//	u = 31, v = 32            A = the ID's top 31 bits, B = its low 32
//	b = ⌈32/8⌉ = 4            NUM_2(B) as 4 bytes
//	d = 4·⌈4/4⌉ + 4 = 8       y = the first 8 bytes of R; one AES block per round
//	P = 01 02 01 000002 0a 1f 0000003f [t]^4
//
// and Q = T || 0^((−t−5) mod 16) || [i]^1 || [B]^4 ends with one block
// whose first 11 bytes depend on the tweak only. The CBC-MAC of P and of
// every block of Q but the last is the same in every round of every ID;
// ff1Binary computes it once, so that a round costs one AES block.

const (
	idBits = 63
	uBits  = idBits / 2     // 31: A's numerals
	vBits  = idBits - uBits // 32: B's numerals
	qTail  = 1 + 4          // [i]^1 || [NUM(B)]^4
	qFixed = 16 - qTail     // bytes of Q's last block that come from the tweak
	maskU  = 1<<uBits - 1   // mod 2^u
	maskV  = 1<<vBits - 1   // mod 2^v
)

// ff1Binary is FF1 with one key and one tweak over the 63-bit ID space.
type ff1Binary struct {
	blk cipher.Block
	// baseHi and baseLo are the CBC-MAC state before Q's last block,
	// XORed with that block's first 11 bytes, as two big-endian words: a
	// round XORs [i]^1 || [B]^4 into the low one and encrypts.
	baseHi, baseLo uint64
}

func newFF1Binary(blk cipher.Block, tweak []byte) *ff1Binary {
	f := &ff1Binary{blk: blk}
	t := len(tweak)
	var state [16]byte
	p := [16]byte{1, 2, 1, 0, 0, 2, 10, uBits, 0, 0, 0, idBits}
	binary.BigEndian.PutUint32(p[12:], uint32(t))
	blk.Encrypt(state[:], p[:])
	pad := ((-t-qTail)%16 + 16) % 16
	head := make([]byte, t+pad) // T || 0^pad: every byte of Q before [i]
	copy(head, tweak)
	full := len(head) - qFixed // bytes in whole blocks before the last
	for j := 0; j < full; j += 16 {
		for z := range 16 {
			state[z] ^= head[j+z]
		}
		blk.Encrypt(state[:], state[:])
	}
	for z := range qFixed {
		state[z] ^= head[full+z]
	}
	f.baseHi = binary.BigEndian.Uint64(state[:8])
	f.baseLo = binary.BigEndian.Uint64(state[8:])
	return f
}

// round returns y, the first 8 bytes of PRF(P || Q) for round i and the
// half in, as a number; buf is scratch space.
func (f *ff1Binary) round(buf *[16]byte, i byte, in uint32) uint64 {
	// Two word stores and one load: few memory operations, which keeps
	// the race detector's share small too.
	binary.BigEndian.PutUint64(buf[:8], f.baseHi)
	binary.BigEndian.PutUint64(buf[8:], f.baseLo^(uint64(i)<<32|uint64(in)))
	f.blk.Encrypt(buf[:], buf[:])
	return binary.BigEndian.Uint64(buf[:8])
}

// encrypt returns FF1.Encrypt of x, which must be in [0, 2^63); buf is
// scratch space. (The block cipher is an interface, so its buffers escape:
// callers allocate one per call and share it.)
func (f *ff1Binary) encrypt(buf *[16]byte, x uint64) uint64 {
	a, b := x>>vBits, x&maskV
	for i := range byte(10) {
		y := f.round(buf, i, uint32(b))
		mask := uint64(maskU)
		if i%2 == 1 {
			mask = maskV
		}
		a, b = b, (a+y)&mask
	}
	return a<<vBits | b
}

// decrypt returns FF1.Decrypt of x, which must be in [0, 2^63); buf is
// scratch space.
func (f *ff1Binary) decrypt(buf *[16]byte, x uint64) uint64 {
	a, b := x>>vBits, x&maskV
	for i := byte(9); i < 10; i-- {
		y := f.round(buf, i, uint32(a))
		mask := uint64(maskU)
		if i%2 == 1 {
			mask = maskV
		}
		a, b = (b-y)&mask, a
	}
	return a<<vBits | b
}
