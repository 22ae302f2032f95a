package segment_test

import (
	"fmt"
	"log"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ringflake/ringflake"
	"github.com/ringflake/ringflake/opaque"
)

// Dense numbers tell whoever sees two of them how many were handed out in
// between. Published through package opaque they tell nothing, and come
// back: a number is a non-negative int64, so it is a ringflake.ID for the
// codec. (The key here is fixed so that the output is; load yours from a
// secret store, see opaque.ParseKeys.)
func Example_opaque() {
	secret := make([]byte, 32) // never a fixed key outside an example
	for i := range secret {
		secret[i] = byte(i)
	}
	keys, err := opaque.NewKeys(opaque.Key{Version: 1, Secret: secret})
	if err != nil {
		log.Fatal(err)
	}
	orders, err := opaque.New(keys, "order_")
	if err != nil {
		log.Fatal(err)
	}
	for n := int64(1_204_332); n < 1_204_335; n++ { // as orders.Next returns them
		public, _ := orders.Encode(ringflake.ID(n))
		text, _ := orders.Format(ringflake.ID(n))
		back, _ := orders.Decode(public)
		fmt.Println(n, public, text, int64(back))
	}
	// Output:
	// 1204332 20011154663328718 10273050ag6bsr7qgq 1204332
	// 1204333 8797668174872134276 1ygqk2bwy0t2gh2nk7 1204333
	// 1204334 9080999282325091114 1zg662xys43k58hj7c 1204334
}

// Numbers from a real allocator get distinct public numbers that do not
// follow their order, and decode back to themselves.
func TestNumbersThroughOpaque(t *testing.T) {
	secret := make([]byte, 16)
	for i := range secret {
		secret[i] = byte(3 * i)
	}
	keys, err := opaque.NewKeys(opaque.Key{Version: 4, Secret: secret})
	require.NoError(t, err)
	codec, err := opaque.New(keys, "invoice_")
	require.NoError(t, err)

	nums := take(t, newAllocator(t, sharedDB(t), newTag(t)), 20_000)
	requireStrictlyIncreasing(t, nums)
	pubs := make([]int64, len(nums))
	rises := 0
	for i, n := range nums {
		pubs[i], err = codec.Encode(ringflake.ID(n))
		require.NoError(t, err)
		require.GreaterOrEqual(t, pubs[i], int64(0))
		back, err := codec.Decode(pubs[i])
		require.NoError(t, err)
		require.Equal(t, n, int64(back))
		text, err := codec.Format(ringflake.ID(n))
		require.NoError(t, err)
		back, err = codec.Parse(text)
		require.NoError(t, err)
		require.Equal(t, n, int64(back))
		if i > 0 && pubs[i] > pubs[i-1] {
			rises++
		}
	}
	sorted := slices.Clone(pubs)
	slices.Sort(sorted)
	assert.Len(t, slices.Compact(sorted), len(nums), "distinct")
	// Consecutive public numbers rise about half the time, as in a random
	// order: 10,000 ± 5σ, σ = √((n+1)/12) ≈ 41.
	assert.InDelta(t, len(nums)/2, rises, 5*41, "rises among %d consecutive numbers", len(nums))
}
