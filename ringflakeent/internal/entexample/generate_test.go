package entexample_test

import (
	"flag"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"entgo.io/ent/entc"
	"entgo.io/ent/entc/gen"
	"github.com/stretchr/testify/require"
)

var update = flag.Bool("update", false, "regenerate the committed ent code in ent/")

// entPackage is the import path of the generated code.
const entPackage = "github.com/ringflake/ringflake/ringflakeent/internal/entexample/ent"

// generate runs ent's code generator on ./schema, writing to target.
func generate(target string) error {
	abs, err := filepath.Abs(target)
	if err != nil {
		return err
	}
	return entc.Generate("./schema", &gen.Config{
		Target:   abs,
		Package:  entPackage,
		Features: []gen.Feature{gen.FeatureUpsert},
	})
}

// readTree returns the files under dir by their path relative to it.
func readTree(t *testing.T, dir string) map[string]string {
	t.Helper()
	files := map[string]string{}
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(dir, path)
		files[filepath.ToSlash(rel)] = string(b)
		return err
	})
	require.NoError(t, err)
	return files
}

// TestGeneratedCodeIsCurrent regenerates the code of ./schema and fails
// when it differs from the committed ent/ — a schema changed without
// regenerating, or an ent upgrade that generates other code. With
// -update it rewrites ent/ instead.
func TestGeneratedCodeIsCurrent(t *testing.T) {
	if *update {
		require.NoError(t, os.RemoveAll("ent"))
		require.NoError(t, generate("ent"))
	}
	fresh := t.TempDir()
	require.NoError(t, generate(fresh))
	want, got := readTree(t, fresh), readTree(t, "ent")
	for path, code := range want {
		c, ok := got[path]
		require.True(t, ok, "ent/%s is missing: the committed code is stale; regenerate it with\n  go test ./internal/entexample -run TestGeneratedCodeIsCurrent -update", path)
		require.True(t, c == code, "ent/%s differs from what ent generates: the committed code is stale; regenerate it with\n  go test ./internal/entexample -run TestGeneratedCodeIsCurrent -update", path)
	}
	for path := range got {
		_, ok := want[path]
		require.True(t, ok, "ent/%s is not generated any more: the committed code is stale; regenerate it with\n  go test ./internal/entexample -run TestGeneratedCodeIsCurrent -update", path)
	}
}
