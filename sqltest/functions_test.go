package sqltest

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/lib/pq"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ringflake/ringflake"
	"github.com/ringflake/ringflake/layoutplan"
	"github.com/ringflake/ringflake/simclock"
	"github.com/ringflake/ringflake/strategies"
)

// installFunctions runs sql/ringflake.sql in a schema of its own, first on
// the session's search_path, and drops the schema when the test ends.
func installFunctions(t *testing.T, c *sql.Conn) {
	t.Helper()
	src, err := os.ReadFile("../sql/ringflake.sql")
	require.NoError(t, err)
	ctx := context.Background()
	schema := fmt.Sprintf("ringflake_test_%x", rand.Uint64())
	_, err = c.ExecContext(ctx, "CREATE SCHEMA "+schema)
	require.NoError(t, err)
	t.Cleanup(func() { _, _ = c.ExecContext(context.Background(), "DROP SCHEMA "+schema+" CASCADE") })
	_, err = c.ExecContext(ctx, "SET search_path TO "+schema)
	require.NoError(t, err)
	_, err = c.ExecContext(ctx, string(src))
	require.NoError(t, err, "sql/ringflake.sql")
}

// sqlLayout is a layout as the SQL functions take it.
type sqlLayout struct {
	epoch                       time.Time
	unitMs                      int64
	timeBits, nodeBits, seqBits int
	order                       string
}

func toSQL(l ringflake.Layout) sqlLayout {
	s := l.Spec()
	return sqlLayout{epoch: s.Epoch, unitMs: s.Unit.Milliseconds(), timeBits: s.TimeBits,
		nodeBits: s.DatacenterBits + s.WorkerBits, seqBits: s.SequenceBits, order: s.Order.String()}
}

func (p sqlLayout) args() []any {
	return []any{p.epoch, p.unitMs, p.timeBits, p.nodeBits, p.seqBits, p.order}
}

// testLayouts returns every preset in both field orders, and a few custom
// layouts: an unsplit node, a one-second unit, a short width.
func testLayouts(t *testing.T) []ringflake.Layout {
	t.Helper()
	var out []ringflake.Layout
	for _, l := range layoutplan.Presets() {
		for _, o := range []ringflake.Order{ringflake.TimeNodeSequence, ringflake.TimeSequenceNode} {
			spec := l.Spec()
			spec.Order = o
			ol, err := ringflake.NewLayout(spec)
			require.NoError(t, err)
			out = append(out, ol)
		}
	}
	for _, s := range []string{"twitter,node=10", "epoch=2020-01-01T00:00:00Z,unit=1s,time=33,node=15,seq=15",
		"js-safe,seq=3,node=12,order=time,seq,node"} {
		l, err := ringflake.ParseLayout(s)
		require.NoError(t, err)
		out = append(out, l)
	}
	return out
}

// edgeIDs returns IDs at the edges of l: the smallest and largest, the
// first and last tick with extreme nodes and sequences, a tick in the
// middle, and IDs a generator issued through a clock step where the
// layout reaches 2026.
func edgeIDs(t *testing.T, l ringflake.Layout) []ringflake.ID {
	t.Helper()
	mid := l.TickTime(l.MaxTick() / 2)
	var ids []ringflake.ID
	for _, c := range []struct {
		at        time.Time
		node, seq int64
	}{
		{l.Spec().Epoch, 0, 0}, {l.Spec().Epoch, 0, 1}, {l.Spec().Epoch, 1, 0}, {l.Spec().Epoch, l.MaxNode(), 0}, {l.Spec().Epoch, 0, l.MaxSequence()},
		{mid, l.MaxNode() / 2, l.MaxSequence() / 2}, {mid, l.MaxNode(), l.MaxSequence()},
		{l.Last(), 0, 0}, {l.Last(), l.MaxNode(), 0}, {l.Last(), 0, l.MaxSequence()}, {l.Last(), l.MaxNode(), l.MaxSequence()},
	} {
		id, err := l.Compose(c.at, c.node, c.seq)
		require.NoError(t, err)
		ids = append(ids, id)
	}
	clk := simclock.New(time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC))
	g, err := ringflake.New(l.MaxNode()/3, ringflake.WithClock(clk), ringflake.WithLayout(l), ringflake.WithStrategy(strategies.Ring()))
	if errors.Is(err, ringflake.ErrBeforeEpoch) || errors.Is(err, ringflake.ErrLayoutExpired) {
		return ids
	}
	require.NoError(t, err)
	for i := range 40 {
		if i == 20 {
			clk.Step(-3 * l.Spec().Unit)
		}
		if i%4 == 0 {
			clk.Add(l.Spec().Unit)
		}
		id, err := g.Next()
		require.NoError(t, err)
		ids = append(ids, id)
	}
	return ids
}

