//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package main

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ringflake/ringflake"
)

// The tests of this file run the CLI as the processes an operator starts:
// built once per test run into a directory of its own (readable by every
// user, for the test that runs it as another one), removed by TestMain.
var built struct {
	once sync.Once
	dir  string
	path string
	err  error
}

func TestMain(m *testing.M) {
	code := m.Run()
	if built.dir != "" {
		os.RemoveAll(built.dir)
	}
	os.Exit(code)
}

// cliBinary returns the path of the CLI, built on first use.
func cliBinary(t *testing.T) string {
	t.Helper()
	built.once.Do(func() {
		if built.dir, built.err = os.MkdirTemp("", "ringflake-cli-"); built.err != nil {
			return
		}
		if built.err = os.Chmod(built.dir, 0o755); built.err != nil {
			return
		}
		built.path = filepath.Join(built.dir, "ringflake")
		out, err := exec.Command("go", "build", "-o", built.path, ".").CombinedOutput()
		if err != nil {
			built.err = &buildError{err: err, out: string(out)}
		}
	})
	require.NoError(t, built.err)
	return built.path
}

type buildError struct {
	err error
	out string
}

func (e *buildError) Error() string { return "building the CLI: " + e.err.Error() + "\n" + e.out }

// processTimeout bounds every process a test starts: a hang guard, not a
// timing.
const processTimeout = 2 * time.Minute

// cliProcess is a running CLI.
type cliProcess struct {
	cmd    *exec.Cmd
	stdout *bufio.Reader // set by startCLI when it reads the output itself
	out    bytes.Buffer  // the output, when the test waits for the process to end
	errOut bytes.Buffer
}

// command returns the CLI with args, bounded by processTimeout and killed
// at the end of the test if it still runs.
func command(t *testing.T, args ...string) *exec.Cmd {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), processTimeout)
	t.Cleanup(cancel)
	return exec.CommandContext(ctx, cliBinary(t), args...)
}

// startCLI starts the CLI with args, collecting its output until it ends.
func startCLI(t *testing.T, args ...string) *cliProcess {
	t.Helper()
	p := &cliProcess{cmd: command(t, args...)}
	p.cmd.Stdout, p.cmd.Stderr = &p.out, &p.errOut
	require.NoError(t, p.cmd.Start())
	t.Cleanup(func() { p.stop() })
	return p
}

// startIssuing starts a CLI that prints IDs until it is killed, and
// returns once it has printed its first ID, which it returns too.
func startIssuing(t *testing.T, args ...string) (*cliProcess, ringflake.ID) {
	t.Helper()
	p := &cliProcess{cmd: command(t, append([]string{"gen", "-n", "1000000000000"}, args...)...)}
	stdout, err := p.cmd.StdoutPipe()
	require.NoError(t, err)
	p.cmd.Stderr = &p.errOut
	require.NoError(t, p.cmd.Start())
	t.Cleanup(func() { p.stop() })
	p.stdout = bufio.NewReader(stdout)
	line, err := p.stdout.ReadString('\n')
	if err != nil {
		p.stop() // before its stderr is read
		require.NoError(t, err, "the CLI ended before it issued: %s", p.errOut.String())
	}
	id, err := ringflake.Parse(strings.TrimSpace(line))
	require.NoError(t, err)
	return p, id
}

// kill ends p with SIGKILL, as kill -9 does: it saves and releases
// nothing itself.
func (p *cliProcess) kill(t *testing.T) {
	t.Helper()
	require.NoError(t, p.cmd.Process.Kill())
	p.stop()
}

// stop kills p if it still runs and waits for it.
func (p *cliProcess) stop() {
	if p.cmd.ProcessState == nil {
		_ = p.cmd.Process.Kill()
		if p.stdout != nil {
			_, _ = io.Copy(io.Discard, p.stdout)
		}
		_ = p.cmd.Wait()
	}
}

// wait waits for p to end and returns its exit status.
func (p *cliProcess) wait(t *testing.T) int {
	t.Helper()
	err := p.cmd.Wait()
	var exit *exec.ExitError
	if err != nil {
		require.ErrorAs(t, err, &exit)
	}
	return p.cmd.ProcessState.ExitCode()
}

// ids parses the IDs p printed.
func (p *cliProcess) ids(t *testing.T) []ringflake.ID {
	t.Helper()
	var ids []ringflake.ID
	for _, line := range strings.Fields(p.out.String()) {
		id, err := ringflake.Parse(line)
		require.NoError(t, err)
		ids = append(ids, id)
	}
	return ids
}
