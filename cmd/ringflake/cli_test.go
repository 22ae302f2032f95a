package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
)

// Tests that run the CLI as the processes an operator starts (local node
// ids, state files, leases and guards, fault tests) share one binary:
// built once per test run into a directory of its own (readable by every
// user, for the test that runs it as another one), removed by TestMain.
var built struct {
	once sync.Once
	dir  string
	path string
	err  error
}

func TestMain(m *testing.M) {
	if code, ok := launched(); ok {
		os.Exit(code)
	}
	// The host-local node locks of this run's processes, apart from those
	// of every other program of the host (and of other test runs).
	nodes, err := os.MkdirTemp("", "ringflake-nodes-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	if err := os.Chmod(nodes, 0o777|os.ModeSticky); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Setenv(nodeDirEnv, nodes)
	code := m.Run()
	os.RemoveAll(nodes)
	if built.dir != "" {
		if err := os.RemoveAll(built.dir); err != nil {
			fmt.Fprintln(os.Stderr, err)
		}
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
