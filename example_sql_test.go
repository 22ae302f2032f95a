package ringflake_test

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/ringflake/ringflake"
)

// In JSON an ID is a string, because JavaScript numbers lose integers above
// 2^53; a number is accepted too, and IDs work as map keys.
func ExampleID_MarshalJSON() {
	type order struct {
		ID     ringflake.ID            `json:"id"`
		Parent ringflake.ID            `json:"parent"`
		Items  map[ringflake.ID]string `json:"items"`
	}
	b, err := json.Marshal(order{ID: 1541815603606036480, Parent: 4096, Items: map[ringflake.ID]string{7: "pen"}})
	if err != nil {
		panic(err)
	}
	fmt.Println(string(b))

	var o order
	err = json.Unmarshal([]byte(`{"id":1541815603606036480,"parent":"4096","items":{"7":"pen"}}`), &o)
	fmt.Println(o.ID, o.Parent, o.Items, err)
	// Output:
	// {"id":"1541815603606036480","parent":"4096","items":{"7":"pen"}}
	// 1541815603606036480 4096 map[7:pen] <nil>
}

// database/sql calls Scan with what the driver read: an int64 from a
// BIGINT column, text from a text column.
func ExampleID_Scan() {
	var fromBigint, fromText ringflake.ID
	_ = fromBigint.Scan(int64(1541815603606036480))
	_ = fromText.Scan([]byte("1541815603606036480"))
	fmt.Println(fromBigint, fromText)

	err := fromBigint.Scan(nil) // NULL needs a NullID
	fmt.Println(errors.Is(err, ringflake.ErrInvalidID))
	// Output:
	// 1541815603606036480 1541815603606036480
	// true
}

// database/sql calls Value to send an ID: it is an int64.
func ExampleID_Value() {
	v, err := ringflake.ID(1541815603606036480).Value()
	fmt.Printf("%T %v %v\n", v, v, err)
	// Output: int64 1541815603606036480 <nil>
}

// A NullID holds a nullable column, as sql.NullInt64 does.
func ExampleNullID() {
	var parent ringflake.NullID
	_ = parent.Scan(nil)
	fmt.Println(parent.Valid)
	_ = parent.Scan(int64(4096))
	fmt.Println(parent.ID, parent.Valid)

	v, _ := ringflake.NullID{}.Value()
	fmt.Println(v)
	// Output:
	// false
	// 4096 true
	// <nil>
}

// In JSON a NullID is null or what its ID is: a string, read from a
// string or a number.
func ExampleNullID_MarshalJSON() {
	type order struct {
		ID     ringflake.ID     `json:"id"`
		Parent ringflake.NullID `json:"parent"`
	}
	b, err := json.Marshal([]order{
		{ID: 4097, Parent: ringflake.NullID{ID: 4096, Valid: true}},
		{ID: 4096}, // no parent
	})
	fmt.Println(string(b), err)

	var orders []order
	err = json.Unmarshal([]byte(`[{"id":"4097","parent":4096},{"id":"4096","parent":null},{"id":"4098"}]`), &orders)
	fmt.Println(orders, err)
	// Output:
	// [{"id":"4097","parent":"4096"},{"id":"4096","parent":null}] <nil>
	// [{4097 {4096 true}} {4096 {0 false}} {4098 {0 false}}] <nil>
}
