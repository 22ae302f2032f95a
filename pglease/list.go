package pglease

import (
	"context"
	"fmt"
	"time"

	"github.com/ringflake/ringflake"
	"github.com/ringflake/ringflake/lease"
)

// List returns the ids in use under opts.Prefix in [0, Layout.MaxNode()]
// — the rows whose lease has not expired on the database's clock — in
// ascending order, for an operator. Only Prefix and Layout of opts
// matter. Errors: ringflake.ErrInvalidOption for Options that cannot
// work, [ErrNoSchema], otherwise the client's.
func List(ctx context.Context, db DB, opts Options) ([]lease.Holding, error) {
	s, err := resolve(opts, db)
	if err != nil {
		return nil, err
	}
	rows, err := db.Query(ctx, `SELECT node, holder, ceil(extract(epoch FROM expires_at - clock_timestamp()) * 1000000)::bigint, mark
		FROM ringflake_node_leases
		WHERE prefix = $1 AND node BETWEEN 0 AND $2 AND expires_at > clock_timestamp()
		ORDER BY node`, simple, s.Prefix, s.MaxNode)
	if err != nil {
		return nil, fmt.Errorf("pglease: listing node ids: %w", clientErr(err))
	}
	defer rows.Close()
	var out []lease.Holding
	for rows.Next() {
		var (
			h      lease.Holding
			micros int64
			mark   *string
		)
		if err := rows.Scan(&h.Node, &h.Holder, &micros, &mark); err != nil {
			return nil, fmt.Errorf("pglease: listing node ids: %w", clientErr(err))
		}
		h.TTL = time.Duration(micros) * time.Microsecond
		if mark != nil {
			var m ringflake.Mark
			if m.UnmarshalText([]byte(*mark)) == nil {
				h.Mark = m.Limit
			}
		}
		out = append(out, h)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("pglease: listing node ids: %w", clientErr(err))
	}
	return out, nil
}
