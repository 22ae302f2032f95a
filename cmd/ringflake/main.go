// Command ringflake issues and inspects ringflake IDs.
//
// Usage:
//
//	ringflake gen [-n COUNT] [-node NODE] [-guard URL] [-state FILE] [-layout LAYOUT] [-strategy STRATEGY] [-offset N] [-format FORMAT]
//	              [-key-file FILE] [-tweak T] [-require-sync] [-max-clock-error D] [-clock-source SOURCE]
//	ringflake serve [-listen HOST:PORT] [-node NODE] [-guard URL] [-state FILE] [-layout LAYOUT] [-strategy STRATEGY] [-offset N] [-max-batch N] [-grace D]
//	                [-require-sync] [-max-clock-error D] [-clock-source SOURCE]
//	ringflake parse [-layout LAYOUT] [-format FORMAT] [-key-file FILE] [-tweak T] [-json] ID...
//	ringflake replay [-strategy STRATEGY | -all-strategies] [-strict] [-format table|json] [-plot FILE|DIR] FILE...
//	ringflake record -duration D -out FILE [-every 10ms] [-threshold 100µs] [-rate RATE]
//	ringflake fleet [-seeds N] [-from S] [-out DIR] [-v]
//	ringflake bounds FROM TO [-layout LAYOUT] [-format FORMAT]
//	ringflake plan -nodes N -rate R/s -years Y [-unit U] [-epoch T]
//	ringflake migrate-check -from LAYOUT -to LAYOUT -at TIME
//	ringflake clock [-chrony HOST:PORT] [-clockbound PATH] [-against redis://HOST[:PORT]] [-format text|json]
//	ringflake version
//
// gen prints COUNT new IDs, one per line, by default under a node id that
// no other process of this host holds (-node local). serve serves IDs over
// HTTP as JSON (package idserver; docs/serve.md), on loopback unless
// -behind-proxy, until SIGTERM or SIGINT. parse prints the time (RFC 3339,
// UTC), node and sequence of each ID. LAYOUT is a preset (twitter,
// sonyflake, sonyflake-v2, discord, js-safe) or a key=value list (see
// ringflake.ParseLayout);
// STRATEGY is a strategy string such as "ring,wait:5ms,error" (see
// strategies.Parse). FORMAT is an ID encoding: dec (the default), hex,
// base32, base58, base62, base64, or bwmarrin/snowflake's base2, base36,
// base58-flickr and zbase32 (see encodings.Encoding; base58 and
// base58-flickr read each other's text as other IDs). gen and parse also
// take serial:PATTERN, serial numbers such as
// serial:PAY{time:20060102150405.000}{node}{seq} with the time in UTC (see
// serialno.New), and opaque (keyed public IDs that hide the
// time, node and count: package opaque, docs/opaque.md) or opaque-number
// (their numbers), with the keys from $RINGFLAKE_OPAQUE_KEY or -key-file
// FILE (VERSION:BASE64,..., the first encodes) and the type's -tweak;
// bounds and serve's format= do not. parse
// also reads an ID written NAME:TEXT in encoding NAME, and 0x... as hex
// (not with a serial FORMAT, whose text is read whole), and with -json
// prints one JSON object per ID.
//
// replay replays clock-skew scenario files (see package scenario) on a
// simulated clock against strategies and reports what each did; record
// samples this host's wall clock against its monotonic clock and writes
// the steps, freezes and drifts it sees as a scenario file. A scenario
// file with a fleet: block is a whole fleet (package fleetsim), which
// replay simulates; fleet draws random fleets and fault schedules from
// seeds and shrinks the first violation to a scenario file.
//
// bounds prints the smallest ID of FROM's tick and the largest of TO's
// tick (RFC 3339 times), one per line, for WHERE id BETWEEN lo AND hi.
// plan prints the 63-bit layouts that fit N nodes issuing up to R IDs per
// second each for Y years, best first, one layout string per line followed
// by a tab and its headroom; it fails saying which bits are short when none
// fits. migrate-check says whether every ID of the layout -to issued from
// TIME on sorts above every ID the layout -from could have issued before
// it, and otherwise fails naming the two IDs where the order breaks and the
// earliest cut-over that keeps it.
//
// clock prints the clock's health as the kernel, chronyd (-chrony) and
// ClockBound (-clockbound) report it (docs/clock.md); gen and serve take
// -require-sync, -max-clock-error and -clock-source to refuse to start on
// an unhealthy clock, and serve reports not ready while it is.
//
// version prints the version of ringflake the binary was built from.
//
// A bad command line gets one line on stderr naming what was wrong and
// the command's -h, which lists its flags.
//
// Exit status: 0 on success, 1 when the work failed (a bad ID, a generator
// error, a layout that does not fit, an order that breaks), 2 on a usage
// error.
//
// ringflake is licensed under the Apache License 2.0: see LICENSE at the
// root of the repository.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
)

