package opaque

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ringflake/ringflake"
	"github.com/ringflake/ringflake/layoutplan"
)

func newCodec(t testing.TB, keys *Keys, tweak string, opts ...Option) *Codec {
	t.Helper()
	c, err := New(keys, tweak, opts...)
	require.NoError(t, err)
	return c
}

// parallel runs f(lo, hi) over [0, n) split into one part per CPU.
func parallel(n int, f func(lo, hi int)) {
	parts := runtime.GOMAXPROCS(0)
	var wg sync.WaitGroup
	for p := range parts {
		wg.Add(1)
		go func() {
			defer wg.Done()
			f(n*p/parts, n*(p+1)/parts)
		}()
	}
	wg.Wait()
}

// Ten million random IDs come back from their public numbers, split
// among the CPUs; every 64th also through the text form. The numbers go
// through the primary key's FF1 with one scratch block per goroutine (as
// Encode and Decode do with one per call). Under the race detector, which
// makes the run twenty times slower, it takes one million: the code is
// the same, and scripts/test.sh runs the ten million without it.
func TestRoundTripTenMillionRandomIDs(t *testing.T) {
	n := 10_000_000
	if raceEnabled {
		n = 1_000_000
	}
	c := newCodec(t, testKeys(t), "order_")
	f := c.primary.ff1
	start := time.Now()
	var mu sync.Mutex
	var bad []string
	parallel(n, func(lo, hi int) {
		rng := rand.New(rand.NewPCG(uint64(lo), 27))
		scratch := new([16]byte)
		text := make([]byte, 0, checkedLen)
		fail := func(msg string, id ringflake.ID) {
			mu.Lock()
			defer mu.Unlock()
			if len(bad) < 10 {
				bad = append(bad, msg+" "+id.String())
			}
		}
		for i := lo; i < hi; i++ {
			id := rng.Uint64() >> 1
			pub := f.encrypt(scratch, id)
			if pub>>63 != 0 {
				fail("encode", ringflake.ID(id))
			}
			if f.decrypt(scratch, pub) != id {
				fail("decode", ringflake.ID(id))
			}
			if i%64 != 0 {
				continue
			}
			var err error
			text, err = c.AppendText(text[:0], ringflake.ID(id))
			if err != nil {
				fail("format", ringflake.ID(id))
				continue
			}
			if back, err := c.ParseBytes(text); err != nil || back != ringflake.ID(id) {
				fail("parse", ringflake.ID(id))
			}
		}
	})
	require.Empty(t, bad)
	t.Logf("%d IDs in %v on %d goroutines", n, time.Since(start).Round(time.Millisecond), runtime.GOMAXPROCS(0))
}

// extremeIDs returns the edges of every preset layout: the smallest and
// largest ID of its first and last tick, and of a tick in between, with the
// smallest and largest node and sequence; and 0, 1, 2^53 ± 1 and 2^63-1.
func extremeIDs(t *testing.T) []ringflake.ID {
	t.Helper()
	ids := []ringflake.ID{0, 1, 1<<53 - 1, 1 << 53, 1<<53 + 1, math.MaxInt64 - 1, math.MaxInt64}
	for _, l := range layoutplan.Presets() {
		mid := l.Spec().Epoch.Add(l.Last().Sub(l.Spec().Epoch) / 2)
		for _, at := range []time.Time{l.Spec().Epoch, mid, l.Last()} {
			lo, hi, err := l.Bounds(at, at)
			require.NoError(t, err)
			ids = append(ids, lo, hi)
			for _, node := range []int64{0, l.MaxNode()} {
				for _, seq := range []int64{0, l.MaxSequence()} {
					id, err := l.Compose(at, node, seq)
					require.NoError(t, err, "%s at %s", l, at)
					ids = append(ids, id)
				}
			}
		}
	}
	slices.Sort(ids)
	return slices.Compact(ids)
}

func TestRoundTripEveryLayoutsExtremeIDs(t *testing.T) {
	ids := extremeIDs(t)
	require.Greater(t, len(ids), 30)
	for _, opts := range [][]Option{nil, {WithoutCheck()}} {
		c := newCodec(t, testKeys(t), "user_", opts...)
		seen := map[int64]bool{}
		for _, id := range ids {
			for _, v := range c.Keys().Versions() {
				pub, err := c.EncodeVersion(v, id)
				require.NoError(t, err)
				require.GreaterOrEqual(t, pub, int64(0))
				back, err := c.DecodeVersion(v, pub)
				require.NoError(t, err)
				require.Equal(t, id, back, "key %d, id %d", v, id)
				if v == c.Keys().Primary() {
					require.False(t, seen[pub], "public number %d twice", pub)
					seen[pub] = true
				}
			}
			text, err := c.Format(id)
			require.NoError(t, err)
			require.Len(t, text, c.TextLen())
			back, err := c.Parse(text)
			require.NoError(t, err)
			require.Equal(t, id, back, text)
			back, err = c.Parse(strings.ToUpper(text))
			require.NoError(t, err, "upper case")
			require.Equal(t, id, back)
		}
	}
}

