package opaque

import "github.com/ringflake/ringflake"

// Text is an ID that reads and writes itself as the text form of a codec:
// put it where an ID is written as text (a JSON field, a URL, a form) and
// its public ID goes out, the ID comes back in. MarshalText and
// UnmarshalText make it work with encoding/json, encoding/xml, YAML and
// flag.TextVar.
//
// Unmarshaling needs the codec before the text arrives, so set Codec
// first, for example with [Codec.Text] when making the value to decode
// into:
//
//	req := struct{ Order opaque.Text }{Order: orders.Text(0)}
//	err := json.Unmarshal(body, &req) // {"Order": "1x9b…"}
//	id := req.Order.ID
//
// A Text whose Codec is nil marshals and unmarshals to an error matching
// [ErrNoCodec].
type Text struct {
	ID    ringflake.ID
	Codec *Codec
}

// Text returns id bound to c.
func (c *Codec) Text(id ringflake.ID) Text { return Text{ID: id, Codec: c} }

// AppendText appends t's text form to b, as [Codec.AppendText] does.
func (t Text) AppendText(b []byte) ([]byte, error) {
	if t.Codec == nil {
		return b, ErrNoCodec
	}
	return t.Codec.AppendText(b, t.ID)
}

// MarshalText returns t's text form, as [Codec.Format] does.
func (t Text) MarshalText() ([]byte, error) {
	return t.AppendText(make([]byte, 0, checkedLen))
}

// UnmarshalText reads a public ID in text with t.Codec, as [Codec.Parse]
// does, and sets t.ID. On error t is left as it was.
func (t *Text) UnmarshalText(b []byte) error {
	if t.Codec == nil {
		return ErrNoCodec
	}
	id, err := t.Codec.ParseBytes(b)
	if err != nil {
		return err
	}
	t.ID = id
	return nil
}

// String returns t's text form, or, when it has none (no codec, a
// negative ID), a description of why in brackets.
func (t Text) String() string {
	b, err := t.MarshalText()
	if err != nil {
		return "<" + err.Error() + ">"
	}
	return string(b)
}
