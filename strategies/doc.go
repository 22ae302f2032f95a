// Package strategies holds the rollback strategies of ringflake generators:
// what a generator does when its clock reads earlier than the newest ID it
// has issued, or when the sequence of the current tick is used up.
//
// Built in, and in [Parse] syntax:
//
//	strategy        on a rollback of d            available        monotonic   ID time vs clock
//	error           fail with a RollbackError     no, until caught up  yes     exact
//	wait:5ms        sleep if d ≤ 5ms, else pass   stalls ≤ 5ms     yes         exact
//	logical:1s      count on from the newest ID   while d ≤ 1s     yes         ahead by ≤ 1s
//	ring            reuse spare sequence numbers  while spare lasts no         never past newest
//	ring,wait:5ms,error   a chain: each in turn (the default)
//
// Every strategy is unique by construction: a [Strategy] only returns a
// [Plan] — issue within a tick range, sleep, fail, or pass — and the
// generator takes every ID from its ring, where no pair of tick and
// sequence number is taken twice. Users write their own strategies by
// implementing [Strategy]; the built-in ones are small examples.
//
// Strategies are values without mutable state and are safe for concurrent
// use by multiple goroutines and generators.
package strategies