// spearman returns the rank correlation of xs[i] with i.
func spearman(xs []int64) float64 {
	n := len(xs)
	order := make([]int, n) // order[r] = the index of the r-th smallest
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(a, b int) int { return int(sign(xs[a] - xs[b])) })
	mean := float64(n-1) / 2
	var cov float64
	for r, i := range order { // rank of xs[i] is r; rank of i is i
		cov += (float64(r) - mean) * (float64(i) - mean)
	}
	variance := float64(n) * (float64(n)*float64(n) - 1) / 12
	return cov / variance
}

func sign(x int64) int64 {
	switch {
	case x < 0:
		return -1
	case x > 0:
		return 1
	}
	return 0
}

func TestSpearmanOfKnownOrders(t *testing.T) {
	up := []int64{1, 2, 3, 4, 5}
	down := []int64{5, 4, 3, 2, 1}
	assert.InDelta(t, 1, spearman(up), 1e-12)
	assert.InDelta(t, -1, spearman(down), 1e-12)
	assert.InDelta(t, 0.9, spearman([]int64{1, 3, 2, 4, 5}), 1e-12) // 1 − 6·2/(5·24)
}

// A million consecutive IDs (a busy node's run) give a million distinct
// public numbers whose order says nothing of theirs: the rank correlation
// with the input is within five standard errors, 5/√(n−1), of zero.
func TestConsecutiveIDsLookUnordered(t *testing.T) {
	const n = 1_000_000
	c := newCodec(t, testKeys(t), "order_")
	l := ringflake.TwitterLayout()
	first, err := l.Compose(time.Date(2026, 11, 26, 18, 0, 0, 0, time.UTC), 7, 0)
	require.NoError(t, err)
	pubs := make([]int64, n)
	parallel(n, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			pubs[i], _ = c.Encode(first + ringflake.ID(i))
		}
	})
	sorted := slices.Clone(pubs)
	slices.Sort(sorted)
	require.Equal(t, n, len(slices.Compact(sorted)), "public numbers are distinct")
	require.GreaterOrEqual(t, sorted[0], int64(0))
	rho := spearman(pubs)
	se := 1 / math.Sqrt(n-1)
	t.Logf("Spearman rho of %d consecutive IDs and their public numbers: %+.6f (standard error %.6f, %+.2f SE)", n, rho, se, rho/se)
	assert.Less(t, math.Abs(rho), 5*se)
	// The top bit of consecutive public numbers is a fair coin.
	ones := 0
	for _, p := range pubs {
		ones += int(p >> 62)
	}
	assert.InDelta(t, n/2, ones, 5*math.Sqrt(n)/2, "top bits set")
}

// Every single changed character is refused by the check character, in
// every position, whatever the new character: never another ID.
func TestChangedCharacterIsAnError(t *testing.T) {
	c := newCodec(t, testKeys(t), "order_")
	rng := rand.New(rand.NewPCG(3, 4))
	tries := 0
	for range 2000 {
		id := ringflake.ID(rng.Int64())
		text, err := c.Format(id)
		require.NoError(t, err)
		for pos := range text {
			for _, r := range alphabet {
				if byte(r) == text[pos] {
					continue
				}
				changed := text[:pos] + string(r) + text[pos+1:]
				got, err := c.Parse(changed)
				tries++
				if !errors.Is(err, ErrCheckFailed) {
					t.Fatalf("%s (from %s, ID %d) parsed as %d, %v", changed, text, id, got, err)
				}
			}
		}
	}
	t.Logf("%d texts with one changed character: all refused", tries)
}

