package promtext

import (
	"cmp"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"unicode/utf8"
)

// ErrInvalidLabels is matched by the error [NewSource] and [NewRequests]
// return for constant labels the text format cannot carry or that clash
// with the metrics' own: a name that is not [a-zA-Z_][a-zA-Z0-9_]*, one
// starting with "__", one a metric of the source sets itself (such as
// "kind", "source" or "route"), "le" or "quantile" where a histogram or
// summary uses it; or a value that is not valid UTF-8.
var ErrInvalidLabels = errors.New("promtext: invalid labels")

// ErrInvalidSource is matched by the error [NewSource] and [NewHandler]
// return for a source they cannot serve: a nil read function or source,
// a metric of a type a table cannot read (NewSource reads counters and
// gauges), an invalid metric or label name, or two families of one name.
var ErrInvalidSource = errors.New("promtext: invalid metrics source")

// Type is the type of a metric family, as its # TYPE line names it.
type Type uint8

// The types of metric family the text format knows, less "untyped".
const (
	Counter Type = iota + 1
	Gauge
	Summary
	Histogram
)

// String returns the type's name in the text format: "counter", "gauge",
// "summary" or "histogram" ("" for another value).
func (t Type) String() string {
	switch t {
	case Counter:
		return "counter"
	case Gauge:
		return "gauge"
	case Summary:
		return "summary"
	case Histogram:
		return "histogram"
	}
	return ""
}

// Desc describes a metric family: its name, its help text, its type and
// the names of the labels that tell its series apart (its variable
// labels), in the order a [Metric]'s Read gives their values.
type Desc struct {
	Name   string
	Help   string
	Type   Type
	Labels []string
}

// Label is a label of a series: a name and its value.
type Label struct {
	Name, Value string
}

// Series is one series of a family: its labels, sorted by name, and its
// value. A counter or gauge has Value; a summary has Count, Sum and
// Quantiles; a histogram has Count, Sum and Buckets.
type Series struct {
	Labels    []Label
	Value     float64
	Count     uint64
	Sum       float64
	Buckets   []Bucket
	Quantiles []Quantile
}

// Bucket is a bucket of a histogram series: the number of observations
// at most UpperBound (cumulative, as the text format writes it). The
// buckets of a series ascend; the +Inf bucket, which holds every
// observation, is written from the series' Count and may be left out.
type Bucket struct {
	UpperBound float64
	Count      uint64
}

// Quantile is a quantile of a summary series: the φ-quantile Quantile
// (0 ≤ φ ≤ 1) and its Value.
type Quantile struct {
	Quantile, Value float64
}

// Family is a metric family with the series it has at one scrape.
type Family struct {
	Desc
	Series []Series
}

// Source is what a scrape reads families from: [NewSource]'s tables,
// [Requests], [GoRuntime] and [Process] are sources.
type Source interface {
	// Descs returns the descriptors of every family the source may
	// write; the same at every call.
	Descs() []Desc
	// Families returns the families as they are now. A family that has
	// no series at this scrape may be left out.
	Families() []Family
}

// Metric is a metric family of ringflake whose series are read from an
// S: a [ringflake.Stats], a [clockhealth.Reading], …
type Metric[S any] struct {
	Desc
	// Read calls emit once for each series s has: its value, and the
	// values of Desc.Labels, in order. It calls emit not at all where s
	// does not know the value (the series is then absent).
	Read func(s S, emit func(value float64, labelValues ...string))
}

// NewSource returns a [Source] of metrics, whose series are read at each
// scrape from what read returns; while read's second result is false, the
// source has no series. labels, which may be nil, are added to every
// series.
//
// Metrics of a type other than Counter and Gauge, a metric name that is
// not [a-zA-Z_:][a-zA-Z0-9_:]* and a nil read are errors matching
// [ErrInvalidSource]; labels as [ErrInvalidLabels] says are an error
// matching that.
func NewSource[S any](metrics []Metric[S], labels map[string]string, read func() (S, bool)) (Source, error) {
	if read == nil {
		return nil, fmt.Errorf("%w: nil read function", ErrInvalidSource)
	}
	descs := make([]Desc, len(metrics))
	for i, m := range metrics {
		if m.Type != Counter && m.Type != Gauge || m.Read == nil {
			return nil, fmt.Errorf("%w: %s is a %s or has no Read function", ErrInvalidSource, m.Name, m.Type)
		}
		descs[i] = m.Desc
	}
	if err := checkDescs(descs); err != nil {
		return nil, err
	}
	constant, err := constLabels(labels, descs)
	if err != nil {
		return nil, err
	}
	return &table[S]{metrics: slices.Clone(metrics), descs: descs, labels: constant, read: read}, nil
}

