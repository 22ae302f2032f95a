package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"time"

	"github.com/ringflake/ringflake/scenario"
)

// placeholderCalls is about the most calls the placeholder load of a
// recording makes: enough to show what each event does, few enough that
// the file replays in a second or two per strategy, and well within
// scenario.MaxCalls.
const placeholderCalls = 1_000_000

// placeholderRate returns the load record writes when -rate is not given:
// one call per millisecond, or one call every few whole milliseconds for
// recordings longer than placeholderCalls milliseconds.
func placeholderRate(d time.Duration) scenario.Rate {
	per := time.Millisecond
	if n := (d + placeholderCalls - 1) / placeholderCalls; n > per {
		per = (n + time.Millisecond - 1).Truncate(time.Millisecond)
	}
	return scenario.Rate{Count: 1, Per: per}
}

// hostClock is the clock record samples: the host's wall clock read
// together with its monotonic clock, and a way to let time pass.
type hostClock interface {
	// Read returns the wall clock, without a monotonic reading, and the
	// monotonic time elapsed since some fixed instant, read together.
	Read() (wall time.Time, mono time.Duration)
	// Sleep waits d, or returns ctx's error when ctx ends first.
	Sleep(ctx context.Context, d time.Duration) error
}

// systemClock is the host's clock: time.Now carries both readings.
type systemClock struct{ start time.Time }

func (c systemClock) Read() (time.Time, time.Duration) {
	now := time.Now()
	return now.Round(0), now.Sub(c.start) // Sub uses the monotonic readings
}

func (systemClock) Sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func record(args []string, stdout, stderr io.Writer) error {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	return recordWith(ctx, systemClock{start: time.Now()}, args, stdout, stderr, isTerminal(stderr))
}

