package ringflake_test

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ringflake/ringflake"
	"github.com/ringflake/ringflake/simclock"
	"github.com/ringflake/ringflake/strategies"
)

func TestNodeSources(t *testing.T) {
	ctx := context.Background()
	twitter := ringflake.TwitterLayout()
	t.Setenv("RINGFLAKE_TEST_NODE", "17")
	t.Setenv("RINGFLAKE_TEST_NODE_BAD", "seventeen")
	t.Setenv("RINGFLAKE_TEST_NODE_BIG", "5000")
	t.Setenv("RINGFLAKE_TEST_NODE_EMPTY", " ")

	for _, tc := range []struct {
		name string
		src  ringflake.NodeSource
		want int64
		err  error
	}{
		{"static", ringflake.StaticNode(9), 9, nil},
		{"static out of range", ringflake.StaticNode(1024), 0, ringflake.ErrNodeOutOfRange},
		{"env", ringflake.EnvNode("RINGFLAKE_TEST_NODE"), 17, nil},
		{"env unset", ringflake.EnvNode("RINGFLAKE_TEST_NODE_UNSET"), 0, ringflake.ErrNodeUnavailable},
		{"env blank", ringflake.EnvNode("RINGFLAKE_TEST_NODE_EMPTY"), 0, ringflake.ErrNodeUnavailable},
		{"env not a number", ringflake.EnvNode("RINGFLAKE_TEST_NODE_BAD"), 0, ringflake.ErrNodeUnavailable},
		{"env out of range", ringflake.EnvNode("RINGFLAKE_TEST_NODE_BIG"), 0, ringflake.ErrNodeOutOfRange},
		{"statefulset ordinal", ringflake.OrdinalNode("ids-3"), 3, nil},
		{"statefulset FQDN", ringflake.OrdinalNode("id-gen-12.id-gen.prod.svc.cluster.local"), 12, nil},
		{"no ordinal", ringflake.OrdinalNode("ids"), 0, ringflake.ErrNodeUnavailable},
		{"trailing dash", ringflake.OrdinalNode("ids-"), 0, ringflake.ErrNodeUnavailable},
		{"signed ordinal", ringflake.OrdinalNode("ids-+3"), 0, ringflake.ErrNodeUnavailable},
		{"ordinal out of range", ringflake.OrdinalNode("ids-1024"), 0, ringflake.ErrNodeOutOfRange},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := tc.src.NodeID(ctx, twitter)
			if tc.err != nil {
				require.ErrorIs(t, err, tc.err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.want, got)
		})
	}

	// An empty host name means the machine's own.
	host, err := os.Hostname()
	require.NoError(t, err)
	wantN, wantErr := ringflake.OrdinalNode(host).NodeID(ctx, twitter)
	gotN, gotErr := ringflake.OrdinalNode("").NodeID(ctx, twitter)
	assert.Equal(t, wantN, gotN)
	assert.Equal(t, wantErr, gotErr)
}

// boundedLease is a held lease that bounds its fleet's lead.
type boundedLease struct {
	fakeLease
	maxLead time.Duration
}

func (l *boundedLease) MaxLead() time.Duration { return l.maxLead }

// silentStrategy states no promise: it is not a strategies.Promiser.
type silentStrategy struct{}

func (silentStrategy) Decide(strategies.Situation) strategies.Plan { return strategies.Pass() }
func (silentStrategy) String() string                              { return "silent" }

// TestLeaseRefusesALongerLead: a lease with a MaxLead refuses a strategy that
// may stamp IDs further ahead of the clock, or that does not say how far;
// a lease without one takes any strategy.
func TestLeaseRefusesALongerLead(t *testing.T) {
	for _, tc := range []struct {
		name     string
		maxLead  time.Duration
		strategy strategies.Strategy
		refused  bool
	}{
		{"default strategy, never ahead", time.Second, strategies.Default(), false},
		{"logical within the bound", time.Second, strategies.Logical(time.Second), false},
		{"logical past the bound", time.Second, strategies.Logical(30 * time.Second), true},
		{"logical within a larger bound", 30 * time.Second, strategies.Logical(30 * time.Second), false},
		{"a chain whose last step leads too far", 5 * time.Second, strategies.Chain(strategies.Ring(), strategies.Logical(10*time.Second)), true},
		{"a strategy without a promise", time.Hour, silentStrategy{}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			lease := &boundedLease{fakeLease: fakeLease{node: 3, held: true}, maxLead: tc.maxLead}
			g, err := ringflake.New(3, ringflake.WithClock(simclock.New(start)), ringflake.WithLease(lease), ringflake.WithStrategy(tc.strategy))
			if tc.refused {
				require.ErrorIs(t, err, ringflake.ErrInvalidOption)
				return
			}
			require.NoError(t, err)
			_, err = g.Next()
			require.NoError(t, err)
		})
	}
	t.Run("a lease without a bound", func(t *testing.T) {
		_, err := ringflake.New(3, ringflake.WithClock(simclock.New(start)), ringflake.WithLease(&fakeLease{node: 3, held: true}),
			ringflake.WithStrategy(silentStrategy{}))
		require.NoError(t, err)
	})
}

// New takes its node id from a NodeSource given with WithNodeSource, asked
// for the generator's layout; the source's errors come back as they are,
// and a nonzero node beside the source is refused.
func TestNewWithNodeSource(t *testing.T) {
	clk := simclock.New(time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC))
	sony := ringflake.SonyflakeLayout()
	t.Setenv("RINGFLAKE_TEST_NODE", "40000") // fits Sonyflake's 16 bits, not Twitter's 10
	t.Setenv("RINGFLAKE_TEST_NODE_BAD", "forty")

	gen, err := ringflake.New(0, ringflake.WithClock(clk), ringflake.WithLayout(sony),
		ringflake.WithNodeSource(ringflake.EnvNode("RINGFLAKE_TEST_NODE")))
	require.NoError(t, err)
	defer gen.Close(context.Background())
	assert.Equal(t, int64(40000), gen.Node())
	id, err := gen.Next()
	require.NoError(t, err)
	parts, err := sony.Decompose(id)
	require.NoError(t, err)
	assert.Equal(t, int64(40000), parts.Node, "the source's id is in every ID")

	for _, tc := range []struct {
		name string
		node int64
		opts []ringflake.Option
		err  error
	}{
		{"out of range for the layout", 0, []ringflake.Option{ringflake.WithNodeSource(ringflake.EnvNode("RINGFLAKE_TEST_NODE"))}, ringflake.ErrNodeOutOfRange},
		{"a source with no id", 0, []ringflake.Option{ringflake.WithNodeSource(ringflake.EnvNode("RINGFLAKE_TEST_NODE_BAD"))}, ringflake.ErrNodeUnavailable},
		{"nil source", 0, []ringflake.Option{ringflake.WithNodeSource(nil)}, ringflake.ErrInvalidOption},
		{"a node beside the source", 7, []ringflake.Option{ringflake.WithNodeSource(ringflake.StaticNode(7))}, ringflake.ErrInvalidOption},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ringflake.New(tc.node, append(tc.opts, ringflake.WithClock(clk))...)
			require.ErrorIs(t, err, tc.err)
		})
	}
}
