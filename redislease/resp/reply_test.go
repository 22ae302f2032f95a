package resp

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// read parses data as one reply, within max bytes.
func read(data string, max int) (any, error) {
	return readReply(bufio.NewReaderSize(strings.NewReader(data), readBuffer), max)
}

// appendReply appends v, a value readReply returns, as a reply.
func appendReply(b []byte, v any) []byte {
	switch v := v.(type) {
	case nil:
		return append(b, "$-1\r\n"...)
	case string:
		b = append(b, '$')
		b = strconv.AppendInt(b, int64(len(v)), 10)
		return append(append(append(b, "\r\n"...), v...), "\r\n"...)
	case int64:
		return append(strconv.AppendInt(append(b, ':'), v, 10), "\r\n"...)
	case *Error:
		return append(append(append(b, '-'), v.Message...), "\r\n"...)
	case []any:
		b = strconv.AppendInt(append(b, '*'), int64(len(v)), 10)
		b = append(b, "\r\n"...)
		for _, e := range v {
			b = appendReply(b, e)
		}
		return b
	}
	panic(fmt.Sprintf("appendReply: %T", v))
}

func TestReadReply(t *testing.T) {
	for _, tc := range []struct {
		name, data string
		want       any
	}{
		{"simple string", "+OK\r\n", "OK"},
		{"empty simple string", "+\r\n", ""},
		{"integer", ":-42\r\n", int64(-42)},
		{"bulk string", "$5\r\nhe\r\no\r\n", "he\r\no"},
		{"empty bulk string", "$0\r\n\r\n", ""},
		{"nil bulk string", "$-1\r\n", nil},
		{"nil array", "*-1\r\n", nil},
		{"empty array", "*0\r\n", []any{}},
		{"nested", "*3\r\n:1\r\n$-1\r\n*2\r\n+a\r\n-ERR inner\r\n", []any{int64(1), nil, []any{"a", &Error{Message: "ERR inner"}}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v, err := read(tc.data, DefaultMaxReply)
			require.NoError(t, err)
			assert.Equal(t, tc.want, v)
		})
	}

	_, err := read("-WRONGTYPE Operation against a key\r\n", DefaultMaxReply)
	var e *Error
	require.ErrorAs(t, err, &e, "an error reply at the top is the error")
	assert.Equal(t, "WRONGTYPE", e.Code())
}

func TestReadReplyRejects(t *testing.T) {
	for _, tc := range []struct {
		name, data string
		want       error
	}{
		{"unknown type", "!oops\r\n", ErrProtocol},
		{"RESP3 null", "_\r\n", ErrProtocol},
		{"no CR", "+OK\n", ErrProtocol},
		{"a type alone", "+\n", ErrProtocol},
		{"integer with a plus", ":+1\r\n", ErrProtocol},
		{"integer too large", ":9223372036854775808\r\n", ErrProtocol},
		{"integer of nothing", ":\r\n", ErrProtocol},
		{"bulk length below -1", "$-2\r\n", ErrProtocol},
		{"bulk without CRLF", "$2\r\nabcd\r\n", ErrProtocol},
		{"array length below -1", "*-5\r\n", ErrProtocol},
		{"a line too long", "+" + strings.Repeat("a", readBuffer) + "\r\n", ErrProtocol},
		{"nested too deep", strings.Repeat("*1\r\n", maxDepth+1) + ":1\r\n", ErrProtocol},
		{"bulk beyond the bound", "$1000\r\n", ErrProtocol},
		{"array beyond the bound", "*100\r\n", ErrProtocol},
		{"cut in a line", "+OK", io.ErrUnexpectedEOF},
		{"cut in a bulk string", "$10\r\nabc", io.ErrUnexpectedEOF},
		{"cut in an array", "*2\r\n:1\r\n", io.ErrUnexpectedEOF},
		{"nothing", "", io.EOF},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := read(tc.data, 512)
			require.ErrorIs(t, err, tc.want)
		})
	}
}

// TestReadReplyBound: the bound counts the whole reply, nested elements
// included.
func TestReadReplyBound(t *testing.T) {
	reply := string(appendReply(nil, []any{"0123456789", []any{int64(1), "abc"}}))
	_, err := read(reply, len(reply)+3*elemCost)
	require.ErrorIs(t, err, ErrProtocol, "one byte short")
	_, err = read(reply, len(reply)+4*elemCost)
	require.NoError(t, err)
}

// TestHostileLengthsAllocateLittle: lengths a server announces but does
// not send cost no memory: the reader allocates as the bytes come.
func TestHostileLengthsAllocateLittle(t *testing.T) {
	for _, tc := range []struct {
		data string
		want error
	}{
		{"$" + strconv.Itoa(DefaultMaxReply-100) + "\r\nabc", io.ErrUnexpectedEOF},
		{"*" + strconv.Itoa(DefaultMaxReply/(elemCost+3)-1000) + "\r\n:1\r\n", io.ErrUnexpectedEOF},
		{strings.Repeat("*100000\r\n", 30), ErrProtocol}, // the tenth is beyond the bound
	} {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		_, err := read(tc.data, DefaultMaxReply)
		runtime.ReadMemStats(&after)
		require.ErrorIs(t, err, tc.want)
		assert.Less(t, after.TotalAlloc-before.TotalAlloc, uint64(2<<20), "allocated for %.20q", tc.data)
	}
}

// FuzzReadReply: any bytes parse to a reply or fail with ErrProtocol or a
// reply cut short, never a panic; a reply, written back, reads the same.
func FuzzReadReply(f *testing.F) {
	for _, seed := range []string{
		"+OK\r\n", "-ERR x\r\n", ":-7\r\n", "$3\r\nabc\r\n", "$-1\r\n", "*-1\r\n",
		"*2\r\n*1\r\n$0\r\n\r\n-NOSCRIPT y\r\n", "*1\r\n$99999999\r\n",
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		const max = 1 << 16
		v, err := readReply(bufio.NewReaderSize(bytes.NewReader(data), readBuffer), max)
		var e *Error
		switch {
		case errors.As(err, &e):
			v = e
		case err != nil:
			if !errors.Is(err, ErrProtocol) && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, io.EOF) {
				t.Fatalf("%q: error %v", data, err)
			}
			return
		}
		again := appendReply(nil, v) // simple strings become bulk strings, longer
		w, err := read(string(again), 4*max)
		if errors.As(err, &e) {
			w, err = e, nil
		}
		require.NoError(t, err, "%q", again)
		require.Equal(t, v, w, "%q read as %#v, written as %q", data, v, again)
	})
}
