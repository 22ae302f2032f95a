package ringflake

import (
	"sync"
	"weak"
)

// liveNodes is the process's registry of live generators on the system
// clock, by node id and layout: [New] refuses a second one
// ([ErrNodeInUse]), [Generator.Close] frees its node. It is state of the
// process, as the generators are, not configuration; nothing on the path
// of an ID reads it.
//
// The registry holds its generators weakly: a generator that becomes
// unreachable without Close frees its node at the next garbage
// collection. That is safe — a generator nobody can reach cannot issue
// another ID — and it keeps a leaked generator (a failed request's, say)
// from blocking its node until the process ends. Close frees it at once.
var liveNodes struct {
	mu   sync.Mutex
	gens map[nodeKey]weak.Pointer[Generator]
}

// nodeKey names a node of a layout. Two layouts that [Layout.Equal]
// reports equal, whatever their names or node splits, have one key: they
// issue the same IDs.
type nodeKey struct {
	node   int64
	layout layoutIdent
}

func keyOf(g *Generator) nodeKey { return nodeKey{node: g.node, layout: g.layout.ident()} }

// claimNode registers g as its node's live generator, or returns a
// [*NodeError] matching [ErrNodeInUse] when another live generator has it. New claims the
// node before it touches the mark store, so that a second generator on
// the node never saves into a store. Generators on a clock given with
// WithClock are not registered: tests build many on simulated clocks.
func (g *Generator) claimNode() error {
	if !g.src.sys {
		return nil
	}
	k := keyOf(g)
	liveNodes.mu.Lock()
	defer liveNodes.mu.Unlock()
	if liveNodes.gens[k].Value() != nil {
		return &NodeError{Kind: ErrNodeInUse, Field: "node", Value: g.node, Layout: g.layout.String()}
	}
	if liveNodes.gens == nil {
		liveNodes.gens = make(map[nodeKey]weak.Pointer[Generator])
	}
	liveNodes.gens[k] = weak.Make(g)
	return nil
}

// freeNode ends g's registration, if it has one: [Generator.Close] calls
// it once.
func (g *Generator) freeNode() {
	if !g.src.sys {
		return
	}
	k := keyOf(g)
	liveNodes.mu.Lock()
	defer liveNodes.mu.Unlock()
	if liveNodes.gens[k] == weak.Make(g) {
		delete(liveNodes.gens, k)
	}
}
