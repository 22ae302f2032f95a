package chronyhealth_test

import (
	"context"
	"net"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ringflake/ringflake/chronyhealth"
	"github.com/ringflake/ringflake/clockhealth"
)

func TestFromTracking(t *testing.T) {
	at := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	synced := chronyhealth.Tracking{RefID: 0x7f000001, Stratum: 9, RefTime: at.Add(-time.Second),
		CurrentCorrection: -0.3, RMSOffset: 0.001, RootDelay: 0.002, RootDispersion: 0.0005, LastUpdateInterval: 1}
	for _, tc := range []struct {
		name    string
		edit    func(*chronyhealth.Tracking)
		status  clockhealth.Status
		leap    clockhealth.Leap
		detail  string
		maxErr  time.Duration
		pending time.Duration
	}{
		{"synchronised, 300 ms fast: a step back waiting", func(*chronyhealth.Tracking) {},
			clockhealth.StatusSynchronised, clockhealth.LeapNone, "leap status: normal, stratum 9, updated 1s ago",
			301500 * time.Microsecond, -300 * time.Millisecond},
		{"leap second to insert", func(tr *chronyhealth.Tracking) { tr.LeapStatus = 1 },
			clockhealth.StatusSynchronised, clockhealth.LeapInsert, "leap status: insert second, stratum 9, updated 1s ago",
			301500 * time.Microsecond, -300 * time.Millisecond},
		{"leap second to delete", func(tr *chronyhealth.Tracking) { tr.LeapStatus = 2 },
			clockhealth.StatusSynchronised, clockhealth.LeapDelete, "leap status: delete second, stratum 9, updated 1s ago",
			301500 * time.Microsecond, -300 * time.Millisecond},
		{"not synchronised", func(tr *chronyhealth.Tracking) {
			*tr = chronyhealth.Tracking{LeapStatus: 3, RootDelay: 1, RootDispersion: 1}
		}, clockhealth.StatusUnsynchronised, clockhealth.LeapUnknown, "leap status: not synchronised", 1500 * time.Millisecond, 0},
		{"no reference", func(tr *chronyhealth.Tracking) { tr.RefID = 0 },
			clockhealth.StatusUnsynchronised, clockhealth.LeapUnknown, "no reference", 301500 * time.Microsecond, -300 * time.Millisecond},
		{"holding over past the staleness floor", func(tr *chronyhealth.Tracking) { tr.RefTime = at.Add(-11 * time.Second) },
			clockhealth.StatusUnsynchronised, clockhealth.LeapUnknown, "no clock update for 11s (limit 10s)",
			301500 * time.Microsecond, -300 * time.Millisecond},
		{"long poll interval: 8 intervals before stale", func(tr *chronyhealth.Tracking) {
			tr.LastUpdateInterval = 64
			tr.RefTime = at.Add(-500 * time.Second)
		}, clockhealth.StatusSynchronised, clockhealth.LeapNone, "leap status: normal, stratum 9, updated 8m20s ago",
			301500 * time.Microsecond, -300 * time.Millisecond},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tr := synced
			tc.edit(&tr)
			r := chronyhealth.FromTracking("chrony x", tr, at, 0)
			assert.Equal(t, "chrony x", r.Source)
			assert.Equal(t, at, r.At)
			assert.Equal(t, tc.status, r.Status)
			assert.Equal(t, tc.leap, r.Leap)
			assert.Equal(t, tc.detail, r.Detail)
			assert.Equal(t, tc.maxErr, r.MaxError)
			assert.True(t, r.MaxErrorKnown)
			assert.Equal(t, tc.pending, r.Pending)
			assert.True(t, r.PendingKnown)
		})
	}
}

// TestSourceWithoutChronyd asks a UDP port where nothing answers: the
// read fails within its timeouts and the Reading is unknown.
func TestSourceWithoutChronyd(t *testing.T) {
	pc, err := net.ListenPacket("udp", "127.0.0.1:0") // bound, never answers
	require.NoError(t, err)
	defer pc.Close()
	src := chronyhealth.Source{Addr: pc.LocalAddr().String(), Timeout: 20 * time.Millisecond}
	r, err := src.Read(context.Background())
	require.Error(t, err)
	assert.Equal(t, clockhealth.StatusUnknown, r.Status)
	assert.Equal(t, "chrony "+pc.LocalAddr().String(), r.Source)
	assert.NotEmpty(t, r.Detail)

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err = src.Read(ctx)
	require.ErrorIs(t, err, context.Canceled)
}

func TestSourceName(t *testing.T) {
	assert.Equal(t, "chrony 127.0.0.1:323", chronyhealth.Source{}.Name())
	assert.Equal(t, "chrony 127.0.0.1:9", chronyhealth.Source{Addr: "127.0.0.1:9"}.Name())
}
