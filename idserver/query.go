package idserver

import (
	"fmt"
	"net/url"
	"strconv"
	"strings"

	"github.com/ringflake/ringflake"
	"github.com/ringflake/ringflake/encodings"
)

// param is a query parameter an endpoint takes, as a bit.
type param uint8

const (
	paramN param = 1 << iota
	paramFormat
	paramLayout
	paramAfter
)

// names lists the parameters of set: "n and format", or says there are
// none.
func (set param) names() string {
	if set == 0 {
		return "no query parameters"
	}
	var names []string
	for _, p := range []struct {
		bit  param
		name string
	}{{paramN, "n"}, {paramFormat, "format"}, {paramLayout, "layout"}, {paramAfter, "after"}} {
		if set&p.bit != 0 {
			names = append(names, p.name)
		}
	}
	return strings.Join(names, " and ")
}

// query holds the parameters of a request.
type query struct {
	set                      param // the parameters given
	n, format, layout, after string
}

// readQuery reads a raw query of the endpoint route, which takes the
// parameters allow. A parameter it does not take, or one given twice, is
// an error: a misspelt count must not quietly issue one ID. It allocates
// nothing unless a value is escaped.
func readQuery(raw, route string, allow param) (query, error) {
	var q query
	for raw != "" {
		var kv string
		kv, raw, _ = strings.Cut(raw, "&")
		if kv == "" {
			continue
		}
		k, v, _ := strings.Cut(kv, "=")
		k, err := unescape(k)
		if err != nil {
			return q, err
		}
		if v, err = unescape(v); err != nil {
			return q, err
		}
		var (
			bit param
			dst *string
		)
		switch k {
		case "n":
			bit, dst = paramN, &q.n
		case "format":
			bit, dst = paramFormat, &q.format
		case "layout":
			bit, dst = paramLayout, &q.layout
		case "after":
			bit, dst = paramAfter, &q.after
		}
		switch {
		case allow&bit == 0:
			return q, fmt.Errorf("unknown query parameter %q: %s takes %s", k, route, allow.names())
		case q.set&bit != 0:
			return q, fmt.Errorf("query parameter %q given twice", k)
		}
		q.set |= bit
		*dst = v
	}
	return q, nil
}

// unescape decodes a query's key or value, when it is escaped.
func unescape(s string) (string, error) {
	if !strings.ContainsAny(s, "%+") {
		return s, nil
	}
	u, err := url.QueryUnescape(s)
	if err != nil {
		return "", fmt.Errorf("query: %w", err)
	}
	return u, nil
}

// encoding returns the encoding of format=, decimal when it is not given.
func (q query) encoding() (encodings.Encoding, error) {
	if q.set&paramFormat == 0 {
		return encodings.Decimal(), nil
	}
	enc, err := encodings.Parse(q.format)
	if err != nil {
		return enc, fmt.Errorf("format=%q: %s", q.format, message(err))
	}
	return enc, nil
}

// parseLayout returns the layout of layout=.
func (q query) parseLayout() (ringflake.Layout, error) {
	l, err := ringflake.ParseLayout(q.layout)
	if err != nil {
		return l, fmt.Errorf("layout=%q: %s", q.layout, message(err))
	}
	return l, nil
}

// count returns n=, which must be a number from 1 to max.
func (q query) count(max int) (int, error) {
	if q.set&paramN == 0 {
		return 0, fmt.Errorf("n is missing: want /v1/ids?n=N with N from 1 to %d", max)
	}
	n, err := strconv.Atoi(q.n)
	if err != nil || n < 1 || n > max {
		return 0, fmt.Errorf("n=%q: want a number from 1 to %d", q.n, max)
	}
	return n, nil
}

// afterID returns the ID of after=, decimal or in the request's format
// (as the IDs of the answer are), which the IDs of the answer must follow.
func (q query) afterID(enc encodings.Encoding) (ringflake.ID, error) {
	id, err := enc.Parse(q.after)
	if err != nil {
		if id, err2 := ringflake.Parse(q.after); err2 == nil {
			return id, nil
		}
		return 0, fmt.Errorf("after=%q: %s", q.after, message(err))
	}
	return id, nil
}
