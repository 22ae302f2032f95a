package leasetest

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// SettleRedis makes prefix, on the Redis at addr, look like the prefix of
// a fleet that has been running for longer than a TTL, as [Conn.Settle]
// does: it writes the epoch redislease's scripts write, with the server's
// run_id, so that a lease acquired under the prefix holds its id at once.
// It speaks the Redis protocol itself, so that tests of any module can
// use it.
func SettleRedis(t testing.TB, addr, prefix string) {
	t.Helper()
	info, err := redisCommand(addr, "INFO", "server")
	require.NoError(t, err, "INFO server")
	run := ""
	for _, line := range strings.Split(info, "\n") {
		if id, ok := strings.CutPrefix(strings.TrimSpace(line), "run_id:"); ok {
			run = id
		}
	}
	require.NotEmpty(t, run, "no run_id in INFO server: %q", info)
	_, err = redisCommand(addr, "HSET", "{"+prefix+"}:epoch", "id", "settled", "run", run)
	require.NoError(t, err, "HSET")
}

// redisCommand sends one command to the Redis at addr and returns its
// reply: a simple or bulk string, or an integer in decimal.
func redisCommand(addr string, args ...string) (string, error) {
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		return "", err
	}
	defer c.Close()
	if err := c.SetDeadline(time.Now().Add(10 * time.Second)); err != nil {
		return "", err
	}
	var req bytes.Buffer
	fmt.Fprintf(&req, "*%d\r\n", len(args))
	for _, a := range args {
		fmt.Fprintf(&req, "$%d\r\n%s\r\n", len(a), a)
	}
	if _, err := c.Write(req.Bytes()); err != nil {
		return "", err
	}
	r := bufio.NewReader(c)
	line, err := r.ReadString('\n')
	if err != nil {
		return "", err
	}
	line = strings.TrimSuffix(line, "\r\n")
	switch {
	case strings.HasPrefix(line, "+"), strings.HasPrefix(line, ":"):
		return line[1:], nil
	case strings.HasPrefix(line, "$"):
		n, err := strconv.Atoi(line[1:])
		if err != nil || n < 0 {
			return "", fmt.Errorf("reply %q", line)
		}
		body := make([]byte, n+2)
		if _, err := io.ReadFull(r, body); err != nil {
			return "", err
		}
		return string(body[:n]), nil
	}
	return "", fmt.Errorf("reply %q", line)
}

// SettleEtcd makes prefix, on the etcd at endpoint, look like the prefix
// of a fleet that has been running for longer than a TTL, as [Conn.Settle]
// does: it writes the epoch etcdlease writes, so that a lease acquired
// under the prefix holds its id at once. It uses etcd's JSON gateway, so
// that tests of any module can use it.
func SettleEtcd(t testing.TB, endpoint, prefix string) {
	t.Helper()
	body, err := json.Marshal(map[string]string{
		"key":   base64.StdEncoding.EncodeToString([]byte(prefix + "/epoch")),
		"value": base64.StdEncoding.EncodeToString([]byte("settled")),
	})
	require.NoError(t, err)
	c := http.Client{Timeout: 10 * time.Second}
	resp, err := c.Post(endpoint+"/v3/kv/put", "application/json", bytes.NewReader(body))
	require.NoError(t, err, "putting %s/epoch", prefix)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode, "putting %s/epoch", prefix)
}
