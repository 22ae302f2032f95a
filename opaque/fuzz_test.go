package opaque

import (
	"errors"
	"strings"
	"testing"

	"github.com/ringflake/ringflake"
)

// canonical returns text as Format writes it: lower case, i and l as 1, o
// as 0.
func canonical(s string) string {
	return strings.NewReplacer("i", "1", "l", "1", "o", "0").Replace(strings.ToLower(s))
}

// FuzzCodec asserts, for any ID, number, edit and string:
//   - an ID comes back from its public number and its text, and its
//     neighbour has another public number (the encoding is one-to-one);
//   - a public number comes back from its ID;
//   - the text with one character changed is refused by the check,
//     never read as an ID;
//   - any string is either refused with an error matching
//     ringflake.ErrInvalidID, or is the text of the ID it reads as;
//   - nothing panics.
func FuzzCodec(f *testing.F) {
	f.Add(int64(0), int64(0), uint8(0), byte('0'), "")
	f.Add(int64(1_943_412_563_201_384_448), int64(-1), uint8(17), byte('z'), "2s9ke53q9tvjvp5xv0")
	f.Add(int64(-1), int64(1<<62), uint8(3), byte('I'), "zzzzzzzzzzzzzzzzzz")
	f.Add(int64(1<<63-1), int64(1<<63-1), uint8(200), byte(0xff), "27zzzzzzzzzzzz")
	keys, err := NewKeys(Key{Version: 2, Secret: testSecret(2, 32)}, Key{Version: 1, Secret: testSecret(1, 16)})
	if err != nil {
		f.Fatal(err)
	}
	checked, err := New(keys, "order_")
	if err != nil {
		f.Fatal(err)
	}
	unchecked, err := New(keys, "order_", WithoutCheck())
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, id, n int64, pos uint8, r byte, s string) {
		for _, c := range []*Codec{checked, unchecked} {
			pub, err := c.Encode(ringflake.ID(id))
			switch {
			case id < 0 && !errors.Is(err, ErrNegative):
				t.Fatalf("Encode(%d): %v, want ErrNegative", id, err)
			case id >= 0 && (err != nil || pub < 0):
				t.Fatalf("Encode(%d) = %d, %v", id, pub, err)
			case id >= 0:
				if back, err := c.Decode(pub); err != nil || back != ringflake.ID(id) {
					t.Fatalf("Decode(Encode(%d)) = %d, %v", id, back, err)
				}
				if other, _ := c.Encode(ringflake.ID(id ^ 1)); other == pub {
					t.Fatalf("IDs %d and %d share public number %d", id, id^1, pub)
				}
				text, err := c.Format(ringflake.ID(id))
				if err != nil || len(text) != c.TextLen() {
					t.Fatalf("Format(%d) = %q, %v", id, text, err)
				}
				if back, err := c.Parse(text); err != nil || back != ringflake.ID(id) {
					t.Fatalf("Parse(Format(%d)) = %d, %v", id, back, err)
				}
				i := int(pos) % len(text)
				if c.check && base32Decode[r] != invalid && base32Decode[r] != base32Decode[text[i]] {
					changed := text[:i] + string(r) + text[i+1:]
					if got, err := c.Parse(changed); !errors.Is(err, ErrCheckFailed) {
						t.Fatalf("%q (from %q) read as %d, %v: want ErrCheckFailed", changed, text, got, err)
					}
				}
			}

			back, err := c.Decode(n)
			switch {
			case n < 0 && !errors.Is(err, ErrMalformed):
				t.Fatalf("Decode(%d): %v, want ErrMalformed", n, err)
			case n >= 0:
				if again, err2 := c.Encode(back); err != nil || err2 != nil || again != n {
					t.Fatalf("Encode(Decode(%d)) = %d, %v, %v", n, again, err, err2)
				}
			}

			got, err := c.Parse(s)
			if err != nil {
				if !errors.Is(err, ringflake.ErrInvalidID) {
					t.Fatalf("Parse(%q): %v does not match ringflake.ErrInvalidID", s, err)
				}
				continue
			}
			// Accepted: s is the text of got under its key version.
			v, _ := c.Version(s)
			pub, err = c.EncodeVersion(v, got)
			if err != nil || got < 0 {
				t.Fatalf("Parse(%q) = %d, then EncodeVersion: %v", s, got, err)
			}
			var text []byte
			if c.check {
				text = appendChecked(nil, byte(v), uint64(pub), c.vers[v].tag(new([16]byte), uint64(pub)))
			} else {
				text = appendUnchecked(nil, byte(v), uint64(pub))
			}
			if string(text) != canonical(s) {
				t.Fatalf("Parse(%q) = %d, whose text is %q", s, got, text)
			}
		}
	})
}
