//go:build linux

package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ringflake/ringflake/scenario"
)

// answer is what replaying a hostile file must give.
type answer int

const (
	replays   answer = iota + 1 // every strategy replays it: exit 0
	overLimit                   // a one-line error naming the file and the limit
	badLine                     // a one-line error naming the file and the line
	badFile                     // a one-line error naming the file (YAML does not tell the line)
)

const (
	hostileGuard = 10 * time.Second
	hostileRSS   = 512 << 20 // bytes of peak memory a replay of any file may take
)

// hostileFile makes one kind of file a pull request could bring.
type hostileFile struct {
	name  string
	write func(w *bufio.Writer) // the file's content
	want  answer
	limit int // for overLimit: the limit the error names
}

const validHead = "start: 2026-11-22T12:00:00Z\nduration: 100ms\nload: {rate: 10/ms}\n"

// repeat writes s n times.
func repeat(w *bufio.Writer, s string, n int) {
	for range n {
		w.WriteString(s)
	}
}

func text(s string) func(w *bufio.Writer) { return func(w *bufio.Writer) { w.WriteString(s) } }

// hostileFiles are the files of issue 17: large ones, and thirty kinds
// that were already answered with a precise error.
func hostileFiles() []hostileFile {
	const mb50 = 50 << 20
	return []hostileFile{
		// The six that crashed or hung the replay.
		{"50 MB name", func(w *bufio.Writer) {
			w.WriteString(validHead + "name: ")
			repeat(w, "x", mb50)
			w.WriteString("\n")
		}, overLimit, scenario.MaxFileSize},
		{"50 MB of events lines", func(w *bufio.Writer) {
			w.WriteString(validHead + "events:\n")
			repeat(w, "  - {at: 1ms, step: -1ms}\n", mb50/26)
		}, overLimit, scenario.MaxFileSize},
		{"event list amplified by an alias", func(w *bufio.Writer) {
			w.WriteString(validHead + "events:\n  - &e {at: 1ms, step: -1ms}\n")
			repeat(w, "  - *e\n", (scenario.MaxFileSize-200)/7)
		}, overLimit, scenario.MaxEvents},
		{"event list amplified by an alias to 50 MB", func(w *bufio.Writer) {
			w.WriteString(validHead + "events:\n  - &e {at: 1ms, step: -1ms}\n")
			repeat(w, "  - *e\n", mb50/26)
		}, overLimit, scenario.MaxFileSize},
		{"/dev/zero", nil, overLimit, scenario.MaxFileSize},
		{"150,000 one-call bursts", func(w *bufio.Writer) {
			w.WriteString("start: 2026-11-22T12:00:00Z\nduration: 100ms\nload:\n  bursts:\n")
			repeat(w, "    - {at: 1ms, count: 1}\n", 150_000)
		}, overLimit, scenario.MaxFileSize},
		{"150,000 one-call bursts by alias", func(w *bufio.Writer) {
			w.WriteString("start: 2026-11-22T12:00:00Z\nduration: 100ms\nload:\n  bursts: [&b {at: 1ms, count: 1}")
			repeat(w, ", *b", 150_000)
			w.WriteString("]\n")
		}, overLimit, scenario.MaxBursts},
		{"20,000 expect keys", func(w *bufio.Writer) {
			w.WriteString(validHead + "expect:\n")
			for i := range 20_000 {
				fmt.Fprintf(w, "  \"wait:%dus\": {errors: 0}\n", i+1000)
			}
		}, overLimit, scenario.MaxExpectations},

		// Valid large files replay, in memory in proportion to their size.
		{"a 1 MB name", func(w *bufio.Writer) {
			w.WriteString(validHead + "name: ")
			repeat(w, "x", scenario.MaxFileSize-200)
			w.WriteString("\n")
		}, replays, 0},
		{"10,000 events", func(w *bufio.Writer) {
			w.WriteString(validHead + "events:\n")
			for i := range scenario.MaxEvents {
				fmt.Fprintf(w, "  - {at: %dus, step: %dus}\n", i*10, 1-2*(i%2))
			}
		}, replays, 0},
		{"10,000 bursts of 20 calls", func(w *bufio.Writer) {
			w.WriteString("start: 2026-11-22T12:00:00Z\nduration: 1s\nload:\n  goroutines: 16\n  bursts:\n")
			for i := range scenario.MaxBursts {
				fmt.Fprintf(w, "    - {at: %dus, count: 20, over: 50us}\n", i*90)
			}
		}, replays, 0},

		// Thirty more kinds, answered with a precise error.
		{"huge duration", text("start: 2026-11-22T12:00:00Z\nduration: 99999999999999999h\n"), badLine, 0},
		{"huge rate", text("start: 2026-11-22T12:00:00Z\nduration: 1s\nload: {rate: 99999999999999999999/ms}\n"), badLine, 0},
		{"rate over the calls", text("start: 2026-11-22T12:00:00Z\nduration: 1h\nload: {rate: 1000000/ns}\n"), badLine, 0},
		{"huge node", text("start: 2026-11-22T12:00:00Z\nduration: 1s\nnode: 1e300\n"), badLine, 0},
		{"huge burst count", text("start: 2026-11-22T12:00:00Z\nduration: 1s\nload: {bursts: [{at: 0s, count: 9223372036854775807}]}\n"), badLine, 0},
		{"huge goroutines", text("start: 2026-11-22T12:00:00Z\nduration: 1s\nload: {goroutines: 1000000000}\n"), badLine, 0},
		{"huge seed", text("start: 2026-11-22T12:00:00Z\nduration: 1s\nevents: [{at: 0s, jitter: 1ms, seed: 99999999999999999999}]\n"), badLine, 0},
		{"NaN drift", text("start: 2026-11-22T12:00:00Z\nduration: 1s\nevents: [{at: 0s, drift: .nan}]\n"), badLine, 0},
		{"infinite drift", text("start: 2026-11-22T12:00:00Z\nduration: 1s\nevents: [{at: 0s, drift: .inf}]\n"), badLine, 0},
		{"negative duration", text("start: 2026-11-22T12:00:00Z\nduration: -1s\n"), badLine, 0},
		{"negative freeze", text("start: 2026-11-22T12:00:00Z\nduration: 1s\nevents: [{at: 0s, freeze: -1s}]\n"), badLine, 0},
		{"negative burst", text("start: 2026-11-22T12:00:00Z\nduration: 1s\nload: {bursts: [{at: 0s, count: -5}]}\n"), badLine, 0},
		{"start in year 1", text("start: 0001-01-01T00:00:00Z\nduration: 1s\n"), badLine, 0},
		{"start in year 9999", text("start: 9999-12-31T23:59:59Z\nduration: 1s\n"), badLine, 0},
		{"step back two centuries", text("start: 2026-11-22T12:00:00Z\nduration: 1s\nevents: [{at: 0s, step: -1750000h}]\n"), badLine, 0},
		{"deeply nested lists", func(w *bufio.Writer) {
			w.WriteString("start: 2026-11-22T12:00:00Z\nduration: 1s\nname: ")
			repeat(w, "[", 100_000)
			repeat(w, "]", 100_000)
			w.WriteString("\n")
		}, badLine, 0},
		{"deeply nested mappings", func(w *bufio.Writer) {
			w.WriteString("start: 2026-11-22T12:00:00Z\nduration: 1s\nname: ")
			repeat(w, "{a: ", 50_000)
			repeat(w, "}", 50_000)
			w.WriteString("\n")
		}, badLine, 0},
		{"billion laughs", func(w *bufio.Writer) {
			w.WriteString("start: 2026-11-22T12:00:00Z\nduration: 1s\nname:\n  - &a0 [lol, lol, lol, lol, lol, lol, lol, lol, lol, lol]\n")
			for i := 1; i < 10; i++ {
				fmt.Fprintf(w, "  - &a%d [*a%d, *a%d, *a%d, *a%d, *a%d, *a%d, *a%d, *a%d, *a%d, *a%d]\n", i, i-1, i-1, i-1, i-1, i-1, i-1, i-1, i-1, i-1, i-1)
			}
			w.WriteString("events: *a9\nexpect: *a9\n")
		}, badLine, 0},
		{"billion laughs under events", func(w *bufio.Writer) {
			w.WriteString("start: 2026-11-22T12:00:00Z\nduration: 1s\nevents:\n  - &a0 {at: 0s, step: 1ms}\n")
			for i := 1; i < 10; i++ {
				fmt.Fprintf(w, "  - &a%d [*a%d, *a%d, *a%d, *a%d, *a%d, *a%d, *a%d, *a%d, *a%d, *a%d]\n", i, i-1, i-1, i-1, i-1, i-1, i-1, i-1, i-1, i-1, i-1)
			}
		}, badLine, 0},
		{"two documents", text("start: 2026-11-22T12:00:00Z\nduration: 1s\n---\nstart: 2026-11-22T12:00:00Z\nduration: 1s\n"), badLine, 0},
		{"a key given twice", text("start: 2026-11-22T12:00:00Z\nduration: 1s\nduration: 2s\n"), badLine, 0},
		{"200,000 keys at the top", func(w *bufio.Writer) {
			w.WriteString("start: 2026-11-22T12:00:00Z\nduration: 1s\n")
			repeat(w, "a: 1\n", 200_000)
		}, badLine, 0},
		{"200,000 keys given twice in an event", func(w *bufio.Writer) {
			w.WriteString("start: 2026-11-22T12:00:00Z\nduration: 1s\nevents:\n  - at: 0s\n")
			repeat(w, "    step: 1ms\n", 70_000)
		}, badLine, 0},
		{"an unknown field", text("start: 2026-11-22T12:00:00Z\nduration: 1s\ncolour: red\n"), badLine, 0},
		{"a merge key", text("start: 2026-11-22T12:00:00Z\nduration: 1s\nbase: &b {node: 3}\n<<: *b\n"), badLine, 0},
		{"binary", func(w *bufio.Writer) {
			for i := range 1 << 19 {
				w.WriteByte(byte(i*7919 + i>>3))
			}
		}, badFile, 0},
		{"NUL bytes", text("start: 2026-11-22T12:00:00Z\x00\x00\nduration: 1s\n"), badFile, 0},
		{"invalid UTF-8", text("start: 2026-11-22T12:00:00Z\nduration: 1s\nname: \xff\xfe\n"), badFile, 0},
		{"an unknown anchor", text("start: 2026-11-22T12:00:00Z\nduration: *nowhere\n"), badFile, 0},
		{"tabs for indentation", text("start: 2026-11-22T12:00:00Z\nduration: 1s\nload:\n\trate: 1/ms\n"), badLine, 0},
		{"a strategy key of 100,000 characters", func(w *bufio.Writer) {
			w.WriteString("start: 2026-11-22T12:00:00Z\nduration: 1s\nexpect:\n  \"wait:")
			repeat(w, "9", 100_000)
			w.WriteString("ms\": {errors: 0}\n")
		}, badLine, 0},
		{"1 MB of document separators", func(w *bufio.Writer) {
			w.WriteString("start: 2026-11-22T12:00:00Z\nduration: 1s\n")
			repeat(w, "---\n", (scenario.MaxFileSize-100)/4)
		}, replays, 0},
		{"1 MB of comments", func(w *bufio.Writer) { repeat(w, "# nothing\n", (scenario.MaxFileSize-100)/10) }, badFile, 0},
		{"a long flow list for a name", func(w *bufio.Writer) {
			w.WriteString("start: 2026-11-22T12:00:00Z\nduration: 1s\nname: [")
			repeat(w, "1,", (scenario.MaxFileSize-100)/2)
			w.WriteString("1]\n")
		}, badLine, 0},
	}
}

