package ringflake

import (
	"database/sql/driver"
	"fmt"
	"math"
	"strconv"
)

// Value implements [driver.Valuer]: an ID goes to the database as an
// int64, for a BIGINT column. For a text column pass id.String(), which
// every driver stores as is: drivers that send typed values, such as
// github.com/jackc/pgx, refuse an int64 for a text parameter (those that
// send text, such as github.com/lib/pq, accept either). A negative ID is
// an error matching [ErrInvalidID].
func (id ID) Value() (driver.Value, error) {
	if id < 0 {
		return nil, negativeError(id)
	}
	return int64(id), nil
}

// Scan implements [database/sql.Scanner]: it reads an ID from a BIGINT
// column (int64, or uint64 up to 2^63-1) or from the decimal form in a
// text column (string or []byte, read as [Parse] does). Errors match
// [ErrInvalidID]: a negative or too large number, malformed text, SQL
// NULL (scan a nullable column into a [NullID]) and any other type. On
// error id is left as it was.
func (id *ID) Scan(src any) error {
	var v ID
	var err error
	switch src := src.(type) {
	case int64:
		if src < 0 {
			return negativeError(ID(src))
		}
		v = ID(src)
	case uint64:
		if src > math.MaxInt64 {
			return &SyntaxError{Input: strconv.FormatUint(src, 10), Offset: -1, Reason: "larger than 2^63-1"}
		}
		v = ID(src)
	case string:
		v, err = parseDecimal(src)
	case []byte:
		v, err = parseDecimal(src)
	case nil:
		return fmt.Errorf("%w: SQL NULL; scan a nullable column into a ringflake.NullID", ErrInvalidID)
	default:
		return fmt.Errorf("%w: cannot scan a %T; want an integer or the decimal form as text", ErrInvalidID, src)
	}
	if err != nil {
		return err
	}
	*id = v
	return nil
}

// NullID is an [ID] that may be SQL NULL, as [database/sql.NullInt64] is an
// int64 that may be. Valid is false for NULL; the zero NullID is NULL.
//
// In JSON a NullID is null when not Valid and otherwise what its ID is: a
// string of the decimal form, read from a string or a number. As text it
// is empty when not Valid and otherwise the decimal form.
type NullID struct {
	ID    ID
	Valid bool // Valid is true if ID is not NULL
}

// Scan implements [database/sql.Scanner]. NULL makes n {0, false}; anything
// else is read as [ID.Scan] reads it, with the same errors. On error n is
// left as it was.
func (n *NullID) Scan(src any) error {
	if src == nil {
		*n = NullID{}
		return nil
	}
	id := n.ID
	if err := id.Scan(src); err != nil {
		return err
	}
	*n = NullID{ID: id, Valid: true}
	return nil
}

// Value implements [driver.Valuer]: nil (SQL NULL) when n is not Valid,
// otherwise n.ID's value, with the same errors.
func (n NullID) Value() (driver.Value, error) {
	if !n.Valid {
		return nil, nil
	}
	return n.ID.Value()
}

// MarshalJSON returns JSON null when n is not Valid, otherwise n.ID as
// [ID.MarshalJSON] writes it: a JSON string of the decimal form. A Valid
// negative ID is an error matching [ErrInvalidID].
func (n NullID) MarshalJSON() ([]byte, error) {
	if !n.Valid {
		return []byte("null"), nil
	}
	return n.ID.MarshalJSON()
}

// UnmarshalJSON reads JSON null as NULL, making n the zero NullID (where
// [ID.UnmarshalJSON] leaves an ID alone), and anything else as
// [ID.UnmarshalJSON] reads it, making n Valid. Errors match [ErrInvalidID];
// on error n is left as it was.
func (n *NullID) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		*n = NullID{}
		return nil
	}
	var id ID
	if err := id.UnmarshalJSON(b); err != nil {
		return err
	}
	*n = NullID{ID: id, Valid: true}
	return nil
}

// MarshalText returns empty text when n is not Valid, otherwise the
// decimal form of n.ID. A Valid negative ID is an error matching
// [ErrInvalidID].
func (n NullID) MarshalText() ([]byte, error) {
	if !n.Valid {
		return []byte{}, nil
	}
	return n.ID.MarshalText()
}

// UnmarshalText reads empty text as NULL, making n the zero NullID, and
// anything else as [ID.UnmarshalText] reads it, making n Valid. Errors
// match [ErrInvalidID]; on error n is left as it was.
func (n *NullID) UnmarshalText(b []byte) error {
	if len(b) == 0 {
		*n = NullID{}
		return nil
	}
	var id ID
	if err := id.UnmarshalText(b); err != nil {
		return err
	}
	*n = NullID{ID: id, Valid: true}
	return nil
}