// Text made with another key or another tweak fails the keyed check, as
// does a random string; a retired version is unknown; a key rotation keeps
// the old text readable.
func TestForeignTextIsAnError(t *testing.T) {
	keys := testKeys(t)
	orders := newCodec(t, keys, "order_")
	users := newCodec(t, keys, "user_")
	otherKeys, err := NewKeys(Key{Version: 2, Secret: testSecret(9, 32)})
	require.NoError(t, err)
	otherKey := newCodec(t, otherKeys, "order_")
	onlyV1, err := NewKeys(Key{Version: 1, Secret: testSecret(1, 16)})
	require.NoError(t, err)
	retired := newCodec(t, onlyV1, "order_")

	rng := rand.New(rand.NewPCG(5, 6))
	for range 1000 {
		id := ringflake.ID(rng.Int64())
		text, err := orders.Format(id)
		require.NoError(t, err)
		_, err = users.Parse(text)
		require.ErrorIs(t, err, ErrCheckFailed, "another tweak")
		require.ErrorIs(t, err, ringflake.ErrInvalidID)
		_, err = otherKey.Parse(text)
		require.ErrorIs(t, err, ErrCheckFailed, "another key of the same version")
		_, err = retired.Parse(text)
		require.ErrorIs(t, err, ErrUnknownVersion, "a version the codec lacks")
		var de *DecodeError
		require.ErrorAs(t, err, &de)
		assert.Equal(t, 0, de.Offset)
	}

	// Rotation: text of the old primary (1) still reads once 2 is primary.
	old := newCodec(t, onlyV1, "order_")
	for range 100 {
		id := ringflake.ID(rng.Int64())
		text, err := old.Format(id)
		require.NoError(t, err)
		got, err := orders.Parse(text)
		require.NoError(t, err)
		require.Equal(t, id, got)
		v, known := orders.Version(text)
		assert.Equal(t, 1, v)
		assert.True(t, known)
	}
}

// The keyed check accepts foreign text at the rate its 17 bits promise
// (2^-17), and guesses at 2^-22 with the check character.
func TestFalseAcceptRates(t *testing.T) {
	keys := testKeys(t)
	orders := newCodec(t, keys, "order_")
	users := newCodec(t, keys, "user_")

	const foreign = 1 << 18 // expect 2 accepts
	var accepted int
	var mu sync.Mutex
	parallel(foreign, func(lo, hi int) {
		k := 0
		buf := make([]byte, 0, checkedLen)
		for i := lo; i < hi; i++ {
			buf, _ = orders.AppendText(buf[:0], ringflake.ID(i)*7919)
			if _, err := users.ParseBytes(buf); err == nil {
				k++
			} else if !errors.Is(err, ErrCheckFailed) {
				panic(err)
			}
		}
		mu.Lock()
		accepted += k
		mu.Unlock()
	})
	t.Logf("other tweak: %d of %d texts accepted (expected %.1f at 2^-17)", accepted, foreign, float64(foreign)/(1<<17))
	assert.LessOrEqual(t, accepted, 16, "Poisson(2) exceeds 16 with probability below 1e-9")

	// A guess passes the check character with probability 1/32 (one last
	// character of 32 completes any 17), and then the keyed check with
	// 2^-17: 2^-22 in all. Both parts measured: random strings against the
	// check character alone, and random strings given the right check
	// character against the codec.
	rng := rand.New(rand.NewPCG(7, 8))
	digits := make([]byte, checkedLen)
	randomize := func() {
		digits[0] = 2 // a version the codec has
		for i := 1; i < len(digits); i++ {
			digits[i] = byte(rng.IntN(32))
		}
	}
	const luhnTries = 1 << 20 // expect 2^15 to pass
	passed := 0
	for range luhnTries {
		randomize()
		if luhn(digits, false) == 0 {
			passed++
		}
	}
	t.Logf("random strings: %d of %d pass the check character (expected %d at 1/32)", passed, luhnTries, luhnTries/32)
	assert.InDelta(t, luhnTries/32, passed, 5*math.Sqrt(luhnTries/32), "within 5σ")

	const keyedTries = 1 << 18 // expect 2 accepts
	accepted = 0
	text := make([]byte, checkedLen)
	for range keyedTries {
		randomize()
		digits[checkedLen-1] = byte((32 - luhn(digits[:checkedLen-1], true)) % 32)
		for i, d := range digits {
			text[i] = alphabet[d]
		}
		if _, err := orders.ParseBytes(text); err == nil {
			accepted++
		} else if !errors.Is(err, ErrCheckFailed) {
			t.Fatalf("%s: %v", text, err)
		}
	}
	t.Logf("random strings with a right check character: %d of %d accepted (expected %.1f at 2^-17; 2^-22 for a guess)",
		accepted, keyedTries, float64(keyedTries)/(1<<17))
	assert.LessOrEqual(t, accepted, 16, "Poisson(2) exceeds 16 with probability below 1e-9")
}

