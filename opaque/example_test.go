package opaque_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"log"

	"github.com/ringflake/ringflake"
	"github.com/ringflake/ringflake/opaque"
)

// exampleKeys stands for keys read from a secret store: ParseKeys of
// "2:BASE64,1:BASE64". Never use a fixed key outside an example.
func exampleKeys() *opaque.Keys {
	k2, k1 := make([]byte, 32), make([]byte, 16)
	for i := range k2 {
		k2[i] = byte(i)
	}
	for i := range k1 {
		k1[i] = byte(100 + i)
	}
	keys, err := opaque.NewKeys(opaque.Key{Version: 2, Secret: k2}, opaque.Key{Version: 1, Secret: k1})
	if err != nil {
		log.Fatal(err)
	}
	return keys
}

func Example() {
	orders, err := opaque.New(exampleKeys(), "order_")
	if err != nil {
		log.Fatal(err)
	}
	id := ringflake.ID(1_943_412_563_201_384_448) // twitter layout: 2025-07-10T20:50:36.583Z, node 614, sequence 0
	for _, id := range []ringflake.ID{id, id + 1} {
		text, _ := orders.Format(id)
		n, _ := orders.Encode(id)
		back, _ := orders.Parse(text)
		fmt.Println(id, text, n, back)
	}

	// A changed character, or an order's text read as a user's: an error.
	text, _ := orders.Format(id)
	_, err = orders.Parse(text[:5] + "x" + text[6:])
	fmt.Println(errors.Is(err, opaque.ErrCheckFailed), errors.Is(err, ringflake.ErrInvalidID))
	users, _ := opaque.New(exampleKeys(), "user_")
	_, err = users.Parse(text)
	fmt.Println(err)
	// Output:
	// 1943412563201384448 2s9ke53q9tvjvp5xv0 7292296773361169117 1943412563201384448
	// 1943412563201384449 2phtgggcqag1rcffaj 6501654288453468611 1943412563201384449
	// true true
	// opaque: check failed for public ID "2s9ke53q9tvjvp5xv0": not made with key version 2 and tweak "user_", or mistyped
}

// A Text field writes the public ID in JSON and reads it back; the value
// to decode into carries the codec.
func ExampleText() {
	orders, err := opaque.New(exampleKeys(), "order_")
	if err != nil {
		log.Fatal(err)
	}
	type order struct {
		ID    opaque.Text `json:"id"`
		Total int         `json:"total"`
	}
	out, _ := json.Marshal(order{ID: orders.Text(1_943_412_563_201_384_448), Total: 42})
	fmt.Println(string(out))

	in := order{ID: orders.Text(0)}
	if err := json.Unmarshal(out, &in); err != nil {
		log.Fatal(err)
	}
	fmt.Println(in.ID.ID)
	// Output:
	// {"id":"2s9ke53q9tvjvp5xv0","total":42}
	// 1943412563201384448
}
