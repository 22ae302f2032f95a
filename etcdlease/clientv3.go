package etcdlease

import (
	"context"
	"errors"
	"fmt"

	"go.etcd.io/etcd/api/v3/etcdserverpb"
	"go.etcd.io/etcd/api/v3/mvccpb"
	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/ringflake/ringflake/etcdlease/txnlease"
)

// v3 is the clientv3 transport of txnlease: a [Client] in txnlease's
// plain types.
type v3 struct{ c Client }

// adapt returns client as a txnlease.Client: nil for nil, so that the
// lease reports a nil client as an invalid option.
func adapt(client Client) txnlease.Client {
	if client == nil {
		return nil
	}
	return v3{client}
}

// notFound adds txnlease.ErrLeaseNotFound to etcd's "requested lease not
// found".
func notFound(err error) error {
	if errors.Is(err, rpctypes.ErrLeaseNotFound) {
		return fmt.Errorf("%w (%w)", txnlease.ErrLeaseNotFound, err)
	}
	return err
}

func (v v3) Txn(ctx context.Context, txn txnlease.Txn) (txnlease.TxnResponse, error) {
	cmps, then, orElse, err := txnOf(txn)
	if err != nil {
		return txnlease.TxnResponse{}, err
	}
	resp, err := v.c.Txn(ctx).If(cmps...).Then(then...).Else(orElse...).Commit()
	if err != nil {
		return txnlease.TxnResponse{}, err
	}
	return responseOf((*etcdserverpb.TxnResponse)(resp)), nil
}

func (v v3) Grant(ctx context.Context, ttl int64) (txnlease.Grant, error) {
	resp, err := v.c.Grant(ctx, ttl)
	if err != nil {
		return txnlease.Grant{}, err
	}
	return txnlease.Grant{ID: int64(resp.ID), TTL: resp.TTL}, nil
}

func (v v3) Revoke(ctx context.Context, id int64) error {
	_, err := v.c.Revoke(ctx, clientv3.LeaseID(id))
	return notFound(err)
}

func (v v3) KeepAliveOnce(ctx context.Context, id int64) (int64, error) {
	resp, err := v.c.KeepAliveOnce(ctx, clientv3.LeaseID(id))
	if err != nil {
		return 0, notFound(err)
	}
	return resp.TTL, nil
}

func (v v3) TimeToLive(ctx context.Context, id int64) (int64, error) {
	resp, err := v.c.TimeToLive(ctx, clientv3.LeaseID(id))
	if err != nil {
		return 0, err
	}
	return resp.TTL, nil
}

// txnOf returns txn's comparisons and branches as clientv3's.
func txnOf(txn txnlease.Txn) (cmps []clientv3.Cmp, then, orElse []clientv3.Op, err error) {
	for _, c := range txn.If {
		var op string
		switch c.Result {
		case txnlease.Equal:
			op = "="
		case txnlease.NotEqual:
			op = "!="
		case txnlease.Greater:
			op = ">"
		case txnlease.Less:
			op = "<"
		default:
			return nil, nil, nil, fmt.Errorf("etcdlease: comparison of %q: unknown result %d", c.Key, c.Result)
		}
		switch c.Target {
		case txnlease.TargetValue:
			cmps = append(cmps, clientv3.Compare(clientv3.Value(c.Key), op, c.Value))
		case txnlease.TargetCreateRevision:
			cmps = append(cmps, clientv3.Compare(clientv3.CreateRevision(c.Key), op, c.Revision))
		default:
			return nil, nil, nil, fmt.Errorf("etcdlease: comparison of %q: unknown target %d", c.Key, c.Target)
		}
	}
	if then, err = opsOf(txn.Then); err == nil {
		orElse, err = opsOf(txn.Else)
	}
	return cmps, then, orElse, err
}

func opsOf(ops []txnlease.Op) ([]clientv3.Op, error) {
	out := make([]clientv3.Op, 0, len(ops))
	for _, op := range ops {
		switch op.Kind {
		case txnlease.OpGet:
			var opts []clientv3.OpOption
			if op.End != "" {
				opts = append(opts, clientv3.WithRange(op.End))
			}
			if op.KeysOnly {
				opts = append(opts, clientv3.WithKeysOnly())
			}
			out = append(out, clientv3.OpGet(op.Key, opts...))
		case txnlease.OpPut:
			var opts []clientv3.OpOption
			if op.Lease != 0 {
				opts = append(opts, clientv3.WithLease(clientv3.LeaseID(op.Lease)))
			}
			out = append(out, clientv3.OpPut(op.Key, op.Value, opts...))
		case txnlease.OpTxn:
			if op.Txn == nil {
				return nil, errors.New("etcdlease: a nested transaction without a Txn")
			}
			cmps, then, orElse, err := txnOf(*op.Txn)
			if err != nil {
				return nil, err
			}
			out = append(out, clientv3.OpTxn(cmps, then, orElse))
		default:
			return nil, fmt.Errorf("etcdlease: operation on %q: unknown kind %d", op.Key, op.Kind)
		}
	}
	return out, nil
}

// responseOf returns a transaction's response in txnlease's types.
func responseOf(resp *etcdserverpb.TxnResponse) txnlease.TxnResponse {
	out := txnlease.TxnResponse{Succeeded: resp.Succeeded, Responses: make([]txnlease.OpResponse, len(resp.Responses))}
	for i, r := range resp.Responses {
		switch {
		case r.GetResponseRange() != nil:
			out.Responses[i].Kvs = kvsOf(r.GetResponseRange().Kvs)
		case r.GetResponseTxn() != nil:
			nested := responseOf(r.GetResponseTxn())
			out.Responses[i].Txn = &nested
		}
	}
	return out
}

func kvsOf(kvs []*mvccpb.KeyValue) []txnlease.KeyValue {
	if len(kvs) == 0 {
		return nil
	}
	out := make([]txnlease.KeyValue, len(kvs))
	for i, kv := range kvs {
		out[i] = txnlease.KeyValue{Key: string(kv.Key), Value: string(kv.Value),
			CreateRevision: kv.CreateRevision, ModRevision: kv.ModRevision, Version: kv.Version, Lease: kv.Lease}
	}
	return out
}
