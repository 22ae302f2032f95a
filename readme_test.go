package ringflake_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// The README's "Use it" program compiles as written: it is extracted and
// built against this checkout of the module.
func TestReadmeUseItBuilds(t *testing.T) {
	readme, err := os.ReadFile("README.md")
	require.NoError(t, err)
	_, section, ok := strings.Cut(string(readme), "\n## Use it\n")
	require.True(t, ok, "README.md has a \"## Use it\" section")
	_, code, ok := strings.Cut(section, "```go\n")
	require.True(t, ok, "the section has a Go block")
	code, _, ok = strings.Cut(code, "```")
	require.True(t, ok, "the Go block ends")
	require.True(t, strings.HasPrefix(code, "package main\n"), "the block is a whole program")

	// A directory of the module whose name starts with "_" is left out
	// of ./... but builds when named.
	dir, err := os.MkdirTemp(".", "_readme")
	require.NoError(t, err)
	t.Cleanup(func() { os.RemoveAll(dir) })
	require.NoError(t, os.WriteFile(filepath.Join(dir, "main.go"), []byte(code), 0o600))

	cmd := exec.Command("go", "vet", "./"+filepath.Base(dir))
	cmd.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=-mod=readonly")
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "the README's program does not build:\n%s", out)
}
