package serialno_test

import (
	"errors"
	"fmt"

	"github.com/ringflake/ringflake"
	"github.com/ringflake/ringflake/serialno"
)

// A payment number: a business prefix, the ID's time in UTC to the
// millisecond, then its node and sequence. It parses back to the ID.
func ExampleFormat() {
	layout := ringflake.TwitterLayout()
	f, err := serialno.New("PAY{time:20060102150405.000}{node:4}{seq:4}", layout)
	if err != nil {
		panic(err)
	}
	id := ringflake.ID(1541815603606036480)
	s, err := f.Format(id)
	fmt.Println(s, len(s) == f.Width(), err)

	back, err := f.Parse(s)
	fmt.Println(back, back.Node(layout), back.Sequence(layout), err)
	// Output:
	// PAY20220628160740.10503780000 true <nil>
	// 1541815603606036480 378 0 <nil>
}

// NewSerialFormat refuses a pattern that would lose bits of the IDs, and
// Parse names the place where a serial number goes wrong.
func ExampleNew() {
	layout := ringflake.TwitterLayout() // 1 ms ticks, nodes up to 1023
	_, err := serialno.New("PAY{time:20060102150405}{node:4}{seq:4}", layout)
	fmt.Println(errors.Is(err, serialno.ErrInvalidPattern))
	fmt.Println(err)
	_, err = serialno.New("PAY{time:20060102150405.000}{node:3}{seq:4}", layout)
	fmt.Println(err)

	f, _ := serialno.New("PAY-{time:2006-01-02T15:04:05.000Z}-{node}-{seq}", layout)
	_, err = f.Parse("PAY-2022-13-28T16:07:40.105Z-0378-0000")
	fmt.Println(err)
	// Output:
	// true
	// serialno: invalid pattern "PAY{time:20060102150405}{node:4}{seq:4}": the time shows 1s steps (its second), coarser than the layout's 1ms ticks: IDs of different ticks would show the same time at offset 21
	// serialno: invalid pattern "PAY{time:20060102150405.000}{node:3}{seq:4}": {node:3} is too narrow: the layout's largest node number, 1023, takes 4 digits at offset 28
	// ringflake: invalid ID "PAY-2022-13-28T16:07:40.105Z-0378-0000": month 13 out of range [01, 12] at offset 9
}
