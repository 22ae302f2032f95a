// Package promtext defines ringflake's Prometheus metric families and
// writes them in the Prometheus text exposition format (version 0.0.4)
// without the Prometheus client library.
//
// It is where each ringflake metric is defined, once: its name, help,
// type, labels and how its value is read from what ringflake reports
// ([ringflake.Stats], a [clockhealth.Reading], [lease.EventStats],
// segment.Stats, the [idserver.Outcome] of each request). Package
// ringflakeprom builds its Prometheus collectors from these tables; this
// package writes the same families itself, for a program that serves
// /metrics without linking github.com/prometheus/client_golang and the
// Protocol Buffers runtime it brings (`ringflake serve` is one: compiling
// them takes about 17 CPU-seconds, on a first build with empty caches).
//
//	gen, err := promtext.NewSource(promtext.GeneratorMetrics(), nil,
//		func() (ringflake.Stats, bool) { return g.Stats(), true })
//	...
//	reqs, err := promtext.NewRequests(nil) // an idserver.Observer
//	...
//	metrics, err := promtext.NewHandler(gen, reqs, promtext.GoRuntime(), promtext.Process())
//	...
//	h, err := idserver.New(g, idserver.WithObserver(reqs), idserver.WithMetricsHandler(metrics))
//
// [GoRuntime] and [Process] write the families of the Go runtime and of
// the process under the names and types client_golang's Go and process
// collectors use (go_goroutines, go_memstats_alloc_bytes,
// process_cpu_seconds_total, …), read from runtime/metrics,
// runtime/debug and Linux's /proc.
//
// What it leaves out: the protobuf and OpenMetrics formats (a scraper
// that asks for them gets text, which every Prometheus server reads),
// compression, timestamps, exemplars, native histograms, and metric and
// label names outside the classic character set ([a-zA-Z_:][a-zA-Z0-9_:]*
// for metrics, no colon for labels), which ringflake does not use.
//
// Sources and handlers are safe for concurrent use (a [NewSource]'s read
// function must be too).
//
// ringflake is licensed under the Apache License 2.0: see LICENSE at the
// root of the repository.
package promtext
