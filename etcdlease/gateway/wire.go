package gateway

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/ringflake/ringflake/etcdlease/txnlease"
)

// The JSON of etcd's gateway is protobuf's JSON mapping of the v3 API:
// bytes fields in standard base64, int64 fields as strings, enums by
// name, fields with their zero value left out.

// i64 is an int64 field: written as a string, read from a string or a
// number.
type i64 int64

func (n i64) MarshalJSON() ([]byte, error) {
	return strconv.AppendQuote(nil, strconv.FormatInt(int64(n), 10)), nil
}

func (n *i64) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		return nil
	}
	s := b
	if len(s) >= 2 && s[0] == '"' && s[len(s)-1] == '"' {
		s = s[1 : len(s)-1]
	}
	v, err := strconv.ParseInt(string(s), 10, 64)
	if err != nil {
		return fmt.Errorf("%s is not an int64", snippet(b))
	}
	*n = i64(v)
	return nil
}

// snippet quotes the start of b, for errors about a body.
func snippet(b []byte) string {
	const most = 64
	if len(b) > most {
		return strconv.Quote(string(b[:most])) + "…"
	}
	return strconv.Quote(string(b))
}

// The requests.

type wireCompare struct {
	Key            []byte  `json:"key"`
	Target         string  `json:"target"`
	Result         string  `json:"result"`
	Value          *[]byte `json:"value,omitempty"`
	CreateRevision *i64    `json:"create_revision,omitempty"`
}

type wireOp struct {
	Range *wireRange `json:"request_range,omitempty"`
	Put   *wirePut   `json:"request_put,omitempty"`
	Txn   *wireTxn   `json:"request_txn,omitempty"`
}

type wireRange struct {
	Key      []byte `json:"key"`
	RangeEnd []byte `json:"range_end,omitempty"`
	KeysOnly bool   `json:"keys_only,omitempty"`
}

type wirePut struct {
	Key   []byte `json:"key"`
	Value []byte `json:"value,omitempty"`
	Lease i64    `json:"lease,omitempty"`
}

type wireTxn struct {
	Compare []wireCompare `json:"compare,omitempty"`
	Success []wireOp      `json:"success,omitempty"`
	Failure []wireOp      `json:"failure,omitempty"`
}

type wireDelete struct {
	Key      []byte `json:"key"`
	RangeEnd []byte `json:"range_end,omitempty"`
}

type wireLease struct {
	TTL i64 `json:"TTL,omitempty"`
	ID  i64 `json:"ID,omitempty"`
}

type wireAuth struct {
	Name     string `json:"name"`
	Password string `json:"password"`
}

// maxDepth bounds the nesting of transactions, as etcd does (its
// default --max-txn-ops aside, nesting is bounded by the request size).
const maxDepth = 64

// encodeTxn returns txn as the gateway's JSON request, or an error for a
// transaction this package cannot send.
func encodeTxn(txn txnlease.Txn, depth int) (*wireTxn, error) {
	if depth > maxDepth {
		return nil, errors.New("transactions nested too deep")
	}
	w := &wireTxn{}
	for _, c := range txn.If {
		wc := wireCompare{Key: []byte(c.Key)}
		switch c.Result {
		case txnlease.Equal:
			wc.Result = "EQUAL"
		case txnlease.NotEqual:
			wc.Result = "NOT_EQUAL"
		case txnlease.Greater:
			wc.Result = "GREATER"
		case txnlease.Less:
			wc.Result = "LESS"
		default:
			return nil, fmt.Errorf("comparison of %q: unknown result %d", c.Key, c.Result)
		}
		switch c.Target {
		case txnlease.TargetValue:
			v := []byte(c.Value)
			wc.Target, wc.Value = "VALUE", &v
		case txnlease.TargetCreateRevision:
			r := i64(c.Revision)
			wc.Target, wc.CreateRevision = "CREATE", &r
		default:
			return nil, fmt.Errorf("comparison of %q: unknown target %d", c.Key, c.Target)
		}
		w.Compare = append(w.Compare, wc)
	}
	var err error
	if w.Success, err = encodeOps(txn.Then, depth); err == nil {
		w.Failure, err = encodeOps(txn.Else, depth)
	}
	return w, err
}

