package promtext

import (
	"github.com/ringflake/ringflake/clockhealth"
)

// ClockMetrics returns the metrics of the clock's health as a
// [clockhealth.Reading] tells it (names starting "ringflake_clock_"), as
// package ringflakeprom's ClockCollector exports them; read them from
// [clockhealth.Monitor.Last], which has no reading before the monitor's
// first. Every metric is a gauge with the label source (the reading's
// source, e.g. "kernel" or "chrony 127.0.0.1:323"):
//
//	ringflake_clock_synchronised                1 while synchronised, 0 otherwise (unsynchronised or unknown)
//	ringflake_clock_info{status,leap}           1, with the status and leap state as labels
//	ringflake_clock_max_error_seconds           the maximum error (absent when the source gives none)
//	ringflake_clock_est_error_seconds           the estimated error
//	ringflake_clock_pending_correction_seconds  the correction about to be applied (absent when unknown;
//	                                            negative: the clock will be moved back)
//	ringflake_clock_read_timestamp_seconds      when the reading was taken (Unix time)
//
// Each call returns a new slice.
func ClockMetrics() []Metric[clockhealth.Reading] {
	type reading = clockhealth.Reading
	type emitter = func(float64, ...string)
	m := func(name, help string, read func(r reading, emit emitter), labels ...string) Metric[reading] {
		return Metric[reading]{Desc{"ringflake_clock_" + name, help, Gauge, append([]string{"source"}, labels...)}, read}
	}
	return []Metric[reading]{
		m("synchronised", "1 while the clock source reports the clock synchronised, 0 otherwise.", func(r reading, emit emitter) {
			emit(flag(r.Synchronised()), r.Source)
		}),
		m("info", "The clock source's status and leap state, as labels.", func(r reading, emit emitter) {
			emit(1, r.Source, r.Status.String(), r.Leap.String())
		}, "status", "leap"),
		m("max_error_seconds", "Maximum error of the wall clock, as the source bounds it.", func(r reading, emit emitter) {
			if r.MaxErrorKnown {
				emit(r.MaxError.Seconds(), r.Source)
			}
		}),
		m("est_error_seconds", "Estimated error of the wall clock, as the source gives it.", func(r reading, emit emitter) {
			emit(r.EstError.Seconds(), r.Source)
		}),
		m("pending_correction_seconds", "Correction the source is about to apply (negative: the clock will be moved back).",
			func(r reading, emit emitter) {
				if r.PendingKnown {
					emit(r.Pending.Seconds(), r.Source)
				}
			}),
		m("read_timestamp_seconds", "When the last clock health reading was taken (Unix time).", func(r reading, emit emitter) {
			emit(float64(r.At.UnixNano())/1e9, r.Source)
		}),
	}
}

// flag is 1 for true, 0 for false.
func flag(b bool) float64 {
	if b {
		return 1
	}
	return 0
}
