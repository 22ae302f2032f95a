package idserver_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
)

// Any path and query get a JSON answer: 200 with IDs or a parse, or 400,
// 404 or 405 with an error and its code (or ServeMux's redirect of an
// unclean path);
// never a 5xx from a generator that works, never a panic. The IDs of a
// batch are as many as n asked for, and distinct.
func FuzzHandler(f *testing.F) {
	for _, seed := range [][2]string{
		{"/v1/id", ""},
		{"/v1/id", "format=base58"},
		{"/v1/ids", "n=3"},
		{"/v1/ids", "n=3&format=hex"},
		{"/v1/ids", "n=0"},
		{"/v1/ids", "n=1&n=2"},
		{"/v1/ids", "n=%zz"},
		{"/v1/parse/1541815603606036480", "layout=sonyflake"},
		{"/v1/parse/base58:4aaW4SzAyQK", ""},
		{"/v1/parse/0x", "format=hex"},
		{"/healthz", "x=1"},
		{"/nowhere", ""},
	} {
		f.Add(seed[0], seed[1])
	}
	s := newServer(f, nil)
	f.Fuzz(func(t *testing.T, path, query string) {
		if !strings.HasPrefix(path, "/") {
			path = "/" + path
		}
		r := httptest.NewRequest(http.MethodGet, "/", nil)
		r.URL.Path, r.URL.RawPath, r.URL.RawQuery = path, "", query
		w := httptest.NewRecorder()
		s.h.ServeHTTP(w, r)
		switch w.Code {
		case http.StatusMovedPermanently, http.StatusTemporaryRedirect, http.StatusPermanentRedirect:
			return // ServeMux cleans the path first
		case http.StatusOK, http.StatusBadRequest, http.StatusNotFound, http.StatusMethodNotAllowed:
		default:
			t.Fatalf("%s?%s: status %d: %s", path, query, w.Code, w.Body)
		}
		var body struct {
			ID    string   `json:"id"`
			IDs   []string `json:"ids"`
			Error string   `json:"error"`
			Code  string   `json:"code"`
		}
		if err := json.Unmarshal(w.Body.Bytes(), &body); err != nil {
			t.Fatalf("%s?%s: %d, not JSON: %v: %q", path, query, w.Code, err, w.Body)
		}
		if (w.Code == http.StatusOK) == (body.Error != "") {
			t.Fatalf("%s?%s: status %d with error %q", path, query, w.Code, body.Error)
		}
		if (w.Code == http.StatusOK) == (body.Code != "") {
			t.Fatalf("%s?%s: status %d with code %q", path, query, w.Code, body.Code)
		}
		if w.Code == http.StatusOK && path == "/v1/ids" {
			n := len(body.IDs)
			if want, err := strconv.Atoi(r.URL.Query().Get("n")); err != nil || want != n {
				t.Fatalf("%s?%s: %d IDs", path, query, n)
			}
			seen := make(map[string]bool, n)
			for _, id := range body.IDs {
				if seen[id] {
					t.Fatalf("%s?%s: ID %s twice", path, query, id)
				}
				seen[id] = true
			}
		}
	})
}
