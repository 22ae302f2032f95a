package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/ringflake/ringflake"
	"github.com/ringflake/ringflake/idserver"
	"github.com/ringflake/ringflake/ringflakeprom/promtext"
)

// defaultListen is where serve listens unless -listen says otherwise:
// loopback, port 7464 ("RING" on a phone's keypad).
const defaultListen = "127.0.0.1:7464"

// The server's limits (docs/serve.md). Requests are small GETs and the
// generator's waits are bounded by its strategy, so each can be short.
const (
	readHeaderTimeout = 5 * time.Second  // a client has this long to send its request's headers
	readTimeout       = 10 * time.Second // and this long for the whole request
	writeTimeout      = 10 * time.Second // a response must be written within this, from the end of the headers
	idleTimeout       = 2 * time.Minute  // a keep-alive connection without requests is closed after this
	maxHeaderBytes    = 8 << 10          // request line and headers, like nginx's default
	defaultGrace      = 10 * time.Second // on SIGTERM or SIGINT, requests under way may take this long
)

const behindProxyHelp = `allow a -listen address that is not loopback. Only with a TLS-terminating
reverse proxy that authenticates callers, or a service mesh, in front of it as its only
client: serve itself has neither TLS nor authentication (see docs/serve.md)`

func serve(args []string, stdout, stderr io.Writer) (err error) {
	fs := newFlags("serve", stderr)
	listen := fs.String("listen", defaultListen, "HOST:PORT to listen on; a loopback address unless -behind-proxy")
	behindProxy := fs.Bool("behind-proxy", false, behindProxyHelp)
	maxBatch := fs.Int("max-batch", idserver.DefaultMaxBatch, fmt.Sprintf("largest n of /v1/ids?n=N, up to %d", idserver.MaxBatchLimit))
	grace := fs.Duration("grace", defaultGrace, "on SIGTERM or SIGINT, how long requests under way may take to finish before they are cut off")
	genFlags := addGeneratorFlags(fs)
	clockF := addClockFlags(fs)
	opq := addOpaqueFlags(fs)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usagef("serve takes no arguments, got %q", fs.Args())
	}
	// format=opaque and opaque-number, with keys from -key-file or the
	// environment; without keys, those formats are a 400.
	var public idFormat
	if *opq.keyFile != "" || os.Getenv(opaqueKeyEnv) != "" {
		f, _, err := opq.format(opaqueText)
		if err != nil {
			return badValuef("%v", err)
		}
		public = f
	} else if *opq.tweak != "" {
		return badValuef("-tweak goes with keys: -key-file FILE or $%s", opaqueKeyEnv)
	}
	if *maxBatch < 1 || *maxBatch > idserver.MaxBatchLimit {
		return badValuef("-max-batch %d: want 1 to %d", *maxBatch, idserver.MaxBatchLimit)
	}
	if *grace < 0 {
		return badValuef("-grace %v: want 0 or more", *grace)
	}
	// A signal before the server runs (say while a lease waits out its
	// quiet period) ends the start; one while it runs, the server.
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()

	ln, err := listenLocal(ctx, *listen, *behindProxy)
	if err != nil {
		return err
	}
	defer ln.Close() // closed by the server once it serves; this is for an early return
	// The clock is checked before a node id is taken: a refusal holds
	// nothing.
	gate, err := clockF.open(ctx, stderr)
	if err != nil {
		return err
	}
	iss, err := genFlags.open(ctx)
	if err != nil {
		return err
	}
	defer func() {
		// Close saves the exact mark; then the lease goes back.
		cctx, cancel := context.WithTimeout(context.Background(), acquireTimeout)
		defer cancel()
		err = errors.Join(err, iss.close(cctx))
	}()
	var extra []promtext.Source
	if gate != nil {
		// /metrics shows the clock's health too (ringflake_clock_…).
		c, err := gate.metrics()
		if err != nil {
			return err
		}
		extra = append(extra, c)
	}
	reqs, metrics, err := serveMetrics(iss.gen, extra...)
	if err != nil {
		return err
	}
	opts := []idserver.Option{idserver.WithMaxBatch(*maxBatch), idserver.WithObserver(reqs), idserver.WithMetricsHandler(metrics)}
	if public.opaque != nil {
		opts = append(opts, idserver.WithOpaque(public.opaque))
	}
	if iss.lease != nil {
		opts = append(opts, idserver.WithLease(iss.lease))
	}
	h, err := idserver.New(iss.gen, opts...)
	if err != nil {
		return err
	}
	var handler http.Handler = h
	if gate != nil {
		// The monitor reads the clock's health once a second until the
		// server stops; /readyz answers 503 while it is not healthy.
		mctx, stopMonitor := context.WithCancel(context.Background())
		defer stopMonitor()
		go func() { _ = gate.mon.Run(mctx) }()
		handler = gate.readyz(h)
	}
	srv := &http.Server{
		Handler:           handler,
		ReadHeaderTimeout: readHeaderTimeout,
		ReadTimeout:       readTimeout,
		WriteTimeout:      writeTimeout,
		IdleTimeout:       idleTimeout,
		MaxHeaderBytes:    maxHeaderBytes,
		ErrorLog:          log.New(stderr, "ringflake serve: ", 0),
	}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	fmt.Fprintf(stderr, "ringflake serve: node %d, layout %s, strategy %s: listening on http://%s\n",
		iss.gen.Node(), iss.gen.Layout(), iss.strategy, ln.Addr())

	// A lease that ends for good (another process took the id, the
	// server lost its data) never holds the id again: the server stops,
	// so that whoever runs it starts one with a new lease.
	var ended <-chan struct{}
	lease, ends := iss.lease.(interface {
		Done() <-chan struct{}
		Err() error
	})
	if ends {
		ended = lease.Done()
	}
	var why, failure error
	select {
	case err := <-served:
		return fmt.Errorf("serving on %s: %w", ln.Addr(), err)
	case <-ctx.Done():
		why = errors.New("signal received")
	case <-ended:
		failure = fmt.Errorf("the lease of node %d ended: %w", iss.gen.Node(), lease.Err())
		why = failure
	}
	stop() // a second signal ends the process at once
	fmt.Fprintf(stderr, "ringflake serve: %s: finishing the requests under way (at most %v)\n", trimPrefix(why.Error()), *grace)
	sctx, cancel := context.WithTimeout(context.Background(), *grace)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		err = fmt.Errorf("the grace period of %v ended with requests under way; they were cut off: %w", *grace, err)
		return errors.Join(failure, err, srv.Close())
	}
	<-served // http.ErrServerClosed
	fmt.Fprintf(stderr, "ringflake serve: stopped; closing the generator\n")
	return failure
}

