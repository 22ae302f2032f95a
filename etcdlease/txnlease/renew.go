package txnlease

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/ringflake/ringflake"
	"github.com/ringflake/ringflake/lease"
)

// renew keeps the etcd lease alive and checks that the id's key is still
// ours and the prefix's epoch unchanged; when the key or the etcd lease is
// gone it takes the id again if nobody acquired it since.
func (l *Lease) renew(ctx context.Context, at time.Time) lease.Renewal {
	ctx, cancel := context.WithTimeout(ctx, l.s.Timeout)
	defer cancel()
	id := l.leaseID.Load()
	ttl, err := l.client.KeepAliveOnce(ctx, id)
	if errors.Is(err, ErrLeaseNotFound) {
		return l.retake(ctx, 0, at, 0) // the etcd lease expired or was revoked
	}
	if err != nil {
		return l.failed(err)
	}
	resp, err := l.client.Txn(ctx, Txn{Then: []Op{Get(l.leaseKey), Get(l.s.epochKey())}})
	if err != nil {
		return l.failed(err)
	}
	if !l.sameEpoch(resp.Kvs(1)) {
		return l.dataLost()
	}
	kvs := resp.Kvs(0)
	if len(kvs) == 0 {
		return l.retake(ctx, id, at, time.Duration(ttl)*time.Second) // the key was deleted; our etcd lease is alive
	}
	kv := kvs[0]
	switch {
	case kv.Value != l.token:
		return l.lostTo("is held by another holder")
	case kv.Lease != id:
		// Our token under another of our etcd leases: a retake whose
		// answer was lost. Keep that lease alive from now on.
		l.leaseID.Store(kv.Lease)
		revoke(l.client, id, l.s.Timeout)
		return l.failed(errors.New("the key moved to another of this holder's etcd leases"))
	}
	return lease.Renewal{Kind: lease.Renewed, Sent: at, TTL: time.Duration(ttl) * time.Second}
}

// sameEpoch reports whether kvs, a read of the epoch key, holds the epoch
// the lease was acquired in.
func (l *Lease) sameEpoch(kvs []KeyValue) bool {
	return len(kvs) == 1 && kvs[0].Value == l.epoch
}

// retake sets the id's key again, attached to etcd lease id or, when id is
// 0, to a new one, if the key does not exist, the owner key still names
// this lease (nobody acquired the id since) and the epoch is unchanged. at,
// the instant the renewal timer fired, precedes the keep-alive or grant
// whose TTL the key now lives on, so the lease's validity counts from it.
func (l *Lease) retake(ctx context.Context, id int64, at time.Time, ttl time.Duration) lease.Renewal {
	if id == 0 {
		grant, err := l.client.Grant(ctx, int64(l.s.TTL/time.Second))
		if err != nil {
			return l.failed(err)
		}
		id, ttl = grant.ID, time.Duration(grant.TTL)*time.Second
	}
	txn, err := l.client.Txn(ctx, Txn{
		If: []Compare{Absent(l.leaseKey),
			ValueIs(l.ownerKey, Equal, l.owner),
			ValueIs(l.s.epochKey(), Equal, l.epoch)},
		Then: []Op{Put(l.leaseKey, l.token, id)},
		Else: []Op{Get(l.s.epochKey())},
	})
	if err != nil {
		return l.failed(err)
	}
	if !txn.Succeeded {
		revoke(l.client, id, l.s.Timeout)
		if !l.sameEpoch(txn.Kvs(0)) {
			return l.dataLost()
		}
		return l.lostTo("was acquired by another holder since this lease held it")
	}
	if old := l.leaseID.Swap(id); old != id {
		revoke(l.client, old, l.s.Timeout) // gone already, normally
	}
	return lease.Renewal{Kind: lease.Retaken, Sent: at, TTL: ttl}
}

func (l *Lease) failed(err error) lease.Renewal {
	return lease.Renewal{Kind: lease.RenewFailed, Err: fmt.Errorf("etcdlease: renewing node %d: %w", l.node, err)}
}

func (l *Lease) lostTo(what string) lease.Renewal {
	return lease.Renewal{Kind: lease.Lost, Err: fmt.Errorf("%w: etcdlease: node %d %s", ringflake.ErrLeaseLost, l.node, what)}
}

func (l *Lease) dataLost() lease.Renewal {
	return lease.Renewal{Kind: lease.Lost, Err: fmt.Errorf("%w: %w: prefix %q has no epoch %s any more (node %d)",
		ringflake.ErrLeaseLost, lease.ErrDataLost, l.s.Prefix, l.epoch, l.node)}
}

