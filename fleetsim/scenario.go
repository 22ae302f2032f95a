package fleetsim

import (
	"fmt"
	"strconv"
	"time"

	"github.com/ringflake/ringflake"
	"github.com/ringflake/ringflake/scenario"
)

// Limits on what one fleet scenario may ask for.
const (
	MaxNodes    = 64
	MaxEvents   = 10_000
	MaxDuration = 24 * time.Hour
	// MaxCallsPerNode bounds the load: duration × rate per node.
	MaxCallsPerNode = 5_000_000
)

// ErrInvalid is matched by every error about a scenario that cannot be
// run; it is scenario.ErrInvalid.
var ErrInvalid = scenario.ErrInvalid

// An Error is a problem with a fleet scenario: the file, the field and
// what is wrong. It matches [ErrInvalid] and, when set, Err.
type Error struct {
	File   string
	Line   int
	Field  string
	Reason string
	Err    error
}

func (e *Error) Error() string {
	s := "fleetsim: "
	if e.File != "" {
		s += e.File
		if e.Line > 0 {
			s += ":" + strconv.Itoa(e.Line)
		}
		s += ": "
	}
	if e.Field != "" {
		s += e.Field + ": "
	}
	return s + e.Reason
}

// Is reports whether target is ErrInvalid.
func (e *Error) Is(target error) bool { return target == ErrInvalid }

// Unwrap returns the underlying error, if any.
func (e *Error) Unwrap() error { return e.Err }

// A Scenario is a fleet to simulate: nodes that lease their ids from one
// server and call their generators, the messages between them, and the
// faults that strike them, in true time from Start. Read one with
// [ReadFile] or [Parse]; [Run] replays it.
type Scenario struct {
	Name, File, Comment string
	// Start is what every clock reads at the start.
	Start time.Time
	// Duration is how long the fleet runs, in true time.
	Duration time.Duration
	// Seed draws the messages' targets and delays.
	Seed uint64
	// Layout is the ID layout; the zero Layout is the Twitter layout.
	Layout ringflake.Layout
	Fleet  Fleet
	Events []Event
	Expect []Expectation
}

// Fleet is the fleet: its nodes, its lease server, its strategy, its load.
type Fleet struct {
	Nodes    int    // hosts, each running one service process
	IDs      int    // node ids the server hands out; 0: Nodes + 2
	Server   Server // the lease server
	Strategy string // every node's strategy, as strategies.Parse reads it
	// Load is how often each node calls its generator, one call at a
	// time: a call due while one is under way starts when it returns.
	Load scenario.Rate
	// Messages is the traffic between nodes.
	Messages Messages
	// RestartAfter is how long a crashed or restarted process stays
	// down; 0 means 100ms.
	RestartAfter time.Duration
	// Marks is where the nodes keep their generators' high-water marks:
	// MarksLease ("" too), with the lease on the server, so that the
	// next holder of an id starts after them; or MarksFile, in a mark
	// file on each node's host (hostlocal.MarkFile), each node claiming
	// its own number as its node id.
	Marks string
}

// Where nodes keep their marks ([Fleet.Marks]).
const (
	MarksLease = "lease"
	MarksFile  = "file"
)

// Server is the lease server and the lease options of every node.
type Server struct {
	// Kind is redis, etcd or postgres.
	Kind string
	// TTL, RenewEvery, Margin, Timeout and MaxLead are the lease's
	// options (lease.Options); zero values take lease's defaults.
	TTL, RenewEvery, Margin, Timeout, MaxLead time.Duration
	// RTT is a request's round trip; 0 means 1ms.
	RTT time.Duration
	// Lag is how far behind a failover's replica is: the writes of the
	// last Lag are lost (not on etcd); 0 means 200ms.
	Lag time.Duration
}

func (s Server) rtt() time.Duration {
	if s.RTT <= 0 {
		return time.Millisecond
	}
	return s.RTT
}

func (s Server) lag() time.Duration {
	if s.Lag <= 0 {
		return 200 * time.Millisecond
	}
	return s.Lag
}

