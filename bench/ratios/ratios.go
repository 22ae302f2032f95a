// Package ratios reads the output of go test -bench and turns it into the
// ratio lines of BENCHMARKS.md: the median cost of a ringflake row over
// the median cost of a peer's row from the same run, checked against a
// target.
package ratios

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// Samples holds, per benchmark name (without the -GOMAXPROCS suffix) and
// unit, every value seen.
type Samples map[string]map[string][]float64

// procs matches the -GOMAXPROCS suffix go test adds to benchmark names.
var procs = regexp.MustCompile(`-\d+$`)

// Parse reads go test -bench output and returns its samples. Lines that
// are not benchmark results are skipped; a result line that cannot be
// read is an error.
func Parse(r io.Reader) (Samples, error) {
	s := Samples{}
	sc := bufio.NewScanner(r)
	for n := 1; sc.Scan(); n++ {
		f := strings.Fields(sc.Text())
		if len(f) < 4 || !strings.HasPrefix(f[0], "Benchmark") {
			continue
		}
		if _, err := strconv.ParseInt(f[1], 10, 64); err != nil {
			continue // not a result line, e.g. a log line that starts with the name
		}
		if len(f)%2 != 0 {
			return nil, fmt.Errorf("line %d: want value/unit pairs after the iterations: %q", n, sc.Text())
		}
		name := procs.ReplaceAllString(strings.TrimPrefix(f[0], "Benchmark"), "")
		if s[name] == nil {
			s[name] = map[string][]float64{}
		}
		for i := 2; i < len(f); i += 2 {
			v, err := strconv.ParseFloat(f[i], 64)
			if err != nil {
				return nil, fmt.Errorf("line %d: %q is not a number", n, f[i])
			}
			s[name][f[i+1]] = append(s[name][f[i+1]], v)
		}
	}
	return s, sc.Err()
}

// Median returns the median of name's values in unit, and how many there
// were; NaN and 0 when there are none.
func (s Samples) Median(name, unit string) (float64, int) {
	xs := s[name][unit]
	if len(xs) == 0 {
		return math.NaN(), 0
	}
	xs = slices.Clone(xs)
	slices.Sort(xs)
	n := len(xs)
	if n%2 == 1 {
		return xs[n/2], n
	}
	return (xs[n/2-1] + xs[n/2]) / 2, n
}

// A Target compares the median ns/op of a ringflake row with a peer's row.
type Target struct {
	What  string  // what the line is about
	Ours  string  // benchmark name of the ringflake row
	Peer  string  // benchmark name of the row compared with
	Max   float64 // the target: Ours/Peer must be at most Max
	Speed bool    // also show Peer/Ours as "N× faster"
}

// Line is one checked target.
type Line struct {
	Target
	Ratio float64 // Ours/Peer; NaN when a row is missing
	Met   bool
}

// Check computes t against s.
func (s Samples) Check(t Target) Line {
	ours, _ := s.Median(t.Ours, "ns/op")
	peer, _ := s.Median(t.Peer, "ns/op")
	r := ours / peer
	return Line{Target: t, Ratio: r, Met: !math.IsNaN(r) && r <= t.Max}
}

// String prints l as "what: ours/peer = 0.93 (target <= 1.1): met", with
// the speed-up for a Speed target: "= 0.57 (1.76x faster; target <= 0.556,
// i.e. >= 1.8x faster): MISSED".
func (l Line) String() string {
	if math.IsNaN(l.Ratio) {
		return fmt.Sprintf("%s: %s/%s = n/a (a row is missing): MISSED", l.What, short(l.Ours), short(l.Peer))
	}
	verdict := "MISSED"
	if l.Met {
		verdict = "met"
	}
	target := fmt.Sprintf("target <= %.3g", l.Max)
	if l.Speed {
		speed := fmt.Sprintf("%.2fx faster", 1/l.Ratio)
		if l.Ratio > 1 {
			speed = fmt.Sprintf("%.2fx slower", l.Ratio)
		}
		target = fmt.Sprintf("%s; %s, i.e. >= %.3gx faster", speed, target, 1/l.Max)
	}
	return fmt.Sprintf("%s: %s/%s = %.2f (%s): %s", l.What, short(l.Ours), short(l.Peer), l.Ratio, target, verdict)
}

