//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package main

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ringflake/ringflake/chronyhealth"
	"github.com/ringflake/ringflake/chronyhealth/chronytest"
	"github.com/ringflake/ringflake/clockhealth"
)

// chronyEnv returns the chronyd command address scripts/test.sh exports
// in name; the test fails without it.
func chronyEnv(t *testing.T, name string) string {
	t.Helper()
	v := os.Getenv(name)
	if v == "" {
		t.Fatalf("%s is not set: run scripts/test.sh, which starts chronyd -x on loopback and sets it", name)
	}
	return v
}

// clockJSON runs `ringflake clock -chrony addr -format json` and returns
// what it printed.
func clockJSON(t *testing.T, addr string) clockReport {
	t.Helper()
	out, err := command(t, "clock", "-chrony", addr, "-format", "json").Output()
	require.NoError(t, err)
	var rep clockReport
	require.NoError(t, json.Unmarshal(out, &rep), "%s", out)
	return rep
}

func TestClockProcessSyncedChrony(t *testing.T) {
	addr := chronyEnv(t, "RINGFLAKE_TEST_CHRONY_SYNCED")
	rep := clockJSON(t, addr)
	require.NotNil(t, rep.Chrony)
	assert.Equal(t, "chrony "+addr, rep.Chrony.Source)
	assert.Equal(t, clockhealth.StatusSynchronised, rep.Chrony.Status, rep.Chrony.Detail)
	assert.True(t, rep.Chrony.MaxErrorKnown)
	assert.Less(t, rep.Chrony.MaxError, time.Second)
	assert.Equal(t, "kernel", rep.Kernel.Source)
	if runtime.GOOS == "linux" {
		// Whatever state this host's kernel is in, it is printed.
		assert.Contains(t, []clockhealth.Status{clockhealth.StatusSynchronised, clockhealth.StatusUnsynchronised}, rep.Kernel.Status)
		assert.True(t, rep.Kernel.MaxErrorKnown)
		t.Logf("%s", rep.Kernel)
	}
	t.Logf("%s", rep.Chrony)
}

func TestClockProcessUnsyncedChrony(t *testing.T) {
	addr := chronyEnv(t, "RINGFLAKE_TEST_CHRONY_UNSYNCED")
	rep := clockJSON(t, addr)
	require.NotNil(t, rep.Chrony)
	assert.Equal(t, clockhealth.StatusUnsynchronised, rep.Chrony.Status)
	t.Logf("%s", rep.Chrony)

	out, err := command(t, "clock", "-chrony", addr).Output()
	require.NoError(t, err)
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	require.Len(t, lines, 2, "%s", out)
	assert.True(t, strings.HasPrefix(lines[0], "kernel: "), lines[0])
	assert.True(t, strings.HasPrefix(lines[1], "chrony "+addr+": unsynchronised"), lines[1])
}

// A chronyd that does not answer: the reading is printed as unknown and
// the command fails.
func TestClockProcessChronyAway(t *testing.T) {
	cmd := command(t, "clock", "-chrony", "127.0.0.1:9", "-format", "json")
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	require.Error(t, err)
	assert.Equal(t, 1, cmd.ProcessState.ExitCode())
	var rep clockReport
	require.NoError(t, json.Unmarshal(out, &rep), "%s", out)
	require.NotNil(t, rep.Chrony)
	assert.Equal(t, clockhealth.StatusUnknown, rep.Chrony.Status)
	assert.Equal(t, 1, strings.Count(stderr.String(), "\n"), stderr.String())
}

func TestGenProcessRequireSyncChrony(t *testing.T) {
	synced := chronyEnv(t, "RINGFLAKE_TEST_CHRONY_SYNCED")
	unsynced := chronyEnv(t, "RINGFLAKE_TEST_CHRONY_UNSYNCED")

	out, err := command(t, "gen", "-n", "3", "-node", "1", "-require-sync", "-clock-source", "chrony://"+synced).Output()
	require.NoError(t, err)
	assert.Len(t, strings.Fields(string(out)), 3)

	out, err = command(t, "gen", "-n", "3", "-node", "1", "-max-clock-error", "100ms", "-clock-source", "chrony://"+synced).Output()
	require.NoError(t, err)
	assert.Len(t, strings.Fields(string(out)), 3)

	line := runFailsOneLine(t, command(t, "gen", "-n", "3", "-node", "1", "-require-sync", "-clock-source", "chrony://"+unsynced))
	assert.Contains(t, line, "chrony "+unsynced)
	assert.Contains(t, line, "not synchronised")

	line = runFailsOneLine(t, command(t, "gen", "-n", "3", "-node", "1", "-max-clock-error", "100ms", "-clock-source", "chrony://"+unsynced))
	assert.Contains(t, line, "chrony "+unsynced)
	assert.Contains(t, line, "beyond 100ms")

	// However large the bound, a chronyd that never synchronised gives
	// none: its clock's error is unknown, not the dispersion it reports.
	line = runFailsOneLine(t, command(t, "gen", "-n", "3", "-node", "1", "-max-clock-error", "10000h", "-clock-source", "chrony://"+unsynced))
	assert.Contains(t, line, "not synchronised has no bound")
}

