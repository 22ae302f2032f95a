package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ringflake/ringflake/scenario"
)

// record writes the clock's health, read once a second, into the
// scenario's comment; the file still reads back as a scenario.
func TestRecordCapturesClockHealth(t *testing.T) {
	out := filepath.Join(t.TempDir(), "health.yaml")
	var stdout, stderr bytes.Buffer
	h := skewedHost(t)
	err := recordWith(context.Background(), h, []string{"-duration", "3s", "-out", out, "-clock-source", "kernel"}, &stdout, &stderr, false)
	require.NoError(t, err, stderr.String())
	s, err := scenario.ReadFile(out)
	require.NoError(t, err)
	text, err := os.ReadFile(out)
	require.NoError(t, err)
	assert.Contains(t, s.Comment, "Clock health, read every 1s (5 reads)", "at 0, 1, 2 and 3 s, and once more at the end")
	assert.Contains(t, s.Comment, "  at 0s: kernel: ")
	assert.Contains(t, string(text), "at 0s: kernel: ")
	for _, line := range strings.Split(s.Comment, "\n") {
		if strings.HasPrefix(line, "  at ") {
			assert.Contains(t, line, "kernel: ")
		}
	}
}

func TestRecordRejectsABadClockSource(t *testing.T) {
	var stdout, stderr bytes.Buffer
	err := recordWith(context.Background(), skewedHost(t), []string{"-duration", "1s", "-out", "-", "-clock-source", "ntp"}, &stdout, &stderr, false)
	var ue *usageError
	require.ErrorAs(t, err, &ue)
}
