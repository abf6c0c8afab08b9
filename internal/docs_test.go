package internal

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestExportedNamesDocumented holds the stages to their doc comments: every
// exported top-level func, method, type, const and var under internal/ and
// fn/ has one. Cutting the function into packages exported names that
// used to be private; each one now crosses a package boundary, and its
// reader in the other package has only the comment to go by. A const or
// var in a documented group counts as documented, as does a spec with a
// trailing line comment. Tests and zz_generated files are not checked.
func TestExportedNamesDocumented(t *testing.T) {
	var missing []string
	fset := token.NewFileSet()
	for _, root := range []string{".", "../fn"} {
		err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() {
				if path != root && (d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".") || strings.HasPrefix(d.Name(), "_")) {
					return filepath.SkipDir
				}
				return nil
			}
			name := d.Name()
			if !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") || strings.HasPrefix(name, "zz_generated") {
				return nil
			}
			src, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			// Named from the module root: internal/..., fn/...
			f, err := parser.ParseFile(fset, filepath.Join("internal", path), src, parser.ParseComments|parser.SkipObjectResolution)
			if err != nil {
				return err
			}
			missing = append(missing, undocumented(fset, f)...)
			return nil
		})
		if err != nil {
			t.Fatalf("cannot read %s: %v", root, err)
		}
	}
	if len(missing) > 0 {
		t.Errorf("%d exported names have no doc comment; say what each means, beginning with its name:\n%s", len(missing), strings.Join(missing, "\n"))
	}
}

// undocumented lists "file:line Name" for each exported top-level name of
// f without a doc comment. A method is checked whatever its receiver's
// type: an exported method of an unexported type is still called from
// other packages through an interface.
func undocumented(fset *token.FileSet, f *ast.File) []string {
	var out []string
	report := func(id *ast.Ident) {
		p := fset.Position(id.Pos())
		out = append(out, fmt.Sprintf("%s:%d %s", filepath.ToSlash(p.Filename), p.Line, id.Name))
	}
	for _, decl := range f.Decls {
		switch d := decl.(type) {
		case *ast.FuncDecl:
			if d.Name.IsExported() && d.Doc == nil {
				report(d.Name)
			}
		case *ast.GenDecl:
			if d.Doc != nil {
				continue // the group's comment documents every spec in it
			}
			for _, spec := range d.Specs {
				switch s := spec.(type) {
				case *ast.TypeSpec:
					if s.Name.IsExported() && s.Doc == nil && s.Comment == nil {
						report(s.Name)
					}
				case *ast.ValueSpec:
					if s.Doc != nil || s.Comment != nil {
						continue
					}
					for _, n := range s.Names {
						if n.IsExported() {
							report(n)
						}
					}
				}
			}
		}
	}
	return out
}
