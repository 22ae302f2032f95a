package main

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestEtcdWithoutGRPC: the command leases node ids from etcd through its
// JSON gateway, so it compiles neither etcd's client nor gRPC nor zap
// (`go list -deps` lists every package it links).
func TestEtcdWithoutGRPC(t *testing.T) {
	// go test puts the go command that runs it first on the PATH.
	out, err := exec.Command("go", "list", "-deps", ".").CombinedOutput()
	require.NoError(t, err, "%s", out)
	pkgs := strings.Fields(string(out))
	require.Contains(t, pkgs, "github.com/ringflake/ringflake/etcdlease/gateway")
	for _, p := range pkgs {
		for _, banned := range []string{"go.etcd.io/", "google.golang.org/grpc", "go.uber.org/zap"} {
			assert.False(t, strings.HasPrefix(p, banned), "the command links %s", p)
		}
	}
}