func TestBadInputIsAClearError(t *testing.T) {
	c := newCodec(t, testKeys(t), "order_")
	good, err := c.Format(12345)
	require.NoError(t, err)
	for _, tc := range []struct {
		name, input string
		want        error
		offset      int
	}{
		{"empty", "", ErrMalformed, -1},
		{"short", good[:17], ErrMalformed, -1},
		{"long", good + "0", ErrMalformed, -1},
		{"huge", strings.Repeat("0", 1<<20), ErrMalformed, -1},
		{"not base32", good[:5] + "u" + good[6:], ErrMalformed, 5},
		{"not ASCII", good[:16] + "é", ErrMalformed, 16},
		{"space", " " + good[1:], ErrMalformed, 0},
		{"swapped neighbours", good[:3] + good[4:5] + good[3:4] + good[5:], ErrCheckFailed, -1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.name == "swapped neighbours" && good[3] == good[4] {
				t.Fatalf("pick another ID: %s has equal neighbours", good)
			}
			id, err := c.Parse(tc.input)
			require.ErrorIs(t, err, tc.want)
			require.ErrorIs(t, err, ringflake.ErrInvalidID)
			assert.Zero(t, id)
			var de *DecodeError
			require.ErrorAs(t, err, &de)
			assert.Equal(t, tc.offset, de.Offset)
			assert.LessOrEqual(t, len(err.Error()), 300, "a message of one short line")
			assert.True(t, strings.HasPrefix(err.Error(), "opaque: "), err.Error())
			assert.NotContains(t, err.Error(), "\n")
		})
	}

	_, err = c.Encode(-1)
	require.ErrorIs(t, err, ErrNegative)
	_, err = c.Format(-1)
	require.ErrorIs(t, err, ErrNegative)
	dst, err := c.AppendText([]byte("x"), math.MinInt64)
	require.ErrorIs(t, err, ErrNegative)
	assert.Equal(t, "x", string(dst))
	_, err = c.Decode(-5)
	require.ErrorIs(t, err, ErrMalformed)
	require.ErrorIs(t, err, ringflake.ErrInvalidID)
	_, err = c.EncodeVersion(7, 1)
	require.ErrorIs(t, err, ErrUnknownVersion)
	_, err = c.DecodeVersion(-1, 1)
	require.ErrorIs(t, err, ErrUnknownVersion)
	_, err = c.DecodeVersion(32, 1)
	require.ErrorIs(t, err, ErrUnknownVersion)

	// Without the check, the first digit of the number has 3 bits.
	u := newCodec(t, testKeys(t), "order_", WithoutCheck())
	_, err = u.Parse("2z0000000000000")
	require.ErrorIs(t, err, ErrMalformed, "15 characters")
	_, err = u.Parse("28000000000000")
	require.ErrorIs(t, err, ErrMalformed, "above 2^63-1")
	id, err := u.Parse("27zzzzzzzzzzzz")
	require.NoError(t, err, "2^63-1 is some ID's public number")
	assert.GreaterOrEqual(t, id, ringflake.ID(0))
}

func TestNewRejectsBadOptions(t *testing.T) {
	_, err := New(nil, "x")
	require.ErrorIs(t, err, ErrInvalidOption)
	_, err = New(&Keys{}, "x")
	require.ErrorIs(t, err, ErrInvalidOption, "zero keys")
	_, err = New(testKeys(t), strings.Repeat("t", MaxTweak+1))
	require.ErrorIs(t, err, ErrInvalidOption)
	_, err = New(testKeys(t), "x", nil)
	require.ErrorIs(t, err, ErrInvalidOption)
	c, err := New(testKeys(t), strings.Repeat("t", MaxTweak))
	require.NoError(t, err)
	assert.Equal(t, MaxTweak, len(c.Tweak()))
}

// The same ID under different tweaks, and the numbers with and without
// the check: tweaks separate, the check changes only the text.
func TestTweaksSeparateTypes(t *testing.T) {
	keys := testKeys(t)
	a := newCodec(t, keys, "order_")
	b := newCodec(t, keys, "user_")
	u := newCodec(t, keys, "order_", WithoutCheck())
	for id := range ringflake.ID(1000) {
		pa, _ := a.Encode(id)
		pb, _ := b.Encode(id)
		pu, _ := u.Encode(id)
		assert.NotEqual(t, pa, pb)
		assert.Equal(t, pa, pu)
	}
}

