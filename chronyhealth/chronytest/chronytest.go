// Package chronytest starts throwaway chronyd processes for tests, on
// loopback and always with -x, so that they never adjust the host's
// clock: a server (local stratum 8) and clients that poll it. A test can
// stop and restart a server to make its clients lose and regain their
// source.
//
// The chronyd binary is taken from the environment variable
// RINGFLAKE_TEST_CHRONYD (scripts/test.sh sets it); without it the test
// fails.
package chronytest

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ringflake/ringflake/chronyhealth"
)

// Env is the environment variable that names the chronyd binary.
const Env = "RINGFLAKE_TEST_CHRONYD"

// Chronyd is one chronyd process started by a test.
type Chronyd struct {
	// CmdAddr is its command address (for chronyhealth.Source).
	CmdAddr string
	// NTPAddr is where a server answers NTP; empty for a client.
	NTPAddr string

	t    testing.TB
	bin  string
	conf string
	log  string

	mu  sync.Mutex
	cmd *exec.Cmd
}

// StartServer starts a chronyd that serves its own clock at stratum 8 on
// 127.0.0.1, and stops it when the test ends.
func StartServer(t testing.TB) *Chronyd {
	t.Helper()
	ntp := freeUDPPort(t)
	return start(t, "server", ntp, "port "+portOf(ntp), "bindaddress 127.0.0.1", "allow 127.0.0.1", "local stratum 8")
}

// StartClient starts a chronyd that polls the NTP server at serverNTP
// (host:port) 16 times a second, and stops it when the test ends.
func StartClient(t testing.TB, serverNTP string) *Chronyd {
	t.Helper()
	host, port, err := net.SplitHostPort(serverNTP)
	if err != nil {
		t.Fatalf("chronytest: server address %q: %v", serverNTP, err)
	}
	return start(t, "client", "", "port 0", fmt.Sprintf("server %s port %s iburst minpoll -4 maxpoll -4", host, port))
}

func start(t testing.TB, name, ntp string, lines ...string) *Chronyd {
	t.Helper()
	bin := os.Getenv(Env)
	if bin == "" {
		t.Fatalf("%s is not set: run scripts/test.sh, which installs chrony and sets it", Env)
	}
	dir := t.TempDir()
	cmdAddr := freeUDPPort(t)
	conf := filepath.Join(dir, name+".conf")
	text := strings.Join(append([]string{
		"pidfile " + filepath.Join(dir, name+".pid"),
		"cmdport " + portOf(cmdAddr),
		"bindcmdaddress 127.0.0.1",
		"bindcmdaddress /", // no Unix socket under /run
		"cmdallow 127.0.0.1",
	}, lines...), "\n") + "\n"
	if err := os.WriteFile(conf, []byte(text), 0o644); err != nil {
		t.Fatalf("chronytest: %v", err)
	}
	c := &Chronyd{CmdAddr: cmdAddr, NTPAddr: ntp, t: t, bin: bin, conf: conf, log: filepath.Join(dir, name+".log")}
	c.Start()
	t.Cleanup(c.Stop)
	return c
}

// Start starts the process (again, after Stop) with the same
// configuration and ports, and waits until its command port answers.
func (c *Chronyd) Start() {
	c.t.Helper()
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.cmd != nil {
		return
	}
	log, err := os.OpenFile(c.log, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		c.t.Fatalf("chronytest: %v", err)
	}
	defer log.Close()
	// -x: never adjust the host's clock. -d: stay in the foreground. -U:
	// start without root (chronyd refuses otherwise; with -x it needs no
	// privilege); as root it drops its privileges itself.
	args := []string{"-f", c.conf, "-x", "-d"}
	if os.Geteuid() != 0 {
		args = append(args, "-U")
	}
	cmd := exec.Command(c.bin, args...)
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		c.t.Fatalf("chronytest: starting %s: %v", c.bin, err)
	}
	c.cmd = cmd
	src := chronyhealth.Source{Addr: c.CmdAddr, Timeout: 100 * time.Millisecond}
	for i := 0; i < 100; i++ { // bounded: 100 tries of at most 150 ms
		if _, err := src.Tracking(context.Background()); err == nil {
			return
		}
		<-time.After(50 * time.Millisecond) // a refused port answers at once: let chronyd start
	}
	out, _ := os.ReadFile(c.log)
	c.t.Fatalf("chronytest: chronyd -x -f %s did not answer on %s; its log:\n%s", c.conf, c.CmdAddr, out)
}

// Stop stops the process (SIGTERM, then waits for it); it does nothing
// when the process is not running.
func (c *Chronyd) Stop() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.cmd == nil {
		return
	}
	_ = c.cmd.Process.Signal(os.Interrupt)
	_ = c.cmd.Wait()
	c.cmd = nil
}

// PID returns the process id, or 0 when it is not running.
func (c *Chronyd) PID() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.cmd == nil {
		return 0
	}
	return c.cmd.Process.Pid
}

// freeUDPPort returns 127.0.0.1:PORT for a UDP port that was free a moment
// ago.
func freeUDPPort(t testing.TB) string {
	t.Helper()
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("chronytest: %v", err)
	}
	defer pc.Close()
	return pc.LocalAddr().String()
}

func portOf(addr string) string {
	_, port, _ := net.SplitHostPort(addr)
	return port
}
