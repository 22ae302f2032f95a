package scenario

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// The generator never issues an ID twice, so no replay can show the
// duplicate check at work; this test feeds it duplicates directly.
func TestDuplicates(t *testing.T) {
	ids := []issued{{id: 7, call: 1, at: 10}, {id: 9, call: 2, at: 20}, {id: 7, call: 3, at: 30}, {id: 8, call: 4, at: 40}, {id: 7, call: 5, at: 50}}
	assert.Equal(t, []Violation{
		{Promise: "unique", Call: 3, At: 30, Detail: "ID 7 was already returned by call 1"},
		{Promise: "unique", Call: 5, At: 50, Detail: "ID 7 was already returned by call 3"},
	}, duplicates(ids, nil))
	assert.Empty(t, duplicates([]issued{{id: 1}, {id: 2}}, nil))
	assert.Empty(t, duplicates(nil, nil))
}

// A duplicate across a restart also counts in the restart that started the
// run of the copy.
func TestDuplicatesAcrossRestarts(t *testing.T) {
	restarts := []RestartReport{{At: 20}, {At: 40}}
	ids := []issued{{id: 7, call: 1, at: 10}, {id: 8, call: 2, at: 30, run: 1}, {id: 7, call: 3, at: 50, run: 2},
		{id: 8, call: 4, at: 51, run: 2}, {id: 9, call: 5, at: 52, run: 2}, {id: 9, call: 6, at: 53, run: 2}}
	assert.Equal(t, []Violation{
		{Promise: "unique", Call: 3, At: 50, Detail: "ID 7 was already returned by call 1, before the restart at 40ns"},
		{Promise: "unique", Call: 4, At: 51, Detail: "ID 8 was already returned by call 2, before the restart at 40ns"},
		{Promise: "unique", Call: 6, At: 53, Detail: "ID 9 was already returned by call 5"},
	}, duplicates(ids, restarts))
	assert.Equal(t, []RestartReport{{At: 20}, {At: 40, Duplicates: 2}}, restarts)
}

// The order check, fed directly: a call that started earlier but was
// served after a call that started later breaks the promise; calls served
// at the same instant do not, in any order.
func TestServedOutOfOrder(t *testing.T) {
	inOrder := []issued{{call: 1, at: 10}, {call: 3, at: 20}, {call: 2, at: 20}, {call: 4, at: 20}, {call: 5, at: 30}}
	assert.Empty(t, servedOutOfOrder(inOrder))
	starved := []issued{{call: 2, at: 10}, {call: 3, at: 10}, {call: 5, at: 20}, {call: 1, at: 30}, {call: 4, at: 30}}
	assert.Equal(t, []Violation{
		{Promise: "order", Call: 1, At: 30, Detail: "served after call 5, which started later and was served before it"},
		{Promise: "order", Call: 4, At: 30, Detail: "served after call 5, which started later and was served before it"},
	}, servedOutOfOrder(starved))
	assert.Empty(t, servedOutOfOrder(nil))
}
