package txnlease

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/ringflake/ringflake"
	"github.com/ringflake/ringflake/lease"
)

// List returns the ids in use under opts.Prefix in [0, Layout.MaxNode()],
// in ascending order, for an operator. Only Prefix and Layout of opts
// matter. The keys are read at one revision; the remaining TTLs are asked
// for one by one afterwards. Errors: ringflake.ErrInvalidOption for
// Options that cannot work, otherwise the client's.
func List(ctx context.Context, client Client, opts Options) ([]lease.Holding, error) {
	s, err := resolve(opts, client)
	if err != nil {
		return nil, err
	}
	dirs := []string{s.dir("lease"), s.dir("owner"), s.dir("mark")}
	ops := make([]Op, len(dirs))
	for i, d := range dirs {
		ops[i] = GetPrefix(d, false)
	}
	txn, err := client.Txn(ctx, Txn{Then: ops})
	if err != nil {
		return nil, fmt.Errorf("etcdlease: listing node ids: %w", err)
	}
	values := make([]map[int64]string, len(dirs))
	leases := map[int64]int64{}
	for i, d := range dirs {
		values[i] = map[int64]string{}
		for _, kv := range txn.Kvs(i) {
			if n, ok := s.nodeOf(d, kv.Key); ok {
				values[i][n] = kv.Value
				if i == 0 {
					leases[n] = kv.Lease
				}
			}
		}
	}
	var out []lease.Holding
	for n, token := range values[0] {
		h := lease.Holding{Node: n}
		if tok, holder, ok := strings.Cut(values[1][n], " "); ok && tok == token {
			h.Holder = holder
		}
		if m, ok := values[2][n]; ok {
			var mark ringflake.Mark
			if mark.UnmarshalText([]byte(m)) == nil {
				h.Mark = mark.Limit
			}
		}
		if id := leases[n]; id != 0 {
			ttl, err := client.TimeToLive(ctx, id)
			if err != nil {
				return nil, fmt.Errorf("etcdlease: listing node ids: %w", err)
			}
			h.TTL = time.Duration(ttl) * time.Second
		}
		out = append(out, h)
	}
	slices.SortFunc(out, func(a, b lease.Holding) int { return cmp.Compare(a.Node, b.Node) })
	return out, nil
}
