package main

import (
	"bufio"
	"context"
	"errors"
	"io"

	"github.com/ringflake/ringflake"
)

func gen(args []string, stdout, stderr io.Writer) (err error) {
	fs := newFlags("gen", stderr)
	n := fs.Int("n", 1, "number of IDs to print")
	genFlags := addGeneratorFlags(fs)
	formatFlag := fs.String("format", "dec", "encoding of the IDs: dec, hex, base32, base58, base62 or base64")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usagef("gen takes no arguments, got %q", fs.Args())
	}
	if *n < 0 {
		return usagef("-n %d: want a count of 0 or more", *n)
	}
	enc, err := ringflake.ParseEncoding(*formatFlag)
	if err != nil {
		return usagef("-format: %v", err)
	}
	ctx := context.Background()
	iss, err := genFlags.open(ctx)
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, iss.close(ctx)) }() // saves the exact mark, if any, and gives a lease back
	return write(iss.gen, *n, enc, stdout)
}

// write prints n IDs from g, one per line. It takes them in batches of
// up to 256 with NextN: one atomic operation per tick, not per ID. The IDs
// issued before an error are printed.
func write(g *ringflake.Generator, n int, enc ringflake.Encoding, stdout io.Writer) error {
	w := bufio.NewWriter(stdout)
	buf := make([]byte, 0, 24)
	ids := make([]ringflake.ID, min(n, 256))
	for n > 0 {
		k, err := g.NextN(context.Background(), ids[:min(n, len(ids))])
		for _, id := range ids[:k] {
			buf = enc.Append(buf[:0], id)
			buf = append(buf, '\n')
			if _, werr := w.Write(buf); werr != nil {
				return werr
			}
		}
		if err != nil {
			_ = w.Flush()
			return err
		}
		n -= k
	}
	return w.Flush()
}