// The SQL functions take IDs apart as Layout.Decompose does, in both field
// orders, for the edge IDs of every preset.
func TestSQLFunctionsDecompose(t *testing.T) {
	forEachDriver(t, func(t *testing.T, c *sql.Conn) {
		installFunctions(t, c)
		ctx := context.Background()
		for _, l := range testLayouts(t) {
			p := toSQL(l)
			for _, id := range edgeIDs(t, l) {
				want, err := l.Decompose(id)
				require.NoError(t, err)
				var (
					at              time.Time
					tick, node, seq int64
				)
				args := append([]any{int64(id)}, p.args()...)
				err = c.QueryRowContext(ctx, `SELECT ringflake_time($1, $2, $3, $4, $5, $6, $7),
					ringflake_tick($1, $2, $3, $4, $5, $6, $7), ringflake_node($1, $2, $3, $4, $5, $6, $7),
					ringflake_sequence($1, $2, $3, $4, $5, $6, $7)`, args...).Scan(&at, &tick, &node, &seq)
				require.NoError(t, err, "%s: %d", l, id)
				assert.True(t, want.Time.Equal(at), "%s: %d: time %v, want %v", l, id, at, want.Time)
				assert.Equal(t, [3]int64{want.Tick, want.Node, want.Sequence}, [3]int64{tick, node, seq}, "%s: %d", l, id)
			}
		}
	})
}

// ringflake_min_id and ringflake_max_id agree with Layout.Bounds of one
// tick, saturating outside the layout alike.
func TestSQLFunctionsMinMaxID(t *testing.T) {
	forEachDriver(t, func(t *testing.T, c *sql.Conn) {
		installFunctions(t, c)
		ctx := context.Background()
		for _, l := range testLayouts(t) {
			p := toSQL(l)
			u, e, last := l.Spec().Unit, l.Spec().Epoch, l.Last()
			for _, ts := range []time.Time{
				e, e.Add(-time.Microsecond), e.Add(-24 * time.Hour), e.Add(-20 * 365 * 24 * time.Hour), e.Add(u - time.Microsecond), e.Add(u),
				l.TickTime(l.MaxTick() / 3).Add(u / 2), time.Date(2026, 11, 22, 12, 0, 0, 123456000, time.UTC),
				last, last.Add(u - time.Microsecond), last.Add(u), last.Add(365 * 24 * time.Hour),
			} {
				var lo, hi int64
				args := append([]any{ts}, p.args()...)
				err := c.QueryRowContext(ctx, `SELECT ringflake_min_id($1, $2, $3, $4, $5, $6, $7),
					ringflake_max_id($1, $2, $3, $4, $5, $6, $7)`, args...).Scan(&lo, &hi)
				require.NoError(t, err, "%s: %v", l, ts)
				wantLo, wantHi := tickIDs(t, l, ts)
				assert.Equal(t, wantLo, ringflake.ID(lo), "%s: min of %v", l, ts)
				assert.Equal(t, wantHi, ringflake.ID(hi), "%s: max of %v", l, ts)
			}
		}
	})
}

