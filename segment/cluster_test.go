package segment_test

import (
	"bytes"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"
)

// A cluster is a PostgreSQL server of a test's own, in a temporary
// directory, listening on 127.0.0.1 only, which the test may crash and
// start again on the same port and data. It runs as the user postgres
// when the test runs as root (PostgreSQL refuses root), as scripts/test.sh
// does.
type cluster struct {
	bin  string // initdb's and pg_ctl's directory
	dir  string // data in dir/data, socket and log in dir
	port int
	opts []string // server settings, "name=value"
	pid  int      // the postmaster's, while it runs
}

// startCluster makes and starts a cluster with the server settings opts,
// and stops it (by its PID, if pg_ctl cannot) and removes it when the
// test ends.
func startCluster(t *testing.T, opts ...string) *cluster {
	t.Helper()
	c := &cluster{bin: requireEnv(t, bindirEnv), port: freePort(t), opts: opts}
	dir, err := os.MkdirTemp("", "ringflake-segment-pg.")
	require.NoError(t, err)
	c.dir = dir
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	if os.Geteuid() == 0 {
		u, err := user.Lookup("postgres")
		require.NoError(t, err, "PostgreSQL refuses to run as root, and there is no user postgres")
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		require.NoError(t, os.Chown(dir, uid, gid))
	}
	c.run(t, "initdb", "-D", c.data(), "-U", "postgres", "-A", "trust", "-E", "UTF8", "--no-locale")
	t.Cleanup(func() { c.stop(t) })
	c.start(t)
	return c
}

func (c *cluster) data() string { return filepath.Join(c.dir, "data") }

// dsn is the cluster's address for pgx; a dial gives up after 5 s.
func (c *cluster) dsn() string {
	return fmt.Sprintf("postgres://postgres@127.0.0.1:%d/postgres?sslmode=disable&connect_timeout=5", c.port)
}

// start starts the stopped cluster and waits until it accepts
// connections (pg_ctl -w), crash recovery included.
func (c *cluster) start(t *testing.T) {
	t.Helper()
	require.Zero(t, c.pid, "already running")
	o := fmt.Sprintf("-c listen_addresses=127.0.0.1 -p %d -k %s", c.port, c.dir)
	for _, opt := range c.opts {
		o += " -c " + opt
	}
	c.run(t, "pg_ctl", "-D", c.data(), "-l", filepath.Join(c.dir, "server.log"), "-w", "-t", "60", "-s", "-o", o, "start")
	b, err := os.ReadFile(filepath.Join(c.data(), "postmaster.pid"))
	require.NoError(t, err)
	c.pid, err = strconv.Atoi(string(bytes.TrimSpace(bytes.SplitN(b, []byte("\n"), 2)[0])))
	require.NoError(t, err, "postmaster.pid")
}

// crash stops the cluster at once, as a crash would: pg_ctl stop -m
// immediate ends every server process without a checkpoint, so what was
// not flushed to the WAL is lost, and the next start runs crash recovery.
func (c *cluster) crash(t *testing.T) {
	t.Helper()
	c.run(t, "pg_ctl", "-D", c.data(), "-m", "immediate", "-w", "-t", "60", "-s", "stop")
	c.pid = 0
}

// stop crashes the cluster if it runs; when pg_ctl fails, it sends the
// postmaster SIGQUIT (an immediate shutdown) by its PID.
func (c *cluster) stop(t *testing.T) {
	if c.pid == 0 {
		return
	}
	cmd := c.command("pg_ctl", "-D", c.data(), "-m", "immediate", "-w", "-t", "60", "-s", "stop")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Logf("pg_ctl stop: %v: %s; sending SIGQUIT to %d", err, out, c.pid)
		_ = syscall.Kill(c.pid, syscall.SIGQUIT)
	}
	c.pid = 0
}

// run runs one of PostgreSQL's programs and fails the test, with its
// output and the server's log, when it fails.
func (c *cluster) run(t *testing.T, prog string, args ...string) {
	t.Helper()
	out, err := c.command(prog, args...).CombinedOutput()
	if err != nil {
		log, _ := os.ReadFile(filepath.Join(c.dir, "server.log"))
		require.NoError(t, err, "%s %v: %s\nserver log:\n%s", prog, args, out, log)
	}
}

func (c *cluster) command(prog string, args ...string) *exec.Cmd {
	path := filepath.Join(c.bin, prog)
	if os.Geteuid() == 0 {
		return exec.Command("runuser", append([]string{"-u", "postgres", "--", path}, args...)...)
	}
	return exec.Command(path, args...)
}

// freePort returns a TCP port that nothing on 127.0.0.1 listened on a
// moment ago, for a server the test starts.
func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}
