package main

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/assert"
)

// Only the argument checks are tested here: a measurement takes real time.
func TestRunRejectsBadArguments(t *testing.T) {
	for _, args := range [][]string{
		{"-window", "0s"},
		{"-rounds", "0"},
		{"-load", "-1"},
		{"-only", "("},
		{"-no-such-flag"},
		{"extra"},
	} {
		var out, errOut bytes.Buffer
		assert.Equal(t, 2, run(args, &out, &errOut), "%v", args)
		assert.Empty(t, out.String(), "%v measures nothing", args)
		assert.NotEmpty(t, errOut.String(), "%v says why", args)
	}
}
