// Command ringflake issues and inspects ringflake IDs.
//
// Usage:
//
//	ringflake gen [-n COUNT] [-node NODE] [-state FILE] [-layout LAYOUT] [-strategy STRATEGY] [-format FORMAT]
//	ringflake parse [-layout LAYOUT] [-format FORMAT] [-json] ID...
//	ringflake replay [-strategy STRATEGY | -all-strategies] [-format table|json] [-plot FILE|DIR] FILE...
//	ringflake record -duration D -out FILE [-every 10ms] [-threshold 100µs] [-rate RATE]
//
// gen prints COUNT new IDs, one per line, by default under a node id that
// no other process of this host holds (-node local). parse prints the time (RFC 3339,
// UTC), node and sequence of each ID. LAYOUT is a preset (twitter,
// sonyflake, js-safe) or a key=value list (see ringflake.ParseLayout);
// STRATEGY is a strategy string such as "ring,wait:5ms,error" (see
// strategies.Parse). FORMAT is an ID encoding: dec (the default), hex,
// base32, base58, base62 or base64 (see ringflake.Encoding); parse also
// reads an ID written NAME:TEXT in encoding NAME, and 0x... as hex, and
// with -json prints one JSON object per ID.
//
// replay replays clock-skew scenario files (see package scenario) on a
// simulated clock against strategies and reports what each did; record
// samples this host's wall clock against its monotonic clock and writes
// the steps, freezes and drifts it sees as a scenario file.
//
// Exit status: 0 on success, 1 when the work failed (a bad ID, a generator
// error), 2 on a usage error.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// usageError is an error the user fixes by changing the command line.
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

// usagef returns a usageError. A library error among args is shown without
// its "ringflake: " prefix, which run adds once.
func usagef(format string, args ...any) error {
	for i, a := range args {
		if err, ok := a.(error); ok {
			args[i] = strings.TrimPrefix(err.Error(), "ringflake: ")
		}
	}
	return &usageError{msg: fmt.Sprintf(format, args...)}
}

const usage = `usage:
  ringflake gen [-n COUNT] [-node NODE] [-state FILE] [-layout LAYOUT] [-strategy STRATEGY] [-format FORMAT]
  ringflake parse [-layout LAYOUT] [-format FORMAT] [-json] ID...
  ringflake replay [-strategy STRATEGY | -all-strategies] [-format table|json] [-plot FILE|DIR] FILE...
  ringflake record -duration D -out FILE [-every 10ms] [-threshold 100µs] [-rate RATE]

Run "ringflake COMMAND -h" for a command's flags.
`

// run is the whole program: it parses args, writes results to stdout and
// problems to stderr, and returns the exit status.
func run(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return 2
	}
	var err error
	switch args[0] {
	case "gen":
		err = gen(args[1:], stdout, stderr)
	case "parse":
		err = parse(args[1:], stdout, stderr)
	case "replay":
		err = replay(args[1:], stdout, stderr)
	case "record":
		err = record(args[1:], stdout, stderr)
	case "help", "-h", "-help", "--help":
		fmt.Fprint(stdout, usage)
		return 0
	default:
		err = usagef("unknown command %q", args[0])
	}
	var ue *usageError
	switch {
	case err == nil, errors.Is(err, flag.ErrHelp):
		return 0
	case errors.As(err, &ue):
		fmt.Fprintf(stderr, "ringflake: %v\n%s", err, usage)
		return 2
	default:
		fmt.Fprintf(stderr, "ringflake: %s\n", strings.TrimPrefix(err.Error(), "ringflake: "))
		return 1
	}
}

// newFlags returns a flag set for the command name that reports to stderr
// and returns errors.
func newFlags(name string, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet("ringflake "+name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "usage: ringflake %s [flags]\n\n", name)
		fs.PrintDefaults()
	}
	return fs
}

// parseFlags parses args, turning flag errors into usage errors, which run
// prints once with the usage. The flag package itself prints nothing but
// the command's usage for -h.
func parseFlags(fs *flag.FlagSet, args []string) error {
	out := fs.Output()
	fs.SetOutput(io.Discard)
	err := fs.Parse(args)
	fs.SetOutput(out)
	switch {
	case err == nil:
		return nil
	case errors.Is(err, flag.ErrHelp):
		fs.Usage()
		return err
	default:
		return usagef("%v", err)
	}
}
