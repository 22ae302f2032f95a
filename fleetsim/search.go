package fleetsim

import (
	"cmp"
	"context"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/ringflake/ringflake/lease"
	"github.com/ringflake/ringflake/scenario"
)

// drawStrategies are the strategies a drawn fleet runs: each leads the
// clock by no more than the lease's default MaxLead.
var drawStrategies = []string{"ring,wait:5ms,error", "wait:5ms,error", "error", "ring,logical:500ms", "logical:1s", "ring,error"}

// Draw returns the random fleet scenario of seed: 2 to 4 nodes on a
// server of a random kind, a strategy, where the nodes keep their marks
// (with the lease; one fleet in four in mark files on their hosts), load
// and messages, and 2 to 8 faults drawn from every kind, within what the
// lease promises to survive. A schedule skews clocks (steps, freezes,
// drifts), or loses data (a server's data loss, a failover that loses
// writes, a lost disk), or both. The quiet period after a data loss
// assumes that the holders' clocks agree within 2 × Margin (docs/fleet.md,
// "Skew and the quiet period"), and a host that lost its mark file starts
// without a mark, so a schedule that does both keeps its skews apart from
// its losses: until the last loss is over, clocks stay within Margin/2 of
// true time; the larger skews start once every lease the server forgot
// has run out, the quiet periods that followed have passed and the clocks,
// set back as they are about to be, are past every ID issued before. The
// same seed gives the same scenario.
func Draw(seed uint64) *Scenario {
	r := rand.New(rand.NewPCG(seed, 0x5eed))
	ttl := time.Duration(1+r.IntN(3)) * time.Second
	s := &Scenario{
		Name:     "drawn",
		Start:    time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC),
		Duration: time.Duration(12+r.IntN(9)) * time.Second,
		Seed:     seed,
		Fleet: Fleet{
			Nodes:    2 + r.IntN(3),
			Server:   Server{Kind: []string{Redis, Etcd, Postgres}[r.IntN(3)], TTL: ttl},
			Strategy: drawStrategies[r.IntN(len(drawStrategies))],
			Load:     rateOf(1, time.Duration(1+r.IntN(3))*time.Millisecond),
			Messages: Messages{Rate: rateOf(1, time.Duration(1+r.IntN(4))*time.Millisecond), MinDelay: 100 * time.Microsecond,
				MaxDelay: time.Duration(1+r.IntN(20)) * time.Millisecond},
		},
	}
	if r.IntN(4) == 0 {
		s.Fleet.Marks = MarksFile
	}
	n := 2 + r.IntN(7)
	mode := []int{0, 0, 1, 1, 2}[r.IntN(5)] // 0: skews clocks; 1: loses data; 2: both, apart
	for len(s.Events) < n {
		e := drawEvent(r, s, ttl)
		if mode == 0 && loses(s, e) || mode == 1 && skews(e) {
			continue
		}
		s.Events = append(s.Events, e)
	}
	// Clocks may be skewed from the start (mode 0), not at all (1), or
	// from late on (2).
	skewFrom := time.Duration(0)
	switch mode {
	case 1:
		skewFrom = s.Duration
	case 2:
		skewFrom = apart(r, s, ttl)
	}
	for _, e := range slices.Clone(s.Events) {
		if e.Kind == Pause && e.D > ttl+100*time.Millisecond && s.Fleet.Nodes > 1 {
			// While the paused holder's key expires, another process
			// restarts and takes the lowest free id: the paused one's.
			other := (e.Node + 1 + r.IntN(s.Fleet.Nodes-1)) % s.Fleet.Nodes
			s.Events = append(s.Events, Event{At: between(r, e.At+ttl, e.At+e.D).Round(time.Millisecond), Node: other, Kind: Crash})
		}
		if e.Kind == Pause && e.At < skewFrom && e.At+e.D <= s.Duration {
			// The paused host's clock stood still: where clocks must
			// agree, it is set right when the host resumes, as a
			// hypervisor or NTP may do.
			s.Events = append(s.Events, Event{At: e.At + e.D, Node: e.Node, Kind: Step, D: e.D})
		}
	}
	slices.SortStableFunc(s.Events, func(a, b Event) int { return int(a.At - b.At) })
	return s
}

// skews reports whether e sets a node's clock apart from true time.
func skews(e Event) bool { return !e.Server && (e.Kind == Step || e.Kind == Freeze || e.Kind == Drift) }

// loses reports whether e loses data: the server's, or a host's mark
// file.
func loses(s *Scenario, e Event) bool {
	return e.Kind == LoseData || e.Kind == Failover && s.Fleet.Server.Kind != Etcd || e.Kind == LoseDisk
}

