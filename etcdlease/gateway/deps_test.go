package gateway_test

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestDependencies: a program that imports gateway (and with it
// txnlease) compiles the standard library and ringflake's own packages
// and the clock module of package lease: no etcd client, gRPC, protobuf or
// zap. `go list -deps` lists every package such a program links.
func TestDependencies(t *testing.T) {
	// go test puts the go command that runs it first on the PATH.
	out, err := exec.Command("go", "list", "-deps", "-f",
		"{{.ImportPath}} {{if .Standard}}std{{else}}{{.Module.Path}}{{end}}", ".").CombinedOutput()
	require.NoError(t, err, "%s", out)
	var pkgs []string
	for line := range strings.Lines(string(out)) {
		pkg, module, ok := strings.Cut(strings.TrimSpace(line), " ")
		require.True(t, ok, "go list printed %q", line)
		pkgs = append(pkgs, pkg)
		assert.Contains(t, []string{"std", "github.com/ringflake/ringflake", "github.com/ringflake/ringflake/etcdlease",
			"github.com/benbjohnson/clock"}, module, "a program that imports gateway links %s of module %s", pkg, module)
	}
	for _, want := range []string{"net/http", "encoding/json", "github.com/ringflake/ringflake/etcdlease/txnlease"} {
		require.Contains(t, pkgs, want)
	}
}
