package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/ringflake/ringflake/scenario"
	"github.com/ringflake/ringflake/strategies"
)

// errReplayFailed reports replays that broke a promise or missed an
// expectation; the details have been printed with the reports.
var errReplayFailed = errors.New("replay failed")

// strategyFlags collects repeated -strategy flags.
type strategyFlags []strategies.Strategy

func (f *strategyFlags) String() string {
	parts := make([]string, len(*f))
	for i, s := range *f {
		parts[i] = s.String()
	}
	return strings.Join(parts, " ")
}

func (f *strategyFlags) Set(v string) error {
	s, err := strategies.Parse(v)
	if err != nil {
		return errors.New(strings.TrimPrefix(err.Error(), "ringflake: "))
	}
	*f = append(*f, s)
	return nil
}

// replayOutcome is what replaying one file gave.
type replayOutcome struct {
	file    string
	s       *scenario.Scenario
	reports []*scenario.Report
	err     error // the file could not be read or replayed
}

func replay(args []string, stdout, stderr io.Writer) error {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	return replayWith(ctx, args, stdout, stderr, isTerminal(stderr))
}

// replayWith is replay with a context and the choice of showing progress.
func replayWith(ctx context.Context, args []string, stdout, stderr io.Writer, progress bool) error {
	fs := newFlags("replay", stderr)
	var chosen strategyFlags
	fs.Var(&chosen, "strategy", "strategy to replay against (repeatable); default "+strategies.Default().String())
	all := fs.Bool("all-strategies", false, "replay against error, wait:5ms, logical:1s, ring, the default chain, and every strategy the file has expectations for")
	format := fs.String("format", "table", "output: table or json")
	plot := fs.String("plot", "", "draw each replay: FILE.svg or FILE.html for one scenario file, or a directory for one SVG per scenario")
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "usage: ringflake replay [flags] FILE...\n\n"+
			"Replays clock-skew scenario files on a simulated clock and reports, per strategy, IDs issued,\n"+
			"duplicates, IDs out of order, errors by kind, longest stall, lead and lag against the wall clock,\n"+
			"and time borrowed; for a scenario with restarts, also how far behind the previous run's mark each\n"+
			"new run started and what that cost. Exits 1 when a strategy breaks its promise or an expectation\n"+
			"of a file is not met.\n\n")
		fs.PrintDefaults()
	}
	files, err := interleaved(fs, args)
	if err != nil {
		return err
	}
	switch {
	case len(files) == 0:
		return usagef("replay needs at least one scenario file")
	case *all && len(chosen) > 0:
		return usagef("-strategy and -all-strategies exclude each other")
	case *format != "table" && *format != "json":
		return usagef("-format %q: want table or json", *format)
	}
	plotDir := ""
	if *plot != "" {
		switch ext := strings.ToLower(filepath.Ext(*plot)); {
		case ext == ".svg" || ext == ".html":
			if len(files) > 1 {
				return usagef("-plot %s draws one scenario file; give a directory to draw several", *plot)
			}
		default:
			plotDir = *plot
			if err := os.MkdirAll(plotDir, 0o755); err != nil {
				return err
			}
		}
	}

	var outcomes []replayOutcome
	for _, f := range files {
		o := replayFile(ctx, f, chosen, *all, *plot != "", progress, stderr)
		if errors.Is(o.err, context.Canceled) {
			return o.err
		}
		if o.err == nil && *plot != "" {
			path := *plot
			if plotDir != "" {
				path = filepath.Join(plotDir, strings.TrimSuffix(filepath.Base(f), filepath.Ext(f))+".svg")
			}
			o.err = writePlotFile(path, o.s, o.reports)
		}
		outcomes = append(outcomes, o)
	}

	if *format == "json" {
		err = writeJSON(stdout, outcomes)
	} else {
		err = writeTable(stdout, outcomes)
	}
	if err != nil {
		return err
	}
	failed, broken, total := 0, 0, 0
	for _, o := range outcomes {
		if o.err != nil {
			fmt.Fprintf(stderr, "ringflake: %s\n", strings.TrimPrefix(o.err.Error(), "ringflake: "))
			broken++
		}
		for _, r := range o.reports {
			total++
			if !r.OK() {
				failed++
			}
		}
	}
	switch {
	case broken > 0 && failed > 0:
		return fmt.Errorf("%w: %d of %d files could not be replayed, %d of %d replays failed", errReplayFailed, broken, len(outcomes), failed, total)
	case broken > 0:
		return fmt.Errorf("%w: %d of %d files could not be replayed", errReplayFailed, broken, len(outcomes))
	case failed > 0:
		return fmt.Errorf("%w: %d of %d replays broke a promise or missed an expectation", errReplayFailed, failed, total)
	}
	return nil
}

