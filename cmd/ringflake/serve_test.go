package main

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ringflake/ringflake"
	"github.com/ringflake/ringflake/idserver"
	"github.com/ringflake/ringflake/simclock"
)

func TestServeErrors(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		code int
		want string // a fragment of stderr naming the problem
	}{
		{"every interface", []string{"-listen", ":0"}, 2, "every interface"},
		{"all IPv4 interfaces", []string{"-listen", "0.0.0.0:0"}, 2, "0.0.0.0 is not a loopback address"},
		{"all IPv6 interfaces", []string{"-listen", "[::]:0"}, 2, ":: is not a loopback address"},
		{"a public address", []string{"-listen", "192.0.2.1:7464"}, 2, "-behind-proxy"},
		{"not HOST:PORT", []string{"-listen", "127.0.0.1"}, 2, `-listen "127.0.0.1"`},
		{"batch of 0", []string{"-max-batch", "0"}, 2, "-max-batch 0"},
		{"batch too large", []string{"-max-batch", "65537"}, 2, "-max-batch 65537"},
		{"negative grace", []string{"-grace", "-1s"}, 2, "-grace -1s"},
		{"stray argument", []string{"now"}, 2, "no arguments"},
		{"bad layout", []string{"-listen", "127.0.0.1:0", "-layout", "twitter,seq=13"}, 2, "-layout"},
		{"negative offset", []string{"-listen", "127.0.0.1:0", "-offset", "-3"}, 2, "-offset -3"},
		{"node out of range", []string{"-listen", "127.0.0.1:0", "-node", "5000"}, 1, "node id 5000 out of range"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errOut := runCLI(append([]string{"serve"}, tc.args...)...)
			assert.Equal(t, tc.code, code)
			assert.Empty(t, out)
			assert.Contains(t, errOut, tc.want)
			assert.NotContains(t, errOut, "listening on", "nothing was served")
		})
	}
}

// /v1/parse/{id} answers with the very line `ringflake parse -json`
// prints.
func TestServeParseIsParseJSON(t *testing.T) {
	g, err := ringflake.New(1, ringflake.WithClock(simclock.New(time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC))))
	require.NoError(t, err)
	h, err := idserver.New(g)
	require.NoError(t, err)
	for _, tc := range []struct {
		args  []string // of parse
		query string
	}{
		{[]string{"1541815603606036480"}, "/v1/parse/1541815603606036480"},
		{[]string{"0xff"}, "/v1/parse/0xff"},
		{[]string{"-format", "base58", "4aaW4SzAyQK"}, "/v1/parse/4aaW4SzAyQK?format=base58"},
		{[]string{"-layout", "sonyflake", "300"}, "/v1/parse/300?layout=sonyflake"},
		{[]string{"-layout", "js-safe", "base62:00000000001"}, "/v1/parse/base62:00000000001?layout=js-safe"},
	} {
		code, out, errOut := runCLI(append([]string{"parse", "-json"}, tc.args...)...)
		require.Equal(t, 0, code, errOut)
		w := httptest.NewRecorder()
		h.ServeHTTP(w, httptest.NewRequest(http.MethodGet, tc.query, nil))
		require.Equal(t, http.StatusOK, w.Code, w.Body.String())
		body, err := io.ReadAll(w.Body)
		require.NoError(t, err)
		assert.Equal(t, out, string(body), tc.query)
	}
	require.NoError(t, g.Close(context.Background()))
}
