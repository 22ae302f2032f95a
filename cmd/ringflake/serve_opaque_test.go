//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package main

import (
	"encoding/json"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ringflake/ringflake"
)

// serve answers format=opaque with the keys from the environment and the
// type's -tweak, and reads its public IDs back on /v1/parse.
func TestServeOpaque(t *testing.T) {
	t.Setenv(opaqueKeyEnv, testOpaqueKeys())
	p := startServe(t, "-node", "7", "-tweak", "order_")
	c := testOpaqueCodec(t, "order_")
	resp, err := http.Get(p.base + "/v1/id?format=opaque")
	require.NoError(t, err)
	var body struct {
		ID string `json:"id"`
	}
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&body))
	resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	id, err := c.Parse(body.ID)
	require.NoError(t, err, "a public ID of the tweak order_: %q", body.ID)
	assert.Equal(t, int64(7), id.Node(ringflake.TwitterLayout()))

	resp, err = http.Get(p.base + "/v1/parse/" + body.ID + "?format=opaque")
	require.NoError(t, err)
	var parts struct {
		ID string `json:"id"`
	}
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&parts))
	resp.Body.Close()
	assert.Equal(t, id.String(), parts.ID)
	p.terminate()
}
