package lualease

import (
	"context"
	"fmt"
	"time"

	"github.com/ringflake/ringflake"
	"github.com/ringflake/ringflake/lease"
)

// listChunk is how many ids one List script examines, so that a large
// range does not block the server for long.
const listChunk = 1024

// List returns the ids in use under opts.Prefix in [0, Layout.MaxNode()],
// in ascending order, for an operator. Only Prefix, Layout and Timeout
// (which bounds each script call) of opts matter. It is a snapshot
// taken in chunks of 1024 ids: ids acquired or released while it runs may
// or may not appear. Errors: ringflake.ErrInvalidOption for Options that
// cannot work, otherwise the client's, context.DeadlineExceeded or ctx's.
func List(ctx context.Context, client ScriptRunner, opts Options) ([]lease.Holding, error) {
	s, err := resolve(opts, client)
	if err != nil {
		return nil, err
	}
	var out []lease.Holding
	for from := int64(0); from <= s.MaxNode; from += listChunk {
		to := min(from+listChunk-1, s.MaxNode)
		rows, err := callSlice(ctx, client, s.Timeout, listScript, []string{s.keyBase()}, itoa(from), itoa(to))
		if err != nil {
			return nil, fmt.Errorf("redislease: listing node ids: %w", err)
		}
		for _, row := range rows {
			f, ok := row.([]any)
			if !ok || len(f) != 6 {
				return nil, fmt.Errorf("redislease: listing node ids: unexpected reply %v", row)
			}
			id, _ := f[0].(int64)
			ttl, _ := f[1].(int64)
			h := lease.Holding{Node: id, TTL: time.Duration(ttl) * time.Millisecond}
			if tok, ok := f[2].(string); ok && tok == f[3] {
				h.Holder, _ = f[4].(string)
			}
			if m, ok := f[5].(string); ok {
				var mark ringflake.Mark
				if mark.UnmarshalText([]byte(m)) == nil {
					h.Mark = mark.Limit
				}
			}
			out = append(out, h)
		}
	}
	return out, nil
}
