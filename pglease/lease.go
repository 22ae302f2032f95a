package pglease

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/ringflake/ringflake"
	"github.com/ringflake/ringflake/lease"
)

// Options configure [Acquire], [Claim] and [List]; the type is
// [lease.Options], shared with redislease and etcdlease. With PostgreSQL,
// TTLs are whole milliseconds, and a prefix owns its row of
// ringflake_node_epochs and its rows of ringflake_node_leases (see
// [Schema]).
type Options = lease.Options

// rules: TTLs are whole milliseconds.
var rules = lease.Rules{Package: "pglease", TTLUnit: time.Millisecond}

// ErrNoSchema is matched by the error of a lease on a database without
// the lease tables and functions — never migrated, restored without them,
// or after DROP TABLE … CASCADE, which leaves functions behind: run
// [Migrate] first.
var ErrNoSchema = errors.New("pglease: the lease tables do not exist (run pglease.Migrate)")

// DB is what the leases need of a PostgreSQL client: *pgxpool.Pool,
// *pgx.Conn and pgx.Tx implement it. Every request is one statement,
// sent with pgx.QueryExecModeSimpleProtocol whatever the client's
// default: no prepared statements, no session state, so a pool and
// PgBouncer in transaction pooling mode serve it as well as a direct
// connection.
type DB interface {
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
}

// simple is the exec mode of every request (see [DB]).
const simple = pgx.QueryExecModeSimpleProtocol

// settings are Options with defaults applied and validated.
type settings struct{ lease.Config }

func resolve(opts Options, db DB) (settings, error) {
	c, err := opts.Resolve(rules)
	if err == nil && db == nil {
		err = &lease.OptionError{Package: rules.Package, Reason: "nil database"}
	}
	return settings{c}, err
}

func (s *settings) ttlMillis() int64 { return s.TTL.Milliseconds() }

// quietMillis is the quiet period in whole milliseconds, rounded up.
func (s *settings) quietMillis() int64 {
	return int64((s.Quiet() + time.Millisecond - 1) / time.Millisecond)
}

// A Lease holds a node id in PostgreSQL until it is lost or closed. It
// implements [ringflake.Lease] and [ringflake.MarkStore]: pass it to
// ringflake.New with [ringflake.WithLease] and the generator checks Held
// on every ID and keeps its high-water mark with the lease. Node, Held,
// WaitHeld, Done, Err, MarkAhead and MaxLead are those of the embedded
// [lease.Keeper].
//
// A Lease is safe for concurrent use by multiple goroutines.
type Lease struct {
	*lease.Keeper
	stop  func(reason error) bool
	node  int64 // Node(), for the renewal goroutine, which may start before Keep returns
	db    DB
	s     settings
	fence int64        // the fencing token: the row's fence while this lease holds it
	epoch string       // the prefix's epoch when the id was acquired
	saves atomic.Int64 // SaveMark calls so far: each save's number
}

var (
	_ ringflake.Lease     = (*Lease)(nil)
	_ ringflake.MarkStore = (*Lease)(nil)
)

// Acquire takes the lowest node id in [0, Layout.MaxNode()] under
// opts.Prefix that no live lease holds, with a new fencing token, in one
// statement (a call of ringflake_node_acquire), and keeps it renewed in
// the background until [Lease.Close] or until it is lost. Acquisitions
// of one prefix lock its epoch row, so they run one at a time and two
// acquirers never get the same id. ctx bounds the acquisition, and
// Options.Timeout its request. The lease's expiry is computed by the
// database (clock_timestamp() + TTL); the lease counts its validity from
// when the request was sent, on its own monotonic clock.
//
// When the database has no epoch for the prefix (a first start, or a
// table that lost the prefix's data) or the server's history changed
// since the epoch was last written (a failover, a restore from a backup),
// the lease does not hold its id — Held is false, a generator fails with
// ringflake.ErrLeaseLost — until a quiet period of TTL + Margin + MaxLead
// has passed, after which every lease the database may have forgotten
// has expired and the clock has passed every ID its holder may have
// issued ahead. WaitHeld waits for it.
//
// Errors:
//   - ringflake.ErrNodeUnavailable: every id of the range is held (a
//     [*lease.RangeFullError]);
//   - ringflake.ErrInvalidOption: Options that cannot work (a TTL that is
//     not a positive whole number of milliseconds, RenewEvery + Margin not
//     shorter than TTL, negative durations), a nil db;
//   - [ErrNoSchema]: the tables do not exist;
//   - otherwise the client's error, context.DeadlineExceeded (the request
//     took longer than Options.Timeout), or ctx's error.
func Acquire(ctx context.Context, db DB, opts Options) (*Lease, error) {
	s, err := resolve(opts, db)
	if err != nil {
		return nil, err
	}
	l, _, err := s.take(ctx, db, 0, s.MaxNode)
	if l != nil || err != nil {
		return l, err
	}
	return nil, &lease.RangeFullError{Package: rules.Package, Prefix: s.Prefix, Nodes: s.MaxNode + 1}
}

