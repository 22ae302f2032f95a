package clockhealth_test

import (
	"context"
	"encoding/binary"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ringflake/ringflake/clockhealth"
)

// segment is a ClockBound segment to write in the protocol's layout.
type segment struct {
	version, generation uint16
	asOf, voidAfter     time.Duration
	bound               time.Duration
	driftPPB            uint32
	status              int32
}

// bytes lays s out as the ClockBound daemon does (native byte order).
func (s segment) bytes() []byte {
	size := 80
	if s.version == 1 {
		size = 72
	}
	b := make([]byte, size)
	copy(b, "AMZNCB\x02\x00")
	ne := binary.NativeEndian
	ne.PutUint32(b[8:], uint32(size))
	ne.PutUint16(b[12:], s.version)
	ne.PutUint16(b[14:], s.generation)
	putTS := func(off int, d time.Duration) {
		ne.PutUint64(b[off:], uint64(d/time.Second))
		ne.PutUint64(b[off+8:], uint64(d%time.Second))
	}
	putTS(16, s.asOf)
	putTS(32, s.voidAfter)
	if s.voidAfter == -1 { // far future: 2^40 s, beyond time.Duration
		ne.PutUint64(b[32:], 1<<40)
		ne.PutUint64(b[40:], 0)
	}
	ne.PutUint64(b[48:], uint64(s.bound))
	if s.version == 1 {
		ne.PutUint32(b[56:], s.driftPPB)
		ne.PutUint32(b[64:], uint32(s.status))
	} else {
		ne.PutUint64(b[56:], 7) // disruption marker
		ne.PutUint32(b[64:], s.driftPPB)
		ne.PutUint32(b[68:], uint32(s.status))
		b[72] = 1
	}
	return b
}

func writeSegment(t *testing.T, b []byte) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "shm0")
	require.NoError(t, os.WriteFile(path, b, 0o600))
	return path
}

func fixedMono(d time.Duration) func() (time.Duration, error) {
	return func() (time.Duration, error) { return d, nil }
}

func TestClockBoundStates(t *testing.T) {
	base := segment{version: 2, generation: 10, asOf: 1000 * time.Second, voidAfter: 1010 * time.Second,
		bound: 400 * time.Microsecond, driftPPB: 50_000, status: 1}
	for _, tc := range []struct {
		name   string
		edit   func(*segment)
		mono   time.Duration
		status clockhealth.Status
		maxErr time.Duration
		known  bool
	}{
		{"synchronised, read at as-of", func(*segment) {}, 1000 * time.Second, clockhealth.StatusSynchronised, 400 * time.Microsecond, true},
		{"synchronised, 2 s later the drift has grown the bound", func(*segment) {}, 1002 * time.Second,
			clockhealth.StatusSynchronised, 500 * time.Microsecond, true},
		{"free running", func(s *segment) { s.status = 2 }, 1000 * time.Second, clockhealth.StatusUnsynchronised, 400 * time.Microsecond, true},
		{"disrupted", func(s *segment) { s.status = 3 }, 1000 * time.Second, clockhealth.StatusUnsynchronised, 400 * time.Microsecond, true},
		{"unknown", func(s *segment) { s.status = 0 }, 1000 * time.Second, clockhealth.StatusUnknown, 400 * time.Microsecond, true},
		{"void after the daemon stopped", func(*segment) {}, 1011 * time.Second, clockhealth.StatusUnknown, 0, false},
		{"version 1", func(s *segment) { s.version = 1 }, 1000 * time.Second, clockhealth.StatusSynchronised, 400 * time.Microsecond, true},
		{"void after far beyond the Duration range", func(s *segment) { s.voidAfter = -1 }, 1000 * time.Second,
			clockhealth.StatusSynchronised, 400 * time.Microsecond, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := base
			tc.edit(&s)
			path := writeSegment(t, s.bytes())
			at := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
			cb := clockhealth.ClockBound{Path: path, Monotonic: fixedMono(tc.mono), Now: func() time.Time { return at }}
			r, err := cb.Read(context.Background())
			require.NoError(t, err)
			assert.Equal(t, "clockbound "+path, r.Source)
			assert.Equal(t, at, r.At)
			assert.Equal(t, tc.status, r.Status)
			assert.Equal(t, tc.maxErr, r.MaxError)
			assert.Equal(t, tc.known, r.MaxErrorKnown)
			assert.False(t, r.PendingKnown)
			assert.Equal(t, clockhealth.LeapUnknown, r.Leap)
		})
	}
}

func TestClockBoundRejectsMalformedSegments(t *testing.T) {
	good := segment{version: 2, generation: 2, asOf: time.Second, voidAfter: 2 * time.Second, bound: time.Millisecond, status: 1}
	for _, tc := range []struct {
		name string
		b    []byte
	}{
		{"empty", nil},
		{"wrong magic", append([]byte("NOTCLOCK"), good.bytes()[8:]...)},
		{"version 3", func() []byte { s := good; s.version = 3; return s.bytes() }()},
		{"truncated", good.bytes()[:40]},
		{"negative bound", func() []byte { s := good; s.bound = -1; return s.bytes() }()},
		{"void before as-of", func() []byte { s := good; s.voidAfter = 0; return s.bytes() }()},
		{"always being written (odd generation)", func() []byte { s := good; s.generation = 3; return s.bytes() }()},
		{"never written (generation 0)", func() []byte { s := good; s.generation = 0; return s.bytes() }()},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cb := clockhealth.ClockBound{Path: writeSegment(t, tc.b), Monotonic: fixedMono(time.Second)}
			r, err := cb.Read(context.Background())
			require.ErrorIs(t, err, clockhealth.ErrInvalidReading)
			assert.Equal(t, clockhealth.StatusUnknown, r.Status)
			assert.NotEmpty(t, r.Detail)
		})
	}
	_, err := clockhealth.ClockBound{Path: filepath.Join(t.TempDir(), "missing")}.Read(context.Background())
	require.ErrorIs(t, err, os.ErrNotExist)
}

// TestClockBoundOnTheSystemMonotonicClock reads a segment stamped far
// ahead on CLOCK_MONOTONIC_COARSE with the system's own coarse clock.
func TestClockBoundOnTheSystemMonotonicClock(t *testing.T) {
	s := segment{version: 2, generation: 4, asOf: 0, voidAfter: 1 << 62, bound: time.Millisecond, driftPPB: 0, status: 1}
	r, err := clockhealth.ClockBound{Path: writeSegment(t, s.bytes())}.Read(context.Background())
	if runtime.GOOS != "linux" {
		require.ErrorIs(t, err, clockhealth.ErrUnsupported)
		return
	}
	require.NoError(t, err)
	assert.Equal(t, clockhealth.StatusSynchronised, r.Status)
	assert.Equal(t, time.Millisecond, r.MaxError)
	s.voidAfter = time.Nanosecond // the coarse clock has long passed 1 ns since boot
	r, err = clockhealth.ClockBound{Path: writeSegment(t, s.bytes())}.Read(context.Background())
	require.NoError(t, err)
	assert.Equal(t, clockhealth.StatusUnknown, r.Status)
}
