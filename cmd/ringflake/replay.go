package main

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
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
	file     string
	s        *scenario.Scenario
	reports  []*scenario.Report
	err      error  // the file could not be read or replayed
	strategy string // the strategy whose replay failed with err, or ""
	// unchecked are the strategies the file has expectations for that were
	// not replayed: those expectations were not checked.
	unchecked []string
}

// uncheckedMessage says which of the file's expectations were not
// checked, naming the file and the strategies.
func (o replayOutcome) uncheckedMessage() string {
	keys := make([]string, len(o.unchecked))
	for i, st := range o.unchecked {
		keys[i] = "expect[" + strconv.Quote(st) + "]"
	}
	return fmt.Sprintf("%s: %s not checked: %s not replayed (give each with -strategy, or use -all-strategies)",
		o.file, strings.Join(keys, ", "), plural(len(keys), "its strategy was", "their strategies were"))
}

func plural(n int, one, more string) string {
	if n == 1 {
		return one
	}
	return more
}

// message says what went wrong with the file, naming it: err's message
// without a "ringflake: " prefix, and the strategy whose replay failed.
func (o replayOutcome) message() string {
	msg := strings.TrimPrefix(o.err.Error(), "ringflake: ")
	var se *scenario.Error
	if !errors.As(o.err, &se) || se.File != o.file {
		msg = o.file + ": " + msg
	}
	if o.strategy != "" {
		msg += " (replaying against " + o.strategy + ")"
	}
	return msg
}

