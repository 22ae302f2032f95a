package main

import (
	"encoding/binary"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ringflake/ringflake/clockhealth"
	"github.com/ringflake/ringflake/lease/leasetest"
)

// clockBoundFile writes a ClockBound segment (protocol version 2) with
// status and bound, valid from boot for ever, and returns its path.
func clockBoundFile(t *testing.T, status int32, bound time.Duration) string {
	t.Helper()
	b := make([]byte, 80)
	copy(b, "AMZNCB\x02\x00")
	ne := binary.NativeEndian
	ne.PutUint32(b[8:], 80)
	ne.PutUint16(b[12:], 2)
	ne.PutUint16(b[14:], 2)              // generation: written
	ne.PutUint64(b[32:], uint64(1)<<40)  // void after, in seconds: never
	ne.PutUint64(b[48:], uint64(bound))  // bound, ns
	ne.PutUint32(b[68:], uint32(status)) // clock status
	path := filepath.Join(t.TempDir(), "shm0")
	require.NoError(t, os.WriteFile(path, b, 0o600))
	return path
}

func TestClockCommandClockBound(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Fatalf("ClockBound is read on Linux only")
	}
	path := clockBoundFile(t, 1, 2*time.Millisecond)
	code, stdout, stderr := runCLI("clock", "-clockbound", path, "-format", "json")
	require.Equal(t, 0, code, stderr)
	var rep clockReport
	require.NoError(t, json.Unmarshal([]byte(stdout), &rep), stdout)
	require.NotNil(t, rep.ClockBound)
	assert.Equal(t, clockhealth.StatusSynchronised, rep.ClockBound.Status)
	assert.Equal(t, 2*time.Millisecond, rep.ClockBound.MaxError, "no drift published: the bound as is")
	assert.Nil(t, rep.Chrony)
	assert.Equal(t, "kernel", rep.Kernel.Source)

	code, stdout, stderr = runCLI("gen", "-n", "2", "-node", "1", "-require-sync", "-max-clock-error", "10ms", "-clock-source", "clockbound:"+path)
	require.Equal(t, 0, code, stderr)
	assert.Len(t, strings.Fields(stdout), 2)

	code, stdout, stderr = runCLI("gen", "-n", "2", "-node", "1", "-max-clock-error", "1ms", "-clock-source", "clockbound:"+path)
	assert.Equal(t, 1, code)
	assert.Empty(t, stdout)
	assert.Equal(t, 1, strings.Count(stderr, "\n"), stderr)
	assert.Contains(t, stderr, "clockbound "+path)

	free := clockBoundFile(t, 2, 2*time.Millisecond)
	code, _, stderr = runCLI("gen", "-n", "2", "-node", "1", "-require-sync", "-clock-source", "clockbound:"+free)
	assert.Equal(t, 1, code)
	assert.Contains(t, stderr, "FreeRunning")
}

func TestClockFlagErrors(t *testing.T) {
	for _, args := range [][]string{
		{"gen", "-node", "1", "-require-sync", "-clock-source", "ntp://127.0.0.1:123"},
		{"gen", "-node", "1", "-require-sync", "-clock-source", "chrony://"},
		{"gen", "-node", "1", "-require-sync", "-clock-source", "chrony://127.0.0.1"},
		{"gen", "-node", "1", "-require-sync", "-clock-source", "clockbound:"},
		{"gen", "-node", "1", "-max-clock-error", "-1s"},
		{"serve", "-node", "1", "-max-clock-error", "-1s"},
		{"clock", "-format", "yaml"},
		{"clock", "extra"},
	} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			code, stdout, stderr := runCLI(args...)
			assert.Equal(t, 2, code, stderr)
			assert.Empty(t, stdout)
		})
	}
}

// Without a requirement no source is read: a source that would fail is
// not noticed.
func TestClockSourceWithoutRequirement(t *testing.T) {
	code, stdout, stderr := runCLI("gen", "-n", "1", "-node", "1", "-clock-source", "clockbound:"+filepath.Join(t.TempDir(), "missing"))
	require.Equal(t, 0, code, stderr)
	assert.Len(t, strings.Fields(stdout), 1)
}

// `clock -against redis://` measures this host's offset to Redis's clock;
// on one host the offset is zero within its stated uncertainty (plus TIME's
// microsecond).
func TestClockAgainstRedis(t *testing.T) {
	addr := leasetest.RequireEnv(t, leasetest.RedisAddrEnv)
	code, out, errOut := runCLI("clock", "-against", "redis://"+addr, "-format", "json")
	require.Equal(t, 0, code, errOut)
	var rep struct {
		Against struct {
			Server      string  `json:"server"`
			Offset      float64 `json:"offset_seconds"`
			Uncertainty float64 `json:"uncertainty_seconds"`
			Samples     int     `json:"samples"`
		} `json:"against"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &rep), out)
	assert.Contains(t, rep.Against.Server, addr)
	assert.Positive(t, rep.Against.Samples)
	assert.Positive(t, rep.Against.Uncertainty)
	assert.LessOrEqual(t, math.Abs(rep.Against.Offset), rep.Against.Uncertainty+1e-6, "one host: zero within the uncertainty")

	code, out, errOut = runCLI("clock", "-against", "redis://"+addr)
	require.Equal(t, 0, code, errOut)
	assert.Contains(t, out, "offset")

	code, _, errOut = runCLI("clock", "-against", "etcd://127.0.0.1:2379")
	assert.Equal(t, 2, code, "etcd has no server time")
	assert.Equal(t, 1, strings.Count(errOut, "\n"), errOut)
}