// recordWith is record on clock c, showing progress or not.
func recordWith(ctx context.Context, c hostClock, args []string, stdout, stderr io.Writer, progress bool) error {
	fs := newFlags("record", stderr)
	duration := fs.Duration("duration", 0, "how long to record (required); interrupt to stop early and keep what was recorded")
	out := fs.String("out", "", "scenario file to write (required); - for standard output")
	every := fs.Duration("every", 10*time.Millisecond, "sampling interval")
	threshold := fs.Duration("threshold", scenario.DefaultThreshold, "smallest step reported")
	window := fs.Duration("window", scenario.DefaultWindow, "window over which drift is measured")
	rate := fs.String("rate", "", "steady load written into the scenario, in calls per time unit such as 500/s;\n"+
		"default: a placeholder of 1/ms, slowed down for recordings over 16m40s so that the file replays\n"+
		"with at most about 1,000,000 calls")
	name := fs.String("name", "", "the scenario's name; default: the file name without extension")
	clockSource := fs.String("clock-source", "kernel", clockSourceHelp+";\nread once a second, its readings go into the file's comment")
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "usage: ringflake record -duration D -out FILE [flags]\n\n"+
			"Samples this host's wall clock against its monotonic clock and writes the steps, freezes and\n"+
			"drifts it sees as a scenario file for ringflake replay. (On Linux, NTP slews move the\n"+
			"monotonic clock too, so only steps and freezes show.)\n\n")
		fs.PrintDefaults()
	}
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	switch {
	case fs.NArg() > 0:
		return usagef("record takes no arguments, got %q", fs.Args())
	case *duration <= 0:
		return badValuef("-duration: want a positive duration such as 10m")
	case *out == "":
		return badValuef("-out: want the scenario file to write, or -")
	case *every <= 0 || *every > *duration:
		return badValuef("-every %v: want a positive interval no longer than -duration", *every)
	case *threshold <= 0:
		return badValuef("-threshold %v: want a positive duration", *threshold)
	case *window < *every:
		return badValuef("-window %v: want at least the sampling interval", *window)
	}
	if err := checkWritable(*out); err != nil {
		return err
	}
	src, err := parseClockSource(*clockSource)
	if err != nil {
		return err
	}
	health := &healthLog{src: src}
	var load scenario.Rate
	if *rate != "" {
		var err error
		if load, err = scenario.ParseRate(*rate); err != nil {
			return badValuef("-rate %q: want calls per time unit such as 1/ms or 500/s", *rate)
		}
	}

	rec := scenario.Recorder{Threshold: *threshold, Window: *window}
	wall, mono := c.Read()
	if *rate != "" {
		// Refuse a load the replay would refuse now, not after an hour
		// of recording.
		trial := &scenario.Scenario{Start: wall.UTC(), Duration: *duration, Load: scenario.Load{Rate: load}}
		var e *scenario.Error
		if err := trial.Validate(); errors.As(err, &e) && e.Field == "load.rate" {
			return badValuef("-rate %s for -duration %v: %s; give a lower rate", load, *duration, e.Reason)
		}
	}
	rec.Observe(wall, mono)
	first, from := mono, wall
	health.observe(ctx, 0, true)
	interrupted := false
	for next := *every; next <= *duration; next += *every {
		target := first + next
		if target <= mono {
			continue // sampling fell behind: skip to the next instant ahead
		}
		if err := c.Sleep(ctx, target-mono); err != nil {
			interrupted = true
			break
		}
		wall, mono = c.Read()
		rec.Observe(wall, mono)
		health.observe(ctx, mono-first, false)
		if progress {
			fmt.Fprintf(stderr, "\rrecording: %v of %v, %d samples", (mono - first).Round(time.Second), *duration, rec.Samples())
		}
	}
	if progress {
		fmt.Fprint(stderr, "\r\033[K")
	}
	health.observe(context.WithoutCancel(ctx), mono-first, true)

	s := rec.Scenario()
	if s == nil {
		return fmt.Errorf("record: stopped before a second sample; nothing to write")
	}
	loadNote := "The load below was given with -rate; add expectations for the\nstrategy you run."
	if *rate == "" {
		load = placeholderRate(s.Duration)
		loadNote = fmt.Sprintf("The load below (%v) is a placeholder", load)
		if load.Per > time.Millisecond {
			loadNote += fmt.Sprintf(", slowed down from 1/ms so that\nthe replay makes at most about %d calls", placeholderCalls)
		}
		loadNote += ": set it to your service's,\nand add expectations for the strategy you run."
	}
	s.Load.Rate = load
	s.Name = *name
	if s.Name == "" && *out != "-" {
		base := filepath.Base(*out)
		s.Name = strings.TrimSuffix(base, filepath.Ext(base))
	}
	host, _ := os.Hostname()
	if host == "" {
		host = "this host"
	}
	s.Comment = fmt.Sprintf("Recorded by `ringflake record` on %s from %s for %v:\n"+
		"its wall clock sampled against its monotonic clock every %v. Steps of\n"+
		"%v or more, freezes, and drift changes of %g ppm or more are kept.\n%s",
		host, from.UTC().Format(time.RFC3339), s.Duration.Round(time.Millisecond), *every, *threshold, scenario.DefaultMinDrift*1e6, loadNote)
	if hc := health.comment(); hc != "" {
		s.Comment += "\n" + hc
	}

	// Write only what replay reads back, within its limits (the file's
	// size, the number of events).
	s.File = *out
	var buf bytes.Buffer
	if _, err := s.WriteTo(&buf); err != nil {
		return err
	}
	if _, err := scenario.Parse(s.File, buf.Bytes()); err != nil {
		return fmt.Errorf("record: what was recorded is not a scenario ringflake replay accepts, so nothing was written: %w", err)
	}
	if *out == "-" {
		_, err = stdout.Write(buf.Bytes())
	} else {
		err = os.WriteFile(*out, buf.Bytes(), 0o644)
	}
	if err != nil {
		return err
	}
	counts := map[scenario.Kind]int{}
	for _, ev := range s.Events {
		counts[ev.Kind]++
	}
	stopped := ""
	if interrupted {
		stopped = " (interrupted)"
	}
	fmt.Fprintf(stderr, "recorded %d samples over %v%s: %d steps, %d freezes, %d drift changes\n",
		rec.Samples(), s.Duration.Round(time.Millisecond), stopped, counts[scenario.Step], counts[scenario.Freeze], counts[scenario.Drift])
	return nil
}

// checkWritable checks, before anything is recorded, that record can
// write the file out: its directory exists and takes a new file, and out
// is not a directory. It creates a file beside out and removes it; out
// itself is written only at the end. "-" (standard output) passes.
func checkWritable(out string) error {
	if out == "-" {
		return nil
	}
	if fi, err := os.Stat(out); err == nil && fi.IsDir() {
		return badValuef("-out %s: a directory; want the scenario file to write", out)
	}
	probe, err := os.CreateTemp(filepath.Dir(out), ".ringflake-record-*")
	if err != nil {
		var pe *fs.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		return badValuef("-out %s: cannot write in %s: %v", out, filepath.Dir(out), err)
	}
	return errors.Join(probe.Close(), os.Remove(probe.Name()))
}
