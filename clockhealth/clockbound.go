package clockhealth

import (
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"os"
	"strings"
	"time"
)

// DefaultClockBoundPath is where the ClockBound daemon (version 2 and
// later) maps its shared-memory segment.
const DefaultClockBoundPath = "/var/run/clockbound/shm0"

// ClockBound is the [Source] of AWS ClockBound's shared-memory segment,
// read from the file the daemon maps it to (its protocol version 2, with
// version 1 accepted too). It is safe for concurrent use.
//
// The segment holds a bound on the clock's error at an instant "as of",
// and the maximum drift rate since; both as-of and void-after are
// CLOCK_MONOTONIC_COARSE timestamps, not wall-clock times. A Reading's
// MaxError is the bound grown by the drift rate over the monotonic time
// elapsed since as-of (EstError is the bound as published); once the
// monotonic clock has passed void-after the daemon has stopped updating
// the segment and the Reading is [StatusUnknown]. The clock status
// Synchronized maps to [StatusSynchronised], FreeRunning and Disrupted to
// [StatusUnsynchronised], Unknown to [StatusUnknown]. ClockBound does not
// publish a pending correction or a leap state.
type ClockBound struct {
	// Path is the segment's file; empty means [DefaultClockBoundPath].
	Path string
	// Monotonic returns the current CLOCK_MONOTONIC_COARSE time; nil
	// means the system's (Linux only). Tests inject their own.
	Monotonic func() (time.Duration, error)
	// Now returns the wall-clock time stamped on readings; nil means
	// time.Now.
	Now func() time.Time
}

// ClockBound segment layout (native byte order), protocol version 2:
// magic u64, segment size u32, version u16, generation u16, as-of
// (i64 s, i64 ns), void-after (i64 s, i64 ns), bound ns i64, disruption
// marker u64, max drift ppb u32, clock status i32, disruption support u8,
// padding to 80 bytes. Version 1 has max drift u32, reserved u32 and
// clock status i32 at offsets 56, 60 and 64 (72 bytes).
const (
	cbMagic      = "AMZNCB\x02\x00"
	cbHeaderSize = 16
	cbV1Size     = 72
	cbV2Size     = 80
)

// clockBoundTries bounds how often Read rereads a segment that the daemon
// is writing (an odd or changing generation).
const clockBoundTries = 8

// Read reads the segment and the monotonic clock.
func (c ClockBound) Read(ctx context.Context) (Reading, error) {
	path := c.Path
	if path == "" {
		path = DefaultClockBoundPath
	}
	now := time.Now
	if c.Now != nil {
		now = c.Now
	}
	mono := monotonicCoarse
	if c.Monotonic != nil {
		mono = c.Monotonic
	}
	r := Reading{Source: "clockbound " + path, At: now()}
	fail := func(err error) (Reading, error) {
		r.Detail = strings.TrimPrefix(err.Error(), "ringflake: ")
		return r, err
	}
	var seg clockBoundSegment
	var err error
	for try := 0; ; try++ {
		if err := ctx.Err(); err != nil {
			return fail(err)
		}
		var first, second []byte
		if first, err = readSegment(path); err != nil {
			return fail(err)
		}
		if second, err = readSegment(path); err != nil {
			return fail(err)
		}
		seg, err = parseClockBound(first)
		if err != nil {
			return fail(err)
		}
		if seg.generation%2 == 0 && seg.generation != 0 && len(second) >= cbHeaderSize &&
			binary.NativeEndian.Uint16(second[14:16]) == seg.generation {
			break
		}
		if try == clockBoundTries {
			return fail(fmt.Errorf("%w: clockbound segment %s: the daemon kept writing it (generation %d)",
				ErrInvalidReading, path, seg.generation))
		}
	}
	m, err := mono()
	if err != nil {
		return fail(err)
	}
	return seg.reading(r, m), nil
}

// readSegment reads the first cbV2Size bytes of the file at path.
func readSegment(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	buf := make([]byte, cbV2Size)
	n, err := io.ReadFull(f, buf)
	if err != nil && err != io.ErrUnexpectedEOF && err != io.EOF {
		return nil, err
	}
	return buf[:n], nil
}

// clockBoundSegment is a parsed ClockBound segment.
type clockBoundSegment struct {
	version, generation uint16
	asOf, voidAfter     time.Duration // CLOCK_MONOTONIC_COARSE
	bound               time.Duration
	maxDriftPPB         uint32
	status              int32
}

