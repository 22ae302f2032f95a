package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/ringflake/ringflake"
)

func gen(args []string, stdout, stderr io.Writer) (err error) {
	fs := newFlags("gen", stderr)
	n := fs.Int("n", 1, "number of IDs to print")
	genFlags := addGeneratorFlags(fs)
	formatFlag := fs.String("format", "dec", formatHelp)
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
	format, err := parseFormat(*formatFlag, layout)
	if err != nil {
		return badValuef("-format: %v", err)
	}
	ctx := context.Background()
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
				return werr
			}
		}
		n -= k
		switch {
		case err == nil:
			unsaved = 0
		case rehold != nil && errors.Is(err, ringflake.ErrLeaseLost):
			fmt.Fprintf(stderr, "ringflake: %s; waiting for the lease to hold its id again\n", strings.TrimPrefix(err.Error(), "ringflake: "))
			err = rehold()
		case errors.Is(err, ringflake.ErrMarkNotSaved) && unsaved < saveRetries:
			// A store that timed out (a loaded server): the next call
			// saves again, and waits for it.
			unsaved++
			fmt.Fprintf(stderr, "ringflake: %s; trying again (%d of %d)\n", strings.TrimPrefix(err.Error(), "ringflake: "), unsaved, saveRetries)
			err = nil
		}
		if err != nil {
			_ = w.Flush()
			return err
		}
	}
	return w.Flush()
}
