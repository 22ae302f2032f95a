package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"syscall"
	"time"

	"github.com/ringflake/ringflake"
)

func gen(args []string, stdout, stderr io.Writer) (err error) {
	fs := newFlags("gen", stderr)
	n := fs.Int("n", 1, "number of IDs to print")
	genFlags := addGeneratorFlags(fs)
	clockF := addClockFlags(fs)
	formatFlag := fs.String("format", "dec", formatHelp)
	opq := addOpaqueFlags(fs)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usagef("gen takes no arguments, got %q", fs.Args())
	}
	if *n < 0 {
		return badValuef("-n %d: want a count of 0 or more", *n)
	}
	layout, err := genFlags.parseLayout()
	if err != nil {
		return err
	}
	format, err := parseFormat(*formatFlag, layout, opq)
	if err != nil {
		return badValuef("-format: %v", err)
	}
	ctx := context.Background()
	// The clock is checked before a node id is taken: a refusal holds
	// nothing.
	if _, err := clockF.open(ctx, nil); err != nil {
		return err
	}
	iss, err := genFlags.open(ctx)
	if err != nil {
		return err
	}
	defer func() {
		cerr := iss.close(ctx) // saves the exact mark, if any, and gives the node id back
		switch {
		case cerr == nil:
		case err == nil:
			err = cerr
		case errors.Is(err, ringflake.ErrLeaseLost) && errors.Is(cerr, ringflake.ErrLeaseLost):
			// The mark cannot be saved on a lost lease: the loss is said once.
		default:
			// A failed run ends with one line: what failed, then what
			// closing it failed to do.
			err = fmt.Errorf("%w; on closing: %s", err, strings.ReplaceAll(cerr.Error(), "\n", "; "))
		}
	}()
	return write(iss.gen, *n, format, stdout, stderr, iss.rehold)
}

// saveRetries is how many mark saves in a row may fail before gen gives
// up: a store that times out now and then does not end the run; one that
// fails for good (a full disk) does.
const saveRetries = 5

// write prints n IDs from g, one per line. It takes them in batches of
// up to 256 with NextN: one atomic operation per tick, not per ID. The IDs
// issued before an error are printed. When g's lease does not hold its id
// for a moment (renewals late on a loaded machine, a server briefly away),
// rehold, when not nil, waits until it holds it again, saying so on
// stderr; its error ends the run. A mark that could not be saved is tried
// again, saveRetries times in a row at most.
func write(g *ringflake.Generator, n int, format idFormat, stdout, stderr io.Writer, rehold func() error) error {
	w := bufio.NewWriter(stdout)
	buf := make([]byte, 0, 24)
	ids := make([]ringflake.ID, min(n, 256))
	unsaved := 0 // mark saves that failed in a row
	out := newOutageLog(stderr)
	for n > 0 {
		k, err := g.NextN(context.Background(), ids[:min(n, len(ids))])
		for _, id := range ids[:k] {
			var ferr error
			if buf, ferr = format.append(buf[:0], id); ferr != nil {
				_ = w.Flush()
				return ferr
			}
			buf = append(buf, '\n')
			if _, werr := w.Write(buf); werr != nil {
				return closedOutput(werr)
			}
		}
		n -= k
		switch {
		case err == nil:
			unsaved = 0
			out.resumed()
		case rehold != nil && errors.Is(err, ringflake.ErrLeaseLost):
			out.failed(err, "waiting for the lease to hold its id again")
			err = rehold()
		case errors.Is(err, ringflake.ErrMarkNotSaved) && unsaved < saveRetries:
			// A store that timed out (a loaded server): the next call
			// saves again, and waits for it.
			unsaved++
			out.failed(err, fmt.Sprintf("trying again, up to %d times", saveRetries))
			err = nil
		}
		if err != nil {
			_ = w.Flush()
			return err
		}
	}
	return closedOutput(w.Flush())
}

// closedOutput returns err, or nil when it says that the reader of the
// output went away (a pipe into head -2): a closed output is a clean
// stop, after which gen saves its mark as on any other end.
func closedOutput(err error) error {
	if errors.Is(err, syscall.EPIPE) {
		return nil
	}
	return err
}

// outageLog tells the operator of a run's outages — a lease that does not
// hold its id, a mark that cannot be saved — in as few lines as say what
// happened: one when an outage starts, with its cause; one for each other
// cause while it lasts (the same cause again says nothing new); and one
// when IDs are issued again. A run that gives up ends with its error,
// which run prints.
type outageLog struct {
	w     io.Writer
	now   func() time.Time
	since time.Time       // when the outage under way started; zero when none
	seen  map[string]bool // the causes told during the outage under way
}

func newOutageLog(w io.Writer) *outageLog {
	return &outageLog{w: w, now: time.Now, seen: map[string]bool{}}
}

// failed tells of a call that failed with err, after which the run goes on
// doing what next says. Its cause is the kind of failure — the lease does
// not hold the id, or the mark could not be saved — whatever the server's
// words (a connection reset, then a deadline, are one cause); the line
// gives the words of the first.
func (o *outageLog) failed(err error, next string) {
	cause := err.Error()
	switch {
	case errors.Is(err, ringflake.ErrLeaseLost):
		cause = "lease lost"
	case errors.Is(err, ringflake.ErrMarkNotSaved):
		cause = "mark not saved"
	}
	if o.since.IsZero() {
		o.since = o.now()
	}
	if o.seen[cause] {
		return
	}
	o.seen[cause] = true
	fmt.Fprintf(o.w, "ringflake: %s; %s\n", trimPrefix(err.Error()), next)
}

// resumed tells that a call issued IDs again, if an outage was under way.
func (o *outageLog) resumed() {
	if o.since.IsZero() {
		return
	}
	fmt.Fprintf(o.w, "ringflake: issuing again after %v\n", o.now().Sub(o.since).Round(time.Millisecond))
	o.since = time.Time{}
	clear(o.seen)
}
