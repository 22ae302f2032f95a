package idserver_test

import (
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ringflake/ringflake"
	"github.com/ringflake/ringflake/encodings"
	"github.com/ringflake/ringflake/idserver"
)

// after= makes the answer's IDs follow an ID of another node, even one
// ahead of the server's clock or at its tick with a greater node id; an
// ID beyond the bound, or not an ID, is a 400 that issues nothing.
func TestAfter(t *testing.T) {
	s := newServer(t, []ringflake.Option{ringflake.WithMaxForward(500 * time.Millisecond)})
	l := s.gen.Layout()
	ahead, err := l.Compose(start.Add(300*time.Millisecond), 9, 17)
	require.NoError(t, err)

	w, r := s.get(fmt.Sprintf("/v1/id?after=%d", ahead))
	require.Equal(t, http.StatusOK, w.Code, w.Body.String())
	assert.Greater(t, parseID(t, encodings.Decimal(), r.ID), ahead)

	w, r = s.get(fmt.Sprintf("/v1/ids?n=3&format=base58&after=%s", encodings.Base58().Format(ahead+1<<22)))
	require.Equal(t, http.StatusOK, w.Code, w.Body.String())
	for _, id := range r.IDs {
		assert.Greater(t, parseID(t, encodings.Base58(), id), ahead+1<<22, "after= in the request's format")
	}

	before := s.gen.Stats().Issued
	far, err := l.Compose(start.Add(2*time.Second), 9, 0)
	require.NoError(t, err)
	w, r = s.get(fmt.Sprintf("/v1/id?after=%d", far))
	assert.Equal(t, http.StatusBadRequest, w.Code)
	assert.Equal(t, idserver.CodeTooFarAhead, r.Code)
	for _, bad := range []string{"/v1/id?after=x", "/v1/id?after=-1", "/v1/id?after=1&after=2"} {
		w, r = s.get(bad)
		assert.Equal(t, http.StatusBadRequest, w.Code, bad)
		assert.Equal(t, idserver.CodeBadRequest, r.Code, bad)
	}
	assert.Equal(t, before, s.gen.Stats().Issued, "a refused after= issues nothing")
}
