package ringflake_test

import (
	"go/ast"
	"go/doc"
	"go/doc/comment"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// docLinkLike is the shape of a doc link ([Name], [Name.Method],
// [pkg.Name], [*pkg.Name], [import/path.Name]); the go/doc/comment parser
// turns the ones that resolve into links and leaves the others as text.
var docLinkLike = regexp.MustCompile(`\[\*?[A-Za-z_][\w./-]*\]`)

// TestDocLinksResolve parses every doc comment of the repository's
// packages, the nested modules' included (their import paths are their
// directories under the root's), as go doc and pkg.go.dev do, and fails
// on each [Name] that does not resolve — a link to a name that moved or
// never existed renders as plain brackets — and on each link to a name of
// one of these packages that it does not declare.
func TestDocLinksResolve(t *testing.T) {
	var dirs []string
	require.NoError(t, filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil || !d.IsDir() {
			return err
		}
		if path != "." {
			if name := d.Name(); name == "testdata" || strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") {
				return filepath.SkipDir
			}
		}
		dirs = append(dirs, path)
		return nil
	}))
	broken := 0
	for _, dir := range dirs {
		for _, bad := range unresolvedLinks(t, dir) {
			t.Errorf("%s", bad)
			broken++
		}
	}
	assert.Zero(t, broken, "doc links that do not resolve")
}

// unresolvedLinks returns "file:line: [Name]" for each doc link of the
// package in dir that does not resolve.
func unresolvedLinks(t *testing.T, dir string) []string {
	t.Helper()
	fset := token.NewFileSet()
	pkgs, err := parser.ParseDir(fset, dir, func(fi fs.FileInfo) bool {
		return !strings.HasSuffix(fi.Name(), "_test.go")
	}, parser.ParseComments)
	require.NoError(t, err, dir)
	var bad []string
	for _, pkg := range pkgs {
		var files []*ast.File
		for _, f := range pkg.Files {
			files = append(files, f)
		}
		importPath := "github.com/ringflake/ringflake"
		if dir != "." {
			importPath += "/" + filepath.ToSlash(dir)
		}
		dp, err := doc.NewFromFiles(fset, files, importPath, doc.PreserveAST|doc.AllDecls)
		require.NoError(t, err, dir)
		p := dp.Parser()
		for _, f := range files {
			for _, cg := range f.Comments {
				if !isDocComment(f, cg) {
					continue
				}
				d := p.Parse(cg.Text())
				for _, text := range plainTexts(d) {
					for _, loc := range docLinkLike.FindAllStringIndex(text, -1) {
						m := text[loc[0]:loc[1]]
						if !linkToExported(m) || strings.HasPrefix(text[loc[1]:], "^") {
							continue // [i], [Generator.sleep], [B]^4: not meant as links
						}
						bad = append(bad, fset.Position(cg.Pos()).String()+": "+m)
					}
				}
				for _, l := range docLinks(d) {
					if strings.HasPrefix(l.ImportPath, "github.com/ringflake/ringflake") && l.Name != "" && !exists(t, l) {
						bad = append(bad, fset.Position(cg.Pos()).String()+": ["+l.ImportPath+"."+symbol(l)+"]: no such name")
					}
				}
			}
		}
	}
	return bad
}

// isDocComment reports whether cg is the doc comment of a declaration,
// a spec, a struct field or an interface method, or the package's.
func isDocComment(f *ast.File, cg *ast.CommentGroup) bool {
	found := f.Doc == cg
	ast.Inspect(f, func(n ast.Node) bool {
		if found {
			return false
		}
		switch n := n.(type) {
		case *ast.GenDecl:
			found = n.Doc == cg
		case *ast.FuncDecl:
			found = n.Doc == cg
		case *ast.TypeSpec:
			found = n.Doc == cg
		case *ast.ValueSpec:
			found = n.Doc == cg
		case *ast.Field:
			found = n.Doc == cg
		}
		return true
	})
	return found
}

