package main

import (
	"context"
	"errors"
	"flag"
	"strings"

	"github.com/ringflake/ringflake"
	"github.com/ringflake/ringflake/hostlocal"
	"github.com/ringflake/ringflake/layoutplan"
	"github.com/ringflake/ringflake/strategies"
)

// generatorFlags are the flags of the commands that issue IDs (gen and
// serve): where the node id comes from and what guards it, the
// high-water mark, the layout, the strategy and the sequence offset.
// Those commands build their generator with [generatorFlags.open], so
// that a new way to get a node id reaches all of them at once.
type generatorFlags struct {
	fs                                   *flag.FlagSet
	node, guard, state, layout, strategy *string
	offset                               *int
}

// addGeneratorFlags registers the generator's flags on fs.
func addGeneratorFlags(fs *flag.FlagSet) *generatorFlags {
	return &generatorFlags{
		fs:    fs,
		node:  fs.String("node", defaultNode, nodeHelp),
		guard: fs.String("guard", "", guardHelp),
		state: fs.String("state", "", "file keeping the high-water mark between runs, so that a restart never reissues an ID\n"+
			"(with a fixed or local node id; a local one takes the node the file was written for)"),
		layout:   fs.String("layout", "twitter", "layout: "+layoutPresets()+", or key=value,... (see ringflake.ParseLayout)"),
		strategy: fs.String("strategy", strategies.Default().String(), "rollback strategy, e.g. error, wait:5ms, logical:1s, ring, or a chain"),
		offset: fs.Int("offset", 0, "start each tick's sequence at a number drawn from [0, N), so that id % shards\n"+
			"spreads at low rates where the sequence is the low bits (twitter); where the node is\n"+
			"(sonyflake, sonyflake-v2), shard by (id >> node bits) % shards instead\n"+
			"(see ringflake.WithSequenceOffset); 0 starts at 0"),
	}
}

// parseLayout returns the layout of -layout, or a usage error.
func (f *generatorFlags) parseLayout() (ringflake.Layout, error) {
	l, err := ringflake.ParseLayout(*f.layout)
	if err != nil {
		return l, badValuef("-layout: %v", err)
	}
	return l, nil
}

// issuer is a generator built from the flags, with what came with its
// node id.
type issuer struct {
	gen *ringflake.Generator
	// lease holds the node id (a -node lease or a -guard claim); nil
	// otherwise.
	lease ringflake.Lease
	// release gives the node id back (a lease, a claim, a host-local
	// id); nil for a fixed id.
	release func(context.Context) error
	// rehold waits until the lease holds its id again; nil without a
	// lease (see node.rehold).
	rehold func() error
	// strategy is the generator's strategy, for serve's first line.
	strategy strategies.Strategy
}

// open checks the flags, gets the node id (taking a lease when -node names
// a coordination service, a host-local id for -node local, a claim for
// -guard) and builds the generator. Bad flag values are usage errors that
// name the flag; a node id that cannot be had, and New's errors, are not.
// The flag set must have been parsed. The caller closes the issuer.
func (f *generatorFlags) open(ctx context.Context) (*issuer, error) {
	layout, err := f.parseLayout()
	if err != nil {
		return nil, err
	}
	strategy, err := strategies.Parse(*f.strategy)
	if err != nil {
		return nil, badValuef("-strategy: %v", err)
	}
	if *f.offset < 0 {
		return nil, badValuef("-offset %d: want 0 or more", *f.offset)
	}
	nf := nodeFlags{node: *f.node, guard: *f.guard, state: *f.state, strategy: strategy, stderr: f.fs.Output()}
	f.fs.Visit(func(fl *flag.Flag) { nf.nodeSet = nf.nodeSet || fl.Name == "node" })
	nd, err := resolveNode(ctx, nf, layout)
	if err != nil {
		return nil, err
	}
	opts := []ringflake.Option{ringflake.WithLayout(layout), ringflake.WithStrategy(strategy), ringflake.WithSequenceOffset(*f.offset)}
	switch {
	case nd.lease != nil:
		opts = append(opts, ringflake.WithLease(nd.lease))
	case *f.state != "":
		opts = append(opts, ringflake.WithMarkStore(hostlocal.NewMarkFile(*f.state)))
	}
	iss := &issuer{lease: nd.lease, release: nd.release, rehold: nd.rehold, strategy: strategy}
	if iss.gen, err = ringflake.New(nd.id, opts...); err != nil {
		return nil, errors.Join(err, iss.releaseNode())
	}
	return iss, nil
}

// close closes the generator, which saves the exact high-water mark when
// there is one, with ctx; then it gives the node id back, within
// acquireTimeout even when ctx has ended. It returns every error.
func (iss *issuer) close(ctx context.Context) error {
	return errors.Join(iss.gen.Close(ctx), iss.releaseNode())
}

// releaseNode gives the node id back, if it has to be.
func (iss *issuer) releaseNode() error {
	if iss.release == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), acquireTimeout)
	defer cancel()
	return iss.release(ctx)
}

// layoutPresets lists the names of ringflake's layout presets, for flag
// help.
func layoutPresets() string {
	var names []string
	for _, l := range layoutplan.Presets() {
		names = append(names, l.String())
	}
	return strings.Join(names, ", ")
}