func encodeOps(ops []txnlease.Op, depth int) ([]wireOp, error) {
	out := make([]wireOp, 0, len(ops))
	for _, op := range ops {
		var w wireOp
		switch op.Kind {
		case txnlease.OpGet:
			w.Range = &wireRange{Key: []byte(op.Key), RangeEnd: []byte(op.End), KeysOnly: op.KeysOnly}
		case txnlease.OpPut:
			w.Put = &wirePut{Key: []byte(op.Key), Value: []byte(op.Value), Lease: i64(op.Lease)}
		case txnlease.OpTxn:
			if op.Txn == nil {
				return nil, errors.New("a nested transaction without a Txn")
			}
			nested, err := encodeTxn(*op.Txn, depth+1)
			if err != nil {
				return nil, err
			}
			w.Txn = nested
		default:
			return nil, fmt.Errorf("operation on %q: unknown kind %d", op.Key, op.Kind)
		}
		out = append(out, w)
	}
	return out, nil
}

// The responses.

// wireHeader is a response's header; its fields do not matter here, only
// that there is one: every answer of etcd has it.
type wireHeader struct {
	Revision i64 `json:"revision"`
}

type wireKV struct {
	Key            []byte `json:"key"`
	Value          []byte `json:"value"`
	CreateRevision i64    `json:"create_revision"`
	ModRevision    i64    `json:"mod_revision"`
	Version        i64    `json:"version"`
	Lease          i64    `json:"lease"`
}

type wireRangeResponse struct {
	Header *wireHeader `json:"header"`
	Kvs    []wireKV    `json:"kvs"`
	More   bool        `json:"more"`
}

type wireResponseOp struct {
	Range *wireRangeResponse `json:"response_range"`
	Put   *json.RawMessage   `json:"response_put"`
	Txn   *wireTxnResponse   `json:"response_txn"`
}

type wireTxnResponse struct {
	Header    *wireHeader      `json:"header"`
	Succeeded bool             `json:"succeeded"`
	Responses []wireResponseOp `json:"responses"`
}

type wireDeleteResponse struct {
	Header  *wireHeader `json:"header"`
	Deleted i64         `json:"deleted"`
}

type wireLeaseResponse struct {
	Header *wireHeader `json:"header"`
	ID     i64         `json:"ID"`
	TTL    i64         `json:"TTL"`
	Error  string      `json:"error"` // LeaseGrantResponse's
}

// wireKeepAlive is an answer of the keep-alive stream: a result, or an
// error (grpc-gateway v1 names its code grpc_code, v2 code).
type wireKeepAlive struct {
	Result *wireLeaseResponse `json:"result"`
	Error  *struct {
		GRPCCode *int   `json:"grpc_code"`
		Code     *int   `json:"code"`
		Message  string `json:"message"`
	} `json:"error"`
}

type wireAuthResponse struct {
	Header *wireHeader `json:"header"`
	Token  string      `json:"token"`
}

// wireError is the body of an answer that is not 200 OK: grpc-gateway
// v1 writes error (a string), message and code; v2 code and message.
type wireError struct {
	Error   json.RawMessage `json:"error"`
	Message string          `json:"message"`
	Code    int             `json:"code"`
}

// decode reads body, one JSON value and nothing after it but space, into
// v: a non-nil pointer to a struct with a Header, which must be present.
func decode(body []byte, v any) error {
	d := json.NewDecoder(bytes.NewReader(body))
	if err := d.Decode(v); err != nil {
		return fmt.Errorf("not JSON of etcd's: %v", err)
	}
	if d.More() {
		return errors.New("more than one JSON value")
	}
	return nil
}

// decodeTxn reads the answer to txn.
func decodeTxn(txn txnlease.Txn, body []byte) (txnlease.TxnResponse, error) {
	var w wireTxnResponse
	if err := decode(body, &w); err != nil {
		return txnlease.TxnResponse{}, err
	}
	if w.Header == nil {
		return txnlease.TxnResponse{}, errors.New("no header")
	}
	return txnOf(txn, &w)
}

// txnOf returns w, the answer to txn, in txnlease's types, once it has
// checked that its shape matches txn's: a response per operation of the
// branch that ran, each of the operation's kind.
func txnOf(txn txnlease.Txn, w *wireTxnResponse) (txnlease.TxnResponse, error) {
	ops := txn.Branch(w.Succeeded)
	if len(w.Responses) != len(ops) {
		return txnlease.TxnResponse{}, fmt.Errorf("%d responses to %d operations (succeeded %v)", len(w.Responses), len(ops), w.Succeeded)
	}
	out := txnlease.TxnResponse{Succeeded: w.Succeeded, Responses: make([]txnlease.OpResponse, len(ops))}
	for i, op := range ops {
		r := w.Responses[i]
		switch {
		case op.Kind == txnlease.OpGet && r.Range != nil && r.Put == nil && r.Txn == nil:
			if r.Range.More {
				return txnlease.TxnResponse{}, fmt.Errorf("response %d: a partial range", i)
			}
			out.Responses[i].Kvs = kvsOf(r.Range.Kvs)
		case op.Kind == txnlease.OpPut && r.Put != nil && r.Range == nil && r.Txn == nil:
		case op.Kind == txnlease.OpTxn && r.Txn != nil && r.Range == nil && r.Put == nil && op.Txn != nil:
			nested, err := txnOf(*op.Txn, r.Txn)
			if err != nil {
				return txnlease.TxnResponse{}, fmt.Errorf("response %d: %w", i, err)
			}
			out.Responses[i].Txn = &nested
		default:
			return txnlease.TxnResponse{}, fmt.Errorf("response %d does not answer a %s", i, kindName(op.Kind))
		}
	}
	return out, nil
}

