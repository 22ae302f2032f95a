// Package encodings writes ringflake IDs as text in other alphabets than
// decimal and reads them back: hex, Crockford base32, base58, base62 and
// base64url, most of them fixed-width and sorting like the IDs, and the
// base2, base36, Flickr base58 and z-base-32 forms of bwmarrin/snowflake.
//
//	s := encodings.Base58().Format(id)
//	id, err := encodings.Base58().Parse(s)
//	enc, err := encodings.Parse("base62") // by name, as configuration says it
//
// An [ringflake.ID] is decimal in text and a string in JSON without this
// package; it is for the programs that print IDs in URLs, logs or
// fixed-width columns, and the root package does not import it.
package encodings
