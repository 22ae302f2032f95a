package main

import (
	"bufio"
	"io"

	"github.com/ringflake/ringflake"
	"github.com/ringflake/ringflake/strategies"
)

func gen(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("gen", stderr)
	n := fs.Int("n", 1, "number of IDs to print")
	node := fs.Int64("node", 0, "node id, in [0, the layout's largest node]")
	layoutFlag := fs.String("layout", "twitter", "layout: twitter, sonyflake, js-safe, or key=value,... (see ringflake.ParseLayout)")
	strategyFlag := fs.String("strategy", strategies.Default().String(), "rollback strategy, e.g. error, wait:5ms, logical:1s, ring, or a chain")
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
	layout, err := ringflake.ParseLayout(*layoutFlag)
	if err != nil {
		return usagef("-layout: %v", err)
	}
	strategy, err := strategies.Parse(*strategyFlag)
	if err != nil {
		return usagef("-strategy: %v", err)
	}
	enc, err := ringflake.ParseEncoding(*formatFlag)
	if err != nil {
		return usagef("-format: %v", err)
	}
	g, err := ringflake.New(*node, ringflake.WithLayout(layout), ringflake.WithStrategy(strategy))
	if err != nil {
		return err
	}
	w := bufio.NewWriter(stdout)
	buf := make([]byte, 0, 24)
	for range *n {
		id, err := g.Next()
		if err != nil {
			_ = w.Flush()
			return err
		}
		buf = enc.Append(buf[:0], id)
		buf = append(buf, '\n')
		if _, err := w.Write(buf); err != nil {
			return err
		}
	}
	return w.Flush()
}
