//go:build unix

package leasetest

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"strconv"
	"testing"
	"time"
)

// A RedisServer is a redis-server of a test's own, on a loopback port that
// stays the same when the test stops and starts it again.
type RedisServer struct {
	*Process
	Addr string // 127.0.0.1:PORT
}

// StartRedis starts redis-server ([RedisServerEnv]) on a free loopback port
// with its data in a temporary directory, waits until it answers, and
// stops it when the test ends. With persist it keeps an append-only file
// synced on every write, as a fleet's Redis should be configured, so that
// a restart loses nothing; without, it keeps nothing, so that a restart —
// after [Process.Kill], say — starts empty.
func StartRedis(t *testing.T, persist bool) *RedisServer {
	t.Helper()
	host, port := "127.0.0.1", strconv.Itoa(FreePort(t))
	s := &RedisServer{Addr: net.JoinHostPort(host, port)}
	persistence := []string{"--appendonly", "no", "--save", ""}
	if persist {
		persistence = []string{"--appendonly", "yes", "--appendfsync", "always", "--save", ""}
	}
	s.Process = StartProcess(t, RequireEnv(t, RedisServerEnv), func(dir string) []string {
		return append([]string{"--bind", host, "--port", port, "--dir", dir, "--daemonize", "no", "--protected-mode", "yes"}, persistence...)
	}, func() bool { return redisPong(s.Addr) })
	return s
}

// redisPong reports whether the Redis at addr answers PING with PONG
// within 200ms (a server still loading its data answers -LOADING).
func redisPong(addr string) bool {
	c, err := net.DialTimeout("tcp", addr, 200*time.Millisecond)
	if err != nil {
		return false
	}
	defer c.Close()
	if c.SetDeadline(time.Now().Add(200*time.Millisecond)) != nil {
		return false
	}
	if _, err := io.WriteString(c, "PING\r\n"); err != nil {
		return false
	}
	reply := make([]byte, len("+PONG\r\n"))
	_, err = io.ReadFull(c, reply)
	return err == nil && string(reply) == "+PONG\r\n"
}

// An EtcdServer is a single-member etcd of a test's own, on loopback
// ports that stay the same when the test stops and starts it again.
type EtcdServer struct {
	*Process
	Endpoint string // http://127.0.0.1:PORT
}

// StartEtcd starts etcd ([EtcdServerEnv]) on free loopback ports with its
// data in a temporary directory — heartbeat and election timeouts of 50
// and 500 ms, so that it elects itself quickly yet keeps its leader on a
// loaded machine, and grants leases of 1 s or more — waits until it
// reports itself healthy, and stops it when the test ends.
// [Process.StartEmpty] starts it again on a new, empty data directory: an
// etcd rebuilt empty behind the same endpoint.
func StartEtcd(t *testing.T) *EtcdServer {
	t.Helper()
	s := &EtcdServer{Endpoint: fmt.Sprintf("http://127.0.0.1:%d", FreePort(t))}
	peer := fmt.Sprintf("http://127.0.0.1:%d", FreePort(t))
	s.Process = StartProcess(t, RequireEnv(t, EtcdServerEnv), func(dir string) []string {
		return []string{"--name", "test", "--data-dir", filepath.Join(dir, "data"),
			"--listen-client-urls", s.Endpoint, "--advertise-client-urls", s.Endpoint,
			"--listen-peer-urls", peer, "--initial-advertise-peer-urls", peer,
			"--initial-cluster", "test=" + peer, "--initial-cluster-state", "new",
			"--heartbeat-interval", "50", "--election-timeout", "500",
			"--logger", "zap", "--log-outputs", "stderr"}
	}, func() bool { return etcdHealthy(s.Endpoint) })
	return s
}

// etcdHealthy reports whether the etcd at endpoint says, within 500ms,
// that it is healthy: it has a leader and serves reads.
func etcdHealthy(endpoint string) bool {
	c := http.Client{Timeout: 500 * time.Millisecond}
	resp, err := c.Get(endpoint + "/health")
	if err != nil {
		return false
	}
	defer resp.Body.Close()
	var h struct {
		Health string `json:"health"`
	}
	return resp.StatusCode == http.StatusOK && json.NewDecoder(resp.Body).Decode(&h) == nil && h.Health == "true"
}
