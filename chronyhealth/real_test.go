package chronyhealth_test

import (
	"context"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ringflake/ringflake/chronyhealth"
	"github.com/ringflake/ringflake/clockhealth"
)

// TestSyncedClient reads the chronyd client that scripts/test.sh made
// poll its chronyd server: synchronised, with a sub-second error.
func TestSyncedClient(t *testing.T) {
	addr := envAddr(t, "RINGFLAKE_TEST_CHRONY_SYNCED")
	src := chronyhealth.Source{Addr: addr}
	r, err := src.Read(context.Background())
	require.NoError(t, err)
	t.Logf("%s", r)
	assert.Equal(t, "chrony "+addr, r.Source)
	assert.Equal(t, clockhealth.StatusSynchronised, r.Status, r.Detail)
	assert.True(t, r.MaxErrorKnown)
	assert.Less(t, r.MaxError, time.Second)
	assert.True(t, r.PendingKnown)
	assert.Equal(t, clockhealth.LeapNone, r.Leap)

	tr, err := src.Tracking(context.Background())
	require.NoError(t, err)
	assert.Equal(t, "127.0.0.1", tr.Addr.String(), "the client follows the loopback server")
	assert.Equal(t, uint16(9), tr.Stratum, "one below the server's local stratum 8")
}

// TestSyncedClientAgreesWithChronyc compares the report with what chronyc
// prints for the same chronyd (its reference id and leap status).
func TestSyncedClientAgreesWithChronyc(t *testing.T) {
	addr := envAddr(t, "RINGFLAKE_TEST_CHRONY_SYNCED")
	host, port, ok := strings.Cut(addr, ":")
	require.True(t, ok)
	out, err := exec.Command("chronyc", "-h", host, "-p", port, "-n", "-c", "tracking").Output()
	require.NoError(t, err)
	fields := strings.Split(strings.TrimSpace(string(out)), ",")
	require.GreaterOrEqual(t, len(fields), 14, string(out))
	assert.Equal(t, "Normal", fields[13])
	tr, err := chronyhealth.Source{Addr: addr}.Tracking(context.Background())
	require.NoError(t, err)
	assert.Equal(t, fields[0], strings.ToUpper(hex8(tr.RefID)))
}

func hex8(v uint32) string {
	const digits = "0123456789abcdef"
	b := make([]byte, 8)
	for i := 7; i >= 0; i-- {
		b[i] = digits[v&0xf]
		v >>= 4
	}
	return string(b)
}

// TestUnsyncedClient reads the chronyd client whose server never answers.
func TestUnsyncedClient(t *testing.T) {
	addr := envAddr(t, "RINGFLAKE_TEST_CHRONY_UNSYNCED")
	r, err := chronyhealth.Source{Addr: addr}.Read(context.Background())
	require.NoError(t, err)
	t.Logf("%s", r)
	assert.Equal(t, clockhealth.StatusUnsynchronised, r.Status)
	assert.Equal(t, "leap status: not synchronised", r.Detail)
	assert.Equal(t, clockhealth.LeapUnknown, r.Leap)
}

// TestServer reads the chronyd server, synchronised to its own local
// clock at stratum 8.
func TestServer(t *testing.T) {
	addr := envAddr(t, "RINGFLAKE_TEST_CHRONY_SERVER")
	tr, err := chronyhealth.Source{Addr: addr}.Tracking(context.Background())
	require.NoError(t, err)
	assert.Equal(t, uint16(8), tr.Stratum)
	assert.Equal(t, uint16(0), tr.LeapStatus)
}
