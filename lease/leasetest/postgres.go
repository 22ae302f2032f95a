//go:build unix

package leasetest

import (
	"bytes"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// A PostgresServer is a PostgreSQL cluster of a test's own, in a temporary
// directory, on a loopback port that stays the same when the test stops,
// kills and starts it again. It runs as the user postgres when the test
// runs as root (PostgreSQL refuses root). It provides every method of
// [Server] but Connect.
type PostgresServer struct {
	// DSN is the cluster's address: user postgres, database postgres,
	// trusted, sslmode=disable, a dial giving up after 5 s.
	DSN  string
	Port int
	bin  string
	dir  string // data in dir/data, socket and log in dir
	pid  int    // the postmaster's, while it runs
	// OnStart, when set, runs after every start (a driver migrates an
	// empty cluster's schema with it).
	OnStart func(t *testing.T)
}

// StartPostgres makes a cluster with initdb ([PostgresBindirEnv]),
// starts it — fsync off for speed; synchronous_commit stays on, so a
// commit the server acknowledged survives a crash of the server's
// processes — and stops it, by its PID if need be, when the test ends.
func StartPostgres(t *testing.T) *PostgresServer {
	t.Helper()
	s := &PostgresServer{bin: RequireEnv(t, PostgresBindirEnv), Port: FreePort(t)}
	s.DSN = fmt.Sprintf("postgres://postgres@127.0.0.1:%d/postgres?sslmode=disable&connect_timeout=5", s.Port)
	s.initdb(t)
	t.Cleanup(func() { s.Kill(t) })
	s.Start(t)
	return s
}

// initdb makes a new, empty cluster in a new directory.
func (s *PostgresServer) initdb(t *testing.T) {
	t.Helper()
	dir, err := os.MkdirTemp("", "ringflake-leasetest-pg.")
	require.NoError(t, err)
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	chownToServiceUser(t, dir)
	s.dir = dir
	s.run(t, "initdb", "-D", s.data(), "-U", "postgres", "-A", "trust", "-E", "UTF8", "--no-locale")
}

func (s *PostgresServer) data() string { return filepath.Join(s.dir, "data") }

// Start starts the stopped cluster with its data and waits until it
// accepts connections (crash recovery included).
func (s *PostgresServer) Start(t *testing.T) {
	t.Helper()
	require.Zero(t, s.pid, "already running")
	o := fmt.Sprintf("-c listen_addresses=127.0.0.1 -p %d -k %s -c fsync=off -c max_connections=300", s.Port, s.dir)
	s.run(t, "pg_ctl", "-D", s.data(), "-l", filepath.Join(s.dir, "server.log"), "-w", "-t", "60", "-s", "-o", o, "start")
	b, err := os.ReadFile(filepath.Join(s.data(), "postmaster.pid"))
	require.NoError(t, err)
	s.pid, err = strconv.Atoi(string(bytes.TrimSpace(bytes.SplitN(b, []byte("\n"), 2)[0])))
	require.NoError(t, err, "postmaster.pid")
	if s.OnStart != nil {
		s.OnStart(t)
	}
}

// StartEmpty starts the stopped server again on a new, empty cluster: a
// server that lost its data.
func (s *PostgresServer) StartEmpty(t *testing.T) {
	t.Helper()
	s.initdb(t)
	s.Start(t)
}

// Stop shuts the cluster down (pg_ctl stop -m fast) and waits for it.
// Stopping a stopped cluster does nothing.
func (s *PostgresServer) Stop(t *testing.T) {
	t.Helper()
	if s.pid == 0 {
		return
	}
	s.resume()
	s.run(t, "pg_ctl", "-D", s.data(), "-m", "fast", "-w", "-t", "60", "-s", "stop")
	s.pid = 0
}

// Kill kills the postmaster and every process of the cluster with
// SIGKILL, as a crash or the OOM killer would, and waits until they are
// gone: the next Start runs crash recovery. Killing a stopped cluster does
// nothing.
func (s *PostgresServer) Kill(t *testing.T) {
	t.Helper()
	if s.pid == 0 {
		return
	}
	pids := append([]int{s.pid}, childrenOf(s.pid)...)
	for _, pid := range pids {
		_ = syscall.Kill(pid, syscall.SIGKILL)
	}
	require.Eventually(t, func() bool {
		for _, pid := range pids {
			if alive(pid) {
				return false
			}
		}
		return true
	}, 30*time.Second, 10*time.Millisecond, "the cluster's processes were not gone within 30s of SIGKILL")
	s.pid = 0
}

// Pause stops the postmaster and every process of the cluster (SIGSTOP)
// without closing their sockets: queries hang unanswered, like a
// partition that drops packets. It waits until they have stopped.
func (s *PostgresServer) Pause(t *testing.T) {
	t.Helper()
	pids := append([]int{s.pid}, childrenOf(s.pid)...)
	for _, pid := range pids {
		require.NoError(t, syscall.Kill(pid, syscall.SIGSTOP))
	}
	for _, pid := range pids {
		require.Eventually(t, stoppedProbe(pid), 30*time.Second, time.Millisecond, "process %d did not stop within 30s of SIGSTOP", pid)
	}
}

// Resume continues a paused cluster.
func (s *PostgresServer) Resume(t *testing.T) {
	t.Helper()
	s.resume()
}

func (s *PostgresServer) resume() {
	for _, pid := range append([]int{s.pid}, childrenOf(s.pid)...) {
		_ = syscall.Kill(pid, syscall.SIGCONT)
	}
}

// run runs one of PostgreSQL's programs and fails the test, with its
// output and the server's log, when it fails.
func (s *PostgresServer) run(t *testing.T, prog string, args ...string) {
	t.Helper()
	path := filepath.Join(s.bin, prog)
	cmd := exec.Command(path, args...)
	if os.Geteuid() == 0 {
		cmd = exec.Command("runuser", append([]string{"-u", "postgres", "--", path}, args...)...)
	}
	if out, err := cmd.CombinedOutput(); err != nil {
		log, _ := os.ReadFile(filepath.Join(s.dir, "server.log"))
		require.NoError(t, err, "%s %v: %s\nserver log:\n%s", prog, args, out, log)
	}
}

// chownToServiceUser gives dir to the user postgres when the test runs
// as root, for servers that refuse to run as root.
func chownToServiceUser(t *testing.T, dir string) {
	t.Helper()
	if os.Geteuid() != 0 {
		return
	}
	u, err := user.Lookup("postgres")
	require.NoError(t, err, "PostgreSQL and PgBouncer refuse to run as root, and there is no user postgres")
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	require.NoError(t, os.Chown(dir, uid, gid))
}

// childrenOf returns the processes whose parent is pid (Linux: from
// /proc/PID/task/*/children; elsewhere none).
func childrenOf(pid int) []int {
	tasks, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/children", pid))
	var out []int
	for _, f := range tasks {
		b, _ := os.ReadFile(f)
		for _, field := range strings.Fields(string(b)) {
			if n, err := strconv.Atoi(field); err == nil {
				out = append(out, n)
			}
		}
	}
	return out
}

// alive reports whether process pid exists, as a zombie too: a new
// postmaster refuses to start while the PID in postmaster.pid exists.
func alive(pid int) bool { return syscall.Kill(pid, 0) == nil }

// A PgBouncer is a PgBouncer of a test's own in transaction pooling mode,
// on a loopback port that stays the same when the test stops and starts
// it again, in front of a PostgreSQL server, trusting its clients.
type PgBouncer struct {
	*Process
	// DSN is the PgBouncer's address for the user postgres and the
	// database postgres.
	DSN  string
	Port int
}

// StartPgBouncer starts pgbouncer ([PgBouncerEnv]) on a free loopback
// port in front of the PostgreSQL server at 127.0.0.1:upstreamPort, in
// transaction pooling mode, as the user postgres when the test runs as
// root, waits until it accepts connections, and stops it when the test
// ends.
func StartPgBouncer(t *testing.T, upstreamPort int) *PgBouncer {
	t.Helper()
	b := &PgBouncer{Port: FreePort(t)}
	b.DSN = fmt.Sprintf("postgres://postgres@127.0.0.1:%d/postgres?sslmode=disable&connect_timeout=5", b.Port)
	args := func(dir string) []string {
		chownToServiceUser(t, dir)
		ini := filepath.Join(dir, "pgbouncer.ini")
		users := filepath.Join(dir, "userlist.txt")
		require.NoError(t, os.WriteFile(users, []byte(`"postgres" ""`+"\n"), 0o644))
		require.NoError(t, os.WriteFile(ini, []byte(PgBouncerConfig(b.Port, upstreamPort, users)), 0o644))
		a := []string{ini}
		if os.Geteuid() == 0 {
			a = append([]string{"-u", "postgres"}, a...)
		}
		return a
	}
	b.Process = StartProcess(t, RequireEnv(t, PgBouncerEnv), args, func() bool { return listening(b.Port) })
	return b
}

// PgBouncerConfig returns a pgbouncer.ini for a PgBouncer on loopback port
// port, in transaction pooling mode, in front of every database of the
// PostgreSQL server at 127.0.0.1:upstream, trusting the users of the
// auth file users, logging to standard error only.
func PgBouncerConfig(port, upstream int, users string) string {
	return fmt.Sprintf(`[databases]
* = host=127.0.0.1 port=%d

[pgbouncer]
listen_addr = 127.0.0.1
listen_port = %d
unix_socket_dir =
auth_type = trust
auth_file = %s
pool_mode = transaction
max_client_conn = 1000
default_pool_size = 20
ignore_startup_parameters = extra_float_digits
server_connect_timeout = 5
server_login_retry = 1
logfile =
`, upstream, port, users)
}

// listening reports whether something accepts TCP connections on the
// loopback port.
func listening(port int) bool {
	c, err := net.DialTimeout("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)), 200*time.Millisecond)
	if err != nil {
		return false
	}
	_ = c.Close()
	return true
}