// serveMetrics returns what serve's /metrics exports (with extra, the
// clock's health when serve watches it): the generator's counters, the
// requests' (which the handler observes with), and the Go runtime's and
// the process's. They are the families of package ringflakeprom's
// collectors, and client_golang's Go and process collectors, written by
// package promtext, so that the command compiles neither the Prometheus
// client nor the Protocol Buffers runtime (docs/serve.md).
func serveMetrics(g *ringflake.Generator, extra ...promtext.Source) (*promtext.Requests, http.Handler, error) {
	gen, err := promtext.NewSource(promtext.GeneratorMetrics(), nil, func() (ringflake.Stats, bool) { return g.Stats(), true })
	if err != nil {
		return nil, nil, err
	}
	reqs, err := promtext.NewRequests(nil)
	if err != nil {
		return nil, nil, err
	}
	h, err := promtext.NewHandler(append([]promtext.Source{gen, reqs, promtext.GoRuntime(), promtext.Process()}, extra...)...)
	if err != nil {
		return nil, nil, fmt.Errorf("the metrics: %w", err)
	}
	return reqs, h, nil
}

// listenLocal listens on addr (HOST:PORT), which must be a loopback
// address unless behindProxy: its host an IP address or a name that
// resolves to loopback addresses only. An address that is not, an empty
// host (every interface), and one that is not HOST:PORT are usage errors.
func listenLocal(ctx context.Context, addr string, behindProxy bool) (net.Listener, error) {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, badValuef("-listen %q: %v", addr, err)
	}
	refuse := func(what string) error {
		return badValuef("-listen %q: %s, and serve has neither TLS nor authentication: listen on loopback "+
			"(127.0.0.1:PORT), or put a TLS-terminating reverse proxy with authentication, or a service mesh, "+
			"in front and add -behind-proxy (see docs/serve.md)", addr, what)
	}
	if !behindProxy {
		if host == "" {
			return nil, refuse("an empty host listens on every interface")
		}
		ips := []net.IP{net.ParseIP(host)}
		if ips[0] == nil {
			addrs, err := net.DefaultResolver.LookupIPAddr(ctx, host)
			if err != nil {
				return nil, fmt.Errorf("-listen %q: %w", addr, err)
			}
			ips = ips[:0]
			for _, a := range addrs {
				ips = append(ips, a.IP)
			}
		}
		for _, ip := range ips {
			if !ip.IsLoopback() {
				return nil, refuse(fmt.Sprintf("%s is not a loopback address", ip))
			}
		}
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	if tcp, ok := ln.Addr().(*net.TCPAddr); ok && !behindProxy && !tcp.IP.IsLoopback() {
		return nil, errors.Join(refuse(fmt.Sprintf("it listens on %s", tcp.IP)), ln.Close())
	}
	return ln, nil
}
