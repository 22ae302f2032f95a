package main

import (
	"context"
	"errors"
	"flag"

	"github.com/ringflake/ringflake"
	"github.com/ringflake/ringflake/strategies"
)

// generatorFlags are the flags of the commands that issue IDs (gen and
// serve): where the node id comes from, the high-water mark, the layout,
// the strategy and the sequence offset. Those commands build their
// generator with [generatorFlags.open], so that a new way to get a node id
// reaches all of them at once.
type generatorFlags struct {
	node, state, layout, strategy *string
	offset                        *int
}

// addGeneratorFlags registers the generator's flags on fs.
func addGeneratorFlags(fs *flag.FlagSet) *generatorFlags {
	return &generatorFlags{
		node:     fs.String("node", "0", nodeHelp),
		state:    fs.String("state", "", "file keeping the high-water mark between runs, so that a restart never reissues an ID (with a fixed node id)"),
		layout:   fs.String("layout", "twitter", "layout: twitter, sonyflake, js-safe, or key=value,... (see ringflake.ParseLayout)"),
		strategy: fs.String("strategy", strategies.Default().String(), "rollback strategy, e.g. error, wait:5ms, logical:1s, ring, or a chain"),
		offset: fs.Int("offset", 0, "start each tick's sequence at a number drawn from [0, N), so that id % shards\n"+
			"spreads at low rates (see ringflake.WithSequenceOffset); 0 starts at 0"),
	}
}

// issuer is a generator built from the flags, with what came with it.
type issuer struct {
	gen *ringflake.Generator
	// lease holds the node id; nil for a fixed id.
	lease ringflake.Lease
	// release gives the node id back; nil for a fixed id.
	release func(context.Context) error
}

// open checks the flags, gets the node id (taking a lease when -node names
// a coordination service) and builds the generator. Bad flag values are
// usage errors that name the flag; a node id that cannot be had, and New's
// errors, are not. The caller closes the issuer.
func (f *generatorFlags) open(ctx context.Context) (*issuer, error) {
	layout, err := ringflake.ParseLayout(*f.layout)
	if err != nil {
		return nil, usagef("-layout: %v", err)
	}
	strategy, err := strategies.Parse(*f.strategy)
	if err != nil {
		return nil, usagef("-strategy: %v", err)
	}
	if *f.offset < 0 {
		return nil, usagef("-offset %d: want 0 or more", *f.offset)
	}
	if *f.state != "" && isLease(*f.node) {
		return nil, usagef("-state: a leased node id keeps its high-water mark with the lease; -state is for fixed node ids")
	}
	nd, err := resolveNode(ctx, *f.node, layout)
	if err != nil {
		return nil, err
	}
	opts := []ringflake.Option{ringflake.WithLayout(layout), ringflake.WithStrategy(strategy), ringflake.WithSequenceOffset(*f.offset)}
	switch {
	case nd.lease != nil:
		opts = append(opts, ringflake.WithLease(nd.lease))
	case *f.state != "":
		opts = append(opts, ringflake.WithMarkStore(ringflake.NewFileMarkStore(*f.state)))
	}
	iss := &issuer{lease: nd.lease, release: nd.release}
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

// releaseNode gives the node id back, if it is leased.
func (iss *issuer) releaseNode() error {
	if iss.release == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), acquireTimeout)
	defer cancel()
	return iss.release(ctx)
}
