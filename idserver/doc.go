// Package idserver serves the IDs of a ringflake generator over HTTP, as
// JSON, for callers in any language. `ringflake serve` runs it; a Go
// program can mount it in its own server instead:
//
//	g, err := ringflake.New(7, ringflake.WithMarkStore(marks)) // marks: a MarkStore, such as a mark file
//	...
//	h, err := idserver.New(g)
//	...
//	mux.Handle("/ids/", http.StripPrefix("/ids", h))
//
// The package is part of the core module and imports only the core
// packages and the standard library: mounting it brings no Redis, etcd,
// gRPC, logging or metrics client into a program's module graph.
//
// Endpoints (GET; HEAD too on those that issue nothing; every response is
// JSON, with Cache-Control: no-store, except /metrics, whose handler is
// yours):
//
//	/v1/id                 {"id":"1541815603606036480"}
//	/v1/ids?n=N            {"ids":["1541815603606036480",…]}, 1 ≤ N ≤ the handler's maximum (DefaultMaxBatch)
//	/v1/parse/{id}         the object `ringflake parse -json` prints
//	/healthz               {"status":"ok"}: the process is up
//	/readyz                {"status":"ready"}, or 503: see [Handler.Ready]
//	/metrics               only with [WithMetricsHandler]: that handler's answer
//
// /v1/id and /v1/ids take format=NAME, an encoding of
// encodings.Parse (dec, the default, hex, base32, base58, …), and
// after=ID: the answer's IDs are greater than ID, an ID of any node in
// that encoding or decimal (ringflake.Generator.Observe; an ID too far
// ahead of the clock is a 400 with [CodeTooFarAhead] and issues nothing);
// /v1/parse/{id} takes format= for the ID it reads (which may
// also name its own encoding, NAME:TEXT, or be 0x and hex digits) and
// layout= (the generator's by default). Any other query parameter, on
// every route (/healthz, /readyz and /metrics take none), is an error: a
// misspelt ?count=100 must not quietly hand out one ID, and a probe's URL
// that carries parameters is a mistake worth hearing about.
//
// Bad input — a count that is not a number from 1 to the maximum, an
// unknown format or layout, a malformed ID, an unknown query parameter —
// is 400; an unknown path is 404 and a method other than GET or HEAD —
// or HEAD on /v1/id and /v1/ids, which would issue IDs nobody sees — is
// 405; when the generator fails a call the response is 503. Every error
// body is {"error":"…","code":"…"}: code is one of the Code constants
// ([CodeBadRequest], [CodeClockRollback], [CodeLeaseLost], …), stable
// across versions, for callers to act on. A batch that fails returns no
// IDs: those it was given before the failure are never issued again, and
// never seen.
//
// # Metrics
//
// The handler imports no metrics system; metrics are given to it. Two
// options, both off by default (no metrics, no /metrics route):
//
//   - [WithObserver] reports the [Outcome] of every request — route,
//     status, code, IDs served, duration — to an [Observer] of yours.
//   - [WithMetricsHandler] serves an http.Handler of yours on /metrics.
//
// For Prometheus, package github.com/ringflake/ringflake/ringflakeprom
// (a module of its own, which carries the Prometheus client) has both
// halves: RequestCollector is an Observer that is also a Prometheus
// collector (ringflake_http_… series), and Collector exports the
// generator's counters; serve a registry holding them with promhttp:
//
//	reqs, err := ringflakeprom.NewRequestCollector(nil)
//	...
//	gens, err := ringflakeprom.NewCollector(g, nil)
//	...
//	reg := prometheus.NewRegistry()
//	reg.MustRegister(reqs, gens)
//	h, err := idserver.New(g, idserver.WithObserver(reqs),
//		idserver.WithMetricsHandler(promhttp.HandlerFor(reg, promhttp.HandlerOpts{})))
//
// The adapter lives there rather than here so that a program that does
// not use Prometheus never links it, and one that does gets the series
// `ringflake serve` exports without writing them; a program with another
// metrics system writes its own Observer, a method of a few lines.
//
// [ParseID] and [Decompose] are how /v1/parse/{id} reads an ID and takes
// it apart; `ringflake parse -json` uses them too, and prints the same
// [Parts].
//
// Requests pass their context to the generator, so a caller that goes
// away stops waiting for a tick. The handler sets no server timeouts: the
// http.Server it is mounted in does (`ringflake serve` sets them).
//
// A Handler is safe for concurrent use by multiple goroutines.
package idserver
