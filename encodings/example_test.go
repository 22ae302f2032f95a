package encodings_test

import (
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"slices"

	"github.com/ringflake/ringflake"
	"github.com/ringflake/ringflake/encodings"
)

// Every encoding of one ID, with its width and whether its text sorts like
// IDs.
func ExampleEncoding() {
	id := ringflake.ID(1541815603606036480)
	for _, enc := range encodings.All() {
		s := enc.Format(id)
		if back, err := enc.Parse(s); err != nil || back != id {
			panic(fmt.Sprint(enc, back, err))
		}
		width := fmt.Sprint(enc.Width())
		if enc.Width() == 0 {
			width = fmt.Sprintf("1-%d", enc.MaxWidth())
		}
		fmt.Printf("%-13s width %-4s sortable %-5v %s\n", enc, width, enc.Sortable(), s)
	}
	// Output:
	// dec           width 1-19 sortable false 1541815603606036480
	// hex           width 16   sortable true  1565a11f6217a000
	// base32        width 13   sortable true  1ASD13XH1F800
	// base58        width 11   sortable true  4aaW4SzAyQK
	// base62        width 11   sortable true  1ptWyK4WgZU
	// base64        width 11   sortable false FWWhH2IXoAA
	// base2         width 1-63 sortable false 1010101100101101000010001111101100010000101111010000000000000
	// base36        width 1-13 sortable false bppc0m3ju134
	// base58-flickr width 1-11 sortable false 4zzv4rZaYpj
	// zbase32       width 1-13 sortable false bk3pbd7tbxeyy
}

// Append writes into a buffer you own and allocates nothing when it has
// room: format many IDs with one buffer.
func ExampleEncoding_Append() {
	enc := encodings.Base62()
	buf := make([]byte, 0, 64)
	for _, id := range []ringflake.ID{1, 62, 1541815603606036480} {
		buf = enc.Append(buf, id)
		buf = append(buf, '\n')
	}
	fmt.Print(string(buf))
	// Output:
	// 00000000001
	// 00000000010
	// 1ptWyK4WgZU
}

// Parse says what is wrong and where.
func ExampleEncoding_Parse() {
	_, err := encodings.Base58().Parse("4aaW4SzAyQl")
	var se *ringflake.SyntaxError
	fmt.Println(errors.Is(err, ringflake.ErrInvalidID), errors.As(err, &se), se.Offset)
	fmt.Println(err)
	// Output:
	// true true 10
	// ringflake: invalid ID "4aaW4SzAyQl": not a base58 digit 'l' at offset 10
}

func ExampleDecimal() {
	enc := encodings.Decimal()
	id, err := enc.Parse("1541815603606036480")
	if err != nil {
		panic(err)
	}
	fmt.Println(enc.Format(id) == id.String())
	// Decimal text sorts like IDs only when the lengths agree.
	fmt.Println(enc.Format(9) < enc.Format(10))
	// Parse reads 1 to 19 digits, leading zeros included.
	padded, err := enc.Parse("0000000000000004096")
	fmt.Println(padded, err)
	_, err = enc.Parse("00000000000000004096")
	fmt.Println(err)
	// Output:
	// true
	// false
	// 4096 <nil>
	// ringflake: invalid ID "00000000000000004096": 20 characters, want at most 19 decimal digits
}

// Fixed-width hex sorts like the IDs; Parse takes upper case too.
func ExampleHex() {
	enc := encodings.Hex()
	fmt.Println(enc.Format(9), enc.Format(10), enc.Format(9) < enc.Format(10))
	id, _ := enc.Parse("1565A11F6217A000")
	fmt.Println(id)
	// Output:
	// 0000000000000009 000000000000000a true
	// 1541815603606036480
}

// Crockford's base32 reads what people type: lower case, I and L for 1, O
// for 0. It writes the canonical upper-case form.
func ExampleBase32() {
	enc := encodings.Base32()
	fmt.Println(enc.Format(1541815603606036480))
	for _, typed := range []string{"1asd13xh1f800", "IASD13XHLF8OO"} {
		id, err := enc.Parse(typed)
		fmt.Println(id, err)
	}
	// Output:
	// 1ASD13XH1F800
	// 1541815603606036480 <nil>
	// 1541815603606036480 <nil>
}

