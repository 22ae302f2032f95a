//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package hostlocal_test

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/ringflake/ringflake"
	"github.com/ringflake/ringflake/hostlocal"
	"github.com/ringflake/ringflake/simclock"
)

func ExampleNode() {
	// A directory of its own keeps the example apart from the host's
	// other processes; NewLocalNode("") uses DefaultLocalNodeDir.
	dir, err := os.MkdirTemp("", "ringflake-example")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	ctx := context.Background()

	src := hostlocal.NewNode(dir)
	defer src.Close() // after the generator's Close: the id is free again
	node, err := src.NodeID(ctx, ringflake.TwitterLayout())
	if err != nil {
		panic(err) // every id is held: a *LocalNodesFullError
	}
	clk := simclock.New(time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)) // leave out in production
	gen, err := ringflake.New(node, ringflake.WithClock(clk))
	if err != nil {
		panic(err)
	}
	defer gen.Close(ctx)

	// Another process of the host (here another source) gets another id.
	other := hostlocal.NewNode(dir)
	defer other.Close()
	next, err := other.NodeID(ctx, ringflake.TwitterLayout())
	if err != nil {
		panic(err)
	}
	fmt.Println(node, next)
	// Output: 0 1
}
