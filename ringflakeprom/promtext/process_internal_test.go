package promtext

import (
	"math"
	"runtime/metrics"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A command name may hold spaces and parentheses: the fields are
// counted from the last ')'.
func TestParseStat(t *testing.T) {
	line := "4242 (a) b (c) S 1 4242 4242 0 -1 4194560 1000 0 0 0 150 25 0 0 20 0 9 0 7700 1773764608 5264 " +
		"18446744073709551615 1 1 0 0 0 0 0 0 2143420159 0 0 0 17 1 0 0 0 0 0\n"
	st, ok := parseStat(line)
	require.True(t, ok)
	assert.Equal(t, procStat{utime: 150, stime: 25, start: 7700, vsize: 1773764608, rss: 5264}, st)
	for _, bad := range []string{"", "4242 (a) S 1 2 3", "4242 (a) S 1 4242 4242 0 -1 4194560 1000 0 0 0 x 25 0 0 20 0 9 0 7700 1 2"} {
		_, ok := parseStat(bad)
		assert.False(t, ok, bad)
	}
}

func TestSoftLimit(t *testing.T) {
	limits := "Limit                     Soft Limit           Hard Limit           Units     \n" +
		"Max open files            20000                1048576              files     \n" +
		"Max address space         unlimited            unlimited            bytes     \n"
	v, ok := softLimit(limits, "Max open files")
	assert.True(t, ok)
	assert.Equal(t, 20000.0, v)
	v, ok = softLimit(limits, "Max address space")
	assert.True(t, ok)
	assert.Equal(t, float64(math.MaxUint64), v)
	_, ok = softLimit(limits, "Max processes")
	assert.False(t, ok)
}

func TestNetstat(t *testing.T) {
	b := []byte("TcpExt: SyncookiesSent SyncookiesRecv\nTcpExt: 0 0\n" +
		"IpExt: InNoRoutes InOctets OutOctets\nIpExt: 0 715122810 500886329\n")
	assert.Equal(t, map[string]float64{"InNoRoutes": 0, "InOctets": 715122810, "OutOctets": 500886329}, netstat(b, "IpExt"))
	assert.Nil(t, netstat(b, "MPTcpExt"))
}

// Every runtime/metrics sample GoRuntime reads exists in this Go: a
// name the runtime does not know would leave its family out.
func TestRuntimeSamplesExist(t *testing.T) {
	known := map[string]bool{}
	for _, d := range metrics.All() {
		known[d.Name] = true
	}
	for _, name := range runtimeSamples() {
		assert.True(t, known[name], name)
	}
}
