package idserver_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ringflake/ringflake"
	"github.com/ringflake/ringflake/idserver"
	"github.com/ringflake/ringflake/opaque"
)

// With WithOpaque, format=opaque answers public IDs (text) and
// format=opaque-number their numbers, and /v1/parse reads both back to
// the IDs; without it, those formats are a 400.
func TestOpaqueFormats(t *testing.T) {
	keys, err := opaque.NewKeys(opaque.Key{Version: 1, Secret: []byte("0123456789abcdef0123456789abcdef")})
	require.NoError(t, err)
	orders, err := opaque.New(keys, "order_")
	require.NoError(t, err)
	s := newServer(t, nil, idserver.WithOpaque(orders))

	w, r := s.get("/v1/id?format=opaque")
	require.Equal(t, http.StatusOK, w.Code, r.Error)
	id, err := orders.Parse(r.ID)
	require.NoError(t, err, "the answer is a public ID: %q", r.ID)

	w, r = s.get("/v1/ids?n=3&format=opaque-number")
	require.Equal(t, http.StatusOK, w.Code, r.Error)
	require.Len(t, r.IDs, 3)
	var prev ringflake.ID
	for _, pub := range r.IDs {
		n, err := strconv.ParseInt(pub, 10, 64)
		require.NoError(t, err)
		got, err := orders.Decode(n)
		require.NoError(t, err)
		assert.Greater(t, got, max(prev, id), "the IDs behind the public numbers increase")
		prev = got
	}

	text, err := orders.Format(id)
	require.NoError(t, err)
	w = httptest.NewRecorder()
	s.h.ServeHTTP(w, httptest.NewRequest(http.MethodGet, "/v1/parse/"+text+"?format=opaque", nil))
	require.Equal(t, http.StatusOK, w.Code, w.Body.String())
	var parts idserver.Parts
	require.NoError(t, json.Unmarshal(w.Body.Bytes(), &parts))
	assert.Equal(t, id, parts.ID, "the public text parses back to the ID")

	tampered := []byte(text)
	tampered[5] ^= 1
	if tampered[5] == text[5] {
		tampered[5]++
	}
	w, r = s.get("/v1/parse/" + string(tampered) + "?format=opaque")
	assert.Equal(t, http.StatusBadRequest, w.Code, "a changed character is refused")
	assert.Equal(t, idserver.CodeBadRequest, r.Code)

	plain := newServer(t, nil)
	w, r = plain.get("/v1/id?format=opaque")
	assert.Equal(t, http.StatusBadRequest, w.Code, "no keys, no opaque IDs")
	assert.Equal(t, idserver.CodeBadRequest, r.Code)

	g, err := ringflake.New(9, ringflake.WithClock(s.clk))
	require.NoError(t, err)
	defer g.Close(t.Context())
	_, err = idserver.New(g, idserver.WithOpaque(nil))
	require.ErrorIs(t, err, ringflake.ErrInvalidOption)
}
