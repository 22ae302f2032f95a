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
	}, duplicates(ids))
	assert.Empty(t, duplicates([]issued{{id: 1}, {id: 2}}))
	assert.Empty(t, duplicates(nil))
}
