package ringflake_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// maxRootAPI is the most exported identifiers the root package may have:
// it is for the people who issue and read IDs. New capabilities go into
// packages of their own (see docs/design.md, "Shape").
const maxRootAPI = 120

// The root package stays small: its exported top-level names (types,
// functions, variables, constants) plus the exported methods of its
// exported types, in non-test files, number at most maxRootAPI. Run
// `go test -run TestRootAPISize -v .` to print the count.
func TestRootAPISize(t *testing.T) {
	names := rootAPI(t)
	t.Logf("the root package exports %d identifiers (at most %d)", len(names), maxRootAPI)
	require.LessOrEqual(t, len(names), maxRootAPI, "exported identifiers of the root package: %s", strings.Join(names, " "))
}

// rootAPI lists the root package's exported identifiers, as
// TestRootAPISize counts them.
func rootAPI(t *testing.T) []string {
	t.Helper()
	files, err := filepath.Glob("*.go")
	require.NoError(t, err)
	fset := token.NewFileSet()
	var names []string
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		src, err := os.ReadFile(name)
		require.NoError(t, err)
		f, err := parser.ParseFile(fset, name, src, parser.SkipObjectResolution)
		require.NoError(t, err)
		for _, decl := range f.Decls {
			switch d := decl.(type) {
			case *ast.FuncDecl:
				if !d.Name.IsExported() {
					continue
				}
				if d.Recv == nil {
					names = append(names, d.Name.Name)
					continue
				}
				if recv := receiverType(d.Recv.List[0].Type); ast.IsExported(recv) {
					names = append(names, recv+"."+d.Name.Name)
				}
			case *ast.GenDecl:
				for _, spec := range d.Specs {
					switch s := spec.(type) {
					case *ast.TypeSpec:
						if s.Name.IsExported() {
							names = append(names, s.Name.Name)
						}
					case *ast.ValueSpec:
						for _, n := range s.Names {
							if n.IsExported() {
								names = append(names, n.Name)
							}
						}
					}
				}
			}
		}
	}
	return names
}

// receiverType names a method's receiver type, without its pointer or
// type parameters.
func receiverType(e ast.Expr) string {
	for {
		switch x := e.(type) {
		case *ast.StarExpr:
			e = x.X
		case *ast.IndexExpr:
			e = x.X
		case *ast.IndexListExpr:
			e = x.X
		case *ast.Ident:
			return x.Name
		default:
			return ""
		}
	}
}
