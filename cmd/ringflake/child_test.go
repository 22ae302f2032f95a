package main

import (
	"bufio"
	"bytes"
	"errors"
	"os/exec"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ringflake/ringflake"
)

// A child is a `ringflake gen` process a test started, and what it printed:
// its IDs, parsed as they come, and its standard error once it exited.
type child struct {
	name string
	cmd  *exec.Cmd
	done chan struct{} // closed once the process exited and its output is read

	mu     sync.Mutex
	ids    []ringflake.ID
	newest ringflake.ID
	bad    string // the first line that is not an ID

	stderr lockedBuffer
	exit   int // the exit status, once done is closed; -1 when killed
}

// startGen starts `ringflake gen args...` and reads its IDs in the
// background. The process is killed (by its PID) when the test ends, if
// it is still running then.
func startGen(t *testing.T, name string, args ...string) *child {
	t.Helper()
	c := &child{name: name, done: make(chan struct{})}
	c.cmd = exec.Command(cliBinary(t), append([]string{"gen"}, args...)...)
	c.cmd.Stderr = &c.stderr
	stdout, err := c.cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, c.cmd.Start(), "starting %s", name)
	go func() {
		defer close(c.done)
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			id, err := strconv.ParseInt(sc.Text(), 10, 64)
			c.mu.Lock()
			if err != nil && c.bad == "" {
				c.bad = sc.Text()
			}
			c.ids = append(c.ids, ringflake.ID(id))
			c.newest = max(c.newest, ringflake.ID(id))
			c.mu.Unlock()
		}
		var ee *exec.ExitError
		if err := c.cmd.Wait(); errors.As(err, &ee) {
			c.exit = ee.ExitCode()
		}
	}()
	t.Cleanup(func() {
		select {
		case <-c.done:
		default:
			_ = c.cmd.Process.Kill()
			<-c.done
		}
	})
	return c
}

// progress returns how many IDs c printed so far, and the greatest.
func (c *child) progress() (n int, newest ringflake.ID) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.ids), c.newest
}

// wait waits for c to exit, at most within, and returns its exit status.
func (c *child) wait(t *testing.T, within time.Duration) int {
	t.Helper()
	select {
	case <-c.done:
	case <-time.After(within):
		t.Fatalf("%s (pid %d) did not exit within %v", c.name, c.cmd.Process.Pid, within)
	}
	require.Empty(t, c.bad, "%s printed a line that is not an ID", c.name)
	return c.exit
}

// duplicates returns how many IDs of the children were printed more than
// once, across all of them.
func duplicates(children ...*child) (total, dups int) {
	var all []ringflake.ID
	for _, c := range children {
		c.mu.Lock()
		all = append(all, c.ids...)
		c.mu.Unlock()
	}
	slices.Sort(all)
	for i := 1; i < len(all); i++ {
		if all[i] == all[i-1] {
			dups++
		}
	}
	return len(all), dups
}

// lockedBuffer is a bytes.Buffer that a process writes to while the test
// reads it.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
