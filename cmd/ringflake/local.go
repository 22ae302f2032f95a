package main

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/ringflake/ringflake"
	"github.com/ringflake/ringflake/hostlocal"
)

// defaultNode is the -node of commands that issue IDs: a node id no other
// process of this host holds, so that runs side by side never collide.
const defaultNode = "local"

// isLocal reports whether the -node flag asks for a host-local id.
func isLocal(spec string) bool { return spec == "local" || strings.HasPrefix(spec, "local:") }

// localNode takes a node id of layout l that no other process of this
// host holds, locked in the directory the flag names (local:DIR) or in
// hostlocal.DefaultDir: the id want, the node of the state file's mark,
// if it is not negative, else the lowest free one. When want is held by
// another process, it fails naming the state file and the holder: the
// mark is that node's, and no other node may issue under it.
func localNode(ctx context.Context, spec string, l ringflake.Layout, want int64, state string) (node, error) {
	dir, named := strings.CutPrefix(spec, "local:")
	if !named {
		var err error
		if dir, err = envNodeDir(); err != nil {
			return node{}, err
		}
	} else if dir == "" {
		return node{}, badValuef("-node %q: no directory after local:", spec)
	} else if err := checkNodeDir("-node "+spec, dir); err != nil {
		return node{}, err
	}
	src := hostlocal.NewNode(dir)
	ctx, cancel := context.WithTimeout(ctx, acquireTimeout)
	defer cancel()
	id, err := want, error(nil)
	var held *hostlocal.NodeError
	if want < 0 {
		id, err = src.NodeID(ctx, l)
	} else if err = src.Claim(ctx, l, want); errors.As(err, &held) && held.Node >= 0 {
		return node{}, fmt.Errorf("-state %s keeps the mark of node %d, which is in use: %w", state, want, err)
	}
	if err != nil {
		return node{}, err
	}
	return node{id: id, release: func(context.Context) error { return src.Close() }}, nil
}

// markNode returns the node id the mark in the state file at path was
// written for, if it has one for layout l: a local node id then claims
// that id, whose mark it is, rather than the lowest free one. A file
// that cannot be read says nothing here; New reports it.
func markNode(ctx context.Context, path string, l ringflake.Layout) (int64, bool) {
	if path == "" {
		return 0, false
	}
	m, err := hostlocal.NewMarkFile(path).LoadMark(ctx)
	if err != nil || m.Layout == "" {
		return 0, false
	}
	ml, err := ringflake.ParseLayout(m.Layout)
	if err != nil || !ml.Equal(l) {
		return 0, false
	}
	return m.Node, true
}