// short drops the Seq/ or Par/ group of a benchmark name.
func short(name string) string {
	_, after, ok := strings.Cut(name, "/")
	if !ok {
		return name
	}
	return after
}

// Allocs returns the rows whose median allocs/op is above zero among the
// names with the given prefix, and how many rows it looked at.
func (s Samples) Allocs(prefix string) (allocating []string, rows int) {
	for name := range s {
		if !strings.Contains(name, prefix) {
			continue
		}
		m, n := s.Median(name, "allocs/op")
		if n == 0 {
			continue
		}
		rows++
		if m > 0 {
			allocating = append(allocating, name)
		}
	}
	slices.Sort(allocating)
	return allocating, rows
}

// Cores is the many-core table of BENCHMARKS.md: the median ns/op of each
// benchmark whose name starts with prefix (such as "Par/"), per
// GOMAXPROCS, read from go test -bench output of runs with -cpu 1,2,...
// A name without a -N suffix ran at GOMAXPROCS 1 (go test leaves it off).
type Cores struct {
	Names []string // in the order first seen
	Procs []int    // ascending
	ns    map[string]map[int][]float64
}

// ParseCores reads go test -bench output and keeps the ns/op of the
// benchmarks whose name starts with prefix, per GOMAXPROCS.
func ParseCores(r io.Reader, prefix string) (*Cores, error) {
	c := &Cores{ns: map[string]map[int][]float64{}}
	seen := map[int]bool{}
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 4 || !strings.HasPrefix(f[0], "Benchmark"+prefix) || f[3] != "ns/op" {
			continue
		}
		if _, err := strconv.ParseInt(f[1], 10, 64); err != nil {
			continue
		}
		v, err := strconv.ParseFloat(f[2], 64)
		if err != nil {
			return nil, fmt.Errorf("%q is not a number", f[2])
		}
		name, n := strings.TrimPrefix(f[0], "Benchmark"), 1
		if m := procs.FindString(name); m != "" {
			n, _ = strconv.Atoi(m[1:])
			name = strings.TrimSuffix(name, m)
		}
		if c.ns[name] == nil {
			c.ns[name] = map[int][]float64{}
			c.Names = append(c.Names, name)
		}
		c.ns[name][n] = append(c.ns[name][n], v)
		if !seen[n] {
			seen[n] = true
			c.Procs = append(c.Procs, n)
		}
	}
	slices.Sort(c.Procs)
	return c, sc.Err()
}

// Median returns the median ns/op of name at GOMAXPROCS procs, and how
// many samples there were.
func (c *Cores) Median(name string, procs int) (float64, int) {
	s := Samples{name: {"ns/op": c.ns[name][procs]}}
	return s.Median(name, "ns/op")
}

// Markdown writes the table: one row per benchmark, one column per
// GOMAXPROCS, median ns/op per ID (wall time over all goroutines).
func (c *Cores) Markdown(w io.Writer) {
	fmt.Fprint(w, "| subject |")
	for _, p := range c.Procs {
		fmt.Fprintf(w, " %d |", p)
	}
	fmt.Fprint(w, "\n|---|")
	for range c.Procs {
		fmt.Fprint(w, "---:|")
	}
	fmt.Fprintln(w)
	for _, name := range c.Names {
		fmt.Fprintf(w, "| %s |", short(name))
		for _, p := range c.Procs {
			if m, n := c.Median(name, p); n > 0 {
				fmt.Fprintf(w, " %.1f |", m)
			} else {
				fmt.Fprint(w, " – |")
			}
		}
		fmt.Fprintln(w)
	}
}