func TestParseKeys(t *testing.T) {
	b64 := func(seed byte, n int) string {
		return strings.TrimRight(jsonBase64(testSecret(seed, n)), "=")
	}
	for _, tc := range []struct {
		name     string
		text     string
		primary  int
		versions []int
	}{
		{"one bare key is version 0", b64(1, 32), 0, []int{0}},
		{"two, first is primary", "2:" + b64(2, 32) + ",1:" + b64(1, 16), 2, []int{2, 1}},
		{"lines and padding", "\n 5:" + b64(5, 24) + "=\n3:" + b64(3, 32) + "=\n", 5, []int{5, 3}},
		{"URL alphabet", "31:" + strings.NewReplacer("+", "-", "/", "_").Replace(b64(6, 32)), 31, []int{31}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ks, err := ParseKeys(tc.text)
			require.NoError(t, err)
			assert.Equal(t, tc.primary, ks.Primary())
			assert.Equal(t, tc.versions, ks.Versions())
		})
	}
	secret := b64(7, 32)
	for _, tc := range []struct{ name, text string }{
		{"empty", " \n"},
		{"version above 31", "32:" + secret},
		{"version not a number", "x:" + secret},
		{"version with a sign", "+1:" + secret},
		{"twice", "1:" + secret + ",1:" + b64(8, 32)},
		{"not base64", "1:" + secret[:10] + "!" + secret[11:]},
		{"20 bytes", "1:" + b64(7, 20)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseKeys(tc.text)
			require.ErrorIs(t, err, ErrInvalidKey)
			var ke *KeyError
			require.ErrorAs(t, err, &ke)
			assert.NotContains(t, err.Error(), secret[:8], "the message quotes no secret")
		})
	}
	ks := testKeys(t)
	assert.Equal(t, "keys 2 (AES-256, primary), 1 (AES-128)", ks.String())
	k := Key{Version: 3, Secret: testSecret(3, 24)}
	assert.Equal(t, "key 3 (AES-192)", k.String())
	for _, verb := range []string{"%v", "%+v", "%#v", "%s", "%x", "%d", "%q"} {
		out := fmt.Sprintf(verb, k)
		assert.NotContains(t, out, fmt.Sprint(k.Secret[0]), "%s prints %q", verb, out)
		assert.NotContains(t, out, fmt.Sprintf("%x", k.Secret[:2]), "%s prints %q", verb, out)
		assert.Contains(t, out, "3", verb)
	}
}

func jsonBase64(b []byte) string {
	out, _ := json.Marshal(b) // a JSON string of standard base64
	return string(out[1 : len(out)-1])
}

func TestTextInJSON(t *testing.T) {
	c := newCodec(t, testKeys(t), "order_")
	type order struct {
		ID    Text `json:"id"`
		Items int  `json:"items"`
	}
	out, err := json.Marshal(order{ID: c.Text(1_943_412_563_201_384_448), Items: 2})
	require.NoError(t, err)
	text, err := c.Format(1_943_412_563_201_384_448)
	require.NoError(t, err)
	assert.JSONEq(t, `{"id":"`+text+`","items":2}`, string(out))

	in := order{ID: c.Text(0)}
	require.NoError(t, json.Unmarshal(out, &in))
	assert.Equal(t, ringflake.ID(1_943_412_563_201_384_448), in.ID.ID)

	bad := order{ID: c.Text(0)}
	err = json.Unmarshal([]byte(`{"id":"`+text[:17]+`x"}`), &bad)
	require.ErrorIs(t, err, ErrCheckFailed)

	var none order
	require.ErrorIs(t, json.Unmarshal(out, &none), ErrNoCodec)
	_, err = json.Marshal(none)
	require.ErrorIs(t, err, ErrNoCodec)
	assert.Equal(t, "<opaque: Text has no codec>", none.ID.String())
	assert.Equal(t, text, c.Text(1_943_412_563_201_384_448).String())
}

func TestAllocations(t *testing.T) {
	c := newCodec(t, testKeys(t), "order_")
	text, err := c.Format(42)
	require.NoError(t, err)
	buf := make([]byte, 0, 64)
	// One 16-byte scratch block per call: the AES block is an interface,
	// so its buffer escapes. AppendText uses the room in dst instead.
	assert.Equal(t, 1.0, testing.AllocsPerRun(100, func() { _, _ = c.Encode(42) }))
	assert.Equal(t, 1.0, testing.AllocsPerRun(100, func() { _, _ = c.Decode(42) }))
	assert.Equal(t, 0.0, testing.AllocsPerRun(100, func() { buf, _ = c.AppendText(buf[:0], 42) }))
	assert.Equal(t, 1.0, testing.AllocsPerRun(100, func() { _, _ = c.Parse(text) }))
	short := make([]byte, 0, 20)
	assert.Equal(t, 1.0, testing.AllocsPerRun(100, func() { _, _ = c.AppendText(short[:0], 42) }), "grows once")
}
