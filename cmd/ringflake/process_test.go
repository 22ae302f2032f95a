//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package main

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ringflake/ringflake"
)

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

// runFailsOneLine runs cmd, which must fail with exit status 1, print
// nothing on standard output and one line on standard error, which it
// returns.
func runFailsOneLine(t *testing.T, cmd *exec.Cmd) string {
	t.Helper()
	var out, errOut strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errOut
	var exit *exec.ExitError
	require.ErrorAs(t, cmd.Run(), &exit)
	assert.Equal(t, 1, exit.ExitCode(), errOut.String())
	assert.Empty(t, out.String())
	assert.Equal(t, 1, strings.Count(errOut.String(), "\n"), "one line: %s", errOut.String())
	return errOut.String()
}
