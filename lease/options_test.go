package lease_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ringflake/ringflake"
	"github.com/ringflake/ringflake/lease"
	"github.com/ringflake/ringflake/strategies"
)

var rules = lease.Rules{Package: "somelease", TTLUnit: time.Second}

func TestResolveDefaults(t *testing.T) {
	c, err := lease.Options{}.Resolve(rules)
	require.NoError(t, err)
	assert.Equal(t, "ringflake", c.Prefix)
	assert.Equal(t, ringflake.TwitterLayout(), c.Layout)
	assert.Equal(t, int64(1023), c.MaxNode)
	assert.Equal(t, 10*time.Second, c.TTL)
	assert.Equal(t, 10*time.Second/3, c.RenewEvery)
	assert.Equal(t, 102*time.Millisecond, c.Margin, "TTL/100 + 2ms")
	assert.Equal(t, c.RenewEvery, c.Timeout)
	assert.Equal(t, lease.DefaultMaxLead, c.MaxLead)
	assert.Equal(t, strategies.DefaultLead, c.MaxLead, "a fleet on logical without a limit fits")
	assert.Equal(t, "somelease", c.Package)
	assert.NotEmpty(t, c.Holder)
	assert.NotNil(t, c.Clock)

	set := lease.Options{Prefix: "p", TTL: 4 * time.Second, RenewEvery: time.Second, Margin: time.Millisecond,
		MaxLead: 30 * time.Second, Timeout: 2 * time.Second, Holder: "h"}
	c, err = set.Resolve(rules)
	require.NoError(t, err)
	assert.Equal(t, []any{"p", 4 * time.Second, time.Second, time.Millisecond, 30 * time.Second, 2 * time.Second, "h"},
		[]any{c.Prefix, c.TTL, c.RenewEvery, c.Margin, c.MaxLead, c.Timeout, c.Holder}, "set fields are kept")
}

func TestResolveRejects(t *testing.T) {
	for _, tc := range []struct {
		name string
		c    lease.Options
	}{
		{"negative TTL", lease.Options{TTL: -time.Second}},
		{"TTL below the unit", lease.Options{TTL: 500 * time.Millisecond}},
		{"TTL not a whole number of units", lease.Options{TTL: 1500 * time.Millisecond}},
		{"negative RenewEvery", lease.Options{RenewEvery: -1}},
		{"negative Margin", lease.Options{Margin: -1}},
		{"negative Timeout", lease.Options{Timeout: -1}},
		{"negative MaxLead", lease.Options{MaxLead: -1}},
		{"RenewEvery not shorter than TTL", lease.Options{TTL: time.Second, RenewEvery: time.Second}},
		{"RenewEvery + Margin not shorter than TTL", lease.Options{TTL: time.Second, RenewEvery: 900 * time.Millisecond, Margin: 100 * time.Millisecond}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := tc.c.Resolve(rules)
			require.ErrorIs(t, err, ringflake.ErrInvalidOption)
			var oe *lease.OptionError
			require.ErrorAs(t, err, &oe)
			assert.Equal(t, "somelease", oe.Package, "the module is named")
			assert.NotEmpty(t, oe.Reason)
		})
	}
}

// TestQuietAndMarkAhead: the quiet period covers the TTL, the margin and
// the fleet's lead; the mark's lead is half the TTL.
func TestQuietAndMarkAhead(t *testing.T) {
	c, err := lease.Options{TTL: 10 * time.Second}.Resolve(rules)
	require.NoError(t, err)
	assert.Equal(t, 10*time.Second+102*time.Millisecond+time.Second, c.Quiet(), "TTL + Margin + the default MaxLead")
	assert.Equal(t, 5*time.Second, c.MarkAhead(), "TTL/2")

	c, err = lease.Options{TTL: 2 * time.Second, MaxLead: 30 * time.Second}.Resolve(rules)
	require.NoError(t, err)
	assert.Equal(t, 2*time.Second+22*time.Millisecond+30*time.Second, c.Quiet(), "TTL + Margin + MaxLead")
}

// TestCall: Call returns at its timeout even when the call it makes does
// not watch its context (as go-redis does not, by default), and returns
// the call's own answer when it comes first.
func TestCall(t *testing.T) {
	release := make(chan struct{})
	defer close(release)
	deaf := func(context.Context) (int, error) {
		<-release // ignores its context
		return 1, nil
	}
	_, err := lease.Call(context.Background(), time.Millisecond, deaf)
	require.ErrorIs(t, err, context.DeadlineExceeded)

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err = lease.Call(ctx, time.Hour, deaf)
	require.ErrorIs(t, err, context.Canceled, "the caller's context bounds it too")

	boom := errors.New("boom")
	v, err := lease.Call(context.Background(), time.Hour, func(ctx context.Context) (int, error) {
		_, ok := ctx.Deadline()
		assert.True(t, ok, "the call sees the deadline, for clients that honour it")
		return 7, boom
	})
	assert.Equal(t, 7, v)
	require.ErrorIs(t, err, boom)
}

func TestNewToken(t *testing.T) {
	a, b := lease.NewToken(), lease.NewToken()
	assert.Len(t, a, 32, "128 bits in hex")
	assert.NotEqual(t, a, b)
}

// TestErrors: the errors a lease module returns match the core's
// sentinels and name what went wrong.
func TestErrors(t *testing.T) {
	held := error(&lease.HeldError{Package: "somelease", Prefix: "orders", Node: 7, Holder: "web-3/4121"})
	require.ErrorIs(t, held, ringflake.ErrNodeUnavailable)
	assert.Contains(t, held.Error(), `node 7 under prefix "orders" is held by "web-3/4121"`)
	assert.Contains(t, (&lease.HeldError{Package: "somelease", Node: 7}).Error(), "held by another holder", "an unknown holder")

	full := error(&lease.RangeFullError{Package: "somelease", Prefix: "orders", Nodes: 4})
	require.ErrorIs(t, full, ringflake.ErrNodeUnavailable)
	assert.Contains(t, full.Error(), `all 4 node ids under prefix "orders"`)

	require.NotErrorIs(t, held, ringflake.ErrInvalidOption)
	require.NotErrorIs(t, full, ringflake.ErrLeaseLost)
}
