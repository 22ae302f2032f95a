package main

import (
	"encoding/base64"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ringflake/ringflake"
	"github.com/ringflake/ringflake/opaque"
)

// testOpaqueKeys returns a key list of two versions, 2 encoding.
func testOpaqueKeys() string {
	k2 := make([]byte, 32)
	k1 := make([]byte, 16)
	for i := range k2 {
		k2[i] = byte(i*13 + 5)
	}
	for i := range k1 {
		k1[i] = byte(i*7 + 1)
	}
	return "2:" + base64.StdEncoding.EncodeToString(k2) + ",1:" + base64.StdEncoding.EncodeToString(k1)
}

func testOpaqueCodec(t *testing.T, tweak string) *opaque.Codec {
	t.Helper()
	ks, err := opaque.ParseKeys(testOpaqueKeys())
	require.NoError(t, err)
	c, err := opaque.New(ks, tweak)
	require.NoError(t, err)
	return c
}

// gen writes opaque IDs with the keys from the environment; parse reads
// them back with the keys from a file; both agree with package opaque.
func TestGenParseOpaque(t *testing.T) {
	t.Setenv(opaqueKeyEnv, testOpaqueKeys())
	code, out, errOut := runCLI("gen", "-n", "5", "-node", "3", "-format", "opaque", "-tweak", "order_")
	require.Equal(t, 0, code, errOut)
	lines := strings.Fields(out)
	require.Len(t, lines, 5)
	c := testOpaqueCodec(t, "order_")
	var ids []ringflake.ID
	for _, line := range lines {
		require.Len(t, line, c.TextLen(), line)
		id, err := c.Parse(line)
		require.NoError(t, err, line)
		assert.Equal(t, int64(3), id.Node(ringflake.TwitterLayout()))
		ids = append(ids, id)
	}
	assert.True(t, slices.IsSorted(ids), "issued in order")
	assert.False(t, slices.IsSorted(lines), "the public text does not sort like the IDs: %q", lines)

	keyFile := filepath.Join(t.TempDir(), "keys")
	require.NoError(t, os.WriteFile(keyFile, []byte(testOpaqueKeys()+"\n"), 0o600))
	t.Setenv(opaqueKeyEnv, "") // the file alone
	code, out, errOut = runCLI(append([]string{"parse", "-format", "opaque", "-key-file", keyFile, "-tweak", "order_", "-json"}, lines...)...)
	require.Equal(t, 0, code, errOut)
	dec := json.NewDecoder(strings.NewReader(out))
	for _, id := range ids {
		var p struct{ ID ringflake.ID }
		require.NoError(t, dec.Decode(&p))
		assert.Equal(t, id, p.ID)
	}
}

func TestGenParseOpaqueNumber(t *testing.T) {
	t.Setenv(opaqueKeyEnv, testOpaqueKeys())
	code, out, errOut := runCLI("gen", "-n", "3", "-node", "4", "-format", "opaque-number")
	require.Equal(t, 0, code, errOut)
	c := testOpaqueCodec(t, "")
	for _, line := range strings.Fields(out) {
		n, err := ringflake.Parse(line)
		require.NoError(t, err, line)
		id, err := c.Decode(int64(n))
		require.NoError(t, err)
		assert.Equal(t, int64(4), id.Node(ringflake.TwitterLayout()))

		code, out, errOut := runCLI("parse", "-format", "opaque-number", "-json", line)
		require.Equal(t, 0, code, errOut)
		assert.True(t, strings.HasPrefix(out, `{"id":"`+id.String()+`",`), out)
	}
}

// Mistakes end with one line: exit 1 for a public ID that does not
// decode, 2 for missing or bad keys and misplaced flags.
func TestOpaqueCLIErrors(t *testing.T) {
	c := testOpaqueCodec(t, "order_")
	text, err := c.Format(1_943_412_563_201_384_448)
	require.NoError(t, err)
	changed := text[:5] + map[bool]string{true: "0", false: "1"}[text[5] != '0'] + text[6:]
	keyFile := filepath.Join(t.TempDir(), "keys")
	require.NoError(t, os.WriteFile(keyFile, []byte(testOpaqueKeys()), 0o600))
	garbage := filepath.Join(t.TempDir(), "garbage")
	require.NoError(t, os.WriteFile(garbage, []byte("garbage\n"), 0o600))
	for _, tc := range []struct {
		name string
		env  string
		args []string
		code int
		want string // in stderr
	}{
		{"another tweak", testOpaqueKeys(), []string{"parse", "-format", "opaque", "-tweak", "user_", text}, 1, "check failed"},
		{"a changed character", testOpaqueKeys(), []string{"parse", "-format", "opaque", "-tweak", "order_", changed}, 1, "mistyped"},
		{"no keys", "", []string{"gen", "-node", "1", "-format", "opaque"}, 2, "needs keys: set " + opaqueKeyEnv},
		{"bad keys", "1:nope", []string{"gen", "-node", "1", "-format", "opaque"}, 2, "invalid key: entry 1: version 1: secret of 3 bytes, want 16, 24 or 32"},
		{"a key file of garbage", "", []string{"parse", "-format", "opaque", "-key-file", garbage, text}, 2, "invalid key: entry 1: not a key: want VERSION:BASE64"},
		{"missing key file", "", []string{"parse", "-format", "opaque", "-key-file", keyFile + ".missing", text}, 2, "-key-file: open"},
		{"tweak without opaque", "", []string{"parse", "-tweak", "order_", "1"}, 2, "-key-file and -tweak go with -format opaque"},
		{"negative number", testOpaqueKeys(), []string{"parse", "-format", "opaque-number", "--", "-5"}, 1, "invalid ID"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv(opaqueKeyEnv, tc.env)
			code, out, errOut := runCLI(tc.args...)
			assert.Equal(t, tc.code, code, errOut)
			assert.Empty(t, out)
			assert.Contains(t, errOut, tc.want)
			assert.Equal(t, 1, strings.Count(errOut, "\n"), "one line: %q", errOut)
		})
	}
	// The secret never shows in a message.
	t.Setenv(opaqueKeyEnv, strings.Replace(testOpaqueKeys(), "1:", "1:!", 1))
	code, _, errOut := runCLI("gen", "-node", "1", "-format", "opaque")
	assert.Equal(t, 2, code)
	assert.Contains(t, errOut, "entry 2: version 1: secret is not base64")
	assert.NotContains(t, errOut, testOpaqueKeys()[2:12])
	assert.NotContains(t, errOut, testOpaqueKeys()[len(testOpaqueKeys())-10:])
}
