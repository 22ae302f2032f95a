//go:build linux

package main

import (
	"fmt"
	"os"
	"os/exec"
	"syscall"
)

// launchEnv names the variable that turns the test binary into a launcher:
// it runs the command given as its arguments, passes on its input, output
// and exit status, and writes the command's peak memory (bytes) and CPU
// time (ns) to the file the variable names.
//
// A child's peak memory as the kernel reports it (ru_maxrss) includes the
// high-water mark of the memory it was started from: os/exec starts it on
// the starting process's memory (CLONE_VM|CLONE_VFORK) until it execs. A
// test process that has run fault tests holds gigabytes (the race
// detector's shadow memory is never given back), so its children would
// report as much. The launcher is a fresh process, small: a command it
// starts reports its own peak.
const launchEnv = "RINGFLAKE_TEST_LAUNCH_USAGE"

// launched runs the launcher when the test binary was started as one, and
// returns its exit status; ok is false otherwise.
func launched() (code int, ok bool) {
	usage := os.Getenv(launchEnv)
	if usage == "" {
		return 0, false
	}
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "launcher: no command")
		return 125, true
	}
	cmd := exec.Command(os.Args[1], os.Args[2:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL} // dies with the launcher
	var env []string
	for _, kv := range os.Environ() {
		if len(kv) < len(launchEnv)+1 || kv[:len(launchEnv)+1] != launchEnv+"=" {
			env = append(env, kv)
		}
	}
	cmd.Env = env
	err := cmd.Run()
	if cmd.ProcessState == nil {
		fmt.Fprintln(os.Stderr, "launcher:", err)
		return 125, true
	}
	ru := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	if err := os.WriteFile(usage, fmt.Appendf(nil, "%d %d\n", ru.Maxrss<<10, ru.Utime.Nano()+ru.Stime.Nano()), 0o600); err != nil {
		fmt.Fprintln(os.Stderr, "launcher:", err)
		return 125, true
	}
	return cmd.ProcessState.ExitCode(), true
}

// launch returns a command that runs name with args through the launcher,
// and the file where it will write the command's peak memory and CPU time.
func launchCommand(cmd *exec.Cmd, usage string) *exec.Cmd {
	cmd.Args = append([]string{os.Args[0], cmd.Path}, cmd.Args[1:]...)
	cmd.Path = os.Args[0]
	cmd.Env = append(cmd.Env, launchEnv+"="+usage)
	return cmd
}

// readUsage reads what the launcher wrote.
func readUsage(path string) (rss int64, cpuNanos int64, err error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, 0, err
	}
	_, err = fmt.Sscan(string(b), &rss, &cpuNanos)
	return rss, cpuNanos, err
}
