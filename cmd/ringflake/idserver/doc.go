// Package idserver serves the IDs of a ringflake generator over HTTP, as
// JSON, for callers in any language. `ringflake serve` runs it; a Go
// program can mount it in its own server instead:
//
//	g, err := ringflake.New(7, ringflake.WithMarkStore(hostlocal.NewMarkFile("/var/lib/ids/7.mark")))
//	...
//	h, err := idserver.New(g)
//	...
//	mux.Handle("/ids/", http.StripPrefix("/ids", h))
//
// Endpoints (GET; HEAD too on those that issue nothing; every response is
// JSON, with Cache-Control: no-store):
//
//	/v1/id                 {"id":"1541815603606036480"}
//	/v1/ids?n=N            {"ids":["1541815603606036480",…]}, 1 ≤ N ≤ the handler's maximum (DefaultMaxBatch)
//	/v1/parse/{id}         the object `ringflake parse -json` prints
//	/healthz               {"status":"ok"}: the process is up
//	/readyz                {"status":"ready"}, or 503: see [Handler.Ready]
//	/metrics               Prometheus text (package ringflakeprom's ringflake_ series)
//
// /v1/id and /v1/ids take format=NAME, an encoding of
// encodings.Parse (dec, the default, hex, base32, base58, …);
// /v1/parse/{id} takes format= for the ID it reads (which may
// also name its own encoding, NAME:TEXT, or be 0x and hex digits) and
// layout= (the generator's by default). Other query parameters are
// errors.
//
// Bad input — a count that is not a number from 1 to the maximum, an
// unknown format or layout, a malformed ID, an unknown query parameter —
// is 400 with {"error":"…"}; an unknown path is 404 and a method other
// than GET or HEAD — or HEAD on /v1/id and /v1/ids, which would issue IDs
// nobody sees — is 405, with {"error":"…"} too. When the generator
// fails a call the response is 503 with {"error":"…","code":"…"}: code is
// one of the Code constants ([CodeClockRollback], [CodeLeaseLost], …),
// stable across versions, for callers to act on. A batch that fails
// returns no IDs: those it was given before the failure are never issued
// again, and never seen.
//
// Requests pass their context to the generator, so a caller that goes
// away stops waiting for a tick. The handler sets no server timeouts: the
// http.Server it is mounted in does (`ringflake serve` sets them).
//
// A Handler is safe for concurrent use by multiple goroutines.
package idserver
