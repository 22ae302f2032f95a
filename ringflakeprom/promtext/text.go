package promtext

import (
	"bytes"
	"fmt"
	"io"
	"math"
	"net/http"
	"slices"
	"strconv"
	"strings"
)

// ContentType is the Content-Type of the text exposition format, version
// 0.0.4, which [NewHandler]'s handler answers with.
const ContentType = "text/plain; version=0.0.4; charset=utf-8"

// Gather returns the families of sources as they are now, sorted by name.
// It does not check that the names are distinct: [NewHandler] does.
func Gather(sources ...Source) []Family {
	var families []Family
	for _, s := range sources {
		families = append(families, s.Families()...)
	}
	slices.SortStableFunc(families, func(a, b Family) int { return strings.Compare(a.Name, b.Name) })
	return families
}

// NewHandler returns an http.Handler that answers every request with the
// families of sources, gathered then ([Gather]), in the text format
// ([WriteText]), whatever the request's Accept header asks for. A nil
// source, and two sources or metrics with a family of the same name, are
// an error matching [ErrInvalidSource].
func NewHandler(sources ...Source) (http.Handler, error) {
	var descs []Desc
	for i, s := range sources {
		if s == nil {
			return nil, fmt.Errorf("%w: source %d is nil", ErrInvalidSource, i)
		}
		descs = append(descs, s.Descs()...)
	}
	if err := checkDescs(descs); err != nil {
		return nil, err
	}
	sources = slices.Clone(sources)
	return http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		var buf bytes.Buffer
		_ = WriteText(&buf, Gather(sources...)) // a bytes.Buffer does not fail
		w.Header().Set("Content-Type", ContentType)
		w.Header().Set("Content-Length", strconv.Itoa(buf.Len()))
		_, _ = buf.WriteTo(w)
	}), nil
}

// WriteText writes families, in their order, in the Prometheus text
// exposition format (version 0.0.4): for each, its # HELP line (when
// Help is not empty) and # TYPE line, then its series. Help text escapes
// backslashes and line feeds; label values escape those and double
// quotes; values are written as Go's strconv.FormatFloat(v, 'g', -1, 64)
// does, except NaN, +Inf and -Inf, as the format spells them. A histogram
// series is written as its _bucket series (le="+Inf" last, from Count),
// _sum and _count; a summary's as its quantile series, _sum and _count.
// It returns the first error of w.
func WriteText(w io.Writer, families []Family) error {
	var b []byte
	for _, f := range families {
		b = b[:0]
		if f.Help != "" {
			b = append(b, "# HELP "...)
			b = append(b, f.Name...)
			b = append(b, ' ')
			b = appendEscaped(b, f.Help, false)
			b = append(b, '\n')
		}
		b = append(b, "# TYPE "...)
		b = append(b, f.Name...)
		b = append(b, ' ')
		b = append(b, f.Type.String()...)
		b = append(b, '\n')
		for _, s := range f.Series {
			switch f.Type {
			case Histogram:
				infinite := false
				for _, bk := range s.Buckets {
					b = appendSample(b, f.Name, "_bucket", s.Labels, "le", bk.UpperBound, float64(bk.Count))
					infinite = infinite || math.IsInf(bk.UpperBound, 1)
				}
				if !infinite {
					b = appendSample(b, f.Name, "_bucket", s.Labels, "le", math.Inf(1), float64(s.Count))
				}
				b = appendSample(b, f.Name, "_sum", s.Labels, "", 0, s.Sum)
				b = appendSample(b, f.Name, "_count", s.Labels, "", 0, float64(s.Count))
			case Summary:
				for _, q := range s.Quantiles {
					b = appendSample(b, f.Name, "", s.Labels, "quantile", q.Quantile, q.Value)
				}
				b = appendSample(b, f.Name, "_sum", s.Labels, "", 0, s.Sum)
				b = appendSample(b, f.Name, "_count", s.Labels, "", 0, float64(s.Count))
			default:
				b = appendSample(b, f.Name, "", s.Labels, "", 0, s.Value)
			}
		}
		if _, err := w.Write(b); err != nil {
			return err
		}
	}
	return nil
}

// appendSample appends the line of one sample: name+suffix, the labels
// and, when extra is not empty, the label extra="at" after them, then v.
func appendSample(b []byte, name, suffix string, labels []Label, extra string, at, v float64) []byte {
	b = append(b, name...)
	b = append(b, suffix...)
	if len(labels) > 0 || extra != "" {
		b = append(b, '{')
		for i, l := range labels {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, l.Name...)
			b = append(b, `="`...)
			b = appendEscaped(b, l.Value, true)
			b = append(b, '"')
		}
		if extra != "" {
			if len(labels) > 0 {
				b = append(b, ',')
			}
			b = append(b, extra...)
			b = append(b, `="`...)
			b = appendFloat(b, at)
			b = append(b, '"')
		}
		b = append(b, '}')
	}
	b = append(b, ' ')
	b = appendFloat(b, v)
	return append(b, '\n')
}

// appendEscaped appends s with backslashes and line feeds escaped, and
// double quotes too when quote (a label value; help text keeps them).
func appendEscaped(b []byte, s string, quote bool) []byte {
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '\\':
			b = append(b, `\\`...)
		case c == '\n':
			b = append(b, `\n`...)
		case c == '"' && quote:
			b = append(b, `\"`...)
		default:
			b = append(b, c)
		}
	}
	return b
}

// appendFloat appends v as the text format writes a value.
func appendFloat(b []byte, v float64) []byte {
	switch {
	case math.IsNaN(v):
		return append(b, "NaN"...)
	case math.IsInf(v, 1):
		return append(b, "+Inf"...)
	case math.IsInf(v, -1):
		return append(b, "-Inf"...)
	case v == 0:
		return append(b, '0') // -0 too
	}
	return strconv.AppendFloat(b, v, 'g', -1, 64)
}
