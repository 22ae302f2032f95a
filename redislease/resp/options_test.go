package resp_test

import (
	"crypto/tls"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ringflake/ringflake/redislease/resp"
)

func TestParseURL(t *testing.T) {
	for _, tc := range []struct {
		url  string
		want resp.Options
	}{
		{"redis://127.0.0.1", resp.Options{Addr: "127.0.0.1:6379"}},
		{"redis://redis.internal:6380/", resp.Options{Addr: "redis.internal:6380"}},
		{"redis://:secret@h/2", resp.Options{Addr: "h:6379", Password: "secret", DB: 2}},
		{"redis://ids:s%40cret@h:1/15", resp.Options{Addr: "h:1", Username: "ids", Password: "s@cret", DB: 15}},
		{"redis://[::1]:7000/0", resp.Options{Addr: "[::1]:7000"}},
		{"redis://h?dial_timeout=2s&read_timeout=500ms&write_timeout=4", resp.Options{Addr: "h:6379",
			DialTimeout: 2 * time.Second, ReadTimeout: 500 * time.Millisecond, WriteTimeout: 4 * time.Second}},
		{"rediss://redis.internal", resp.Options{Addr: "redis.internal:6379",
			TLS: &tls.Config{ServerName: "redis.internal", MinVersion: tls.VersionTLS12}}},
	} {
		t.Run(tc.url, func(t *testing.T) {
			o, err := resp.ParseURL(tc.url)
			require.NoError(t, err)
			assert.Equal(t, tc.want, o)
		})
	}
}

func TestParseURLRejects(t *testing.T) {
	for _, url := range []string{
		"http://127.0.0.1:6379",
		"127.0.0.1:6379",
		"redis://",
		"redis://:6379/0",
		"redis://h:0",
		"redis://h:65536",
		"redis://h:port",
		"redis://h/db",
		"redis://h/-1",
		"redis://h/1/2",
		"redis://h#primary",
		"redis://h?colour=red",
		"redis://h?pool_size=10",
		"redis://h?read_timeout=soon",
		"redis://h?dial_timeout=-1s",
		"redis://h?write_timeout=0",
		"redis://user:pw@h:x",
	} {
		t.Run(url, func(t *testing.T) {
			_, err := resp.ParseURL(url)
			require.ErrorIs(t, err, resp.ErrInvalidOption)
		})
	}
}