func kindName(k txnlease.OpKind) string {
	switch k {
	case txnlease.OpGet:
		return "range"
	case txnlease.OpPut:
		return "put"
	}
	return "txn"
}

func kvsOf(kvs []wireKV) []txnlease.KeyValue {
	if len(kvs) == 0 {
		return nil
	}
	out := make([]txnlease.KeyValue, len(kvs))
	for i, kv := range kvs {
		out[i] = txnlease.KeyValue{Key: string(kv.Key), Value: string(kv.Value), CreateRevision: int64(kv.CreateRevision),
			ModRevision: int64(kv.ModRevision), Version: int64(kv.Version), Lease: int64(kv.Lease)}
	}
	return out
}

// decodeRange reads the answer to a range request.
func decodeRange(body []byte) ([]txnlease.KeyValue, error) {
	var w wireRangeResponse
	if err := decode(body, &w); err != nil {
		return nil, err
	}
	if w.Header == nil {
		return nil, errors.New("no header")
	}
	if w.More {
		return nil, errors.New("a partial range")
	}
	return kvsOf(w.Kvs), nil
}

// decodeLease reads the answer to a lease request about lease id (0 for
// a grant, which names the id it granted).
func decodeLease(id int64, body []byte) (wireLeaseResponse, error) {
	var w wireLeaseResponse
	if err := decode(body, &w); err != nil {
		return w, err
	}
	return w, checkLease(id, &w)
}

func checkLease(id int64, w *wireLeaseResponse) error {
	switch {
	case w.Header == nil:
		return errors.New("no header")
	case id == 0 && w.ID <= 0:
		return fmt.Errorf("granted lease id %d", w.ID)
	case id != 0 && int64(w.ID) != id:
		return fmt.Errorf("an answer about lease %d, not %d", w.ID, id)
	}
	return nil
}

// decodeKeepAlive reads the first answer of the keep-alive stream for
// lease id: its result, or the error the stream ended with.
func decodeKeepAlive(id int64, body []byte) (wireLeaseResponse, *Error, error) {
	var w wireKeepAlive
	if err := json.NewDecoder(bytes.NewReader(body)).Decode(&w); err != nil {
		return wireLeaseResponse{}, nil, fmt.Errorf("not JSON of etcd's: %v", err)
	}
	switch {
	case w.Error != nil:
		e := &Error{Status: 200, Message: w.Error.Message}
		if strings.ContainsAny(e.Message, "\r\n") || e.Message == "" {
			e.Message = strconv.Quote(e.Message)
		}
		if c := w.Error.GRPCCode; c != nil {
			e.Code = *c
		} else if c := w.Error.Code; c != nil {
			e.Code = *c
		}
		return wireLeaseResponse{}, e, nil
	case w.Result == nil:
		return wireLeaseResponse{}, nil, errors.New("neither a result nor an error")
	}
	return *w.Result, nil, checkLease(id, w.Result)
}

// decodeError reads the body of an answer with HTTP status status, not
// 200 OK: etcd's error, or the start of what came instead.
func decodeError(status int, body []byte) *Error {
	e := &Error{Status: status}
	var w wireError
	if json.Unmarshal(body, &w) != nil || w.Message == "" && len(w.Error) == 0 {
		e.Message = "not an error of etcd's: " + snippet(bytes.TrimSpace(body))
		return e
	}
	e.Code, e.Message = w.Code, w.Message
	var s string
	if e.Message == "" && json.Unmarshal(w.Error, &s) == nil {
		e.Message = s
	}
	switch {
	case e.Message == "":
		e.Message = "an error without a message: " + snippet(bytes.TrimSpace(body))
	case strings.ContainsAny(e.Message, "\r\n"):
		e.Message = strconv.Quote(e.Message) // errors stay one line
	}
	return e
}
