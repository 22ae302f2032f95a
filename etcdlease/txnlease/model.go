package txnlease

import (
	"context"
	"errors"
)

// A Client is what a lease needs of etcd: transactions and leases, as
// etcd's v3 API serves them, in the plain Go types of this package. A
// transport implements it: etcdlease adapts a clientv3 client, and
// package [github.com/ringflake/ringflake/etcdlease/gateway] speaks etcd's
// JSON gateway. Every method returns ctx's error when ctx ends first.
type Client interface {
	// Txn runs txn atomically, at one revision: its comparisons, then
	// the operations of Then when they all hold, else those of Else.
	// The response holds one [OpResponse] per operation run, in order.
	Txn(ctx context.Context, txn Txn) (TxnResponse, error)
	// Grant grants a lease of ttl seconds; the server may grant more.
	Grant(ctx context.Context, ttl int64) (Grant, error)
	// Revoke revokes lease id, deleting the keys attached to it. Its
	// error matches [ErrLeaseNotFound] when the lease does not exist.
	Revoke(ctx context.Context, id int64) error
	// KeepAliveOnce renews lease id once and returns the TTL, in
	// seconds, that it runs for from now. Its error matches
	// [ErrLeaseNotFound] when the lease does not exist.
	KeepAliveOnce(ctx context.Context, id int64) (ttl int64, err error)
	// TimeToLive returns the remaining TTL of lease id in whole seconds,
	// rounded down, or -1 when it expired or does not exist.
	TimeToLive(ctx context.Context, id int64) (ttl int64, err error)
}

// ErrLeaseNotFound is what a [Client]'s error matches when the etcd lease
// it renews or revokes does not exist (it expired, or was revoked):
// etcd's "requested lease not found".
var ErrLeaseNotFound = errors.New("etcdlease: etcd lease not found")

// A Grant is a lease etcd granted: its id and TTL in seconds.
type Grant struct {
	ID  int64
	TTL int64
}

// A Txn is an etcd transaction: If holds when every comparison does.
type Txn struct {
	If   []Compare
	Then []Op
	Else []Op
}

// A Target is what a [Compare] compares.
type Target int

// The targets a lease compares. etcd has more (version, mod revision,
// lease); the leases need only these.
const (
	// TargetValue compares the key's value, as bytes. A comparison of the
	// value of a key that does not exist fails, whatever its Result.
	TargetValue Target = iota + 1
	// TargetCreateRevision compares the revision that created the key: 0
	// when the key does not exist.
	TargetCreateRevision
)

// A Result is how a [Compare] compares: the key's side first.
type Result int

// The results of a comparison.
const (
	Equal Result = iota + 1
	NotEqual
	Greater
	Less
)

// A Compare is one comparison of a transaction: Target of Key, Result,
// Value (for TargetValue) or Revision (for TargetCreateRevision).
type Compare struct {
	Key      string
	Target   Target
	Result   Result
	Value    string
	Revision int64
}

// ValueIs compares key's value with value.
func ValueIs(key string, r Result, value string) Compare {
	return Compare{Key: key, Target: TargetValue, Result: r, Value: value}
}

// Absent holds when key does not exist: its create revision is 0.
func Absent(key string) Compare {
	return Compare{Key: key, Target: TargetCreateRevision, Result: Equal}
}

// An OpKind is what an [Op] does.
type OpKind int

// The operations of a transaction.
const (
	// OpGet reads a key, or the keys in [Key, End).
	OpGet OpKind = iota + 1
	// OpPut writes a key's value, attached to an etcd lease or not.
	OpPut
	// OpTxn runs a nested transaction.
	OpTxn
)

// An Op is one operation of a transaction; [Get], [GetPrefix], [Put] and
// [Nest] make them.
type Op struct {
	Kind OpKind
	Key  string
	// End, for OpGet, ends the range of keys read, exclusive: "" reads
	// Key alone.
	End string
	// KeysOnly, for OpGet, leaves the values out.
	KeysOnly bool
	// Value and Lease, for OpPut: the value, and the etcd lease the key
	// is attached to (0: none).
	Value string
	Lease int64
	// Txn, for OpTxn, is the nested transaction.
	Txn *Txn
}

// Get reads key.
func Get(key string) Op { return Op{Kind: OpGet, Key: key} }

// GetPrefix reads the keys that start with prefix, a non-empty string,
// without their values when keysOnly.
func GetPrefix(prefix string, keysOnly bool) Op {
	return Op{Kind: OpGet, Key: prefix, End: PrefixEnd(prefix), KeysOnly: keysOnly}
}

// Put writes value into key, attached to the etcd lease lease (0: none).
func Put(key, value string, lease int64) Op {
	return Op{Kind: OpPut, Key: key, Value: value, Lease: lease}
}

// Nest runs txn inside a transaction.
func Nest(txn Txn) Op { return Op{Kind: OpTxn, Txn: &txn} }

// PrefixEnd returns the end of the range of the keys that start with
// prefix: the prefix with its last byte below 0xff incremented, and what
// follows it dropped; "\x00" (every key from prefix on) when there is
// none.
func PrefixEnd(prefix string) string {
	for i := len(prefix) - 1; i >= 0; i-- {
		if prefix[i] < 0xff {
			return prefix[:i] + string([]byte{prefix[i] + 1})
		}
	}
	return "\x00"
}

// A TxnResponse is what a transaction did: whether its comparisons held,
// and one response per operation of the branch it ran.
type TxnResponse struct {
	Succeeded bool
	Responses []OpResponse
}

// An OpResponse is the response to one operation: the keys read by an
// OpGet, the nested response of an OpTxn, nothing for an OpPut.
type OpResponse struct {
	Kvs []KeyValue
	Txn *TxnResponse
}

// A KeyValue is a key read, with its value (unless the read was
// KeysOnly) and the etcd lease it is attached to (0: none).
type KeyValue struct {
	Key, Value                           string
	CreateRevision, ModRevision, Version int64
	Lease                                int64
}

// Kvs returns the keys read by the i-th operation, none when there is no
// such response.
func (r TxnResponse) Kvs(i int) []KeyValue {
	if i < 0 || i >= len(r.Responses) {
		return nil
	}
	return r.Responses[i].Kvs
}

// Nested returns the response of the i-th operation, a nested
// transaction: the zero TxnResponse (not succeeded) when there is none.
func (r TxnResponse) Nested(i int) TxnResponse {
	if i < 0 || i >= len(r.Responses) || r.Responses[i].Txn == nil {
		return TxnResponse{}
	}
	return *r.Responses[i].Txn
}

// Branch returns the operations txn ran, given whether its comparisons
// held.
func (txn Txn) Branch(succeeded bool) []Op {
	if succeeded {
		return txn.Then
	}
	return txn.Else
}

// Matches reports whether resp has the shape of an answer to txn: one
// response per operation of the branch it ran, a nested response for
// each nested transaction, matching it in turn. A transport that decodes
// responses checks them with it, so that a lease never reads a missing
// response as a missing key.
func (txn Txn) Matches(resp TxnResponse) bool {
	ops := txn.Branch(resp.Succeeded)
	if len(resp.Responses) != len(ops) {
		return false
	}
	for i, op := range ops {
		r := resp.Responses[i]
		switch op.Kind {
		case OpTxn:
			if r.Txn == nil || op.Txn == nil || !op.Txn.Matches(*r.Txn) {
				return false
			}
		case OpPut:
			if r.Txn != nil || r.Kvs != nil {
				return false
			}
		default:
			if r.Txn != nil {
				return false
			}
		}
	}
	return true
}
