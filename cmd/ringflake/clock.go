package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/ringflake/ringflake/chronyhealth"
	"github.com/ringflake/ringflake/clockhealth"
	"github.com/ringflake/ringflake/redislease/lualease"
	"github.com/ringflake/ringflake/redislease/resp"
	"github.com/ringflake/ringflake/strategies"
)

// clockReadTimeout bounds each source's read in `ringflake clock`.
const clockReadTimeout = 5 * time.Second

// clockReport is what `ringflake clock -format json` prints: one object
// with a member per source read.
type clockReport struct {
	Kernel     clockhealth.Reading  `json:"kernel"`
	Chrony     *clockhealth.Reading `json:"chrony,omitempty"`
	ClockBound *clockhealth.Reading `json:"clockbound,omitempty"`
	Against    *offsetReport        `json:"against,omitempty"`
}

// offsetReport is this host's offset to a lease server's clock, as
// `ringflake clock -against` prints it: the server's clock minus this
// host's (positive when this host is behind), within ± uncertainty.
type offsetReport struct {
	Server      string    `json:"server"`
	Offset      float64   `json:"offset_seconds"`
	Uncertainty float64   `json:"uncertainty_seconds"`
	RoundTrip   float64   `json:"round_trip_seconds"`
	Samples     int       `json:"samples"`
	At          time.Time `json:"at"`
}

func (r *offsetReport) String() string {
	d := func(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }
	return fmt.Sprintf("%s: offset %v ± %v (server minus this host; round trip %v, best of %d samples)",
		r.Server, d(r.Offset), d(r.Uncertainty), d(r.RoundTrip), r.Samples)
}

// measureAgainst measures this host's offset to the clock of the lease
// server spec names (redis:// or rediss://, as -node takes them).
func measureAgainst(ctx context.Context, spec string) (*offsetReport, error) {
	if strings.HasPrefix(spec, "etcd://") {
		return nil, badValuef("-against %q: etcd answers with no time of its own (its responses carry no timestamp); measure against Redis, or watch chrony (-chrony)", spec)
	}
	if !strings.HasPrefix(spec, "redis://") && !strings.HasPrefix(spec, "rediss://") {
		return nil, badValuef("-against %q: want redis://HOST[:PORT][/DB] or rediss://…", spec)
	}
	srv, err := parseServer("-against", spec, strategies.Default())
	if err != nil {
		return nil, err
	}
	client, err := resp.New(*srv.redis)
	if err != nil {
		return nil, fmt.Errorf("-against %s: %w", srv.where, err)
	}
	defer client.Close()
	off, err := lualease.MeasureOffset(ctx, client, nil, 0)
	if err != nil {
		return nil, fmt.Errorf("-against %s: %w", srv.where, err)
	}
	return &offsetReport{Server: "redis " + srv.where, Offset: off.Offset.Seconds(), Uncertainty: off.Uncertainty.Seconds(),
		RoundTrip: off.RoundTrip.Seconds(), Samples: off.Samples, At: off.At.UTC()}, nil
}

func clock(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("clock", stderr)
	chrony := fs.String("chrony", "", "also ask chronyd at this command address (HOST:PORT, e.g. 127.0.0.1:323)")
	clockbound := fs.String("clockbound", "", "also read ClockBound's shared-memory file at this path (e.g. "+clockhealth.DefaultClockBoundPath+")")
	against := fs.String("against", "", "also measure this host's offset to a Redis server's clock (redis://HOST[:PORT], as -node takes it):\n"+
		"an NTP-style sample of TIME, the offset within half the round trip")
	format := fs.String("format", "text", "text or json")
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "usage: ringflake clock [-chrony HOST:PORT] [-clockbound PATH] [-against redis://HOST:PORT] [-format text|json]\n\n"+
			"Prints the clock's health as the kernel sees it (adjtimex, read-only; \"unknown\" outside\n"+
			"Linux), as chronyd and ClockBound see it when asked, and this host's offset to a Redis\n"+
			"server's clock. Nothing is changed.\n\n")
		fs.PrintDefaults()
	}
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usagef("clock takes no arguments, got %q", fs.Args())
	}
	if *format != "text" && *format != "json" {
		return badValuef("-format %q: want text or json", *format)
	}
	var failed []error
	read := func(src clockhealth.Source) clockhealth.Reading {
		ctx, cancel := context.WithTimeout(context.Background(), clockReadTimeout)
		defer cancel()
		r, err := src.Read(ctx)
		// A kernel this system cannot read is "unknown", not a failure.
		if err != nil && !errors.Is(err, clockhealth.ErrUnsupported) {
			failed = append(failed, fmt.Errorf("%s: %s", r.Source, strings.TrimPrefix(err.Error(), "ringflake: ")))
		}
		return r
	}
	rep := clockReport{Kernel: read(clockhealth.Kernel{})}
	if *chrony != "" {
		r := read(chronyhealth.Source{Addr: *chrony})
		rep.Chrony = &r
	}
	if *clockbound != "" {
		r := read(clockhealth.ClockBound{Path: *clockbound})
		rep.ClockBound = &r
	}
	if *against != "" {
		ctx, cancel := context.WithTimeout(context.Background(), clockReadTimeout)
		r, err := measureAgainst(ctx, *against)
		cancel()
		var ue *usageError
		if errors.As(err, &ue) {
			return err
		}
		if err != nil {
			failed = append(failed, err)
		} else {
			rep.Against = r
		}
	}
	if *format == "json" {
		b, err := json.MarshalIndent(rep, "", "  ")
		if err != nil {
			return err
		}
		if _, err := fmt.Fprintf(stdout, "%s\n", b); err != nil {
			return err
		}
	} else {
		for _, r := range []*clockhealth.Reading{&rep.Kernel, rep.Chrony, rep.ClockBound} {
			if r != nil {
				if _, err := fmt.Fprintln(stdout, r); err != nil {
					return err
				}
			}
		}
		if rep.Against != nil {
			if _, err := fmt.Fprintln(stdout, rep.Against); err != nil {
				return err
			}
		}
	}
	if len(failed) > 0 {
		return fmt.Errorf("clock: %w", errors.Join(failed...))
	}
	return nil
}