// Claim takes node id node under opts.Prefix and keeps it renewed like
// [Acquire] — the same rows, fencing, quiet periods and marks — for a
// node id that is configured rather than leased (static, from the
// environment, a StatefulSet's ordinal): a fleet guard. A second process
// that claims an id while another holds it fails at once, with the
// holder's [lease.Options.Holder]; a holder that loses its claim stops issuing
// (Held is false, Done is closed). Ids claimed and ids acquired share
// the range: Acquire skips a claimed id, and a Claim of an acquired id
// fails.
//
// Errors:
//   - ringflake.ErrNodeUnavailable: another lease holds the id (a
//     [*lease.HeldError], naming its holder);
//   - ringflake.ErrNodeOutOfRange: node does not fit Options.Layout;
//   - ringflake.ErrInvalidOption, [ErrNoSchema]: as for Acquire;
//   - otherwise the client's error, context.DeadlineExceeded (the request
//     took longer than Options.Timeout), or ctx's error.
func Claim(ctx context.Context, db DB, node int64, opts Options) (*Lease, error) {
	s, err := resolve(opts, db)
	if err != nil {
		return nil, err
	}
	if _, err := ringflake.StaticNode(node).NodeID(ctx, s.Layout); err != nil {
		return nil, err
	}
	l, holder, err := s.take(ctx, db, node, node)
	if l != nil || err != nil {
		return l, err
	}
	return nil, &lease.HeldError{Package: rules.Package, Prefix: s.Prefix, Node: node, Holder: holder}
}

// taken is what ringflake_node_acquire returns.
type taken struct {
	node, fence int64 // node -1: every id tried is held
	epoch       string
	quietMillis int64
	holder      string // when node is -1: the holder of the last id tried
}

// take calls ringflake_node_acquire once, for the lowest free id of
// [from, to]. It returns a nil Lease when every id there is held, with
// the holder of to.
func (s *settings) take(ctx context.Context, db DB, from, to int64) (*Lease, string, error) {
	sent := s.Clock.Now()
	r, err := lease.Call(ctx, s.Timeout, func(ctx context.Context) (taken, error) {
		var r taken
		err := db.QueryRow(ctx, `SELECT node, fence, epoch, quiet_ms, holder FROM ringflake_node_acquire($1, $2, $3, $4, $5, $6, $7)`,
			simple, s.Prefix, from, to, s.Holder, s.ttlMillis(), lease.NewToken(), s.quietMillis()).
			Scan(&r.node, &r.fence, &r.epoch, &r.quietMillis, &r.holder)
		return r, err
	})
	if err != nil {
		return nil, "", fmt.Errorf("pglease: acquiring a node id: %w", clientErr(err))
	}
	if r.node < 0 {
		return nil, r.holder, nil
	}
	var notBefore time.Time
	if r.quietMillis > 0 {
		// The quiet period ends r.quietMillis after the database computed
		// it, which was before now.
		notBefore = s.Clock.Now().Add(time.Duration(r.quietMillis) * time.Millisecond)
	}
	l := &Lease{db: db, s: *s, node: r.node, fence: r.fence, epoch: r.epoch}
	l.Keeper, l.stop = lease.Keep(s.Config, r.node, notBefore, sent.Add(s.TTL-s.Margin), l.renew)
	return l, "", nil
}

