package clockhealth

import (
	"context"
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestKernelReadsTheRealKernel reads this host's kernel, whatever state it
// is in, and checks the reading is one the kernel can give.
func TestKernelReadsTheRealKernel(t *testing.T) {
	r, err := Kernel{}.Read(context.Background())
	if runtime.GOOS != "linux" {
		require.ErrorIs(t, err, ErrUnsupported)
		assert.Equal(t, StatusUnknown, r.Status)
		assert.Equal(t, KernelSourceName, r.Source)
		return
	}
	require.NoError(t, err)
	t.Logf("%s", r)
	assert.Equal(t, KernelSourceName, r.Source)
	assert.Contains(t, []Status{StatusSynchronised, StatusUnsynchronised}, r.Status)
	assert.True(t, r.MaxErrorKnown)
	assert.GreaterOrEqual(t, r.MaxError, time.Duration(0))
	assert.LessOrEqual(t, r.MaxError, 16*time.Second, "the kernel caps maxerror at 16 s")
	assert.False(t, r.At.IsZero())
	assert.NotEmpty(t, r.Detail)
}

func TestKernelReadingStates(t *testing.T) {
	at := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name    string
		tx      kernelTimex
		status  Status
		leap    Leap
		maxErr  time.Duration
		pending time.Duration
		known   bool
		detail  string
	}{
		{name: "unsynchronised host (TIME_ERROR, STA_UNSYNC, 16 s)",
			tx:     kernelTimex{state: timeError, status: staUnsync, maxError: 16_000_000, estError: 16_000_000},
			status: StatusUnsynchronised, leap: LeapUnknown, maxErr: 16 * time.Second, detail: "TIME_ERROR, STA_UNSYNC"},
		{name: "synchronised by chrony (TIME_OK)",
			tx:     kernelTimex{state: timeOK, maxError: 1500, estError: 20},
			status: StatusSynchronised, leap: LeapNone, maxErr: 1500 * time.Microsecond, detail: "TIME_OK"},
		{name: "synchronised by ntpd's PLL, offset in microseconds",
			tx:     kernelTimex{state: timeOK, status: staPLL, maxError: 800, estError: 10, offset: -300_000},
			status: StatusSynchronised, leap: LeapNone, maxErr: 800 * time.Microsecond,
			pending: -300 * time.Millisecond, known: true, detail: "TIME_OK, STA_PLL"},
		{name: "PLL offset in nanoseconds",
			tx:     kernelTimex{state: timeOK, status: staPLL | staNano, maxError: 800, offset: 1234},
			status: StatusSynchronised, leap: LeapNone, maxErr: 800 * time.Microsecond,
			pending: 1234 * time.Nanosecond, known: true, detail: "TIME_OK, STA_PLL"},
		{name: "leap second to insert",
			tx:     kernelTimex{state: timeIns, status: staIns, maxError: 100},
			status: StatusSynchronised, leap: LeapInsert, maxErr: 100 * time.Microsecond, detail: "TIME_INS, STA_INS"},
		{name: "leap second to delete",
			tx:     kernelTimex{state: timeDel, status: staDel, maxError: 100},
			status: StatusSynchronised, leap: LeapDelete, maxErr: 100 * time.Microsecond, detail: "TIME_DEL, STA_DEL"},
		{name: "leap second in progress",
			tx:     kernelTimex{state: timeOOP, maxError: 100},
			status: StatusSynchronised, leap: LeapInProgress, maxErr: 100 * time.Microsecond, detail: "TIME_OOP"},
		{name: "leap second just played",
			tx:     kernelTimex{state: timeWait, maxError: 100},
			status: StatusSynchronised, leap: LeapNone, maxErr: 100 * time.Microsecond, detail: "TIME_WAIT"},
		{name: "STA_UNSYNC with TIME_OK",
			tx:     kernelTimex{state: timeOK, status: staUnsync, maxError: 2_000_000},
			status: StatusUnsynchronised, leap: LeapUnknown, maxErr: 2 * time.Second, detail: "TIME_OK, STA_UNSYNC"},
		{name: "a state this package does not know",
			tx:     kernelTimex{state: 9, maxError: 100},
			status: StatusSynchronised, leap: LeapNone, maxErr: 100 * time.Microsecond, detail: "state 9"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := kernelReading(tc.tx, at)
			assert.Equal(t, KernelSourceName, r.Source)
			assert.Equal(t, at, r.At)
			assert.Equal(t, tc.status, r.Status)
			assert.Equal(t, tc.leap, r.Leap)
			assert.Equal(t, tc.maxErr, r.MaxError)
			assert.True(t, r.MaxErrorKnown)
			assert.Equal(t, tc.pending, r.Pending)
			assert.Equal(t, tc.known, r.PendingKnown)
			assert.Equal(t, tc.detail, r.Detail)
		})
	}
}
