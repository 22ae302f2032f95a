// Package scenario replays clock-skew scenarios against ringflake's
// rollback strategies, so that a team can prove in CI that the strategy it
// chose survives the clock its hosts really have.
//
// A scenario file tells a story on a simulated clock: where the wall clock
// starts, the load on the generator, and timed events that step, freeze,
// drift or jitter the wall clock, restart the process, pause the whole
// host, or hand the service an ID to observe (Generator.Observe). A file
// with a fleet: block is a whole fleet instead, which package fleetsim
// simulates. [Replay] runs it
// against one strategy on
// package simclock, checks every call against the strategy's promises and
// returns a [Report]: IDs issued, duplicates, IDs out of order, errors by
// kind, the longest stall and the waits it is made of (the strategy's, for
// a tick with room, for a restart's reservation), the largest lead ahead
// of and lag behind the wall clock, and the time borrowed from the future,
// and all of these per scripted event: which event was under way when
// each call failed or stalled (see [EventReport]). A file can state what
// it expects of each strategy; the report lists what was not met. [Run] is
// the same for Go tests, and the command `ringflake replay` for CI.
//
// # The file format
//
// A scenario is a YAML file holding one YAML document. The comment at its
// top says what real event it models; it shows in reports and plots. This
// one uses every field (its expectations hold: a test replays it):
//
//	# A tour of the format: a busy service whose clock runs 0.5 % slow and
//	# jitters by ±2 ms; NTP steps it back 3 ms during a burst, it freezes for
//	# 20 ms, the process crashes at 80 ms, and the VM pauses at 90 ms.
//	name: tour                      # optional; the file name without extension
//	start: 2026-11-22T12:00:00Z     # the wall clock at the start, RFC 3339
//	layout: twitter                 # optional: a ringflake.ParseLayout string
//	node: 7                         # optional, default 0
//	duration: 100ms                 # true time the replay runs
//	mark_ahead: 50ms                # optional: the generator's mark interval, see Restarts
//	load:
//	  rate: 10/ms                   # steady calls per time unit: 10/ms, 2500/s, 3/10ms
//	  goroutines: 4                 # simulated callers, default 1
//	  bursts:                       # extra calls
//	    - {at: 20ms, count: 12288}              # all due at 20ms
//	    - {at: 50ms, count: 500, over: 10ms}    # spread over 50ms..60ms
//	events:                         # at: true time since the start
//	  - {at: 50ms, step: -3ms}                  # step the wall clock (± duration)
//	  - {at: 60ms, freeze: 20ms}                # stop it for 20ms of true time
//	  - {at: 0s, drift: -0.5%}                  # run 0.5% slow (or -5000ppm, -0.005)
//	  - {at: 0s, jitter: 2ms, seed: 42}         # reads scatter ±2ms (0 turns it off)
//	  - {at: 80ms, restart: crash}              # or clean; see Restarts
//	  - {at: 90ms, pause: 5ms}                  # stop the host: clock and callers; see Pauses
//	  - {at: 95ms, observe: 1ms}                # observe an ID stamped 1ms ahead; later IDs sort above it
//	expect:                         # optional, per strategy (strategies.Parse syntax) or all
//	  all: {duplicates: 0}
//	  error: {available: false}
//	  "wait:5ms": {max_strategy_wait: 5ms, errors: {crash: "<=4"}}
//	  "logical:1s": {available: true, out_of_order: 0}
//	  ring: {errors: {rollback: ">0"}, out_of_order: ">0", max_lead: 3ms}
//
// Durations use Go's syntax (time.ParseDuration). Expectation values are
// counts (a plain number means exactly; prefix ==, <, <=, > or >=, quoted
// because a plain > starts a YAML block), durations (a plain value means at
// most) or, for available, true (no errors) or false (some errors); the
// fields are those of [Bound].
//
// Scenario files come from pull requests, so a file is untrusted input
// with limits, each checked before anything is expanded or allocated: at
// most [MaxFileSize] bytes (1 MiB; [ReadFile] reads no more, so an endless
// stream is refused too), [MaxEvents] events, [MaxBursts] bursts,
// expectations for [MaxExpectations] strategies (a YAML alias counting as
// often as it is used), [MaxGoroutines] callers and [MaxCalls] calls.
// Parsing takes time and memory in proportion to the file's size, and a
// replay in proportion to its calls.
//
// Every error about a file is an [*Error] that names the file, the line and
// the field, and matches [ErrInvalid]: a file over a limit (naming the
// limit), unknown fields and events, values of
// the wrong type, bad times and durations, negative durations where they
// make no sense, events after the end, a second YAML document, unknown
// strategies (also matching strategies.ErrInvalidStrategy), layouts
// (ringflake.ErrInvalidLayout), node ids (ringflake.ErrNodeOutOfRange) and
// mark intervals of one tick or less (ringflake.ErrInvalidOption). An
// expectation is named by its key as the file wrote it (expect.wait, not
// expect["wait:5ms"]).
//
// The wall clock must stay, for the whole scenario, between a century
// before the layout's epoch (a host reset to 1970 replays; its generator
// meets a clock behind everything it issued) and the end of the layout's
// last tick: the duration may not run past the layout's end, and a step,
// jitter or drift that takes the wall clock, or a reading of it with
// jitter, outside is an error about that event (also matching
// ringflake.ErrBeforeEpoch or ringflake.ErrLayoutExpired). Within that
// range every replay's arithmetic on times fits in a time.Duration.
//
// # The replay
//
// The scenario's clock is a simclock.Clock; its events are scheduled with
// Clock.Schedule, so each fires at its exact instant of true time. Calls
// are due at instants given by the load: the steady rate spreads its calls
// evenly (call k at k × unit / count), a burst puts its calls at one
// instant or spreads them over its span. The first idle caller makes a due
// call; a call due while every caller is busy starts as soon as one is
// free, so a stalled generator builds a queue as it would in a service.
//
// Callers are goroutines, but only one runs at a time, and when a call
// waits on the clock (a wait strategy sitting out a rollback, a used-up
// tick) the caller is parked until true time reaches the end of its wait
// while the other callers go on. What happens next is always the earliest
// of: a parked caller waking, or the next due call going to the
// lowest-numbered idle caller; a caller waking goes first when both can
// happen at the same instant. Simulated time only moves from one such
// instant to the next.
//
// This makes replays deterministic: the same file and strategy give the
// same report, field for field, with any number of goroutines, on any
// machine, under the race detector too. It also means the replay shows the
// interleavings of a scheduler that is fair and instantaneous, not every
// interleaving a real machine could produce; the ring's compare-and-swap,
// which makes IDs unique under any interleaving, is proved by the core
// package's concurrency tests, not here.
//
// # Pauses
//
// A pause stops the whole host for its length, as a VM pause (a snapshot,
// the stop-and-copy of a live migration) or a SIGSTOP does: the wall
// clock stands still, as in a freeze, and no call starts. The calls due
// meanwhile start when it ends, all at once, as the requests that queued
// up while the host was stopped; with fewer callers than calls, they
// queue. A call already under way when the pause begins goes on: a wait
// inside the generator ends when its true time is up. After the pause the
// wall clock is as far behind true time as the pause lasted; a step
// forward after it models the correction a host makes on resume. A pause
// must end by the end of the scenario.
//
// # Restarts
//
// A restart event replaces the running generator by a new one with the
// same node, layout, strategy and clock, as a process restart does. The
// generators of all runs keep their high-water mark (ringflake.MarkStore)
// in one store the replay keeps in memory, saving it mark_ahead ahead of
// their IDs (ringflake.WithMarkAhead; ringflake.DefaultMarkAhead by
// default), and each new generator loads the mark the old one left and
// starts after it. The new generator starts at the instant of simulated
// time the old one ends.
//
// restart: clean is a graceful shutdown: from the event on no call starts;
// the calls under way end in the old generator, in simulated time; then it
// is closed (ringflake.Generator.Close), which saves its newest ID as the
// exact mark, and the calls that came due meanwhile go to the new one.
// restart: crash (also restart: true) kills the process at the event's
// instant: the calls under way never return (errors of kind "crash"), the
// save of the mark in flight completes and nothing later is saved, so the
// new generator starts after the mark saved ahead, up to the interval past
// the old run's newest ID, however right the clock is.
//
// Until the wall clock passes the mark the new run is behind it, in two
// ways the mark (ringflake.Mark) tells apart. Behind the mark's Since, the
// newest the old run knew of when it saved the mark, the clock is behind
// IDs that may have been issued: a rollback, and the new run's strategy
// decides as in any rollback: error fails, wait waits within its limit and
// fails beyond it, the ring fails (its spare capacity does not survive a
// restart), logical borrows within its lead. Between Since and the mark,
// the old run only reserved time ahead of its IDs: every strategy waits
// that reservation out (to the tick after the mark), and a logical one
// borrows across it within its lead; no rollback is reported. A crash
// during a rollback can look like a reservation: IDs the old run issued
// after its last save lie between Since and the mark. The report's
// Restarts ([RestartReport]) tell, for each restart, the mark and its
// Since, how far behind the mark the clock read when the new run started
// (the lead of the mark) and how much of that was a rollback and how much
// a reservation, the calls abandoned, the calls of the new run that failed
// while behind, their longest stall, the longest wait for the reservation,
// and the IDs of an earlier run returned again (never expected). The
// checks go on across restarts: uniqueness and monotonicity against every
// ID of every run, and no ID of a new run stamped at or before the mark it
// loaded (the promise "restart").
//
// A restart whose new process cannot start — ringflake.New fails, as it
// does on a host whose clock reads before the layout's epoch — leaves the
// process down: each call made meanwhile starts it again first, as a
// supervisor restarts a process that exits, and fails with New's error
// (of kind "before_epoch") when that fails too. The run resumes with the
// first start that succeeds; the restart's report counts the failed
// starts.
//
// Only a scenario with a restart event, or that sets mark_ahead, keeps a
// mark. A mark store changes what the generator does (it never issues past
// the mark it saved, and saves the mark on a goroutine of its own), most
// services run without one, and the scenarios that model them should
// replay the generator they run.
//
// That goroutine saves in real time while simulated time stands still.
// After every call the replay waits for it ([ringflake.Generator.SyncMark]),
// so a save counts as done within the call that started it however long it
// takes, and replays of a file give the same report whatever the machine
// is doing. A crash lets the save under way land and refuses every save
// after it, as a killed process would.
//
// # What is checked on every call
//
// The promises of a strategy are those it states (strategies.PromiseOf),
// never guessed from its name: a strategy that states none (a step that is
// not a strategies.Promiser) is only held to uniqueness. Checked are:
// uniqueness for every strategy; IDs greater than every ID returned before
// the call started for a monotonic promise (error, wait and logical and
// chains of them); IDs no further ahead of the clock than the promise's
// lead, unless a step that reuses (the ring) issued them at or below the
// newest tick already issued; and the stall.
//
// A call stalls only while the generator sleeps, and the generator tells
// the replay's clock why (package internal/calltrace): for the strategy (a wait
// sitting out a rollback, a logical step at its lead), for a tick with
// room (the clock's tick is used up, or callers ahead used up the next
// ones: queueing, which no strategy avoids when demand exceeds the
// layout's capacity), or for a restart's reservation. The report keeps
// the longest of each apart from the longest stall. The promise is judged
// on the strategy's part: at most its longest wait, plus one tick (a
// logical step at its lead sleeps until the next tick); and every moment
// of a stall must have one of the three causes. A call that was alone —
// no other call under way from its start to its end — has nobody ahead of
// it, so the whole call, its reservation wait aside, must keep within the
// longest wait plus one tick for a used-up sequence (and the jitter),
// measured on the wall clock with its steps taken out, and on true time as
// well when the clock has no freeze, drift or jitter. The clock a call is
// compared with allows for the generator reading the wall clock only once
// per tick: it may believe in any wall time of the last tick of true time.
//
// Queueing has an order, checked in a file without events (the promise
// "order"): callers that wait for a tick are served in the order they
// started waiting, and a caller that does not wait is served at once, so
// a call served after one that started later is a broken promise.
// Strategies that may lead the clock (a logical step, whose promise has a
// lead) and strategies that state no promise are exempt: at its lead
// bound a borrowing strategy does not wait in line but sleeps until the
// next tick and tries again, so a caller that arrives meanwhile may be
// served first.
//
// A broken promise is a [Violation] in the report.
//
// # Which event caused what
//
// The report attributes every call to the scripted event under way when
// it started ([Report.Events], one [EventReport] per event, and
// Report.Steady for the calls under none): how many calls, their errors by
// kind, how many stalled and the longest stall, and the time they
// borrowed. A step back is under way until the wall clock has passed what
// it read before the step and the newest ID issued by then; a freeze or a
// pause for its length; a drift or a jitter until the next one; a step
// forward only at its instant; a restart until the new run is past the
// old run's mark. When several are under way, the one that began last
// counts. So a file that freezes the clock and later steps it back tells
// which errors the freeze caused and which the step.
//
// A clock that stands still is not a clock that went back, though the
// generator reports both alike once the tick's sequence numbers are used
// up (as a strategies.RollbackError). The report counts the errors of
// calls that started during a freeze or a pause as kind "frozen", not
// "rollback"; expectations can bound them apart (errors: {frozen: 0}).
//
// Replays are fast: every shipped scenario against every built-in strategy
// takes well under a second; [MaxCalls] calls take a second or two (three
// with 1,024 callers), and about 10 s when 1,024 callers queue on a layout
// of 2 IDs per tick (a caller in line sleeps until its turn may have
// come). A logical strategy at its lead bound is the exception: there
// every caller sleeps to the next tick and tries again, so its replay
// grows with the callers as well, about 30 s per 50,000 calls of 1,024
// callers on 2 IDs per tick.
package scenario