// plainTexts returns the plain text of d outside code blocks and links.
func plainTexts(d *comment.Doc) []string {
	var out []string
	texts := func(ts []comment.Text) {
		for _, x := range ts {
			switch x := x.(type) {
			case comment.Plain:
				out = append(out, string(x))
			case comment.Italic:
				out = append(out, string(x))
			}
		}
	}
	var blocks func([]comment.Block)
	blocks = func(bs []comment.Block) {
		for _, b := range bs {
			switch b := b.(type) {
			case *comment.Paragraph:
				texts(b.Text)
			case *comment.Heading:
				texts(b.Text)
			case *comment.List:
				for _, item := range b.Items {
					blocks(item.Content)
				}
			}
		}
	}
	blocks(d.Content)
	return out
}

// linkToExported reports whether m, "[...]", names an exported symbol, as
// doc links do: its last dotted name starts with an upper-case letter.
func linkToExported(m string) bool {
	name := strings.Trim(m, "[]*")
	name = name[strings.LastIndex(name, ".")+1:]
	return name != "" && name[0] >= 'A' && name[0] <= 'Z'
}

func symbol(l *comment.DocLink) string {
	if l.Recv != "" {
		return l.Recv + "." + l.Name
	}
	return l.Name
}

// docLinks returns the doc links of d.
func docLinks(d *comment.Doc) []*comment.DocLink {
	var out []*comment.DocLink
	texts := func(ts []comment.Text) {
		for _, x := range ts {
			if l, ok := x.(*comment.DocLink); ok {
				out = append(out, l)
			}
		}
	}
	var blocks func([]comment.Block)
	blocks = func(bs []comment.Block) {
		for _, b := range bs {
			switch b := b.(type) {
			case *comment.Paragraph:
				texts(b.Text)
			case *comment.Heading:
				texts(b.Text)
			case *comment.List:
				for _, item := range b.Items {
					blocks(item.Content)
				}
			}
		}
	}
	blocks(d.Content)
	return out
}

// symbolsOf caches the exported names of the module's packages by
// import path, as "Name" and "Type.Method".
var symbolsOf = map[string]map[string]bool{}

// exists reports whether the package of l, one of this repository's,
// declares the name l links to.
func exists(t *testing.T, l *comment.DocLink) bool {
	t.Helper()
	syms, ok := symbolsOf[l.ImportPath]
	if !ok {
		dir := strings.TrimPrefix(strings.TrimPrefix(l.ImportPath, "github.com/ringflake/ringflake"), "/")
		if dir == "" {
			dir = "."
		}
		syms = map[string]bool{}
		fset := token.NewFileSet()
		pkgs, err := parser.ParseDir(fset, dir, func(fi fs.FileInfo) bool {
			return !strings.HasSuffix(fi.Name(), "_test.go")
		}, parser.ParseComments)
		if err != nil {
			return false // no such package
		}
		for _, pkg := range pkgs {
			var files []*ast.File
			for _, f := range pkg.Files {
				files = append(files, f)
			}
			dp, err := doc.NewFromFiles(fset, files, l.ImportPath)
			require.NoError(t, err)
			values := func(vs []*doc.Value) {
				for _, v := range vs {
					for _, n := range v.Names {
						syms[n] = true
					}
				}
			}
			values(dp.Consts)
			values(dp.Vars)
			for _, f := range dp.Funcs {
				syms[f.Name] = true
			}
			for _, ty := range dp.Types {
				syms[ty.Name] = true
				values(ty.Consts)
				values(ty.Vars)
				for _, f := range ty.Funcs {
					syms[f.Name] = true
				}
				for _, m := range ty.Methods {
					syms[ty.Name+"."+m.Name] = true
				}
				// Fields and interface methods resolve too.
				if st, ok := ty.Decl.Specs[0].(*ast.TypeSpec); ok {
					var fields *ast.FieldList
					switch x := st.Type.(type) {
					case *ast.StructType:
						fields = x.Fields
					case *ast.InterfaceType:
						fields = x.Methods
					}
					if fields != nil {
						for _, f := range fields.List {
							for _, n := range f.Names {
								syms[ty.Name+"."+n.Name] = true
							}
						}
					}
				}
			}
		}
		symbolsOf[l.ImportPath] = syms
	}
	return syms[symbol(l)]
}
