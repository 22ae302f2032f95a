// Command saturate measures ringflake's strategies and bwmarrin/snowflake
// side by side at their capacity and under bursts:
//
//   - throughput: IDs per second over a fixed window with 1 and 8
//     goroutines, as a fraction of the layout's cap (4,096,000 IDs/s for
//     the 12-bit Twitter layout), and CPU time per ID from getrusage
//     (user + system, whole process);
//   - latency: every -period, a burst of -load × capacity × period IDs is
//     issued back to back (50 % of capacity on average, far above it
//     within the burst); each call is timed on the monotonic clock, and the
//     p50, p99, p99.9, p99.99 and max are reported. The "floor" row times a
//     call that only reads the monotonic clock (most of an ID's cost), so
//     that its bursts last about as long as an ID generator's: the
//     machine's noise floor (interrupts, other processes) at that length.
//
// Each measurement runs -rounds times, subjects interleaved, and the
// tables show medians over the rounds (of max too). Then one ratio line
// per target of BENCHMARKS.md. Usage:
//
//	go run ./cmd/saturate [-window 1s] [-rounds 3] [-bursts 200] [-period 10ms] [-load 0.5]
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"regexp"
	"strconv"
	"strings"
	"sync/atomic"
	"text/tabwriter"
	"time"

	"github.com/ringflake/ringflake/bench"
	"github.com/ringflake/ringflake/bench/saturate"
)

func main() { os.Exit(run(os.Args[1:], os.Stdout, os.Stderr)) }

// twitterCap is the capacity of every 12-bit, 1 ms layout here.
const twitterCap = 4_096_000

// Targets of BENCHMARKS.md that the harness checks.
const (
	targetOfCap      = 0.995
	targetCPURatio   = 1.00
	targetLogicalP99 = 20 * time.Microsecond
)

type subject struct {
	name    string
	capped  bool // a saturation target row: a 12-bit generator that waits at the cap
	latency bool // only in the latency table
	new     func() (saturate.Issuer, func(), error)
}

func subjects() []subject {
	var ss []subject
	for _, s := range bench.Strategies {
		cfg := s.Config
		if s.Name == "logical" {
			cfg = "logical:1s" // the real default lead: bursts at 50 % never use it up
		}
		ss = append(ss, subject{name: "ringflake-" + s.Name, capped: s.Name != "logical", new: func() (saturate.Issuer, func(), error) {
			g, err := bench.NewRingflake(cfg, "twitter")
			if err != nil {
				return nil, nil, err
			}
			// Close frees node 1 for the next measurement: one process
			// may hold one live generator per node id and layout.
			done := func() { _ = g.Close(context.Background()) }
			return func() error { _, err := g.Next(); return err }, done, nil
		}})
	}
	ss = append(ss, subject{name: "bwmarrin", new: func() (saturate.Issuer, func(), error) {
		n, err := bench.NewBwmarrin()
		if err != nil {
			return nil, nil, err
		}
		return func() error { n.Generate(); return nil }, func() {}, nil
	}})
	ss = append(ss, subject{name: "floor", latency: true, new: func() (saturate.Issuer, func(), error) {
		start := time.Now()
		var sink atomic.Int64
		return func() error { sink.Store(int64(time.Since(start))); return nil }, func() {}, nil
	}})
	return ss
}

// use makes a fresh issuer of s, hands it to f and frees it.
func (s subject) use(f func(saturate.Issuer)) error {
	issue, done, err := s.new()
	if err != nil {
		return fmt.Errorf("%s: %w", s.name, err)
	}
	defer done()
	f(issue)
	return nil
}

type config struct {
	window     time.Duration
	rounds     int
	bursts     int
	period     time.Duration
	load       float64
	goroutines []int
	burstG     int
	only       *regexp.Regexp
}