// table is the Source NewSource returns.
type table[S any] struct {
	metrics []Metric[S]
	descs   []Desc
	labels  []Label // constant, sorted by name
	read    func() (S, bool)
}

func (t *table[S]) Descs() []Desc { return slices.Clone(t.descs) }

func (t *table[S]) Families() []Family {
	s, ok := t.read()
	if !ok {
		return nil
	}
	var families []Family
	for _, m := range t.metrics {
		f := Family{Desc: m.Desc}
		m.Read(s, func(v float64, values ...string) {
			f.Series = append(f.Series, Series{Labels: seriesLabels(t.labels, m.Labels, values), Value: v})
		})
		if len(f.Series) > 0 {
			sortSeries(f.Series)
			families = append(families, f)
		}
	}
	return families
}

// seriesLabels returns the labels of a series: the constant ones and
// names[i]=values[i], sorted by name. Missing values are empty.
func seriesLabels(constant []Label, names, values []string) []Label {
	labels := make([]Label, 0, len(constant)+len(names))
	labels = append(labels, constant...)
	for i, name := range names {
		v := ""
		if i < len(values) {
			v = values[i]
		}
		labels = append(labels, Label{name, v})
	}
	slices.SortFunc(labels, func(a, b Label) int { return strings.Compare(a.Name, b.Name) })
	return labels
}

// sortSeries sorts the series of one family (which all have the same
// label names) by their label values, as a Prometheus registry does.
func sortSeries(series []Series) {
	slices.SortStableFunc(series, func(a, b Series) int {
		for i := range min(len(a.Labels), len(b.Labels)) {
			if c := strings.Compare(a.Labels[i].Value, b.Labels[i].Value); c != 0 {
				return c
			}
		}
		return cmp.Compare(len(a.Labels), len(b.Labels))
	})
}

// constLabels validates labels against the families of descs and returns
// them sorted by name.
func constLabels(labels map[string]string, descs []Desc) ([]Label, error) {
	used := map[string]bool{}
	for _, d := range descs {
		for _, l := range d.Labels {
			used[l] = true
		}
		switch d.Type {
		case Histogram:
			used["le"] = true
		case Summary:
			used["quantile"] = true
		}
	}
	var out []Label
	for _, name := range slices.Sorted(maps.Keys(labels)) {
		value := labels[name]
		switch {
		case !validName(name, false) || strings.HasPrefix(name, "__"):
			return nil, fmt.Errorf("%w: label name %q", ErrInvalidLabels, name)
		case used[name]:
			return nil, fmt.Errorf("%w: label name %q is one the metrics set themselves", ErrInvalidLabels, name)
		case !utf8.ValidString(value):
			return nil, fmt.Errorf("%w: the value of label %q is not valid UTF-8", ErrInvalidLabels, name)
		}
		out = append(out, Label{name, value})
	}
	return out, nil
}

// checkDescs returns an error matching ErrInvalidSource when a name in
// descs is not one the text format writes as it is, or a family's name
// is there twice.
func checkDescs(descs []Desc) error {
	seen := map[string]bool{}
	for _, d := range descs {
		if !validName(d.Name, true) || d.Type.String() == "" {
			return fmt.Errorf("%w: metric %q of type %d", ErrInvalidSource, d.Name, d.Type)
		}
		if seen[d.Name] {
			return fmt.Errorf("%w: two families are named %s", ErrInvalidSource, d.Name)
		}
		seen[d.Name] = true
		for _, l := range d.Labels {
			if !validName(l, false) || strings.HasPrefix(l, "__") {
				return fmt.Errorf("%w: metric %s has label name %q", ErrInvalidSource, d.Name, l)
			}
		}
	}
	return nil
}

// validName reports whether name is a metric name (colon allowed) or a
// label name (colon not allowed) of the classic character set.
func validName(name string, colon bool) bool {
	if name == "" {
		return false
	}
	for i, c := range name {
		ok := c == '_' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || i > 0 && '0' <= c && c <= '9' || colon && c == ':'
		if !ok {
			return false
		}
	}
	return true
}
