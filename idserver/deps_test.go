package idserver_test

import (
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A program that imports only idserver links the standard library and
// the core module's own packages, nothing else: no Redis, etcd, gRPC, zap
// or Prometheus client. `go list -deps` of the package lists every package
// such a program links besides its own main, with the module each comes
// from.
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
		assert.Contains(t, []string{"std", "github.com/ringflake/ringflake"}, module,
			"a program that imports idserver links %s of module %s", pkg, module)
	}
	// go list printed the dependencies: the ones idserver must have.
	for _, want := range []string{"net/http", "github.com/ringflake/ringflake", "github.com/ringflake/ringflake/idserver"} {
		require.Contains(t, pkgs, want)
	}
	for _, banned := range []string{"go.etcd.io/", "github.com/redis/", "google.golang.org/grpc", "google.golang.org/protobuf",
		"go.uber.org/zap", "github.com/prometheus/", "github.com/ringflake/ringflake/ringflakeprom"} {
		assert.False(t, slices.ContainsFunc(pkgs, func(p string) bool { return strings.HasPrefix(p, banned) }),
			"a program that imports idserver links %s…", banned)
	}
}
