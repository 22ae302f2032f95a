//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package hostlocal_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ringflake/ringflake"
	"github.com/ringflake/ringflake/hostlocal"
)

// holderEnv, when set, makes this test binary a lock holder for the tests
// of another process: TestLockHolderProcess then holds what the variable
// names and prints it, until its stdin closes or it is killed.
const holderEnv = "RINGFLAKE_TEST_LOCK_HOLDER"

// TestLockHolderProcess is the other process of the lock tests; in a
// normal run it has nothing to do.
func TestLockHolderProcess(t *testing.T) {
	what, ok := os.LookupEnv(holderEnv)
	if !ok {
		return
	}
	kind, arg, _ := strings.Cut(what, ":")
	switch kind {
	case "mark": // hold the mark file arg
		s := hostlocal.NewMarkFile(arg)
		require.NoError(t, s.Hold(context.Background()))
		fmt.Println("held")
	case "node": // take the lowest free node id in directory arg
		id, err := hostlocal.NewNode(arg).NodeID(context.Background(), ringflake.TwitterLayout())
		require.NoError(t, err)
		fmt.Println(id)
	default:
		t.Fatalf("%s=%q: want mark:PATH or node:DIR", holderEnv, what)
	}
	_, _ = io.Copy(io.Discard, os.Stdin)
}

// holder is another process holding a lock.
type holder struct {
	cmd   *exec.Cmd
	line  string // what it printed once it held the lock
	stdin io.Closer
}

// startHolder starts this test binary as a lock holder of what (see
// holderEnv) and returns once it holds it. The process is killed at the
// end of the test if it still runs.
func startHolder(t *testing.T, what string) *holder {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute) // a hang guard
	t.Cleanup(cancel)
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^TestLockHolderProcess$", "-test.count=1")
	cmd.Env = append(os.Environ(), holderEnv+"="+what)
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	require.NoError(t, err)
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	line, err := bufio.NewReader(stdout).ReadString('\n')
	require.NoError(t, err, "the holder ended before it held %s", what)
	return &holder{cmd: cmd, line: strings.TrimSpace(line), stdin: stdin}
}

// pid returns the holder's process id.
func (h *holder) pid() int { return h.cmd.Process.Pid }

// node returns the node id the holder printed.
func (h *holder) node(t *testing.T) int64 {
	t.Helper()
	n, err := strconv.ParseInt(h.line, 10, 64)
	require.NoError(t, err)
	return n
}

// kill ends the holder with SIGKILL, as kill -9 does: it releases nothing
// itself.
func (h *holder) kill(t *testing.T) {
	t.Helper()
	require.NoError(t, h.cmd.Process.Kill())
	_ = h.cmd.Wait()
}