// parseClockBound parses a segment's bytes, checking magic, size and
// version; errors match ErrInvalidReading.
func parseClockBound(b []byte) (clockBoundSegment, error) {
	var s clockBoundSegment
	if len(b) < cbHeaderSize || string(b[:8]) != cbMagic {
		return s, fmt.Errorf("%w: not a clockbound segment (magic number)", ErrInvalidReading)
	}
	size := binary.NativeEndian.Uint32(b[8:12])
	s.version = binary.NativeEndian.Uint16(b[12:14])
	s.generation = binary.NativeEndian.Uint16(b[14:16])
	want := 0
	switch s.version {
	case 1:
		want = cbV1Size
	case 2:
		want = cbV2Size
	default:
		return s, fmt.Errorf("%w: clockbound segment version %d, want 1 or 2", ErrInvalidReading, s.version)
	}
	if int(size) < want || len(b) < want {
		return s, fmt.Errorf("%w: clockbound segment of %d bytes (file %d), version %d needs %d",
			ErrInvalidReading, size, len(b), s.version, want)
	}
	ts := func(off int) time.Duration {
		sec := int64(binary.NativeEndian.Uint64(b[off:]))
		nsec := int64(binary.NativeEndian.Uint64(b[off+8:]))
		return timespecDuration(sec, nsec)
	}
	s.asOf, s.voidAfter = ts(16), ts(32)
	s.bound = time.Duration(int64(binary.NativeEndian.Uint64(b[48:])))
	if s.version == 1 {
		s.maxDriftPPB = binary.NativeEndian.Uint32(b[56:])
		s.status = int32(binary.NativeEndian.Uint32(b[64:]))
	} else {
		s.maxDriftPPB = binary.NativeEndian.Uint32(b[64:])
		s.status = int32(binary.NativeEndian.Uint32(b[68:]))
	}
	if s.bound < 0 || s.voidAfter < s.asOf {
		return s, fmt.Errorf("%w: clockbound segment with bound %v, as-of %v after void-after %v",
			ErrInvalidReading, s.bound, s.asOf, s.voidAfter)
	}
	return s, nil
}

var clockBoundStatuses = [...]string{"Unknown", "Synchronized", "FreeRunning", "Disrupted"}

// reading fills r from the segment, as seen at monotonic time mono.
func (s clockBoundSegment) reading(r Reading, mono time.Duration) Reading {
	name := fmt.Sprintf("status %d", s.status)
	if s.status >= 0 && int(s.status) < len(clockBoundStatuses) {
		name = clockBoundStatuses[s.status]
	}
	switch s.status {
	case 1:
		r.Status = StatusSynchronised
	case 2, 3:
		r.Status = StatusUnsynchronised
	default:
		r.Status = StatusUnknown
	}
	elapsed := mono - s.asOf
	if elapsed < 0 {
		elapsed = 0
	}
	// The bound grown by the drift, saturating at the Duration range.
	grown := float64(s.bound) + float64(elapsed)*float64(s.maxDriftPPB)/1e9
	r.MaxError, r.MaxErrorKnown = math.MaxInt64, true
	if grown < math.MaxInt64 {
		r.MaxError = time.Duration(grown)
	}
	r.EstError = s.bound
	r.Detail = fmt.Sprintf("%s, bound %v as of %v ago, drift %d ppb", name, s.bound, elapsed, s.maxDriftPPB)
	if mono > s.voidAfter {
		r.Status = StatusUnknown
		r.MaxError, r.MaxErrorKnown = 0, false
		r.Detail = fmt.Sprintf("%s, void since %v (daemon not updating the segment)", name, mono-s.voidAfter)
	}
	r.Leap = LeapUnknown
	return r
}

// timespecDuration converts a timespec to a Duration, saturating at the
// Duration range (about 292 years) instead of wrapping.
func timespecDuration(sec, nsec int64) time.Duration {
	const maxSec = math.MaxInt64 / int64(time.Second)
	switch {
	case sec >= maxSec:
		return math.MaxInt64
	case sec <= -maxSec:
		return math.MinInt64
	}
	return time.Duration(sec)*time.Second + time.Duration(nsec%int64(time.Second))
}