// interleaved parses flags that may come before, between and after the
// positional arguments, which it returns.
func interleaved(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := parseFlags(fs, args); err != nil {
			return nil, err
		}
		args = fs.Args()
		if len(args) == 0 {
			return pos, nil
		}
		if args[0] == "--" {
			return append(pos, args[1:]...), nil
		}
		pos = append(pos, args[0])
		args = args[1:]
	}
}

// replayFile reads one scenario file and replays it against the chosen
// strategies: the given ones, or all of them, or the default.
func replayFile(ctx context.Context, file string, chosen []strategies.Strategy, all, trace, progress bool, stderr io.Writer) replayOutcome {
	o := replayOutcome{file: file}
	s, err := scenario.ReadFile(file)
	if err != nil {
		o.err = err
		return o
	}
	o.s = s
	list := chosen
	switch {
	case all:
		list = scenario.Builtin()
		for _, name := range s.ExpectedStrategies() {
			st, err := strategies.Parse(name)
			if err == nil && !containsStrategy(list, st) {
				list = append(list, st)
			}
		}
	case len(list) == 0:
		list = []strategies.Strategy{strategies.Default()}
	}
	for _, st := range list {
		var opts []scenario.Option
		if trace {
			opts = append(opts, scenario.WithTrace())
		}
		if progress {
			opts = append(opts, scenario.WithProgress(progressPrinter(stderr, s.Name, st.String())))
		}
		r, err := scenario.Replay(ctx, s, st, opts...)
		if progress {
			fmt.Fprint(stderr, "\r\033[K")
		}
		if err != nil {
			o.err = fmt.Errorf("%s [%s]: %w", file, st, err)
			return o
		}
		o.reports = append(o.reports, r)
	}
	return o
}

func containsStrategy(list []strategies.Strategy, s strategies.Strategy) bool {
	for _, x := range list {
		if x.String() == s.String() {
			return true
		}
	}
	return false
}

// isTerminal reports whether w is a terminal, where progress is shown.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

// progressPrinter returns a progress function that rewrites one line of w.
func progressPrinter(w io.Writer, name, strategy string) func(done, total time.Duration) {
	last := -1
	return func(done, total time.Duration) {
		pct := 100
		if total > 0 {
			pct = int(done * 100 / total)
		}
		if pct != last {
			last = pct
			fmt.Fprintf(w, "\rreplaying %s [%s] %3d%%", name, strategy, pct)
		}
	}
}

func writeTable(w io.Writer, outcomes []replayOutcome) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "SCENARIO\tSTRATEGY\tISSUED\tDUPLICATES\tOUT OF ORDER\tERRORS\tMAX STALL\tMAX LEAD\tMAX LAG\tBORROWED\tRESULT")
	for _, o := range outcomes {
		for _, r := range o.reports {
			result := "ok"
			if !r.OK() {
				result = "FAIL"
			}
			fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%d\t%s\t%s\t%s\t%s\t%s\t%s\n", r.Scenario, r.Strategy, r.Issued, r.Duplicates,
				r.OutOfOrder, r.Errors, short(r.MaxStall), short(r.MaxLead), short(r.MaxLag), short(r.Borrowed), result)
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if err := writeRestarts(w, outcomes); err != nil {
		return err
	}
	for _, o := range outcomes {
		for _, r := range o.reports {
			for _, p := range r.Problems() {
				if _, err := fmt.Fprintf(w, "FAIL %s [%s]: %s\n", r.Scenario, r.Strategy, p); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// writeRestarts writes, after an empty line, a table of what each restart
// did in each replay, when some scenario has restarts.
func writeRestarts(w io.Writer, outcomes []replayOutcome) error {
	var tw *tabwriter.Writer
	for _, o := range outcomes {
		for _, r := range o.reports {
			for _, re := range r.Restarts {
				if tw == nil {
					if _, err := fmt.Fprintln(w); err != nil {
						return err
					}
					tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
					fmt.Fprintln(tw, "SCENARIO\tSTRATEGY\tRESTART\tAT\tRESUMED\tBEHIND MARK\tABANDONED\tFAILED BEHIND\tMAX STALL BEHIND\tDUPLICATES")
				}
				kind := "crash"
				if re.Clean {
					kind = "clean"
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%d\t%d\t%s\t%d\n", r.Scenario, r.Strategy, kind, short(re.At), short(re.Resumed),
					short(re.Behind), re.Abandoned, re.Failed, short(re.MaxStall), re.Duplicates)
			}
		}
	}
	if tw == nil {
		return nil
	}
	return tw.Flush()
}

// short prints a duration for the table: 0 as "0", sub-millisecond
// precision dropped above a millisecond.
func short(d time.Duration) string {
	switch {
	case d == 0:
		return "0"
	case d >= time.Millisecond || d <= -time.Millisecond:
		return d.Round(10 * time.Microsecond).String()
	}
	return d.String()
}

func writeJSON(w io.Writer, outcomes []replayOutcome) error {
	reports := []*scenario.Report{}
	for _, o := range outcomes {
		reports = append(reports, o.reports...)
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(reports)
}