// Base58 leaves out the characters people confuse (0, O, I, l) and sorts
// like the IDs.
func ExampleBase58() {
	enc := encodings.Base58()
	ids := []ringflake.ID{1541815603606036480, 7, 1 << 40}
	var texts []string
	for _, id := range ids {
		texts = append(texts, enc.Format(id))
	}
	slices.Sort(texts)
	fmt.Println(texts)
	// Output: [11111111118 1111VtB5VXd 4aaW4SzAyQK]
}

// Base58FlickrEncoding reads and writes bwmarrin/snowflake's Base58. Read
// such text with base58, ringflake's Bitcoin-alphabet base58, and you get
// another valid ID, without any error.
func ExampleBase58Flickr() {
	const fromBwmarrin = "4jgmnx8Js8A"
	id, err := encodings.Base58Flickr().Parse(fromBwmarrin)
	fmt.Println(id, err)
	fmt.Println(encodings.Base58Flickr().Format(id))

	wrong, err := encodings.Base58().Parse(fromBwmarrin)
	fmt.Println(wrong, err)
	// Output:
	// 1428076403798048768 <nil>
	// 4jgmnx8Js8A
	// 1609467648527167071 <nil>
}

// ZBase32Encoding reads and writes bwmarrin/snowflake's Base32: the ID as a
// number in base 32 with the z-base-32 alphabet, lower case only.
func ExampleZBase32() {
	enc := encodings.ZBase32()
	id, err := enc.Parse("b8wjm1zroyyyy")
	fmt.Println(id, err, enc.Format(id))
	_, err = enc.Parse("B8WJM1ZROYYYY")
	fmt.Println(err)
	// Output:
	// 1427970479175499776 <nil> b8wjm1zroyyyy
	// ringflake: invalid ID "B8WJM1ZROYYYY": not a zbase32 digit 'B' at offset 0
}

// Base36Encoding and Base2Encoding write what strconv.FormatInt writes,
// as bwmarrin/snowflake's Base36 and Base2 do: no leading zeros.
func ExampleBase36() {
	id := ringflake.ID(1116817865006120960)
	fmt.Println(encodings.Base36().Format(id))
	fmt.Println(encodings.Base2().Format(5))
	back, err := encodings.Base36().Parse("8HGMW4BLVLKW") // upper case reads too
	fmt.Println(back == id, err)
	// Output:
	// 8hgmw4blvlkw
	// 101
	// true <nil>
}

func ExampleBase62() {
	enc := encodings.Base62()
	s := enc.Format(1541815603606036480)
	id, err := enc.Parse(s)
	fmt.Println(s, id, err)
	// Output: 1ptWyK4WgZU 1541815603606036480 <nil>
}

// Base64 is the RFC 4648 URL-safe form of the ID's 8 big-endian bytes, so
// any base64url decoder reads it. It does not sort like the IDs.
func ExampleBase64() {
	s := encodings.Base64().Format(1541815603606036480)
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		panic(err)
	}
	fmt.Println(s, binary.BigEndian.Uint64(b))
	// Output: FWWhH2IXoAA 1541815603606036480
}

func ExampleParse() {
	enc, err := encodings.Parse("base32") // from a flag or a config file
	if err != nil {
		panic(err)
	}
	fmt.Println(enc.Format(1541815603606036480))
	_, err = encodings.Parse("base16")
	fmt.Println(errors.Is(err, encodings.ErrUnknown))
	// Output:
	// 1ASD13XH1F800
	// true
}

// An Encoding reads and writes its name, so a configuration struct or a
// flag (with flag.TextVar) can hold one; left unset, it is decimal.
func ExampleEncoding_UnmarshalText() {
	var config struct {
		Format encodings.Encoding `json:"format"`
		Log    encodings.Encoding `json:"log"`
	}
	err := json.Unmarshal([]byte(`{"format":"base58"}`), &config)
	fmt.Println(config.Format, config.Log, err)

	fs := flag.NewFlagSet("ids", flag.ContinueOnError)
	var enc encodings.Encoding
	fs.TextVar(&enc, "format", encodings.Hex(), "ID encoding: dec, hex, base32, base58, base62 or base64")
	err = fs.Parse([]string{"-format", "base32"})
	fmt.Println(enc, err)
	// Output:
	// base58 dec <nil>
	// base32 <nil>
}
