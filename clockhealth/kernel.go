package clockhealth

import (
	"context"
	"strconv"
	"strings"
	"time"
)

// Kernel is the [Source] of the operating system's own view: on Linux,
// adjtimex(2) with modes 0, which reads the kernel's NTP state and
// changes nothing (no privilege needed; a synchronisation daemon such as
// chrony or ntpd keeps that state up to date). The zero Kernel is ready
// to use and safe for concurrent use.
//
// A Reading from Kernel is [StatusUnsynchronised] when adjtimex returns
// TIME_ERROR or its status has STA_UNSYNC set, and [StatusSynchronised]
// otherwise. MaxError and EstError are the kernel's maxerror and esterror
// (the kernel grows maxerror by 500 ppm of elapsed time until a daemon
// resets it, and caps it at 16 s). Pending is the offset the kernel's
// phase-locked loop still has to slew, known only while STA_PLL is set:
// chrony does not use that loop, so with chrony the kernel does not know
// the pending correction (ask chrony). Leap follows the TIME_INS,
// TIME_DEL and TIME_OOP states.
//
// On other systems Read returns [ErrUnsupported] with a Reading of
// [StatusUnknown].
type Kernel struct{}

// KernelSourceName is the Source name of readings from [Kernel].
const KernelSourceName = "kernel"

// Read reads the kernel's clock state (adjtimex with modes 0 on Linux).
func (Kernel) Read(ctx context.Context) (Reading, error) {
	at := time.Now()
	tx, err := adjtimexRead()
	if err != nil {
		return Reading{Source: KernelSourceName, At: at, Detail: err.Error()}, err
	}
	return kernelReading(tx, at), nil
}

// kernelTimex holds what Kernel reads from struct timex, in portable types.
type kernelTimex struct {
	state    int   // adjtimex's return value: TIME_OK ... TIME_ERROR
	status   int32 // STA_* bits
	maxError int64 // microseconds
	estError int64 // microseconds
	offset   int64 // microseconds, nanoseconds with STA_NANO
}

// Kernel clock states (adjtimex's return value) and status bits, from
// <linux/timex.h>.
const (
	timeOK    = 0
	timeIns   = 1
	timeDel   = 2
	timeOOP   = 3
	timeWait  = 4
	timeError = 5

	staPLL    = 0x0001
	staIns    = 0x0010
	staDel    = 0x0020
	staUnsync = 0x0040
	staNano   = 0x2000
)

var kernelStates = [...]string{"TIME_OK", "TIME_INS", "TIME_DEL", "TIME_OOP", "TIME_WAIT", "TIME_ERROR"}

// kernelReading turns what adjtimex reported at time at into a Reading.
func kernelReading(tx kernelTimex, at time.Time) Reading {
	r := Reading{
		Source:        KernelSourceName,
		At:            at,
		Status:        StatusSynchronised,
		MaxError:      time.Duration(tx.maxError) * time.Microsecond,
		MaxErrorKnown: true,
		EstError:      time.Duration(tx.estError) * time.Microsecond,
		Leap:          LeapNone,
	}
	words := make([]string, 0, 4)
	if tx.state >= 0 && tx.state < len(kernelStates) {
		words = append(words, kernelStates[tx.state])
	} else {
		words = append(words, "state "+strconv.Itoa(tx.state))
	}
	if tx.state == timeError || tx.status&staUnsync != 0 {
		r.Status = StatusUnsynchronised
		r.Leap = LeapUnknown
	}
	if tx.status&staUnsync != 0 {
		words = append(words, "STA_UNSYNC")
	}
	switch {
	case tx.state == timeOOP:
		r.Leap = LeapInProgress
	case tx.state == timeIns || tx.status&staIns != 0:
		r.Leap = LeapInsert
		words = append(words, "STA_INS")
	case tx.state == timeDel || tx.status&staDel != 0:
		r.Leap = LeapDelete
		words = append(words, "STA_DEL")
	}
	if tx.status&staPLL != 0 {
		r.PendingKnown = true
		if tx.status&staNano != 0 {
			r.Pending = time.Duration(tx.offset)
		} else {
			r.Pending = time.Duration(tx.offset) * time.Microsecond
		}
		words = append(words, "STA_PLL")
	}
	r.Detail = strings.Join(words, ", ")
	return r
}