// readyzStatus asks p's /readyz and returns the status and body.
func readyzStatus(t *testing.T, client *http.Client, p *process) (int, string) {
	t.Helper()
	resp, err := client.Get(p.base + "/readyz")
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, string(b)
}

// waitReadyz polls /readyz until it answers want, at most tries times.
func waitReadyz(t *testing.T, client *http.Client, p *process, want, tries int) string {
	t.Helper()
	var code int
	var body string
	for i := 0; i < tries; i++ {
		if code, body = readyzStatus(t, client, p); code == want {
			return body
		}
		<-time.After(200 * time.Millisecond) // polling real daemons; no timing is asserted
	}
	t.Fatalf("/readyz never answered %d; last %d %s\nserve's stderr:\n%s", want, code, body, p.stderr())
	return ""
}

// serve -require-sync on a chronyd client: /readyz is 200 while the
// client follows its server, 503 once the client has lost the server
// long enough to be unsynchronised, and 200 again when the server is back.
func TestServeProcessReadyzFollowsChrony(t *testing.T) {
	server := chronytest.StartServer(t)
	client := chronytest.StartClient(t, server.NTPAddr)
	src := chronyhealth.Source{Addr: client.CmdAddr}
	for i := 0; ; i++ { // bounded: until the client is synchronised
		r, err := src.Read(context.Background())
		require.NoError(t, err)
		if r.Synchronised() {
			break
		}
		require.Less(t, i, 300, "the chronyd client never synchronised: %s", r)
		<-time.After(100 * time.Millisecond)
	}

	p := startServe(t, "-node", "1", "-require-sync", "-clock-source", "chrony://"+client.CmdAddr)
	httpc := &http.Client{Timeout: time.Minute}
	defer httpc.CloseIdleConnections()
	code, body := readyzStatus(t, httpc, p)
	require.Equal(t, http.StatusOK, code, body)
	resp, err := httpc.Get(p.base + "/metrics")
	require.NoError(t, err)
	metrics, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	require.NoError(t, resp.Body.Close())
	assert.Contains(t, string(metrics), `ringflake_clock_synchronised{source="chrony `+client.CmdAddr+`"} 1`)
	assert.Contains(t, string(metrics), "ringflake_ids_issued_total")

	server.Stop() // by its PID
	body = waitReadyz(t, httpc, p, http.StatusServiceUnavailable, 600)
	var e struct{ Error, Code string }
	require.NoError(t, json.Unmarshal([]byte(body), &e), body)
	assert.Equal(t, clockUnhealthyCode, e.Code)
	assert.Contains(t, e.Error, "chrony "+client.CmdAddr)
	assert.Contains(t, p.stderr(), "clock health changed")

	server.Start()
	waitReadyz(t, httpc, p, http.StatusOK, 600)
	p.terminate()
}

// A Redis that cannot be reached gets one line from clock -against,
// ringflake's: go-redis's own log lines ("redis: … connection refused")
// do not repeat it.
func TestClockAgainstUnreachableRedisSaysItOnce(t *testing.T) {
	var errOut strings.Builder
	cmd := command(t, "clock", "-against", "redis://127.0.0.1:1")
	cmd.Stderr = &errOut
	require.Error(t, cmd.Run())
	assert.Equal(t, 1, cmd.ProcessState.ExitCode(), errOut.String())
	assert.Equal(t, 1, strings.Count(errOut.String(), "\n"), "one line: %s", errOut.String())
	assert.Contains(t, errOut.String(), "-against 127.0.0.1:1")
}