// clientErr returns the client's error err on one line (pgx lists the
// attempts of a failed connection on lines of their own), wrapped with
// ErrNoSchema when it says that a table or a function of the schema does
// not exist. It returns nil for nil.
func clientErr(err error) error {
	if err == nil {
		return nil
	}
	flat := error(oneLine{err})
	var pe *pgconn.PgError
	// undefined_table, undefined_function, and undefined_object: after
	// DROP TABLE … CASCADE the functions that use a table's row type in
	// their bodies stay behind, and fail on the missing type.
	if errors.As(err, &pe) && (pe.Code == "42P01" || pe.Code == "42883" || pe.Code == "42704") {
		return fmt.Errorf("%w: %w", ErrNoSchema, flat)
	}
	return flat
}

// oneLine is an error whose text is on one line.
type oneLine struct{ err error }

// Error returns the error's text with each line break and the blanks
// around it replaced by "; " (after a colon, by a space).
func (e oneLine) Error() string {
	lines := strings.Split(e.err.Error(), "\n")
	for i := range lines {
		lines[i] = strings.TrimSpace(lines[i])
	}
	return strings.ReplaceAll(strings.Join(lines, "; "), ":; ", ": ")
}

// Unwrap returns the error.
func (e oneLine) Unwrap() error { return e.err }

// renew calls ringflake_node_renew once, bounded by Options.Timeout.
func (l *Lease) renew(ctx context.Context, at time.Time) lease.Renewal {
	r := lease.Renewal{Sent: at, TTL: l.s.TTL}
	type result struct{ code, quietMillis int64 }
	v, err := lease.Call(ctx, l.s.Timeout, func(ctx context.Context) (result, error) {
		var v result
		err := l.db.QueryRow(ctx, `SELECT code, quiet_ms FROM ringflake_node_renew($1, $2, $3, $4, $5, $6, $7)`,
			simple, l.s.Prefix, l.node, l.fence, l.epoch, l.s.Holder, l.s.ttlMillis(), l.s.quietMillis()).Scan(&v.code, &v.quietMillis)
		return v, err
	})
	switch {
	case errors.Is(clientErr(err), ErrNoSchema):
		// The tables were dropped: everything the prefix had is gone.
		return l.dataLost(fmt.Sprintf("the lease tables are gone (%v)", err))
	case err != nil:
		r.Kind = lease.RenewFailed
		r.Err = fmt.Errorf("pglease: renewing node %d: %w", l.node, clientErr(err))
	case v.code == 1:
		r.Kind = lease.Renewed
	case v.code == 2:
		r.Kind = lease.Retaken
		if v.quietMillis > 0 {
			// The server's history changed (a failover, a restore): the
			// lease may have been lost with data, and the id held by
			// someone the database forgot.
			r.NotBefore = l.s.Clock.Now().Add(time.Duration(v.quietMillis) * time.Millisecond)
		}
	case v.code == 0:
		r.Kind = lease.Lost
		r.Err = fmt.Errorf("%w: pglease: node %d is held by another holder", ringflake.ErrLeaseLost, l.node)
	case v.code == -2:
		return l.dataLost(fmt.Sprintf("prefix %q has no epoch %s any more", l.s.Prefix, l.epoch))
	default:
		r.Kind = lease.Lost
		r.Err = fmt.Errorf("%w: pglease: node %d expired and another holder acquired it since", ringflake.ErrLeaseLost, l.node)
	}
	return r
}

func (l *Lease) dataLost(why string) lease.Renewal {
	return lease.Renewal{Kind: lease.Lost, Err: fmt.Errorf("%w: %w: %s (node %d)", ringflake.ErrLeaseLost, lease.ErrDataLost, why, l.node)}
}

// Close stops renewing and releases the id: it clears the row's expiry
// if the row still holds this lease's fencing token, so the id is free at
// once; the row keeps the mark for the next holder. Close a generator
// using the lease first — its Close saves the exact high-water mark
// through the lease. Closing twice returns nil the second time. The
// release is bounded by ctx and by Options.Timeout; Close returns the
// client's error, context.DeadlineExceeded or ctx's error (the id then
// stays held until its TTL runs out). After Close, Err returns
// [lease.ErrClosed].
func (l *Lease) Close(ctx context.Context) error {
	if !l.stop(lease.ErrClosed) {
		return nil
	}
	_, err := lease.Call(ctx, l.s.Timeout, func(ctx context.Context) (pgconn.CommandTag, error) {
		return l.db.Exec(ctx, `UPDATE ringflake_node_leases SET expires_at = NULL WHERE prefix = $1 AND node = $2 AND fence = $3`,
			simple, l.s.Prefix, l.node, l.fence)
	})
	if err != nil {
		return fmt.Errorf("pglease: releasing node %d: %w", l.node, clientErr(err))
	}
	return nil
}

