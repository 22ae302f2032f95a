package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strings"

	"github.com/ringflake/ringflake/fleetsim"
	"github.com/ringflake/ringflake/scenario"
)

// fleet searches random fleets for a violation: ringflake fleet -seeds N.
func fleet(args []string, stdout, stderr io.Writer) error {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	return fleetWith(ctx, args, stdout, stderr)
}

func fleetWith(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("fleet", stderr)
	seeds := fs.Uint64("seeds", 100, "how many seeds to draw fleets and fault schedules from")
	from := fs.Uint64("from", 1, "the first seed")
	out := fs.String("out", ".", "the directory the shrunk scenario of a violation is written to")
	verbose := fs.Bool("v", false, "print one line per seed")
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "usage: ringflake fleet [-seeds N] [-from S] [-out DIR] [-v]\n\n"+
			"Draws a random fleet (nodes, lease server, strategy, load, messages) and a fault schedule from\n"+
			"each seed, simulates it deterministically (package fleetsim) and checks uniqueness, order,\n"+
			"causality, lease exclusivity, marks, leads and liveness against true time. On the first\n"+
			"violation it shrinks the schedule to a small scenario, writes it to DIR/fleet-seed-S.yaml\n"+
			"(ringflake replay reproduces it) and exits 1. docs/fleet-sim.md says how to use it in CI.\n\n")
		fs.PrintDefaults()
	}
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	switch {
	case fs.NArg() > 0:
		return usagef("fleet takes no arguments, got %q", fs.Arg(0))
	case *seeds == 0:
		return badValuef("-seeds 0: want at least 1")
	}
	var progress func(uint64, *fleetsim.Report)
	if *verbose {
		progress = func(seed uint64, r *fleetsim.Report) {
			fmt.Fprintf(stdout, "seed %d: ids=%d violations=%d trace=%.16s\n", seed, r.Count("ids"), r.Count("violations"), r.TraceHash)
		}
	}
	f, err := fleetsim.Search(ctx, *from, *seeds, progress)
	if err != nil {
		return err
	}
	if f == nil {
		fmt.Fprintf(stdout, "fleet: seeds %d to %d: no violation\n", *from, *from+*seeds-1)
		return nil
	}
	if err := os.MkdirAll(*out, 0o755); err != nil {
		return err
	}
	path := filepath.Join(*out, fmt.Sprintf("fleet-seed-%d.yaml", f.Seed))
	file, err := os.Create(path)
	if err != nil {
		return err
	}
	f.Shrunk.Comment = fmt.Sprintf("Found by ringflake fleet at seed %d (%d events), shrunk in %d runs.\n%s",
		f.Seed, len(f.Drawn.Events), f.Runs, f.Report.Violations[0])
	if _, err := f.Shrunk.WriteTo(file); err != nil {
		file.Close()
		return err
	}
	if err := file.Close(); err != nil {
		return err
	}
	fmt.Fprint(stdout, f.SReport)
	return fmt.Errorf("%w: seed %d: %s; shrunk to %d events in %s (ringflake replay %s)",
		errFleetViolation, f.Seed, f.Report.Violations[0].Kind, len(f.Shrunk.Events), path, path)
}

var errFleetViolation = errors.New("fleet violation")

// readAtMost reads the file at path, failing when it holds more than n
// bytes (or is a stream that does not end).
func readAtMost(path string, n int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, n+1))
	if err == nil && int64(len(data)) > n {
		err = fmt.Errorf("%s: more than %d bytes", path, n)
	}
	return data, err
}

// writeFleetPlot draws r's lanes (see replayFleets for where).
func writeFleetPlot(plot, file string, files int, r *fleetsim.Report) error {
	path := plot
	if filepath.Ext(plot) != ".svg" || files > 1 {
		if err := os.MkdirAll(plot, 0o755); err != nil {
			return err
		}
		path = filepath.Join(plot, strings.TrimSuffix(filepath.Base(file), filepath.Ext(file))+".svg")
	}
	out, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := r.Plot(out); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// replayFleets replays the fleet scenarios among files (package fleetsim)
// and returns the others, for the single-node replay, and an error
// matching errReplayFailed when a fleet scenario could not be run, broke
// a property or missed an expectation.
//
// With plot, each fleet's per-node lanes are drawn as SVG: to plot itself
// when it ends in .svg and files holds one file, else to plot/NAME.svg.
func replayFleets(ctx context.Context, files []string, asJSON bool, plot string, stdout, stderr io.Writer) ([]string, error) {
	var rest []string
	failed, broken, total := 0, 0, 0
	var reports []*fleetsim.Report
	for _, f := range files {
		data, err := readAtMost(f, scenario.MaxFileSize)
		if err != nil || !fleetsim.IsFleet(data) {
			rest = append(rest, f) // the single-node replay reports what is wrong with it
			continue
		}
		total++
		s, err := fleetsim.Parse(f, data)
		if err == nil {
			var r *fleetsim.Report
			var opts []fleetsim.Option
			if plot != "" {
				opts = append(opts, fleetsim.WithLanes())
			}
			if r, err = fleetsim.Run(ctx, s, opts...); err == nil && plot != "" {
				err = writeFleetPlot(plot, f, len(files), r)
			}
			if err == nil {
				reports = append(reports, r)
				if !r.OK() {
					failed++
				}
				if !asJSON {
					fmt.Fprint(stdout, r)
				}
				continue
			}
		}
		if errors.Is(err, context.Canceled) {
			return nil, err
		}
		broken++
		fmt.Fprintf(stderr, "ringflake: %s\n", trimPrefix(err.Error()))
	}
	if asJSON && len(reports) > 0 {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(reports); err != nil {
			return nil, err
		}
	}
	if failed+broken > 0 {
		return rest, fmt.Errorf("%w: %d of %d fleet scenarios could not be run or failed", errReplayFailed, failed+broken, total)
	}
	return rest, nil
}
