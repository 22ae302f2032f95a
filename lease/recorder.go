package lease

import (
	"sync"
	"time"
)

// A Recorder counts a lease's events and keeps the latest clock offset it
// reported, for metrics: pass its Record method as [Options.OnEvent] (or
// call it from your own OnEvent) and read [Recorder.Stats] when metrics
// are scraped. Packages ringflakeprom and ringflakeexpvar export a
// Recorder's Stats. The zero Recorder is ready to use; it is safe for
// concurrent use by multiple goroutines.
type Recorder struct {
	mu     sync.Mutex
	s      EventStats
	skewAt time.Time // Offset.At of the latest ClockSkewed event
}

// EventStats are a lease's events as a [Recorder] counted them.
type EventStats struct {
	// Renewed, RenewFailed, Expired, Retaken, Lost and ClockSkewed count
	// the events of each kind.
	Renewed, RenewFailed, Expired, Retaken, Lost, ClockSkewed uint64
	// Offset is the latest offset to the server's clock that a renewal
	// measured; zero before the first.
	Offset Offset
	// Skewed reports whether that measurement was beyond
	// [Options.MaxSkew]: the renewal that measured it reported a
	// ClockSkewed event.
	Skewed bool
}

// Record counts e. Its signature is [Options.OnEvent]'s.
func (r *Recorder) Record(e Event) {
	r.mu.Lock()
	defer r.mu.Unlock()
	switch e.Kind {
	case Renewed:
		r.s.Renewed++
	case RenewFailed:
		r.s.RenewFailed++
	case Expired:
		r.s.Expired++
	case Retaken:
		r.s.Retaken++
	case Lost:
		r.s.Lost++
	case ClockSkewed:
		r.s.ClockSkewed++
		r.skewAt = e.Offset.At
	}
	if !e.Offset.IsZero() {
		r.s.Offset = e.Offset
	}
}

// Stats returns the counts so far and the latest offset.
func (r *Recorder) Stats() EventStats {
	r.mu.Lock()
	defer r.mu.Unlock()
	s := r.s
	// A ClockSkewed event precedes the event of its renewal, which carries
	// the same measurement: the offset is skewed while it is the one the
	// latest ClockSkewed event reported.
	s.Skewed = !s.Offset.IsZero() && s.Offset.At.Equal(r.skewAt)
	return s
}