// name is what the tables call the file: its scenario's name, or the file
// name when it could not be read.
func (o replayOutcome) name() string {
	if o.s != nil {
		return o.s.Name
	}
	return strings.TrimSuffix(filepath.Base(o.file), filepath.Ext(o.file))
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
	format := fs.String("format", "table", "output: table, or json (an array: one object per replay, and one with an \"error\"\n"+
		"field for each file that could not be read or replayed)")
	strict := fs.Bool("strict", false, "exit 1 when a file has expectations for a strategy that is not replayed (without it: a warning\n"+
		"on stderr); for CI, so that the expectations a job means to gate on are checked")
	plot := fs.String("plot", "", "draw each replay: FILE.svg or FILE.html for one scenario file; or a directory, for one\n"+
		"SVG per scenario file named after it: a path without an extension (created if need be), or an\n"+
		"existing directory. Other extensions are an error")
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "usage: ringflake replay [flags] FILE...\n\n"+
			"Replays clock-skew scenario files on a simulated clock and reports, per strategy, IDs issued,\n"+
			"duplicates, IDs out of order, errors by kind, longest stall and the longest waits it is made of (the\n"+
			"strategy's, for a tick with room, for a restart's reservation), lead and lag against the wall clock,\n"+
			"and time borrowed; for a scenario with restarts, also how far behind the previous run's mark each\n"+
			"new run started (a rollback, and the reservation) and what that cost. Exits 1 when a strategy breaks\n"+
			"its promise or an expectation of a file is not met.\n\n"+
			"RESULT ok: the strategy kept its promises and met the file's expectations, which may include\n"+
			"failing calls (see ERRORS); FAIL: it did not; ERROR: the file could not be read or replayed.\n"+
			"Expectations for a strategy not replayed are not checked: a warning says so, and -strict makes it\n"+
			"an error. For a scenario with events, a second table attributes the calls, errors, stalls and\n"+
			"borrowed time to the event under way when each call started.\n\n")
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
		return badValuef("-strategy and -all-strategies exclude each other")
	case *format != "table" && *format != "json":
		return badValuef("-format %q: want table or json", *format)
	}
	files, fleetErr := replayFleets(ctx, files, *format == "json", *plot, stdout, stderr)
	if len(files) == 0 || errors.Is(fleetErr, context.Canceled) {
		return fleetErr
	}
	plots, err := plotPaths(*plot, files)
	if err != nil {
		return err
	}

	var outcomes []replayOutcome
	for i, f := range files {
		o := replayFile(ctx, f, chosen, *all, *plot != "", progress, stderr)
		if errors.Is(o.err, context.Canceled) {
			return o.err
		}
		if o.err == nil && plots != nil {
			o.err = writePlotFile(plots[i], o.s, o.reports)
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
	failed, broken, total, unchecked := 0, 0, 0, 0
	for _, o := range outcomes {
		if o.err != nil {
			fmt.Fprintf(stderr, "ringflake: %s\n", o.message())
			broken++
		}
		if len(o.unchecked) > 0 {
			unchecked++
			if *strict {
				fmt.Fprintf(stderr, "ringflake: %s\n", o.uncheckedMessage())
			} else {
				fmt.Fprintf(stderr, "ringflake: WARNING: %s; -strict makes this an error\n", o.uncheckedMessage())
			}
		}
		for _, r := range o.reports {
			total++
			if !r.OK() {
				failed++
			}
		}
	}
	if fleetErr != nil && broken+failed == 0 {
		return fleetErr
	}
	switch {
	case *strict && unchecked > 0 && broken+failed == 0:
		return fmt.Errorf("%w: %d of %d files have expectations for strategies that were not replayed (-strict)",
			errReplayFailed, unchecked, len(outcomes))
	case broken > 0 && failed > 0:
		return fmt.Errorf("%w: %d of %d files could not be replayed, %d of %d replays failed", errReplayFailed, broken, len(outcomes), failed, total)
	case broken > 0:
		return fmt.Errorf("%w: %d of %d files could not be replayed", errReplayFailed, broken, len(outcomes))
	case failed > 0:
		return fmt.Errorf("%w: %d of %d replays broke a promise or missed an expectation", errReplayFailed, failed, total)
	}
	return nil
}

// plotPaths returns, per scenario file, the path of its plot, from the
// -plot flag: nil without one. A path ending in .svg or .html is one
// plot, of one scenario file. A path without an extension, or an existing
// directory, is a directory (created if need be) holding one SVG per
// scenario file, named after it; files with the same name in different
// directories get -2, -3 and so on, in the order given. Any other
// extension is a usage error: a typo such as plot.png must not quietly
// become a directory.
func plotPaths(plot string, files []string) ([]string, error) {
	if plot == "" {
		return nil, nil
	}
	ext := strings.ToLower(filepath.Ext(plot))
	fi, statErr := os.Stat(plot)
	isDir := statErr == nil && fi.IsDir()
	switch {
	case !isDir && (ext == ".svg" || ext == ".html"):
		if len(files) > 1 {
			return nil, badValuef("-plot %s draws one scenario file; give a directory to draw several", plot)
		}
		return []string{plot}, nil
	case !isDir && ext != "":
		return nil, badValuef("-plot %s: want FILE.svg or FILE.html, or a directory (a path without an extension, or an existing directory)", plot)
	}
	if err := os.MkdirAll(plot, 0o755); err != nil {
		return nil, err
	}
	used := map[string]bool{} // lower case: some file systems ignore case
	paths := make([]string, len(files))
	for i, f := range files {
		base := strings.TrimSuffix(filepath.Base(f), filepath.Ext(f))
		name := base + ".svg"
		for n := 2; used[strings.ToLower(name)]; n++ {
			name = fmt.Sprintf("%s-%d.svg", base, n)
		}
		used[strings.ToLower(name)] = true
		paths[i] = filepath.Join(plot, name)
	}
	return paths, nil
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
	for _, name := range s.ExpectedStrategies() {
		if st, err := strategies.Parse(name); err == nil && !containsStrategy(list, st) {
			o.unchecked = append(o.unchecked, st.String())
		}
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
			o.err, o.strategy = err, st.String()
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

// writeTable writes a row per replay, and per file that could not be read
// or replayed (RESULT ERROR, the reason on stderr); then the restarts, and
// what failed. RESULT ok means the strategy kept its promises and met the
// file's expectations; FAIL, that it did not.
func writeTable(w io.Writer, outcomes []replayOutcome) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "SCENARIO\tSTRATEGY\tISSUED\tDUPLICATES\tOUT OF ORDER\tERRORS\tMAX STALL\tSTRATEGY WAIT\tQUEUE WAIT\tRESERVATION WAIT\t"+
		"MAX LEAD\tMAX LAG\tBORROWED\tRESULT")
	for _, o := range outcomes {
		for _, r := range o.reports {
			result := "ok"
			if !r.OK() {
				result = "FAIL"
			}
			fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", cell(r.Scenario), cell(r.Strategy), r.Issued, r.Duplicates,
				r.OutOfOrder, r.Errors, short(r.MaxStall), short(r.MaxStrategyWait), short(r.MaxQueue), short(r.MaxReservationWait),
				short(r.MaxLead), short(r.MaxLag), short(r.Borrowed), result)
		}
		if o.err != nil {
			fmt.Fprintf(tw, "%s\t%s\t-\t-\t-\t-\t-\t-\t-\t-\t-\t-\t-\tERROR\n", cell(o.name()), cell(cmp.Or(o.strategy, "-")))
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if err := writeRestarts(w, outcomes); err != nil {
		return err
	}
	if err := writeEvents(w, outcomes); err != nil {
		return err
	}
	for _, o := range outcomes {
		for _, r := range o.reports {
			for _, p := range r.Problems() {
				if _, err := fmt.Fprintf(w, "FAIL %s [%s]: %s\n", cell(r.Scenario), r.Strategy, p); err != nil {
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
					fmt.Fprintln(tw, "SCENARIO\tSTRATEGY\tRESTART\tAT\tRESUMED\tFAILED STARTS\tBEHIND MARK\tROLLBACK\tRESERVATION\t"+
						"ABANDONED\tFAILED BEHIND\tMAX STALL BEHIND\tRESERVATION WAIT\tDUPLICATES")
				}
				kind := "crash"
				if re.Clean {
					kind = "clean"
				}
				resumed := "never"
				if re.Resumed >= 0 {
					resumed = short(re.Resumed)
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%d\t%s\t%s\t%s\t%d\t%d\t%s\t%s\t%d\n", cell(r.Scenario), cell(r.Strategy), kind, short(re.At), resumed,
					re.FailedStarts, short(re.Behind), short(re.Rollback), short(re.Reservation), re.Abandoned, re.Failed, short(re.MaxStall),
					short(re.ReservationWait), re.Duplicates)
			}
		}
	}
	if tw == nil {
		return nil
	}
	return tw.Flush()
}

// writeEvents writes, after an empty line, a table that attributes the
// calls of each replay to the scripted event under way when they started
// (scenario.EventReport): a row per event that had an effect — errors,
// stalled calls, borrowed time — at most maxEventRows of them per replay,
// and one for the calls under no event. Events without an effect are
// counted in one row, so that a file of ten thousand events does not print
// ten thousand rows; -format json has every event. Replays none of whose
// events had an effect print no table.
func writeEvents(w io.Writer, outcomes []replayOutcome) error {
	var tw *tabwriter.Writer
	row := func(r *scenario.Report, event, until string, e scenario.EventReport) {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d\t%s\t%d\t%s\t%s\n", cell(r.Scenario), cell(r.Strategy), event, until,
			e.Calls, e.Errors, e.Stalled, short(e.MaxStall), short(e.Borrowed))
	}
	for _, o := range outcomes {
		for _, r := range o.reports {
			var shown []scenario.EventReport
			quiet, more := 0, 0
			for _, e := range r.Events {
				switch {
				case len(e.Errors) == 0 && e.Stalled == 0 && e.Borrowed == 0:
					quiet++
				case len(shown) == maxEventRows:
					more++
				default:
					shown = append(shown, e)
				}
			}
			if len(shown) == 0 {
				continue
			}
			if tw == nil {
				if _, err := fmt.Fprintln(w); err != nil {
					return err
				}
				tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
				fmt.Fprintln(tw, "SCENARIO\tSTRATEGY\tEVENT\tUNDER WAY UNTIL\tCALLS\tERRORS\tSTALLED\tMAX STALL\tBORROWED")
			}
			for _, e := range shown {
				until := short(e.Until)
				switch {
				case e.Until < 0:
					until = "the end"
				case e.Until == e.Event.At:
					until = "(an instant)"
				}
				row(r, e.Event.Label(), until, e)
			}
			if more > 0 {
				fmt.Fprintf(tw, "%s\t%s\t(%d more events with an effect: -format json lists them)\t\t\t\t\t\t\n", cell(r.Scenario), cell(r.Strategy), more)
			}
			if quiet > 0 {
				fmt.Fprintf(tw, "%s\t%s\t(%d events without errors, stalls or borrowing)\t\t\t\t\t\t\n", cell(r.Scenario), cell(r.Strategy), quiet)
			}
			row(r, "(no event)", "-", r.Steady)
		}
	}
	if tw == nil {
		return nil
	}
	return tw.Flush()
}

// maxEventRows bounds the rows of events a replay prints in the events
// table.
const maxEventRows = 20

// cell is a name as the tables print it: a scenario's name can be as long
// as its file, so a long one is cut to 48 characters, marked with "…";
// the JSON output has it whole.
func cell(name string) string {
	const most = 48
	if r := []rune(name); len(r) > most {
		return string(r[:most-1]) + "…"
	}
	return name
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

// replayError is how JSON output reports a file that could not be read or
// replayed, next to the reports: it has "ok": false, and an "error".
type replayError struct {
	Scenario string `json:"scenario"`
	File     string `json:"file"`
	Strategy string `json:"strategy,omitempty"`
	OK       bool   `json:"ok"`
	Error    string `json:"error"`
}

// writeJSON writes an array: per file, its reports, then, when it could
// not be read or replayed, a replayError.
func writeJSON(w io.Writer, outcomes []replayOutcome) error {
	out := []any{}
	for _, o := range outcomes {
		for _, r := range o.reports {
			out = append(out, r)
		}
		if o.err != nil {
			out = append(out, replayError{Scenario: o.name(), File: o.file, Strategy: o.strategy, Error: o.message()})
		}
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(out)
}
