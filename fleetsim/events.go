package fleetsim

import (
	"cmp"
	"slices"
	"time"
)

// schedule puts the scenario's events and the message traffic on the
// world's queue.
func (s *Sim) schedule() {
	evs := slices.Clone(s.sc.Events)
	slices.SortStableFunc(evs, func(a, b Event) int { return cmp.Compare(a.At, b.At) })
	for _, e := range evs {
		s.w.at(e.At, func() { s.apply(e) })
	}
	s.messages()
}

// apply carries out one event.
func (s *Sim) apply(e Event) {
	s.check.fault(e, s.w.now)
	who := "server"
	if !e.Server && e.Kind != Partition {
		who = s.nodes[e.Node].name()
	}
	s.trace(who, "event %s", e)
	now := s.w.now
	if e.Server {
		switch e.Kind {
		case LoseData:
			s.srv.loseData()
			return
		case Failover:
			s.srv.failover()
			return
		case ServerRestart:
			s.srv.m.restart()
			return
		case Down:
			s.downUntil = max(s.downUntil, now+e.D)
			return
		case Slow:
			s.slowUntil, s.slowDelay = max(s.slowUntil, now+e.D), e.Delay
			return
		case DropReplies:
			s.dropUntil = max(s.dropUntil, now+e.D)
			return
		}
		s.clockEvent(s.srv.clk, e)
		return
	}
	if e.Kind == Partition {
		for _, i := range e.Nodes {
			n := s.nodes[i]
			if e.From != "nodes" {
				n.cutServer = max(n.cutServer, now+e.D)
			}
			if e.From != "server" {
				n.cutNodes = max(n.cutNodes, now+e.D)
			}
		}
		return
	}
	n := s.nodes[e.Node]
	switch e.Kind {
	case Crash:
		n.crash(true)
	case LoseDisk:
		n.loseDisk()
	case Restart:
		n.restartClean()
	case Pause:
		// The host stops: its clock stands still and nothing of it runs
		// until the pause ends (wake-ups of its procs are put off).
		n.clk.sync()
		n.clk.c.Freeze(e.D)
		n.pausedUntil = max(n.pausedUntil, now+e.D)
	default:
		s.clockEvent(n.clk, e)
	}
}

func (s *Sim) clockEvent(h *hostClock, e Event) {
	h.sync()
	switch e.Kind {
	case Step:
		h.c.Step(e.D)
	case Freeze:
		h.c.Freeze(e.D)
	case Drift:
		_ = h.c.SetDrift(e.Rate) // Validate checked the rate
	case Jitter:
		_ = h.c.SetJitter(e.D, e.Seed)
	}
}

// faultsEnd returns when the last fault is over, in true time: the
// liveness check starts counting from it. A clock that was set back (a
// step back, a freeze, a paused host's clock that stood still) takes as
// long again to come back to the IDs its generator issued: those lags add
// up, per node, after the node's last fault.
func faultsEnd(sc *Scenario) time.Duration {
	var end time.Duration
	lag := map[int]time.Duration{}
	last := map[int]time.Duration{}
	for _, e := range sc.Events {
		t := e.At
		switch e.Kind {
		case Freeze, Pause, Down, Slow, DropReplies, Partition:
			t += e.D + e.Delay
		case Crash, Restart, LoseDisk:
			t += sc.Fleet.restartAfter()
		case Drift, Jitter:
			if e.Rate != 0 || e.D != 0 {
				t = sc.Duration // it lasts
			}
		}
		end = max(end, t)
		if e.Server || e.Kind == Partition {
			continue
		}
		last[e.Node] = max(last[e.Node], t)
		switch {
		case e.Kind == Freeze || e.Kind == Pause:
			lag[e.Node] += e.D
		case e.Kind == Step && e.D < 0:
			lag[e.Node] -= e.D
		}
	}
	for n, l := range lag {
		end = max(end, last[n]+l)
	}
	return end
}