func run(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("saturate", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var c config
	var only, goroutines string
	fs.DurationVar(&c.window, "window", time.Second, "length of one throughput window")
	fs.IntVar(&c.rounds, "rounds", 3, "rounds of every measurement; tables show medians")
	fs.IntVar(&c.bursts, "bursts", 200, "bursts per latency round")
	fs.DurationVar(&c.period, "period", 10*time.Millisecond, "time between the starts of two bursts")
	fs.Float64Var(&c.load, "load", 0.5, "average load of the bursts as a fraction of capacity")
	fs.IntVar(&c.burstG, "burst-goroutines", 1, "goroutines sharing each burst")
	fs.StringVar(&only, "only", "", "regular expression: measure only the subjects it matches")
	fs.StringVar(&goroutines, "goroutines", "1,8", "comma-separated goroutine counts of the throughput table")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	var err error
	if c.only, err = regexp.Compile(only); err != nil {
		fmt.Fprintf(stderr, "saturate: -only: %v\n", err)
		return 2
	}
	if fs.NArg() > 0 || c.window <= 0 || c.rounds < 1 || c.bursts < 1 || c.period <= 0 || c.load <= 0 || c.burstG < 1 {
		fmt.Fprintln(stderr, "saturate: want positive -window, -rounds, -bursts, -period, -load, -burst-goroutines and no arguments")
		fs.Usage()
		return 2
	}
	for _, f := range strings.Split(goroutines, ",") {
		g, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || g < 1 {
			fmt.Fprintf(stderr, "saturate: -goroutines %q: want positive counts separated by commas\n", goroutines)
			return 2
		}
		c.goroutines = append(c.goroutines, g)
	}
	if err := measure(c, stdout); err != nil {
		fmt.Fprintf(stderr, "saturate: %v\n", err)
		return 1
	}
	return 0
}

type tpKey struct {
	name string
	g    int
}

func measure(c config, w io.Writer) error {
	var ss []subject
	for _, s := range subjects() {
		if c.only.MatchString(s.name) {
			ss = append(ss, s)
		}
	}
	tp := map[tpKey][]saturate.Throughput{}
	lat := map[string][]saturate.Latency{}
	// A subject whose calls fail is reported as such, not measured
	// further; the others go on.
	failed := map[tpKey]error{}
	latFailed := map[string]error{}
	b := saturate.Bursts{Period: c.period, Size: saturate.BurstSize(twitterCap, c.period, c.load), Count: c.bursts, Goroutines: c.burstG}
	for round := range c.rounds {
		fmt.Fprintf(os.Stderr, "saturate: round %d of %d\n", round+1, c.rounds)
		for _, g := range c.goroutines {
			for _, s := range ss {
				if s.latency {
					continue
				}
				k := tpKey{s.name, g}
				if failed[k] != nil {
					continue
				}
				var runErr error
				if err := s.use(func(issue saturate.Issuer) { _, runErr = saturate.RunThroughput(issue, g, c.window/10) }); err != nil {
					return err
				}
				if runErr != nil { // the warm-up failed
					failed[k] = runErr
					continue
				}
				var t saturate.Throughput
				if err := s.use(func(issue saturate.Issuer) { t, runErr = saturate.RunThroughput(issue, g, c.window) }); err != nil {
					return err
				}
				if runErr != nil {
					failed[k] = runErr
					continue
				}
				tp[k] = append(tp[k], t)
			}
		}
		for _, s := range ss {
			if latFailed[s.name] != nil {
				continue
			}
			var samples []time.Duration
			var runErr error
			if err := s.use(func(issue saturate.Issuer) { samples, runErr = saturate.RunBursts(issue, b) }); err != nil {
				return err
			}
			if runErr != nil {
				latFailed[s.name] = runErr
				continue
			}
			lat[s.name] = append(lat[s.name], saturate.Summarize(samples))
		}
	}

	fmt.Fprintf(w, "Throughput: %v windows, median of %d rounds; cap 4,096,000 IDs/s (12-bit sequence, 1 ms); CPU = user+sys of the process (getrusage)\n\n", c.window, c.rounds)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "subject\tgoroutines\tIDs/s\tof cap\tCPU/ID\t")
	med := map[tpKey]struct {
		ofCap float64
		cpu   time.Duration
	}{}
	for _, g := range c.goroutines {
		for _, s := range ss {
			if err := failed[tpKey{s.name, g}]; err != nil {
				fmt.Fprintf(tw, "%s\t%d\tfailed: %v\t\t\t\n", s.name, g, err)
				continue
			}
			ts, ok := tp[tpKey{s.name, g}]
			if !ok {
				continue
			}
			rates, ofCap := make([]float64, len(ts)), make([]float64, len(ts))
			cpus := make([]time.Duration, len(ts))
			for i, t := range ts {
				rates[i], ofCap[i], cpus[i] = t.PerSecond(), t.OfCap(twitterCap), t.CPUPerID()
			}
			m := med[tpKey{s.name, g}]
			m.ofCap, m.cpu = saturate.Median(ofCap), saturate.MedianDuration(cpus)
			med[tpKey{s.name, g}] = m
			note := ""
			if !s.capped && strings.HasPrefix(s.name, "ringflake") {
				note = " (borrows)"
			}
			fmt.Fprintf(tw, "%s%s\t%d\t%.0f\t%.2f %%\t%s\t\n", s.name, note, g, saturate.Median(rates), 100*m.ofCap, saturate.FormatDuration(m.cpu))
		}
	}
	tw.Flush()

	fmt.Fprintf(w, "\nLatency of single calls: every %v a burst of %d IDs (%.0f %% of capacity) from %d goroutine(s), %d bursts; median of %d rounds\n\n",
		c.period, b.Size, 100*c.load, c.burstG, c.bursts, c.rounds)
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "subject\tcalls\tp50\tp99\tp99.9\tp99.99\tmax\t")
	latMed := map[string]saturate.Latency{}
	for _, s := range ss {
		if err := latFailed[s.name]; err != nil {
			fmt.Fprintf(tw, "%s\tfailed: %v\t\t\t\t\t\t\n", s.name, err)
			continue
		}
		l := saturate.MedianLatency(lat[s.name])
		latMed[s.name] = l
		fmt.Fprintf(tw, "%s\t%d\t", s.name, l.Calls)
		for _, p := range l.P {
			fmt.Fprintf(tw, "%s\t", saturate.FormatDuration(p))
		}
		fmt.Fprintf(tw, "%s\t\n", saturate.FormatDuration(l.Max))
	}
	tw.Flush()

	fmt.Fprintln(w)
	for _, g := range c.goroutines {
		worst, who := 2.0, ""
		for _, s := range ss {
			if err := failed[tpKey{s.name, g}]; err != nil && s.capped {
				fmt.Fprintf(w, "saturated, %d goroutine(s): %s failed (%v): MISSED\n", g, s.name, err)
			}
			if m, ok := med[tpKey{s.name, g}]; ok && s.capped && m.ofCap < worst {
				worst, who = m.ofCap, s.name
			}
		}
		if who != "" {
			fmt.Fprintf(w, "saturated, %d goroutine(s): ringflake/cap = %.3f (lowest: %s; target >= %.3f): %s\n", g, worst, who, targetOfCap, verdict(worst >= targetOfCap))
		}
	}
	for _, g := range c.goroutines {
		bw, ok := med[tpKey{"bwmarrin", g}]
		if g < 8 || !ok || bw.cpu <= 0 {
			continue // the target is for 8 goroutines and more
		}
		worst, who := 0.0, ""
		for _, s := range ss {
			if m, ok := med[tpKey{s.name, g}]; ok && s.capped && float64(m.cpu)/float64(bw.cpu) > worst {
				worst, who = float64(m.cpu)/float64(bw.cpu), s.name
			}
		}
		if who != "" {
			fmt.Fprintf(w, "CPU per ID, %d goroutines: ringflake/bwmarrin = %.2f (highest: %s; target <= %.2f): %s\n", g, worst, who, targetCPURatio, verdict(worst <= targetCPURatio))
		}
	}
	if bw, ok := latMed["bwmarrin"]; ok && bw.P[len(bw.P)-1] > 0 {
		worst, who := 0.0, ""
		for _, s := range ss {
			if l, ok := latMed[s.name]; ok && s.capped {
				if r := float64(l.P[len(l.P)-1]) / float64(bw.P[len(bw.P)-1]); r > worst {
					worst, who = r, s.name
				}
			}
		}
		if who != "" {
			fmt.Fprintf(w, "bursts p99.99: ringflake/bwmarrin = %.2f (highest: %s; target <= 1.00): %s\n", worst, who, verdict(worst <= 1))
		}
	}
	if err := latFailed["ringflake-logical"]; err != nil {
		fmt.Fprintf(w, "bursts, logical p99.99: ringflake-logical failed (%v): MISSED\n", err)
	}
	if l, ok := latMed["ringflake-logical"]; ok {
		p := l.P[len(l.P)-1]
		fmt.Fprintf(w, "bursts, logical p99.99: ringflake/20µs = %.2f (%s; noise floor p99.99 %s; target <= 1.00): %s\n",
			float64(p)/float64(targetLogicalP99), saturate.FormatDuration(p), saturate.FormatDuration(latMed["floor"].P[len(l.P)-1]), verdict(p <= targetLogicalP99))
	}
	return nil
}

func verdict(met bool) string {
	if met {
		return "met"
	}
	return "MISSED"
}
