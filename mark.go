package ringflake

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// DefaultMarkAhead is how far ahead of the IDs it issues a generator with a
// [MarkStore] writes its high-water mark, unless [WithMarkAhead] says
// otherwise — or two ticks of the layout, when they are longer.
const DefaultMarkAhead = time.Second

// A MarkStore persists a generator's high-water mark ([Mark]): an instant
// that no ID of the generator's node is stamped after. A generator writes
// the mark ahead of the IDs it issues — by [DefaultMarkAhead] or
// [WithMarkAhead] — so it writes about twice per such interval, not once per
// ID, and it never issues an ID stamped after the last mark it saved.
//
// On start, [New] loads the mark and treats every ID up to it as issued, so
// a restarted generator never issues an ID at or below the mark of a
// previous run. A mark tells a reservation from a rollback: a clock that
// reads behind the mark but not behind [Mark.Since] is behind only because
// the previous run reserved time ahead (it crashed without a clean
// [Generator.Close]); the generator waits out, or borrows across, that
// reservation without reporting a rollback. A clock behind Since is a
// rollback, and the generator's strategy decides.
//
// Saves must take effect in the order they were made. A store whose saves
// travel over a network must order them on the server, because a request
// the client gave up on (a timeout, a stalled connection, a pool that
// opened another) can still reach the server after a later save
// succeeded, and a mark that goes back lets a restart with its clock
// behind issue IDs again. Number each writer's saves and send the number
// with the fencing token; the server stores a save only when its number
// is above the last one it stored for that token, and a late, older one
// changes nothing (it may report an error; its caller gave up on it).
// Compare numbers, not marks: [Generator.Close]'s exact mark, the run's
// last save, may be below the mark written ahead before it and must
// replace it. The lease modules (redislease, etcdlease, pglease) do this,
// and lease/leasetest holds a store to it through a proxy that delivers a
// save late.
//
// A store that one generator must hold at a time (a file, say) also has
// the methods Hold(ctx) error and Release() error: New calls Hold before
// it loads the mark and fails with its error, and Close calls Release.
//
// Implementations must be safe for concurrent use. There is no default
// store: a generator keeps a mark only when given one.
// [github.com/ringflake/ringflake/hostlocal.MarkFile] keeps it in a local
// file; the leases of redislease, etcdlease and pglease keep the mark of a
// leased node id with the lease, so that the next holder of the id starts after it.
// A store that keeps marks as text can use [Mark.MarshalText] and
// [Mark.UnmarshalText], which also read the bare RFC 3339 time earlier
// versions stored.
type MarkStore interface {
	// LoadMark returns the stored mark, or the zero Mark when nothing was
	// ever stored (a first start). A mark that exists but cannot be read
	// or understood is an error, never "no mark".
	LoadMark(ctx context.Context) (Mark, error)

	// SaveMark durably stores m before returning. A running generator
	// only saves marks later than the ones it loaded or saved before;
	// [Generator.Close] may then save an earlier one: the exact mark of
	// what was issued, in place of the mark written ahead. Generators
	// call it on a background goroutine without a deadline, and calls
	// that need the mark wait for it, so it must bound its own time (a
	// network store needs a timeout).
	SaveMark(ctx context.Context, m Mark) error
}

// markHolder is a [MarkStore] that one generator holds at a time. A store
// with these two methods, as [github.com/ringflake/ringflake/hostlocal.MarkFile]
// has, is held: [New] calls Hold before it loads the mark and fails with
// Hold's error (so a second generator on the same store fails at once,
// instead of seeing the first one's mark as a rollback), and
// [Generator.Close] — or a New that fails after Hold — calls Release
// once. If Close's context ends before the final save, the store stays
// held until the process exits.
type markHolder interface {
	MarkStore
	Hold(ctx context.Context) error
	Release() error
}

// A Mark is a generator's high-water mark, as a [MarkStore] keeps it. The
// zero Mark means nothing was ever issued.
type Mark struct {
	// Limit is an instant no ID of the node was stamped after: the end of
	// the time a running generator reserved ahead of the IDs it issues or,
	// after a clean [Generator.Close], the time of its newest ID. The zero
	// Time means that nothing was issued.
	Limit time.Time

	// Since is the newest the writing generator knew of when it saved the
	// mark: the later of its clock's reading and its newest ID. IDs up to
	// Since may have been issued; the time between Since and Limit is a
	// reservation. A mark saved by a clean Close has Since equal to
	// Limit. A mark without Since (written by ringflake before v0.2) is
	// read as Since = Limit.
	Since time.Time

	// Node and Layout ([Layout.String]) say whom the mark was written
	// for: [New] refuses a mark of another node id or layout
	// ([ErrMarkMismatch]). The layouts' field order is not compared (a
	// mark bounds ticks, which both orders share). An empty Layout (a
	// mark written before v0.2) is not checked.
	Node   int64
	Layout string
}

