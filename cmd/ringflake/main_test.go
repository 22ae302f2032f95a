package main

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ringflake/ringflake"
)

func runCLI(args ...string) (code int, stdout, stderr string) {
	var out, errOut bytes.Buffer
	code = run(args, &out, &errOut)
	return code, out.String(), errOut.String()
}

func TestGen(t *testing.T) {
	code, out, errOut := runCLI("gen", "-n", "5", "-node", "3")
	require.Equal(t, 0, code, errOut)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	require.Len(t, lines, 5)
	l := ringflake.TwitterLayout()
	var prev ringflake.ID
	for _, line := range lines {
		id, err := ringflake.Parse(line)
		require.NoError(t, err)
		assert.Greater(t, id, prev)
		assert.Equal(t, int64(3), id.Node(l))
		assert.WithinDuration(t, time.Now(), id.Time(l), time.Minute)
		prev = id
	}
}

func TestGenWithLayoutAndStrategy(t *testing.T) {
	code, out, errOut := runCLI("gen", "-n", "3", "-layout", "js-safe", "-strategy", "logical:1s", "-node", "127")
	require.Equal(t, 0, code, errOut)
	for _, line := range strings.Fields(out) {
		id, err := ringflake.Parse(line)
		require.NoError(t, err)
		assert.Less(t, int64(id), int64(1)<<53)
		assert.Equal(t, int64(127), id.Node(ringflake.JSSafeLayout()))
	}
}

func TestGenZero(t *testing.T) {
	code, out, _ := runCLI("gen", "-n", "0")
	assert.Equal(t, 0, code)
	assert.Empty(t, out)
}

func TestParse(t *testing.T) {
	code, out, errOut := runCLI("parse", "1541815603606036480", "4096")
	require.Equal(t, 0, code, errOut)
	assert.Equal(t, `id        1541815603606036480
time      2022-06-28T16:07:40.105Z
node      378 (datacenter 11, worker 26)
sequence  0

id        4096
time      2010-11-04T01:42:54.657Z
node      1 (datacenter 0, worker 1)
sequence  0
`, out)

	code, out, errOut = runCLI("parse", "-layout", "sonyflake", "300")
	require.Equal(t, 0, code, errOut)
	assert.Equal(t, "id        300\ntime      2014-09-01T00:00:00Z\nnode      1\nsequence  44\n", out)
}

func TestErrors(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		code int
		want string // a fragment of stderr naming the problem
	}{
		{"no command", nil, 2, "usage:"},
		{"unknown command", []string{"frob"}, 2, `unknown command "frob"`},
		{"bad flag", []string{"gen", "-colour", "red"}, 2, "-colour"},
		{"negative count", []string{"gen", "-n", "-1"}, 2, "-n -1"},
		{"stray argument", []string{"gen", "5"}, 2, "no arguments"},
		{"bad strategy", []string{"gen", "-strategy", "ring,,"}, 2, `part 2`},
		{"bad layout", []string{"gen", "-layout", "twitter,seq=13"}, 2, "-layout"},
		{"node out of range", []string{"gen", "-node", "5000"}, 1, "node id 5000 out of range [0, 1023]"},
		{"parse without IDs", []string{"parse"}, 2, "at least one ID"},
		{"malformed ID", []string{"parse", "12x"}, 1, `invalid ID "12x"`},
		{"ID beyond the layout", []string{"parse", "-layout", "js-safe", "9007199254740992"}, 1, "53 bits"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errOut := runCLI(tc.args...)
			assert.Equal(t, tc.code, code)
			assert.Empty(t, out)
			assert.Contains(t, errOut, tc.want)
			assert.NotContains(t, errOut, "ringflake: ringflake:", "the prefix appears once")
		})
	}
}

func TestHelp(t *testing.T) {
	code, out, _ := runCLI("help")
	assert.Equal(t, 0, code)
	assert.Contains(t, out, "ringflake gen")
	code, _, errOut := runCLI("gen", "-h")
	assert.Equal(t, 0, code)
	assert.Contains(t, errOut, "-strategy")
}
