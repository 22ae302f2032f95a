package gateway

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ringflake/ringflake/etcdlease/txnlease"
)

// fuzzTxns are transactions of the shapes the leases send, for
// FuzzDecode to read answers to: reads, a put or reads, SaveMark's
// transaction nested twice.
var fuzzTxns = []txnlease.Txn{
	{Then: []txnlease.Op{txnlease.Get("e"), txnlease.Get("q")}},
	{If: []txnlease.Compare{txnlease.Absent("k")},
		Then: []txnlease.Op{txnlease.Put("k", "v", 7), txnlease.Put("o", "w", 0)},
		Else: []txnlease.Op{txnlease.Get("e"), txnlease.GetPrefix("p/", true)}},
	{If: []txnlease.Compare{txnlease.ValueIs("k", txnlease.Equal, "t")},
		Then: []txnlease.Op{txnlease.Put("m", "x", 0)},
		Else: []txnlease.Op{txnlease.Nest(txnlease.Txn{
			Else: []txnlease.Op{txnlease.Nest(txnlease.Txn{Then: []txnlease.Op{txnlease.Put("m", "x", 0)}})}})}},
}

// FuzzDecode reads arbitrary bytes as every answer the client reads, and
// asserts what it promises: no panic; a transaction's response that is
// read matches the transaction's shape; a lease answer that is read is
// about the lease asked about; a keep-alive is a result, an error, or a
// bad answer, exactly one; an error answer has a message on one line.
func FuzzDecode(f *testing.F) {
	for _, seed := range []string{
		`{"header":{"cluster_id":"15652788739825848605","member_id":"8161737743382593659","revision":"2","raft_term":"2"},"kvs":[{"key":"cHJvYmUvYQ==","create_revision":"2","mod_revision":"2","version":"1","value":"aGVsbG8="}],"count":"1"}`,
		`{"header":{"revision":"3"},"succeeded":true,"responses":[{"response_put":{"header":{"revision":"3"}}},{"response_put":{"header":{"revision":"3"}}}]}`,
		`{"header":{"revision":"3"},"responses":[{"response_range":{"header":{"revision":"3"},"kvs":[{"key":"ZQ==","value":"dg==","lease":"7"}],"count":"1"}},{"response_range":{"header":{}}}]}`,
		`{"header":{},"responses":[{"response_txn":{"header":{},"responses":[{"response_txn":{"header":{},"succeeded":true,"responses":[{"response_put":{"header":{}}}]}}]}}]}`,
		`{"header":{"revision":"2"},"ID":"7","TTL":"30"}`,
		`{"header":{},"ID":"7","TTL":"-1","grantedTTL":"30"}`,
		`{"result":{"header":{"revision":"3"},"ID":"7","TTL":"30"}}` + "\n",
		`{"result":{"header":{"revision":"4"},"ID":"7"}}`,
		`{"error":{"grpc_code":5,"http_code":404,"message":"etcdserver: requested lease not found","http_status":"Not Found"}}`,
		`{"error":"etcdserver: requested lease not found","message":"etcdserver: requested lease not found","code":5}`,
		`{"code":14,"message":"etcdserver: no leader","details":[]}`,
		`{"header":{},"deleted":"1"}`,
		"garbage",
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		for _, txn := range fuzzTxns {
			if resp, err := decodeTxn(txn, body); err == nil {
				require.True(t, txn.Matches(resp), "%+v does not answer %+v", resp, txn)
			}
		}
		_, _ = decodeRange(body)
		if w, err := decodeLease(0, body); err == nil {
			require.Positive(t, int64(w.ID), "a granted lease has an id")
		}
		if w, err := decodeLease(7, body); err == nil {
			require.Equal(t, i64(7), w.ID)
		}
		w, streamErr, err := decodeKeepAlive(7, body)
		switch {
		case err != nil:
			require.Nil(t, streamErr)
		case streamErr != nil:
			require.NotContains(t, streamErr.Message, "\n")
		default:
			require.Equal(t, i64(7), w.ID)
		}
		e := decodeError(500, body)
		require.NotEmpty(t, e.Message)
		require.False(t, strings.ContainsAny(e.Error(), "\r\n"), "one line: %q", e.Error())
	})
}
