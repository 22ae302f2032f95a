package opaque

import (
	"strconv"
	"testing"

	"github.com/ringflake/ringflake"
	"github.com/ringflake/ringflake/encodings"
)

// Encoding and decoding one ID, next to the references in the same run:
// strconv's decimal and ringflake's base58 encoding, which hide nothing.
// Each loop feeds its output into its next input, so the work cannot be
// hoisted out of the loop.

func benchCodec(b *testing.B) *Codec {
	b.Helper()
	c, err := New(testKeys(b), "order_")
	if err != nil {
		b.Fatal(err)
	}
	return c
}

const benchID = ringflake.ID(1_943_412_563_201_384_448)

func BenchmarkEncode(b *testing.B) {
	c := benchCodec(b)
	b.ReportAllocs()
	id := benchID
	for b.Loop() {
		n, _ := c.Encode(id)
		id = ringflake.ID(n)
	}
}

func BenchmarkDecode(b *testing.B) {
	c := benchCodec(b)
	b.ReportAllocs()
	n := int64(benchID)
	for b.Loop() {
		id, _ := c.Decode(n)
		n = int64(id)
	}
}

func BenchmarkAppendText(b *testing.B) {
	c := benchCodec(b)
	b.ReportAllocs()
	buf := make([]byte, 0, 32)
	id := benchID
	for b.Loop() {
		buf, _ = c.AppendText(buf[:0], id)
		id += ringflake.ID(buf[3])
	}
}

func BenchmarkParse(b *testing.B) {
	c := benchCodec(b)
	s, _ := c.Format(benchID)
	b.ReportAllocs()
	var sum ringflake.ID
	for b.Loop() {
		id, _ := c.Parse(s)
		sum += id
	}
	_ = sum
}

func BenchmarkStrconvFormatInt(b *testing.B) {
	b.ReportAllocs()
	buf := make([]byte, 0, 32)
	id := benchID
	for b.Loop() {
		buf = strconv.AppendInt(buf[:0], int64(id), 10)
		id += ringflake.ID(buf[3])
	}
}

func BenchmarkStrconvParseInt(b *testing.B) {
	b.ReportAllocs()
	s := benchID.String()
	var sum int64
	for b.Loop() {
		n, _ := strconv.ParseInt(s, 10, 64)
		sum += n
	}
	_ = sum
}

func BenchmarkBase58Append(b *testing.B) {
	enc := encodings.Base58()
	b.ReportAllocs()
	buf := make([]byte, 0, 32)
	id := benchID
	for b.Loop() {
		buf = enc.Append(buf[:0], id)
		id += ringflake.ID(buf[3])
	}
}

func BenchmarkBase58Parse(b *testing.B) {
	enc := encodings.Base58()
	s := enc.Format(benchID)
	b.ReportAllocs()
	var sum ringflake.ID
	for b.Loop() {
		id, _ := enc.Parse(s)
		sum += id
	}
	_ = sum
}

// BenchmarkAESBlocks10 is the floor under Encode and Decode: the ten AES
// blocks of FF1's ten rounds through crypto/cipher's Block interface,
// with the primary key (AES-256), and nothing else.
func BenchmarkAESBlocks10(b *testing.B) {
	blk := benchCodec(b).primary.ff1.blk
	buf := make([]byte, 16)
	b.ReportAllocs()
	for b.Loop() {
		for range 10 {
			blk.Encrypt(buf, buf)
		}
	}
}
