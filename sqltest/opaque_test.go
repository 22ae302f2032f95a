package sqltest

import (
	"context"
	"database/sql"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ringflake/ringflake"
	"github.com/ringflake/ringflake/layoutplan"
	"github.com/ringflake/ringflake/opaque"
)

// installOpaque runs sql/opaque.sql in a schema of its own (pgcrypto
// included, unless the database has it already), first on the session's
// search_path, and drops the schema when the test ends.
func installOpaque(t *testing.T, c *sql.Conn) {
	t.Helper()
	src, err := os.ReadFile("../sql/opaque.sql")
	require.NoError(t, err)
	ctx := context.Background()
	schema := fmt.Sprintf("ringflake_opaque_test_%x", rand.Uint64())
	_, err = c.ExecContext(ctx, "CREATE SCHEMA "+schema)
	require.NoError(t, err)
	t.Cleanup(func() { _, _ = c.ExecContext(context.Background(), "DROP SCHEMA "+schema+" CASCADE") })
	_, err = c.ExecContext(ctx, "SET search_path TO "+schema+", public")
	require.NoError(t, err)
	_, err = c.ExecContext(ctx, string(src))
	require.NoError(t, err, "sql/opaque.sql")
}

// sqlCodec is a key and tweak, as Go and the SQL functions take them.
type sqlCodec struct {
	secret []byte
	tweak  string
	codec  *opaque.Codec
}

func newSQLCodec(t *testing.T, keyLen, tweakLen int, seed byte) sqlCodec {
	t.Helper()
	secret := make([]byte, keyLen)
	for i := range secret {
		secret[i] = seed + byte(i)*17
	}
	tweak := make([]byte, tweakLen)
	for i := range tweak {
		tweak[i] = 'a' + byte(i)%26
	}
	ks, err := opaque.NewKeys(opaque.Key{Version: 1, Secret: secret})
	require.NoError(t, err)
	c, err := opaque.New(ks, string(tweak))
	require.NoError(t, err)
	return sqlCodec{secret: secret, tweak: string(tweak), codec: c}
}

// agree encodes and decodes ids in SQL, in batches of 10,000 (one
// statement each), and returns how many agree with Go in both directions;
// it fails the test at the first that does not.
func agree(t *testing.T, c *sql.Conn, sc sqlCodec, ids []ringflake.ID) int {
	t.Helper()
	ctx := context.Background()
	n := 0
	for lo := 0; lo < len(ids); lo += 10_000 {
		batch := ids[lo:min(lo+10_000, len(ids))]
		in := make([]int64, len(batch))
		pubs := make([]int64, len(batch))
		for i, id := range batch {
			in[i] = int64(id)
			p, err := sc.codec.Encode(id)
			require.NoError(t, err)
			pubs[i] = p
		}
		rows, err := c.QueryContext(ctx, `
			SELECT ringflake_opaque_encode(id, $3, $4), ringflake_opaque_decode(pub, $3, $4)
			FROM unnest($1::bigint[], $2::bigint[]) WITH ORDINALITY AS u(id, pub, i)
			ORDER BY i`, in, pubs, sc.secret, []byte(sc.tweak))
		require.NoError(t, err)
		i := 0
		for rows.Next() {
			var enc, dec int64
			require.NoError(t, rows.Scan(&enc, &dec))
			require.Equal(t, pubs[i], enc, "encode %d: AES-%d, tweak %q", in[i], 8*len(sc.secret), sc.tweak)
			require.Equal(t, in[i], dec, "decode %d: AES-%d, tweak %q", pubs[i], 8*len(sc.secret), sc.tweak)
			i++
			n++
		}
		require.NoError(t, rows.Err())
		require.NoError(t, rows.Close())
		require.Equal(t, len(batch), i)
	}
	return n
}

// The SQL functions compute the same public numbers as the Go codec, and
// decode them back, for 100,000 IDs under an AES-256 key (random IDs, a
// run of consecutive ones and every preset's edges), and for a thousand
// under each key size with tweaks whose lengths cross the block
// boundaries that change FF1's Q.
func TestSQLOpaqueAgreesWithGo(t *testing.T) {
	c := conn(t, "pgx")
	installOpaque(t, c)
	rng := rand.New(rand.NewPCG(11, 12))
	l := ringflake.TwitterLayout()
	first, err := l.Compose(time.Date(2026, 11, 26, 18, 0, 0, 0, time.UTC), 9, 0)
	require.NoError(t, err)
	ids := []ringflake.ID{0, 1, math.MaxInt64}
	for _, p := range layoutplan.Presets() {
		lo, hi, err := p.Bounds(p.Spec().Epoch, p.Last())
		require.NoError(t, err)
		ids = append(ids, lo, hi)
	}
	for i := range ringflake.ID(20_000) {
		ids = append(ids, first+i)
	}
	for len(ids) < 100_000 {
		ids = append(ids, ringflake.ID(rng.Int64()))
	}

	start := time.Now()
	n := agree(t, c, newSQLCodec(t, 32, len("order_"), 1), ids)
	assert.Equal(t, 100_000, n)
	t.Logf("SQL agrees with Go on %d IDs, both ways, in %v", n, time.Since(start).Round(time.Millisecond))

	for _, keyLen := range []int{16, 24, 32} {
		for _, tweakLen := range []int{0, 11, 12, 27, 28, 256} {
			sc := newSQLCodec(t, keyLen, tweakLen, byte(keyLen+tweakLen))
			assert.Equal(t, 200, agree(t, c, sc, slices.Clone(ids[len(ids)-200:])))
		}
	}
}

func TestSQLOpaqueRejects(t *testing.T) {
	c := conn(t, "pgx")
	installOpaque(t, c)
	ctx := context.Background()
	key := make([]byte, 16)
	for _, tc := range []struct {
		name  string
		query string
		args  []any
	}{
		{"negative ID", `SELECT ringflake_opaque_encode(-1, $1, '')`, []any{key}},
		{"negative number", `SELECT ringflake_opaque_decode(-1, $1, '')`, []any{key}},
		{"key of 20 bytes", `SELECT ringflake_opaque_encode(1, $1, '')`, []any{make([]byte, 20)}},
		{"tweak of 257 bytes", `SELECT ringflake_opaque_decode(1, $1, $2)`, []any{key, make([]byte, 257)}},
	} {
		var out sql.NullInt64
		err := c.QueryRowContext(ctx, tc.query, tc.args...).Scan(&out)
		require.Error(t, err, tc.name)
		assert.Equal(t, "22023", sqlState(err), "%s: %v", tc.name, err)
	}
	var out sql.NullInt64
	require.NoError(t, c.QueryRowContext(ctx, `SELECT ringflake_opaque_encode(NULL, $1, '')`, key).Scan(&out))
	assert.False(t, out.Valid, "NULL in, NULL out")
}
