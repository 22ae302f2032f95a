package clockhealth_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/ringflake/ringflake/clockhealth"
)

// A requirement checked against what an unsynchronised kernel reports.
func ExampleRequirement_Check() {
	r := clockhealth.Reading{Source: "kernel", Status: clockhealth.StatusUnsynchronised,
		MaxError: 16 * time.Second, MaxErrorKnown: true, EstError: 16 * time.Second,
		Leap: clockhealth.LeapUnknown, Detail: "TIME_ERROR, STA_UNSYNC"}
	err := clockhealth.Requirement{Synchronised: true}.Check(r)
	fmt.Println(err)
	fmt.Println(errors.Is(err, clockhealth.ErrClockNotSynchronised))
	// Output:
	// ringflake: clock not synchronised: kernel: unsynchronised (TIME_ERROR, STA_UNSYNC), max error 16s, est error 16s, leap unknown
	// true
}

// A monitor of a source; Run would read it once a second in the
// background, Poll reads it once now.
func ExampleMonitor() {
	src := clockhealth.SourceFunc(func(context.Context) (clockhealth.Reading, error) {
		return clockhealth.Reading{Source: "chrony 127.0.0.1:323", Status: clockhealth.StatusSynchronised,
			MaxError: 2 * time.Millisecond, MaxErrorKnown: true, Pending: -300 * time.Microsecond,
			PendingKnown: true, Leap: clockhealth.LeapNone}, nil
	})
	mon, err := clockhealth.NewMonitor(src)
	if err != nil {
		panic(err)
	}
	if _, err := mon.Poll(context.Background()); err != nil {
		panic(err)
	}
	r, _ := mon.Last()
	fmt.Println(r.Synchronised(), r.MaxError, r.Pending)
	fmt.Println(mon.Ready(clockhealth.Requirement{Synchronised: true, MaxError: 100 * time.Millisecond}))
	// Output:
	// true 2ms -300µs
	// <nil>
}
