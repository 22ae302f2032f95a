package chronytest_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ringflake/ringflake/chronyhealth"
	"github.com/ringflake/ringflake/chronyhealth/chronytest"
	"github.com/ringflake/ringflake/clockhealth"
)

// waitStatus polls src until it reports want, at most tries times.
func waitStatus(t *testing.T, src chronyhealth.Source, want clockhealth.Status, tries int) clockhealth.Reading {
	t.Helper()
	var r clockhealth.Reading
	for i := 0; i < tries; i++ {
		var err error
		r, err = src.Read(context.Background())
		require.NoError(t, err)
		if r.Status == want {
			return r
		}
		<-time.After(200 * time.Millisecond) // polling a real daemon; nothing is asserted about this time
	}
	t.Fatalf("chronyd at %s did not become %s; last reading: %s", src.Addr, want, r)
	return r
}

// TestClientLosesAndRegainsItsServer stops a client's server: the client
// holds over, then is reported unsynchronised once its last update is
// stale; it is synchronised again when the server is back.
func TestClientLosesAndRegainsItsServer(t *testing.T) {
	server := chronytest.StartServer(t)
	client := chronytest.StartClient(t, server.NTPAddr)
	src := chronyhealth.Source{Addr: client.CmdAddr, MinStale: 2 * time.Second}
	waitStatus(t, src, clockhealth.StatusSynchronised, 150)
	require.NotZero(t, server.PID())
	server.Stop()
	require.Zero(t, server.PID())
	r := waitStatus(t, src, clockhealth.StatusUnsynchronised, 150)
	require.Contains(t, r.Detail, "no clock update")
	server.Start()
	waitStatus(t, src, clockhealth.StatusSynchronised, 150)
}