// IsZero reports whether m is the zero Mark: nothing was ever issued.
func (m Mark) IsZero() bool { return m == Mark{} }

// markNone stands for a zero time in a mark's text.
const markNone = "none"

// MarshalText writes m as one line of text without a newline:
//
//	limit=2026-11-24T08:00:01.5Z since=2026-11-24T08:00:00.5Z node=7 layout=twitter
//
// with "none" for a zero time. The layout comes last: it is the rest of
// the line.
func (m Mark) MarshalText() ([]byte, error) {
	return m.appendText(nil), nil
}

func (m Mark) appendText(b []byte) []byte {
	stamp := func(b []byte, t time.Time) []byte {
		if t.IsZero() {
			return append(b, markNone...)
		}
		return t.UTC().AppendFormat(b, time.RFC3339Nano)
	}
	b = append(b, "limit="...)
	b = stamp(b, m.Limit)
	b = append(b, " since="...)
	b = stamp(b, m.Since)
	b = append(b, " node="...)
	b = strconv.AppendInt(b, m.Node, 10)
	b = append(b, " layout="...)
	return append(b, m.Layout...)
}

// UnmarshalText reads a mark written by [Mark.MarshalText], or a bare RFC
// 3339 time as earlier versions stored it (read as Limit = Since, no node
// or layout). Errors match [ErrMarkCorrupt].
func (m *Mark) UnmarshalText(text []byte) error {
	v, err := parseMark(string(text))
	if err != nil {
		return &MarkError{Path: "mark", Reason: err.Error()}
	}
	*m = v
	return nil
}

// parseMark reads the text of a mark; its errors say what is wrong, for a
// MarkError.
func parseMark(s string) (Mark, error) {
	if !strings.HasPrefix(s, "limit=") {
		t, err := time.Parse(time.RFC3339Nano, s)
		if err != nil || t.IsZero() {
			return Mark{}, fmt.Errorf("%q is neither a mark nor an RFC 3339 time", shorten(s))
		}
		return Mark{Limit: t, Since: t}, nil
	}
	var m Mark
	rest := s
	for _, key := range []string{"limit=", "since=", "node=", "layout="} {
		var val string
		if key == "layout=" {
			val, rest = rest, ""
		} else {
			val, rest, _ = strings.Cut(rest, " ")
		}
		val, ok := strings.CutPrefix(val, key)
		if !ok {
			return Mark{}, fmt.Errorf("want %s… in %q", key, shorten(s))
		}
		switch key {
		case "limit=", "since=":
			t := time.Time{}
			if val != markNone {
				var err error
				if t, err = time.Parse(time.RFC3339Nano, val); err != nil || t.IsZero() {
					return Mark{}, fmt.Errorf("%s%q is not an RFC 3339 time", key, shorten(val))
				}
			}
			if key == "limit=" {
				m.Limit = t
			} else {
				m.Since = t
			}
		case "node=":
			n, err := strconv.ParseInt(val, 10, 64)
			if err != nil || n < 0 {
				return Mark{}, fmt.Errorf("node=%q is not a node id", shorten(val))
			}
			m.Node = n
		case "layout=":
			m.Layout = val
		}
	}
	switch {
	case m.Limit.IsZero() && !m.Since.IsZero():
		return Mark{}, fmt.Errorf("since=%s without a limit", m.Since.UTC().Format(time.RFC3339Nano))
	case m.Since.After(m.Limit):
		return Mark{}, fmt.Errorf("since=%s is after limit=%s", m.Since.UTC().Format(time.RFC3339Nano), m.Limit.UTC().Format(time.RFC3339Nano))
	case !m.Limit.IsZero() && m.Since.IsZero():
		return Mark{}, fmt.Errorf("limit=%s without since", m.Limit.UTC().Format(time.RFC3339Nano))
	}
	return m, nil
}

// shorten returns s, cut to 40 bytes with "…" for error messages.
func shorten(s string) string {
	if len(s) <= 40 {
		return s
	}
	return s[:40] + "…"
}
