// Package opaque turns ringflake IDs into public IDs that leak nothing and
// back, with a key: a keyed, reversible, versioned encoding.
//
// An ID tells whoever reads it its time to the millisecond, its node and
// its place in the millisecond; two IDs a day apart tell roughly how many
// were issued in between, and dense numbers (package segment's) tell it
// exactly. A public ID from a [Codec] tells none of that without the key,
// and the codec gives the ID back:
//
//	keys, err := opaque.ParseKeys(os.Getenv("RINGFLAKE_OPAQUE_KEY")) // "1:BASE64,..."
//	orders, err := opaque.New(keys, "order_")                        // one codec per type
//	text, err := orders.Format(id)                                   // "2s9ke53q9tvjvp5xv0"
//	id, err = orders.Parse(text)                                     // the ID, or an error
//	n, err := orders.Encode(id)                                      // a public int64
//
// # How
//
// The public number is FF1 of NIST SP 800-38G, with AES-128, -192 or -256,
// over exactly the 63-bit ID space: radix 2, 63 numerals, so every ID in
// [0, 2^63) has one public number in [0, 2^63) and no cycle-walking is
// needed. The tweak, one per type, makes the permutations of two types
// unrelated. The text form adds the key's version, a 17-bit keyed check
// (CBC-MAC under the same key, domain-separated from FF1's) and a Luhn mod
// 32 check character, in Crockford's base32:
//
//	2 s9ke53q9tvjvp5xv 0
//	│ │                └─ check character (Luhn mod 32)
//	│ └─ 16 characters: the public number (63 bits), then the keyed check (17 bits)
//	└─ key version, 0-31
//
// What the checks promise: one changed character is always an error
// (Luhn mod 32 catches every single substitution); text made with another
// key or another tweak passes the keyed check with probability 2^-17; a
// random or guessed string of the right length passes both with
// probability 2^-22. Failing text is an error matching [ErrCheckFailed],
// never another ID. The number has no check: every int64 in [0, 2^63) is
// the public number of some ID.
//
// # What it hides, and what not
//
// Without the key, the public IDs of any set of IDs look like a random
// set of distinct numbers: they hide the time, the node, the sequence, the
// order of issue and the count between two IDs. They do not hide how many
// distinct IDs someone has seen (each ID has one public ID per type and
// key), nor that two requests name the same object; and decoding is not
// authorization: a valid public ID proves only that someone with the key
// made it, not that the caller may see the object.
//
// # Keys
//
// A [Keys] holds up to 32 versioned AES keys. The primary encodes; every
// one decodes text, whose first character names its version. Rotation:
// add the new key as a secondary everywhere, make it the primary, and drop
// the old one once no text of it is in use. Numbers carry no version:
// decode a stored number with [Codec.DecodeVersion] and the version kept
// beside it, or keep one key for numbers.
//
// # Cost
//
// Ten AES blocks per encode or decode (eleven for text, the check), one
// 16-byte allocation per call (none for AppendText into a buffer with
// room); see BENCHMARKS.md. sql/opaque.sql computes
// the same numbers in PostgreSQL with pgcrypto.
//
// All types are immutable and safe for concurrent use by multiple
// goroutines.
package opaque
