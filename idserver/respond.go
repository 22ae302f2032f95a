package idserver

import (
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"time"

	"github.com/ringflake/ringflake/strategies"
)

// The JSON answers every endpoint writes: successes, errors and the 503
// of a generator error.

// Header values of every JSON response, shared and never modified.
var (
	jsonType = []string{"application/json"}
	noStore  = []string{"no-store"}
	nosniff  = []string{"nosniff"}
)

// writeJSON writes a JSON response. IDs must never be cached: a cached
// /v1/id would hand one ID to several callers.
func writeJSON(w http.ResponseWriter, status int, body []byte) {
	hdr := w.Header()
	hdr["Content-Type"] = jsonType
	hdr["Cache-Control"] = noStore
	hdr["X-Content-Type-Options"] = nosniff
	if status != http.StatusOK {
		w.WriteHeader(status)
	}
	_, _ = w.Write(body) // a client that went away is not an error to report
}

// errorJSON is the body of every error response.
type errorJSON struct {
	Error string `json:"error"`
	Code  string `json:"code"`
}

// writeError writes an error response: msg says what was wrong, code is
// one of the Code constants.
func writeError(w http.ResponseWriter, status int, msg, code string) {
	failedWith(w, code)
	b, err := json.Marshal(errorJSON{Error: msg, Code: code})
	if err != nil { // cannot happen: two strings
		b = []byte(`{"error":"unknown","code":"unavailable"}`)
	}
	writeJSON(w, status, append(b, '\n'))
}

func badRequest(w http.ResponseWriter, err error) {
	writeError(w, http.StatusBadRequest, message(err), CodeBadRequest)
}

// unavailable writes the 503 of a generator error, with Retry-After when
// the error says how long to wait: a clock rollback, rounded up to
// seconds.
func unavailable(w http.ResponseWriter, err error) {
	var rb *strategies.RollbackError
	if errors.As(err, &rb) {
		w.Header().Set("Retry-After", strconv.FormatInt(int64(max(time.Second, rb.Behind+time.Second-1)/time.Second), 10))
	}
	writeError(w, http.StatusServiceUnavailable, message(err), ErrorCode(err))
}
