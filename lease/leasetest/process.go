//go:build unix

package leasetest

import (
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// A Process is a server process of a test's own, which the test may stop,
// pause and start again on the same ports and data directory. It provides
// every method of [Server] but Connect.
type Process struct {
	bin   string
	args  func(dir string) []string
	ready func() bool
	dir   string // data directory, and the log
	cmd   *exec.Cmd
}

// StartProcess starts bin with the arguments args gives for a new
// temporary data directory, waits until ready reports true, and stops the
// process when the test ends. The server's output goes to a log in the
// data directory, which a failure to start names.
func StartProcess(t *testing.T, bin string, args func(dir string) []string, ready func() bool) *Process {
	t.Helper()
	p := &Process{bin: bin, args: args, ready: ready, dir: t.TempDir()}
	p.Start(t)
	t.Cleanup(func() { p.Stop(t) })
	return p
}

// Start starts the stopped process again, with its data, and waits until
// it is ready.
func (p *Process) Start(t *testing.T) {
	t.Helper()
	require.Nil(t, p.cmd, "already running")
	log, err := os.OpenFile(filepath.Join(p.dir, filepath.Base(p.bin)+".log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	require.NoError(t, err)
	defer log.Close()
	cmd := exec.Command(p.bin, p.args(p.dir)...)
	cmd.Stdout, cmd.Stderr = log, log
	require.NoError(t, cmd.Start(), "starting %s", p.bin)
	p.cmd = cmd
	// The server needs real time to start listening: wait for its answer,
	// with a bound, polling (a fixed sleep would be too short on a loaded
	// machine and wasteful on an idle one).
	require.Eventually(t, p.ready, 30*time.Second, 10*time.Millisecond, "%s did not start; see %s", p.bin, log.Name())
}

// StartEmpty starts the stopped process again with a new, empty data
// directory: a server that lost its data.
func (p *Process) StartEmpty(t *testing.T) {
	t.Helper()
	p.dir = t.TempDir()
	p.Start(t)
}

// Stop shuts the process down with SIGTERM (Redis flushes its append-only
// file first) and waits for it to exit. Stopping a stopped process does
// nothing.
func (p *Process) Stop(t *testing.T) {
	t.Helper()
	if p.cmd == nil {
		return
	}
	_ = p.cmd.Process.Signal(syscall.SIGCONT) // in case the test paused it
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	_ = p.cmd.Wait()
	p.cmd = nil
}

// Kill kills the process with SIGKILL, as a crash or the OOM killer
// would — nothing is flushed — and waits for it to exit. Killing a
// stopped process does nothing.
func (p *Process) Kill(t *testing.T) {
	t.Helper()
	if p.cmd == nil {
		return
	}
	require.NoError(t, p.cmd.Process.Kill())
	_ = p.cmd.Wait() // "signal: killed"
	p.cmd = nil
}

// Pause stops the process (SIGSTOP) without closing its sockets: requests
// are accepted by the kernel and never answered, like a network partition
// that drops packets instead of resetting connections. A signal takes
// effect some time after kill returns — on a loaded machine, after
// hundreds of milliseconds for a process with many threads — so Pause
// then waits, polling with a bound, until every thread has stopped
// (where the system tells: Linux).
func (p *Process) Pause(t *testing.T) {
	t.Helper()
	require.NoError(t, p.cmd.Process.Signal(syscall.SIGSTOP))
	if stopped := stoppedProbe(p.cmd.Process.Pid); stopped != nil {
		require.Eventually(t, stopped, 30*time.Second, time.Millisecond, "%s did not stop within 30s of SIGSTOP", p.bin)
	}
}

// Resume continues a paused process.
func (p *Process) Resume(t *testing.T) {
	t.Helper()
	require.NoError(t, p.cmd.Process.Signal(syscall.SIGCONT))
}