// LoadMark returns the node's high-water mark, kept in the id's row so
// that it outlives leases: the mark of the id's previous holders, or the
// zero Mark when no holder ever saved one. It implements
// [ringflake.MarkStore]. Errors match ringflake.ErrLeaseLost when another
// holder acquired the id since this lease did, ringflake.ErrMarkCorrupt
// for a stored mark that is not a mark, and context.DeadlineExceeded when
// the request takes longer than Options.Timeout.
func (l *Lease) LoadMark(ctx context.Context) (ringflake.Mark, error) {
	type row struct {
		fence int64
		mark  *string
	}
	r, err := lease.Call(ctx, l.s.Timeout, func(ctx context.Context) (row, error) {
		var r row
		err := l.db.QueryRow(ctx, `SELECT fence, mark FROM ringflake_node_leases WHERE prefix = $1 AND node = $2`,
			simple, l.s.Prefix, l.node).Scan(&r.fence, &r.mark)
		return r, err
	})
	if errors.Is(err, pgx.ErrNoRows) || (err == nil && r.fence != l.fence) {
		return ringflake.Mark{}, fmt.Errorf("%w: pglease: node %d was acquired by another holder", ringflake.ErrLeaseLost, l.node)
	}
	if err != nil {
		return ringflake.Mark{}, fmt.Errorf("pglease: loading the mark of node %d: %w", l.node, clientErr(err))
	}
	if r.mark == nil {
		return ringflake.Mark{}, nil
	}
	var m ringflake.Mark
	if err := m.UnmarshalText([]byte(*r.mark)); err != nil {
		return ringflake.Mark{}, &ringflake.MarkError{Path: l.where(), Reason: fmt.Sprintf("%q is not a mark", *r.mark)}
	}
	return m, nil
}

// where names the node's row, for a MarkError.
func (l *Lease) where() string {
	return fmt.Sprintf("postgres ringflake_node_leases prefix %q node %d", l.s.Prefix, l.node)
}

// SaveMark stores mark while, and only while, this lease's fencing token
// holds the id and its lease has not expired on the database's clock: the
// check and the write are one statement, so a holder that lost the id
// (even one paused past its TTL that does not know it yet) cannot
// overwrite the mark of the next holder. Saves take effect in the order
// of the calls: each carries its number, and the row keeps the number of
// the save that stored its mark, so a request that reaches the database
// after a later save of this lease (one abandoned at its timeout may still
// arrive) changes nothing. It implements [ringflake.MarkStore]. Errors
// match ringflake.ErrLeaseLost when the token does not hold the id,
// [lease.ErrStaleSave] when a later save was stored first, and
// context.DeadlineExceeded when the request takes longer than
// Options.Timeout (the mark may then be saved or not — but never after a
// later save).
func (l *Lease) SaveMark(ctx context.Context, mark ringflake.Mark) error {
	text, _ := mark.MarshalText() // never fails
	seq := l.saves.Add(1)
	code, err := lease.Call(ctx, l.s.Timeout, func(ctx context.Context) (int, error) {
		var code int
		err := l.db.QueryRow(ctx, `SELECT ringflake_node_save_mark_in_order($1, $2, $3, $4, $5, $6)`,
			simple, l.s.Prefix, l.node, l.fence, l.epoch, string(text), seq).Scan(&code)
		return code, err
	})
	switch {
	case err != nil:
		return fmt.Errorf("pglease: saving the mark of node %d: %w", l.node, clientErr(err))
	case code == 2:
		return fmt.Errorf("%w: pglease: node %d: mark not saved", lease.ErrStaleSave, l.node)
	case code != 1:
		return fmt.Errorf("%w: pglease: node %d is not held by this lease; mark not saved", ringflake.ErrLeaseLost, l.node)
	}
	return nil
}