// Close stops renewing and revokes the etcd lease, which deletes the id's
// key, so the id is free at once. Close a generator using the lease
// first — its Close saves the exact high-water mark through the lease.
// Closing twice returns nil the second time. The revocation is bounded by
// ctx and by Options.Timeout; Close returns the client's error (the id
// then stays held until its TTL runs out), or ctx's. After Close, Err
// returns [lease.ErrClosed].
func (l *Lease) Close(ctx context.Context) error {
	if !l.stop(lease.ErrClosed) {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, l.s.Timeout)
	defer cancel()
	err := l.client.Revoke(ctx, l.leaseID.Load())
	if err != nil && !errors.Is(err, ErrLeaseNotFound) {
		return fmt.Errorf("etcdlease: releasing node %d: %w", l.node, err)
	}
	return nil
}

// LoadMark returns the node's high-water mark, kept in etcd without a
// lease so that it outlives leases: the mark of the id's previous holders,
// or the zero Mark when no holder ever saved one. It implements
// [ringflake.MarkStore]. Errors match ringflake.ErrLeaseLost when another
// holder acquired the id since this lease did, and ringflake.ErrMarkCorrupt
// for a stored mark that is not a mark (a bare time, as earlier versions
// stored, still reads).
func (l *Lease) LoadMark(ctx context.Context) (ringflake.Mark, error) {
	ctx, cancel := context.WithTimeout(ctx, l.s.Timeout)
	defer cancel()
	txn, err := l.client.Txn(ctx, Txn{
		If:   []Compare{ValueIs(l.ownerKey, Equal, l.owner)},
		Then: []Op{Get(l.markKey)},
	})
	if err != nil {
		return ringflake.Mark{}, fmt.Errorf("etcdlease: loading the mark of node %d: %w", l.node, err)
	}
	if !txn.Succeeded {
		return ringflake.Mark{}, fmt.Errorf("%w: etcdlease: node %d was acquired by another holder", ringflake.ErrLeaseLost, l.node)
	}
	kvs := txn.Kvs(0)
	if len(kvs) == 0 {
		return ringflake.Mark{}, nil
	}
	var m ringflake.Mark
	if err := m.UnmarshalText([]byte(kvs[0].Value)); err != nil {
		return ringflake.Mark{}, &ringflake.MarkError{Path: "etcd " + l.markKey, Reason: fmt.Sprintf("%q is not a mark", kvs[0].Value)}
	}
	return m, nil
}

// SaveMark stores mark while, and only while, the id's key holds this
// lease's token: the comparison and the write are one transaction, so a
// holder that lost the id (even one paused past its TTL that does not know
// it yet) cannot overwrite the mark of the next holder. The key exists
// only while the etcd lease it is attached to is alive, and only this
// lease writes its token, so the token is the fencing token. Saves take
// effect in the order of the calls: each writes its token and number into
// the key "p/saved/<id>" with the mark, and the transaction ignores one
// that reaches etcd after a later save of this lease (a request abandoned
// at its timeout may still arrive). It implements [ringflake.MarkStore].
// Errors match ringflake.ErrLeaseLost when the token does not hold the
// id, and [lease.ErrStaleSave] when a later save was stored first.
func (l *Lease) SaveMark(ctx context.Context, mark ringflake.Mark) error {
	text, _ := mark.MarshalText() // never fails
	// "<token>/<number>", the number in 20 digits: etcd compares values
	// as bytes, which orders the saves of one token by number. The
	// values of the token lie between "<token>/" and "<token>0".
	ours, saved := l.token+"/", fmt.Sprintf("%s/%020d", l.token, l.saves.Add(1))
	held := ValueIs(l.leaseKey, Equal, l.token)
	write := []Op{Put(l.markKey, string(text), 0), Put(l.savedKey, saved, 0)}
	ctx, cancel := context.WithTimeout(ctx, l.s.Timeout)
	defer cancel()
	txn, err := l.client.Txn(ctx, Txn{
		// An earlier save of ours stored the mark: write.
		If:   []Compare{held, ValueIs(l.savedKey, Greater, ours), ValueIs(l.savedKey, Less, saved)},
		Then: write,
		Else: []Op{Nest(Txn{
			// A later save of ours did: stale.
			If: []Compare{held, ValueIs(l.savedKey, Greater, ours), ValueIs(l.savedKey, Less, l.token+"0")},
			// Another holder's save, or none (a value compared on a
			// missing key fails): write if the id is ours.
			Else: []Op{Nest(Txn{If: []Compare{held}, Then: write})},
		})},
	})
	if err != nil {
		return fmt.Errorf("etcdlease: saving the mark of node %d: %w", l.node, err)
	}
	switch {
	case txn.Succeeded:
		return nil
	case txn.Nested(0).Succeeded:
		return fmt.Errorf("%w: etcdlease: node %d: mark not saved", lease.ErrStaleSave, l.node)
	case txn.Nested(0).Nested(0).Succeeded:
		return nil
	}
	return fmt.Errorf("%w: etcdlease: node %d is not held by this lease; mark not saved", ringflake.ErrLeaseLost, l.node)
}