// apart keeps the skews of a schedule that both loses data and skews
// clocks apart from its losses (see [Draw]): at least one of each; the
// losses, and the faults drawn to go with them, where they were drawn,
// with clocks set within Margin/2 of true time meanwhile; the skews, and
// the faults drawn to go with them, later, once the losses are over. It
// returns when the later part starts.
func apart(r *rand.Rand, s *Scenario, ttl time.Duration) time.Duration {
	var early, late []Event
	for _, e := range s.Events {
		switch {
		case loses(s, e):
			early = append(early, e)
		case skews(e):
			late = append(late, e)
		case r.IntN(2) == 0:
			early = append(early, e)
		default:
			late = append(late, e)
		}
	}
	window := func() time.Duration { return between(r, time.Second, s.Duration-6*time.Second).Round(time.Millisecond) }
	if !slices.ContainsFunc(early, func(e Event) bool { return loses(s, e) }) {
		early = append(early, Event{At: window(), Server: true, Kind: LoseData})
	}
	if !slices.ContainsFunc(late, skews) {
		late = append(late, Event{At: window(), Node: r.IntN(s.Fleet.Nodes), Kind: Step, D: -between(r, 10*time.Millisecond, 3*time.Second).Round(time.Millisecond)})
	}
	// Clocks within Margin/2 of true time while the losses happen.
	margin := ttl/100 + 2*time.Millisecond
	var lastLoss, over time.Duration
	for _, e := range early {
		if loses(s, e) {
			lastLoss = max(lastLoss, e.At)
		}
		over = max(over, e.At+e.D+e.Delay+s.Fleet.restartAfter())
	}
	for node := range s.Fleet.Nodes {
		if r.IntN(2) == 0 {
			d := between(r, time.Millisecond, margin/2).Round(time.Millisecond)
			if r.IntN(2) == 0 {
				d = -d
			}
			early = append(early, Event{At: between(r, time.Second, lastLoss).Round(time.Millisecond), Node: node, Kind: Step, D: d})
		}
	}
	// How far the skews set a clock back, at most.
	back := map[int]time.Duration{}
	var worst time.Duration
	for _, e := range late {
		switch {
		case e.Kind == Step && e.D < 0:
			back[e.Node] -= e.D
		case e.Kind == Freeze:
			back[e.Node] += e.D
		case e.Kind == Drift && e.Rate < 0:
			back[e.Node] += time.Duration(-e.Rate * float64(2*s.Duration))
		}
		worst = max(worst, back[e.Node])
	}
	// The late part starts once the early faults are over, a renewal and
	// a timeout have noticed the last loss, the quiet period that
	// follows has passed (etcd: whole seconds), and every clock, set back
	// by worst, is past the IDs of the leases forgotten (a TTL, and the
	// lead): then the server's marks and the hosts' mark files hold again.
	quiet := serverQuiet(s.Fleet.Server.Kind, ttl+margin+lease.DefaultMaxLead)
	base := over + 2*(ttl/3) + s.Fleet.restartAfter() + quiet + ttl + lease.DefaultMaxLead + worst + time.Second
	first := slices.MinFunc(late, func(a, b Event) int { return cmp.Compare(a.At, b.At) }).At
	for i := range late {
		late[i].At = base + late[i].At - first
		s.Duration = max(s.Duration, late[i].At+late[i].D+late[i].Delay+6*time.Second)
	}
	s.Events = append(early, late...)
	return base
}

func between(r *rand.Rand, lo, hi time.Duration) time.Duration {
	if hi <= lo {
		return lo
	}
	return lo + time.Duration(r.Int64N(int64(hi-lo)))
}

func drawEvent(r *rand.Rand, s *Scenario, ttl time.Duration) Event {
	nodes := s.Fleet.Nodes
	e := Event{At: between(r, time.Second, s.Duration-6*time.Second).Round(time.Millisecond), Node: r.IntN(nodes)}
	switch r.IntN(13) {
	case 0:
		e.Server, e.Kind = true, LoseData
	case 1:
		e.Server, e.Kind = true, Failover
	case 2:
		e.Server, e.Kind, e.D = true, Down, between(r, 100*time.Millisecond, 3*time.Second).Round(time.Millisecond)
	case 3:
		e.Server, e.Kind = true, Slow
		e.D = between(r, 100*time.Millisecond, 2*time.Second).Round(time.Millisecond)
		e.Delay = between(r, 100*time.Millisecond, ttl).Round(time.Millisecond)
	case 4:
		e.Server, e.Kind, e.D = true, DropReplies, between(r, 100*time.Millisecond, 2*time.Second).Round(time.Millisecond)
	case 5, 6:
		e.Kind, e.D = Step, between(r, 10*time.Millisecond, 3*time.Second).Round(time.Millisecond)
		if r.IntN(3) > 0 {
			e.D = -e.D
		}
	case 7:
		e.Kind, e.D = Freeze, between(r, 100*time.Millisecond, 2*time.Second).Round(time.Millisecond)
	case 8:
		e.Kind, e.D = Pause, between(r, 100*time.Millisecond, 2*ttl+time.Second).Round(time.Millisecond)
	case 9:
		e.Kind = Crash
		if s.Fleet.Marks == MarksFile && r.IntN(2) == 0 {
			e.Kind = LoseDisk
		}
	case 10:
		e.Kind = Restart
	case 11:
		e.Kind, e.D = Partition, between(r, 100*time.Millisecond, 2*ttl+time.Second).Round(time.Millisecond)
		e.Nodes = []int{e.Node}
		e.From = []string{"", "server", "nodes"}[r.IntN(3)]
	default:
		// Drift within the lease's Margin (TTL/100 + 2ms over a TTL).
		e.Kind, e.Rate = Drift, float64(r.IntN(9)-4)/1000
		if e.Rate == 0 {
			e.Rate = 0.001
		}
	}
	return e
}

