package ringflake_test

import (
	"net/http"
	"net/http/httptest"
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	_ "github.com/ringflake/ringflake"
)

// Importing ringflake registers no handler on http.DefaultServeMux: the
// expvar package, which serves /debug/vars (the command line, memory
// statistics) from every program that imports it, is only linked by the
// opt-in package ringflakeexpvar.
func TestImportServesNothing(t *testing.T) {
	_, pattern := http.DefaultServeMux.Handler(httptest.NewRequest(http.MethodGet, "/debug/vars", nil))
	assert.Empty(t, pattern, "/debug/vars is registered")
}

// A program that imports only the core package links neither net/http,
// expvar nor a YAML parser: `go list -deps` of the package shows them
// not.
func TestCoreDependencies(t *testing.T) {
	gobin := "go" // the go command on PATH, as go test itself runs
	out, err := exec.Command(gobin, "list", "-deps", ".").CombinedOutput()
	require.NoError(t, err, "%s", out)
	deps := strings.Fields(string(out))
	require.Contains(t, deps, "sync/atomic", "go list printed the dependencies")
	for _, banned := range []string{"net/http", "expvar", "go.yaml.in/yaml/v3", "gopkg.in/yaml.v3"} {
		assert.False(t, slices.Contains(deps, banned), "a program that imports ringflake links %s", banned)
	}
}