func (s Server) renewEvery(ttl time.Duration) time.Duration {
	if s.RenewEvery > 0 {
		return s.RenewEvery
	}
	return max(ttl, time.Millisecond) / 3
}

// Messages is the traffic between nodes: every node sends Rate messages,
// each to another node drawn at random, carrying the newest ID it issued
// or observed; the receiver observes it (Generator.Observe), as
// causal.Middleware does. Each takes a delay drawn from [MinDelay,
// MaxDelay), so messages overtake each other.
type Messages struct {
	Rate               scenario.Rate
	MinDelay, MaxDelay time.Duration
}

func (f Fleet) ids() int {
	if f.IDs > 0 {
		return f.IDs
	}
	return f.Nodes + 2
}

func (f Fleet) restartAfter() time.Duration {
	if f.RestartAfter > 0 {
		return f.RestartAfter
	}
	return 100 * time.Millisecond
}

// Kind is what an [Event] does.
type Kind string

// The kinds of events. On a node (or the server's clock: Step, Freeze,
// Drift, Jitter): Step, Freeze, Drift, Jitter, Pause, Crash, Restart,
// LoseDisk. On
// the server: LoseData, Failover, Down, Slow, DropReplies. Partition cuts
// nodes off.
const (
	Step     Kind = "step"      // the clock moves by D
	Freeze   Kind = "freeze"    // the clock stands still for D
	Drift    Kind = "drift"     // the clock runs at 1+Rate times true time
	Jitter   Kind = "jitter"    // readings get noise within ±D
	Pause    Kind = "pause"     // the host stops for D (a VM pause): clock and process
	Crash    Kind = "crash"     // the process dies and restarts after restart_after
	Restart  Kind = "restart"   // the process closes cleanly and restarts
	LoseDisk Kind = "lose-disk" // the host crashes and comes back with an empty disk: no mark file
	LoseData Kind = "lose-data" // the server restarts empty
	// ServerRestart restarts the server process with its data (it
	// persists): a new process, which Redis and PostgreSQL leases notice.
	ServerRestart Kind = "restart"
	Failover      Kind = "failover"     // a lagging replica takes over
	Down          Kind = "down"         // the server refuses requests for D
	Slow          Kind = "slow"         // requests sent during D arrive Delay late
	DropReplies   Kind = "drop-replies" // replies of requests applied during D are lost
	Partition     Kind = "partition"    // Nodes are cut off for D (from the server, the other nodes, or both)
)

// Event is one timed event, at true time At after the start.
type Event struct {
	At     time.Duration
	Kind   Kind
	Server bool  // a server event, or an event of the server's clock
	Node   int   // the node of a node event
	Nodes  []int // a partition's nodes
	// D is a step's amount, a freeze's, pause's, jitter's bound, and
	// the length of down, slow, drop-replies and partition.
	D     time.Duration
	Delay time.Duration // slow: how late requests arrive
	Rate  float64       // drift
	Seed  uint64        // jitter
	// From is what a partition cuts its nodes from: "server", "nodes",
	// or "" for both.
	From string
}

// An Expectation is a bound on a report's count: Field Op Value, such as
// duplicates == 0.
type Expectation struct {
	Field string
	Op    string // "==", "<=", ">=", "<", ">"
	Value int64
}

func (x Expectation) String() string {
	if x.Op == "==" {
		return fmt.Sprintf("%s: %d", x.Field, x.Value)
	}
	return fmt.Sprintf("%s: %q", x.Field, x.Op+strconv.FormatInt(x.Value, 10))
}

func (s *Scenario) layout() ringflake.Layout {
	if s.Layout.IsZero() {
		return ringflake.TwitterLayout()
	}
	return s.Layout
}