// Every hostile file is answered within the hang guard, with peak memory
// under 512 MiB: a correct replay, or a one-line error naming the file and
// what is wrong (the limit, or the line). Each replays against every
// strategy (-all-strategies) in a child process: the CLI, built as users
// build it (without the race detector, whatever this test runs with), on
// two cores.
func TestHostileFiles(t *testing.T) {
	dir := t.TempDir()
	cli := filepath.Join(dir, "ringflake")
	build := exec.Command("go", "build", "-o", cli, ".")
	build.Env = append(os.Environ(), "GOFLAGS=")
	out, err := build.CombinedOutput()
	require.NoError(t, err, "%s", out)
	t.Logf("%-46s %-6s %7s %7s %9s", "FILE", "ANSWER", "TIME", "CPU", "PEAK RSS")
	for _, hf := range hostileFiles() {
		t.Run(hf.name, func(t *testing.T) {
			path := "/dev/zero"
			if hf.write != nil {
				path = filepath.Join(dir, strings.NewReplacer(" ", "-", ",", "", "/", "-").Replace(hf.name)+".yaml")
				f, err := os.Create(path)
				require.NoError(t, err)
				w := bufio.NewWriter(f)
				hf.write(w)
				require.NoError(t, w.Flush())
				require.NoError(t, f.Close())
			}
			ctx, cancel := context.WithTimeout(context.Background(), hostileGuard)
			defer cancel()
			usage := filepath.Join(t.TempDir(), "usage")
			cmd := exec.CommandContext(ctx, cli, "replay", "-all-strategies", path)
			cmd.Env = append(os.Environ(), "GOMAXPROCS=2")
			cmd = launchCommand(cmd, usage)
			var out, errOut bytes.Buffer
			cmd.Stdout, cmd.Stderr = &out, &errOut
			cmd.WaitDelay = time.Second
			start := time.Now()
			err := cmd.Run()
			took := time.Since(start)
			require.NoError(t, ctx.Err(), "no answer within %v", hostileGuard)
			// The replay's own peak memory and CPU time, as the launcher
			// measured them (see launchEnv).
			rss, cpuNanos, uerr := readUsage(usage)
			require.NoError(t, uerr, "the launcher's report")
			cpu := time.Duration(cpuNanos)
			code := cmd.ProcessState.ExitCode()
			got := "ok"
			if code != 0 {
				got = "error"
			}
			t.Logf("%-46s %-6s %6.2fs %6.2fs %5d MiB", hf.name, got, took.Seconds(), cpu.Seconds(), rss>>20)
			assert.Less(t, rss, int64(hostileRSS), "peak memory")

			if hf.want == replays {
				require.NoError(t, err, "%s", errOut.String())
				rows := strings.Split(strings.TrimSpace(out.String()), "\n")
				require.Len(t, rows, 1+len(scenario.Builtin()), "a header and a row per strategy")
				for _, row := range rows[1:] {
					assert.True(t, strings.HasSuffix(row, " ok"), row)
					assert.Less(t, len(row), 300, "a long name is cut in the table")
				}
				return
			}
			var exit *exec.ExitError
			require.ErrorAs(t, err, &exit, "%s", out.String())
			assert.Equal(t, 1, code)
			lines := strings.Split(strings.TrimSpace(errOut.String()), "\n")
			require.Len(t, lines, 2, "one line about the file, then the summary: %s", errOut.String())
			msg := lines[0]
			assert.Contains(t, msg, path, "names the file")
			assert.Less(t, len(msg), 600, "a line a person reads: %s", msg)
			switch hf.want {
			case overLimit:
				assert.Contains(t, msg, fmt.Sprint(hf.limit), "names the limit")
			case badLine:
				assert.Regexp(t, regexp.MustCompile(regexp.QuoteMeta(path)+`:\d+: `), msg, "names the line")
			}
			assert.True(t, strings.HasPrefix(lines[1], "ringflake: replay failed"), lines[1])
			assert.False(t, errors.Is(err, context.DeadlineExceeded))
		})
	}
}