func main() {
	// A reader that stops reading (gen | head -2) makes a write to stdout
	// fail with EPIPE instead of killing the process, so that gen stops
	// cleanly: it saves its mark and gives its node id back.
	signal.Ignore(syscall.SIGPIPE)
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// usageError is an error the user fixes by changing the command line.
// run prints it on one line, naming the command's -h for its flags.
type usageError struct {
	msg string
}

func (e *usageError) Error() string { return e.msg }

// usagef returns a usageError. A library error among args is shown without
// its package's prefix ("ringflake: ", "encodings: "…): run adds
// "ringflake: " once.
func usagef(format string, args ...any) error {
	for i, a := range args {
		if err, ok := a.(error); ok {
			args[i] = trimPrefix(err.Error())
		}
	}
	return &usageError{msg: fmt.Sprintf(format, args...)}
}

// libraryPrefixes are the prefixes of the messages of this module's
// packages, which a line of the CLI shows once, as "ringflake: ".
var libraryPrefixes = []string{"ringflake: ", "encodings: ", "serialno: ", "layoutplan: ", "hostlocal: "}

// trimPrefix returns msg without a leading library prefix, and with every
// "ringflake: " after a colon in it dropped: an error wrapped in another
// says "ringflake:" once.
func trimPrefix(msg string) string {
	for _, p := range libraryPrefixes {
		if rest, ok := strings.CutPrefix(msg, p); ok {
			msg = rest
			break
		}
	}
	return strings.ReplaceAll(msg, ": ringflake: ", ": ")
}

// badValuef returns a usageError about a value on the command line.
func badValuef(format string, args ...any) error {
	return usagef(format, args...)
}

const usage = `usage:
  ringflake gen [-n COUNT] [-node NODE] [-guard URL] [-state FILE] [-layout LAYOUT] [-strategy STRATEGY] [-offset N] [-format FORMAT]
                [-key-file FILE] [-tweak T] [-require-sync] [-max-clock-error D] [-clock-source SOURCE]
  ringflake serve [-listen HOST:PORT] [-node NODE] [-guard URL] [-state FILE] [-layout LAYOUT] [-strategy STRATEGY]
                  [-offset N] [-max-batch N] [-grace D] [-behind-proxy]
                  [-require-sync] [-max-clock-error D] [-clock-source SOURCE]
  ringflake parse [-layout LAYOUT] [-format FORMAT] [-key-file FILE] [-tweak T] [-json] ID...
  ringflake replay [-strategy STRATEGY | -all-strategies] [-strict] [-format table|json] [-plot FILE|DIR] FILE...
  ringflake record -duration D -out FILE [-every 10ms] [-threshold 100µs] [-rate RATE]
  ringflake fleet [-seeds N] [-from S] [-out DIR] [-v]
  ringflake bounds FROM TO [-layout LAYOUT] [-format FORMAT]
  ringflake plan -nodes N -rate R/s -years Y [-unit U] [-epoch T]
  ringflake migrate-check -from LAYOUT -to LAYOUT -at TIME
  ringflake clock [-chrony HOST:PORT] [-clockbound PATH] [-against redis://HOST[:PORT]] [-format text|json]
  ringflake version

FORMAT is an encoding (dec, hex, base32, base58, base62, base64, base2, base36,
base58-flickr, zbase32); gen and parse also take serial:PATTERN, serial numbers such as
'serial:PAY{time:20060102150405.000}{node}{seq}', and opaque or opaque-number, keyed public
IDs with the keys from $RINGFLAKE_OPAQUE_KEY or -key-file (bounds does not, nor serve's format=).
SOURCE is kernel (the default), chrony://HOST:PORT or clockbound:PATH.
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
	case "serve":
		err = serve(args[1:], stdout, stderr)
	case "parse":
		err = parse(args[1:], stdout, stderr)
	case "replay":
		err = replay(args[1:], stdout, stderr)
	case "record":
		err = record(args[1:], stdout, stderr)
	case "fleet":
		err = fleet(args[1:], stdout, stderr)
	case "bounds":
		err = bounds(args[1:], stdout, stderr)
	case "plan":
		err = plan(args[1:], stdout, stderr)
	case "migrate-check":
		err = migrateCheck(args[1:], stdout, stderr)
	case "clock":
		err = clock(args[1:], stdout, stderr)
	case "version", "-version", "--version":
		err = version(args[1:], stdout, stderr)
	case "help", "-h", "-help", "--help":
		fmt.Fprint(stdout, usage)
		return 0
	default:
		fmt.Fprintf(stderr, "ringflake: unknown command %q; \"ringflake help\" lists them\n", args[0])
		return 2
	}
	var ue *usageError
	switch {
	case err == nil, errors.Is(err, flag.ErrHelp):
		return 0
	case errors.As(err, &ue):
		fmt.Fprintf(stderr, "ringflake: %v (\"ringflake %s -h\" lists its flags)\n", err, strings.TrimLeft(args[0], "-"))
		return 2
	default:
		fmt.Fprintf(stderr, "ringflake: %s\n", trimPrefix(err.Error()))
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
