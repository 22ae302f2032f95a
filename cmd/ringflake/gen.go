package main

import (
	"bufio"
	"context"
	"errors"
	"io"

	"github.com/ringflake/ringflake"
	"github.com/ringflake/ringflake/strategies"
)

func gen(args []string, stdout, stderr io.Writer) (err error) {
	fs := newFlags("gen", stderr)
	n := fs.Int("n", 1, "number of IDs to print")
	nodeFlag := fs.String("node", "0", nodeHelp)
	state := fs.String("state", "", "file keeping the high-water mark between runs, so that a restart never reissues an ID (with a fixed node id)")
	layoutFlag := fs.String("layout", "twitter", "layout: twitter, sonyflake, js-safe, or key=value,... (see ringflake.ParseLayout)")
	strategyFlag := fs.String("strategy", strategies.Default().String(), "rollback strategy, e.g. error, wait:5ms, logical:1s, ring, or a chain")
	formatFlag := fs.String("format", "dec", formatHelp)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usagef("gen takes no arguments, got %q", fs.Args())
	}
	if *n < 0 {
		return usagef("-n %d: want a count of 0 or more", *n)
	}
	layout, err := ringflake.ParseLayout(*layoutFlag)
	if err != nil {
		return usagef("-layout: %v", err)
	}
	strategy, err := strategies.Parse(*strategyFlag)
	if err != nil {
		return usagef("-strategy: %v", err)
	}
	format, err := parseFormat(*formatFlag, layout)
	if err != nil {
		return usagef("-format: %v", err)
	}
	if *state != "" && isLease(*nodeFlag) {
		return usagef("-state: a leased node id keeps its high-water mark with the lease; -state is for fixed node ids")
	}
	ctx := context.Background()
	nd, err := resolveNode(ctx, *nodeFlag, layout)
	if err != nil {
		return err
	}
	if nd.release != nil {
		defer func() {
			ctx, cancel := context.WithTimeout(ctx, acquireTimeout)
			defer cancel()
			err = errors.Join(err, nd.release(ctx))
		}()
	}
	opts := []ringflake.Option{ringflake.WithLayout(layout), ringflake.WithStrategy(strategy)}
	switch {
	case nd.lease != nil:
		opts = append(opts, ringflake.WithLease(nd.lease))
	case *state != "":
		opts = append(opts, ringflake.WithMarkStore(ringflake.NewFileMarkStore(*state)))
	}
	g, err := ringflake.New(nd.id, opts...)
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, g.Close(ctx)) }() // saves the exact mark, if any
	return write(g, *n, format, stdout)
}

// write prints n IDs from g, one per line.
func write(g *ringflake.Generator, n int, format idFormat, stdout io.Writer) error {
	w := bufio.NewWriter(stdout)
	buf := make([]byte, 0, 24)
	for range n {
		id, err := g.Next()
		if err != nil {
			_ = w.Flush()
			return err
		}
		if buf, err = format.append(buf[:0], id); err != nil {
			_ = w.Flush()
			return err
		}
		buf = append(buf, '\n')
		if _, err := w.Write(buf); err != nil {
			return err
		}
	}
	return w.Flush()
}
