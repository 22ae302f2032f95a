package clockhealth

import (
	"errors"
	"testing"
	"time"
)

// FuzzParseClockBound: any bytes are either refused with
// ErrInvalidReading or give a reading whose bound is never negative and
// which is synchronised only for ClockBound's status Synchronized before
// void-after.
func FuzzParseClockBound(f *testing.F) {
	seed := make([]byte, cbV2Size)
	copy(seed, cbMagic)
	seed[8], seed[12], seed[14] = cbV2Size, 2, 2
	seed[68] = 1
	f.Add(seed, int64(0))
	f.Add(seed[:cbV1Size], int64(1e9))
	f.Add([]byte("AMZNCB\x02\x00"), int64(-1))
	f.Fuzz(func(t *testing.T, b []byte, mono int64) {
		s, err := parseClockBound(b)
		if err != nil {
			if !errors.Is(err, ErrInvalidReading) {
				t.Fatalf("error %v does not match ErrInvalidReading", err)
			}
			return
		}
		r := s.reading(Reading{Source: "fuzz"}, time.Duration(mono))
		if r.MaxErrorKnown && r.MaxError < 0 {
			t.Fatalf("negative max error %v from %+v", r.MaxError, s)
		}
		if r.Status == StatusSynchronised && (s.status != 1 || time.Duration(mono) > s.voidAfter) {
			t.Fatalf("synchronised from status %d at %v (void after %v)", s.status, time.Duration(mono), s.voidAfter)
		}
	})
}