// Validate reports the first problem that keeps s from running: an
// [*Error] matching [ErrInvalid].
func (s *Scenario) Validate() error {
	bad := func(field, format string, args ...any) error {
		return &Error{File: s.File, Field: field, Reason: fmt.Sprintf(format, args...)}
	}
	f := s.Fleet
	switch {
	case s.Start.IsZero():
		return bad("start", "missing")
	case s.Duration <= 0 || s.Duration > MaxDuration:
		return bad("duration", "%v: want more than 0 and at most %v", s.Duration, MaxDuration)
	case f.Nodes < 1 || f.Nodes > MaxNodes:
		return bad("fleet.nodes", "%d: want 1 to %d", f.Nodes, MaxNodes)
	case f.IDs < 0 || f.IDs > 0 && f.IDs < f.Nodes:
		return bad("fleet.ids", "%d: want at least fleet.nodes (%d)", f.IDs, f.Nodes)
	case f.Server.Kind != Redis && f.Server.Kind != Etcd && f.Server.Kind != Postgres:
		return bad("fleet.server.kind", "%q: want redis, etcd or postgres", f.Server.Kind)
	case f.Server.TTL < 0 || f.Server.RTT < 0 || f.Server.Lag < 0 || f.RestartAfter < 0:
		return bad("fleet.server", "negative duration")
	case f.Strategy == "":
		return bad("fleet.strategy", "missing")
	case f.Marks != "" && f.Marks != MarksLease && f.Marks != MarksFile:
		return bad("fleet.marks", "%q: want lease or file", f.Marks)
	case f.Messages.MinDelay < 0 || f.Messages.MaxDelay < f.Messages.MinDelay:
		return bad("fleet.messages", "want 0 <= min_delay <= max_delay")
	case len(s.Events) > MaxEvents:
		return bad("events", "%d events: at most %d", len(s.Events), MaxEvents)
	}
	if ids := f.ids(); int64(ids) > s.layout().MaxNode()+1 {
		return bad("fleet.ids", "%d node ids: the layout has %d", ids, s.layout().MaxNode()+1)
	}
	if r := f.Load; r.Count > 0 && float64(s.Duration)/float64(r.Per)*float64(r.Count) > MaxCallsPerNode {
		return bad("fleet.load", "%v for %v is more than %d calls per node", r, s.Duration, MaxCallsPerNode)
	}
	if r := f.Messages.Rate; r.Count > 0 && float64(s.Duration)/float64(r.Per)*float64(r.Count) > MaxCallsPerNode {
		return bad("fleet.messages", "%v for %v is more than %d messages per node", r, s.Duration, MaxCallsPerNode)
	}
	for i, e := range s.Events {
		field := fmt.Sprintf("events[%d]", i)
		if e.At < 0 || e.At > s.Duration {
			return bad(field, "at %v: want within the duration %v", e.At, s.Duration)
		}
		if !e.Server && e.Kind != Partition && (e.Node < 0 || e.Node >= f.Nodes) {
			return bad(field, "node %d: the fleet has nodes 0 to %d", e.Node, f.Nodes-1)
		}
		for _, n := range e.Nodes {
			if n < 0 || n >= f.Nodes {
				return bad(field, "partition node %d: the fleet has nodes 0 to %d", n, f.Nodes-1)
			}
		}
		switch e.Kind {
		case Step:
			if e.D == 0 {
				return bad(field, "step 0")
			}
		case Freeze, Pause, Down, Slow, DropReplies, Partition:
			if e.D <= 0 {
				return bad(field, "%s: want a length (for) above 0", e.Kind)
			}
			if e.Kind == Slow && e.Delay <= 0 {
				return bad(field, "slow: want a delay above 0")
			}
			if e.Kind == Partition && (len(e.Nodes) == 0 || e.From != "" && e.From != "server" && e.From != "nodes") {
				return bad(field, "partition: want nodes, and from: server, nodes or nothing")
			}
		case Drift:
			if e.Rate <= -1 || e.Rate > 1 {
				return bad(field, "drift %v: want above -1 and at most 1", e.Rate)
			}
		case Jitter:
			if e.D < 0 {
				return bad(field, "jitter %v: want at least 0", e.D)
			}
		case Crash, Restart, LoseDisk, LoseData, Failover:
		default:
			return bad(field, "unknown event %q", e.Kind)
		}
	}
	return nil
}
