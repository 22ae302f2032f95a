package ringflake_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ringflake/ringflake"
	"github.com/ringflake/ringflake/internal/zerotest"
	"github.com/ringflake/ringflake/simclock"
)

// TestZeroValuesDoNotPanic calls every exported function and method of
// the package with zero values: each returns a zero value or an error.
func TestZeroValuesDoNotPanic(t *testing.T) {
	for name, f := range map[string]any{
		"New": ringflake.New, "Parse": ringflake.Parse, "NewLayout": ringflake.NewLayout,
		"ParseLayout": ringflake.ParseLayout, "EnvNode": ringflake.EnvNode, "OrdinalNode": ringflake.OrdinalNode,
		"StaticNode": ringflake.StaticNode, "Presets": ringflake.Presets,
		"WithClock": ringflake.WithClock, "WithExistingID": ringflake.WithExistingID, "WithLayout": ringflake.WithLayout,
		"WithLease": ringflake.WithLease, "WithLogger": ringflake.WithLogger, "WithMarkAhead": ringflake.WithMarkAhead,
		"WithMarkStore": ringflake.WithMarkStore, "WithMaxForward": ringflake.WithMaxForward,
		"WithRollbackHook": ringflake.WithRollbackHook, "WithSequenceOffset": ringflake.WithSequenceOffset,
		"WithStrategy": ringflake.WithStrategy,
	} {
		zerotest.Call(t, name, f)
	}
	zerotest.Methods(t, nil,
		ringflake.Layout{}, ringflake.ID(0), ringflake.Order(0), ringflake.Parts{}, ringflake.Mark{}, &ringflake.Mark{},
		ringflake.NullID{}, &ringflake.NullID{}, ringflake.Stats{}, ringflake.ErrorCounts{}, ringflake.RollbackEvent{},
		ringflake.LayoutSpec{}, &ringflake.LayoutError{}, &ringflake.MarkError{}, &ringflake.NodeError{},
		&ringflake.SyntaxError{}, &ringflake.ExistingIDError{}, (*ringflake.ID)(new(ringflake.ID)),
		ringflake.StaticNode(0), ringflake.EnvNode(""), ringflake.OrdinalNode(""),
	)

	// The zero and the nil Generator, which New did not make: their
	// methods return zero values, or errors matching ErrClosed.
	zerotest.Methods(t, nil, &ringflake.Generator{}, (*ringflake.Generator)(nil))
	for _, g := range []*ringflake.Generator{{}, nil} {
		_, err := g.Next()
		require.ErrorIs(t, err, ringflake.ErrClosed)
		_, err = g.NextN(context.Background(), make([]ringflake.ID, 3))
		require.ErrorIs(t, err, ringflake.ErrClosed)
		require.ErrorIs(t, g.Observe(1), ringflake.ErrClosed)
		assert.Equal(t, ringflake.Stats{}, g.Stats())
		require.NoError(t, g.Close(context.Background()))
	}

	// A generator's methods with zero arguments (a nil slice, ID 0).
	g, err := ringflake.New(908, ringflake.WithClock(simclock.New(start)))
	require.NoError(t, err)
	zerotest.Methods(t, nil, g)
}

// TestNewWithZeroOptions: New with a nil Option or an option of a zero
// or nil argument returns a generator or an error, never a panic.
func TestNewWithZeroOptions(t *testing.T) {
	opts := map[string]ringflake.Option{
		"nil": nil, "WithClock(nil)": ringflake.WithClock(nil), "WithExistingID(0)": ringflake.WithExistingID(0),
		"WithLayout(Layout{})": ringflake.WithLayout(ringflake.Layout{}), "WithLease(nil)": ringflake.WithLease(nil),
		"WithLogger(nil)": ringflake.WithLogger(nil), "WithMarkAhead(0)": ringflake.WithMarkAhead(0),
		"WithMarkStore(nil)": ringflake.WithMarkStore(nil), "WithMaxForward(0)": ringflake.WithMaxForward(0),
		"WithRollbackHook(nil)": ringflake.WithRollbackHook(nil), "WithSequenceOffset(0)": ringflake.WithSequenceOffset(0),
		"WithStrategy(nil)": ringflake.WithStrategy(nil),
	}
	for name, opt := range opts {
		t.Run(name, func(t *testing.T) {
			clk := simclock.New(start)
			var g *ringflake.Generator
			var err error
			require.NotPanics(t, func() { g, err = ringflake.New(907, ringflake.WithClock(clk), opt) })
			if err != nil {
				return
			}
			id, err := g.Next()
			require.NoError(t, err)
			assert.Positive(t, id)
			require.NoError(t, g.Close(context.Background()))
		})
	}
}
