package bench_test

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/bwmarrin/snowflake"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ringflake/ringflake"
	"github.com/ringflake/ringflake/encodings"
)

// bwmarrinForms pairs each of ringflake's encodings of bwmarrin's text
// forms with bwmarrin/snowflake's own writer and reader.
var bwmarrinForms = []struct {
	enc   encodings.Encoding
	write func(snowflake.ID) string
	read  func(string) (snowflake.ID, error)
}{
	{encodings.Base58Flickr(), snowflake.ID.Base58, func(s string) (snowflake.ID, error) { return snowflake.ParseBase58([]byte(s)) }},
	{encodings.ZBase32(), snowflake.ID.Base32, func(s string) (snowflake.ID, error) { return snowflake.ParseBase32([]byte(s)) }},
	{encodings.Base36(), snowflake.ID.Base36, snowflake.ParseBase36},
	{encodings.Base2(), snowflake.ID.Base2, snowflake.ParseBase2},
}

// checkBwmarrinForms checks, for one non-negative ID, that ringflake
// writes bwmarrin's text byte for byte and that each reads the other's.
func checkBwmarrinForms(t *testing.T, id int64) {
	t.Helper()
	for _, f := range bwmarrinForms {
		theirs := f.write(snowflake.ID(id))
		assert.Equal(t, theirs, f.enc.Format(ringflake.ID(id)), "%s of %d", f.enc, id)
		ours, err := f.enc.Parse(theirs)
		require.NoError(t, err, "%s: Parse(%q)", f.enc, theirs)
		assert.Equal(t, ringflake.ID(id), ours, "%s: Parse(%q)", f.enc, theirs)
		back, err := f.read(f.enc.Format(ringflake.ID(id)))
		require.NoError(t, err, "%s: bwmarrin reads %q", f.enc, f.enc.Format(ringflake.ID(id)))
		assert.Equal(t, snowflake.ID(id), back, "%s", f.enc)
	}
}

// ringflake's base58-flickr, zbase32, base36 and base2 are bwmarrin's
// Base58, Base32, Base36 and Base2, checked against the library itself
// (the version bench pins) for edge and random IDs.
func TestBwmarrinEncodings(t *testing.T) {
	ids := []int64{0, 1, 31, 32, 35, 36, 57, 58, 1428076403798048768, 1427970479175499776, math.MaxInt64}
	for b := range 63 {
		ids = append(ids, 1<<b-1, 1<<b)
	}
	rng := rand.New(rand.NewPCG(18, 2))
	for range 10000 {
		ids = append(ids, rng.Int64(), rng.Int64N(1<<42))
	}
	for _, id := range ids {
		checkBwmarrinForms(t, id)
	}
	// bwmarrin's generator makes real IDs, and ringflake reads them.
	node, err := snowflake.NewNode(7)
	require.NoError(t, err)
	for range 100 {
		checkBwmarrinForms(t, node.Generate().Int64())
	}
}

// FuzzBwmarrinEncodings: for every non-negative ID, ringflake writes what
// bwmarrin writes, and each reads what the other wrote.
func FuzzBwmarrinEncodings(f *testing.F) {
	for _, id := range []int64{0, 57, 58, 1428076403798048768, math.MaxInt64} {
		f.Add(id)
	}
	f.Fuzz(func(t *testing.T, id int64) {
		if id < 0 { // bwmarrin's Base58 and Base32 panic on negative IDs
			id = -(id + 1)
		}
		checkBwmarrinForms(t, id)
	})
}