// What Go rejects, the SQL functions reject: IDs that do not fit and
// layouts NewLayout refuses, with SQLSTATE 22023. NULL gives NULL.
func TestSQLFunctionsReject(t *testing.T) {
	js := toSQL(ringflake.JSSafeLayout())
	tw := toSQL(ringflake.TwitterLayout())
	forEachDriver(t, func(t *testing.T, c *sql.Conn) {
		installFunctions(t, c)
		ctx := context.Background()
		for _, tc := range []struct {
			name string
			id   int64
			l    sqlLayout
		}{
			{"negative ID", -1, tw},
			{"ID above the width", 1 << 53, js},
			{"bits beyond 63", 0, sqlLayout{tw.epoch, 1, 42, 10, 12, tw.order}},
			{"no time bits", 0, sqlLayout{tw.epoch, 1, 0, 10, 12, tw.order}},
			{"unknown order", 0, sqlLayout{tw.epoch, 1, 41, 10, 12, "node,time,seq"}},
			{"zero unit", 0, sqlLayout{tw.epoch, 0, 41, 10, 12, tw.order}},
			{"epoch before 1970", 0, sqlLayout{time.Date(1969, 12, 31, 0, 0, 0, 0, time.UTC), 1, 41, 10, 12, tw.order}},
			{"lifetime beyond 292 years", 0, sqlLayout{tw.epoch, 1000, 45, 6, 12, tw.order}},
			{"63 time bits", 0, sqlLayout{tw.epoch, 1, 63, 0, 0, tw.order}},
		} {
			spec := ringflake.LayoutSpec{Epoch: tc.l.epoch, Unit: time.Duration(tc.l.unitMs) * time.Millisecond,
				TimeBits: tc.l.timeBits, WorkerBits: tc.l.nodeBits, SequenceBits: tc.l.seqBits,
				Width: tc.l.timeBits + tc.l.nodeBits + tc.l.seqBits}
			_, orderErr := ringflake.ParseLayout("twitter,order=" + tc.l.order)
			if _, err := ringflake.NewLayout(spec); err == nil && orderErr == nil && tc.id >= 0 && tc.id>>spec.Width == 0 {
				t.Fatalf("%s: Go accepts what the case says it rejects", tc.name)
			}
			for _, fn := range []string{"ringflake_time", "ringflake_node", "ringflake_sequence"} {
				var v any
				args := append([]any{tc.id}, tc.l.args()...)
				err := c.QueryRowContext(ctx, "SELECT "+fn+"($1, $2, $3, $4, $5, $6, $7)", args...).Scan(&v)
				require.Error(t, err, "%s: %s", tc.name, fn)
				assert.Equal(t, "22023", sqlState(err), "%s: %s: %v", tc.name, fn, err)
			}
		}
		var at sql.NullTime
		var lo sql.NullInt64
		err := c.QueryRowContext(ctx, `SELECT ringflake_time(NULL, $1, $2, $3, $4, $5, $6),
			ringflake_min_id(NULL, $1, $2, $3, $4, $5, $6)`, tw.args()...).Scan(&at, &lo)
		require.NoError(t, err)
		assert.False(t, at.Valid)
		assert.False(t, lo.Valid)
	})
}

// sqlState returns the SQLSTATE of a server error from either driver.
func sqlState(err error) string {
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		return pgErr.Code
	}
	var pqErr *pq.Error
	if errors.As(err, &pqErr) {
		return string(pqErr.Code)
	}
	return ""
}

// tickIDs returns the smallest and largest ID of ts's tick, saturating
// outside the layout: Layout.Bounds, whose ends saturate, of one tick.
func tickIDs(t testing.TB, l ringflake.Layout, ts time.Time) (lo, hi ringflake.ID) {
	t.Helper()
	from, to := ts, ts
	if from.After(l.Last()) {
		from = l.Last()
	}
	if to.Before(l.Spec().Epoch) {
		to = l.Spec().Epoch
	}
	lo, hi, err := l.Bounds(from, to)
	require.NoError(t, err)
	return lo, hi
}