// A Finding is a drawn scenario that broke a property, and its shrunk
// form: the smallest scenario found that still breaks it.
type Finding struct {
	Seed    uint64
	Drawn   *Scenario
	Report  *Report
	Shrunk  *Scenario
	SReport *Report
	Runs    int // runs the shrinking took
}

// Search draws and runs the scenarios of seeds [from, from+n) and returns
// the first that breaks a property, shrunk; nil when none does. It stops
// early when ctx ends (returning ctx's error).
func Search(ctx context.Context, from, n uint64, progress func(seed uint64, r *Report)) (*Finding, error) {
	return search(ctx, from, n, faults{}, progress)
}

func search(ctx context.Context, from, n uint64, f faults, progress func(uint64, *Report)) (*Finding, error) {
	for seed := from; seed < from+n; seed++ {
		sc := Draw(seed)
		r, err := run(ctx, sc, options{faults: f})
		if err != nil {
			return nil, err
		}
		if progress != nil {
			progress(seed, r)
		}
		if r.Count("violations") == 0 {
			continue
		}
		small, sr, runs := shrink(ctx, sc, r, f)
		return &Finding{Seed: seed, Drawn: sc, Report: r, Shrunk: small, SReport: sr, Runs: runs}, nil
	}
	return nil, ctx.Err()
}

// Shrink returns the smallest scenario found from sc that still breaks
// the property r's first violation broke, with its report: it drops
// events and nodes, and halves the duration, the events' lengths and
// steps, as long as the property still breaks.
func Shrink(ctx context.Context, sc *Scenario, r *Report) (*Scenario, *Report) {
	s, sr, _ := shrink(ctx, sc, r, faults{})
	return s, sr
}

func shrink(ctx context.Context, sc *Scenario, r *Report, f faults) (*Scenario, *Report, int) {
	if len(r.Violations) == 0 {
		return sc, r, 0
	}
	kind := r.Violations[0].Kind
	best, bestR := sc, r
	runs := 0
	fails := func(c *Scenario) (*Report, bool) {
		if c.Validate() != nil || ctx.Err() != nil {
			return nil, false
		}
		runs++
		cr, err := run(ctx, c, options{faults: f})
		if err != nil {
			return nil, false
		}
		return cr, cr.Count(kind) > 0
	}
	for runs < 400 {
		improved := false
		for _, c := range candidates(best) {
			if cr, ok := fails(c); ok {
				best, bestR, improved = c, cr, true
				break
			}
		}
		if !improved {
			break
		}
	}
	out := *best
	out.Name = "shrunk"
	out.Expect = []Expectation{{Field: kind, Op: "==", Value: 0}}
	return &out, bestR, runs
}

// candidates returns the smaller scenarios to try after s, the biggest
// cuts first.
func candidates(s *Scenario) []*Scenario {
	var out []*Scenario
	with := func(f func(c *Scenario)) {
		c := *s
		c.Events = slices.Clone(s.Events)
		f(&c)
		out = append(out, &c)
	}
	// Drop each event.
	for i := range s.Events {
		with(func(c *Scenario) { c.Events = slices.Delete(c.Events, i, i+1) })
	}
	// Drop the last node, with its events.
	if s.Fleet.Nodes > 1 {
		with(func(c *Scenario) {
			c.Fleet.Nodes--
			c.Events = slices.DeleteFunc(c.Events, func(e Event) bool {
				return !e.Server && e.Kind != Partition && e.Node >= c.Fleet.Nodes || e.Kind == Partition && slices.Max(e.Nodes) >= c.Fleet.Nodes
			})
		})
	}
	// Halve the duration, when the events fit.
	if half := (s.Duration / 2).Round(time.Millisecond); half >= time.Second {
		with(func(c *Scenario) {
			c.Duration = half
			c.Events = slices.DeleteFunc(c.Events, func(e Event) bool { return e.At > half })
		})
	}
	// Quiet the traffic.
	if s.Fleet.Messages.Rate.Count > 0 {
		with(func(c *Scenario) { c.Fleet.Messages.Rate.Count = 0 })
	}
	// Halve each event's length, step, delay.
	for i, e := range s.Events {
		if h := (e.D / 2).Round(time.Millisecond); h != 0 && h != e.D {
			with(func(c *Scenario) { c.Events[i].D = h })
		}
		if h := (e.Delay / 2).Round(time.Millisecond); h != 0 && h != e.Delay {
			with(func(c *Scenario) { c.Events[i].Delay = h })
		}
	}
	return out
}

func rateOf(count int64, per time.Duration) scenario.Rate {
	return scenario.Rate{Count: count, Per: per}
}
