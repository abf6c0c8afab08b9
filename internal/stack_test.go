package internal

import (
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// stack is the function's packages from the bottom up, by directory from
// the repository's root. A package may import only packages on lower
// floors: the compiler refuses a cycle, and this test refuses a call that
// runs back up, which the compiler would let through.
var stack = [][]string{
	{"apis/inference/v1alpha1", "input/v1beta1"},
	{"internal/structcodec", "internal/kinds/lws", "internal/kinds/keda", "internal/kinds/monitoring", "internal/kinds/providerkubernetes", "internal/reason"},
	{"internal/resolve"},
	{"internal/render"},
	{"internal/observe"},
	{"internal/plan"},
	{"internal/status"},
	{"fn"},
}

// TestStackImportsRunOneWay fails when a package of the stack imports one
// on its own floor or above it, or when a package under internal/ has no
// floor (a new stage must be placed on purpose).
func TestStackImportsRunOneWay(t *testing.T) {
	root, module := repoRoot(t)
	floor := map[string]int{}
	for i, pkgs := range stack {
		for _, p := range pkgs {
			floor[p] = i
		}
	}

	for _, dir := range packageDirs(t, root, "internal") {
		if _, ok := floor[dir]; !ok && dir != "internal" {
			t.Errorf("%s has no floor in the stack: add it to stack in internal/stack_test.go, above what it imports", dir)
		}
	}

	for dir, f := range floor {
		for _, imp := range imports(t, filepath.Join(root, dir)) {
			rel, ok := strings.CutPrefix(imp.path, module+"/")
			if !ok {
				continue
			}
			g, placed := floor[rel]
			switch {
			case !placed:
				t.Errorf("%s imports %s, which has no floor in the stack", imp.at, rel)
			case g >= f:
				t.Errorf("%s imports %s, which stands on floor %d, not below %s's floor %d: move what it needs down, or the caller up", imp.at, rel, g, dir, f)
			}
		}
	}
}

// TestStackCheckCanFail holds the check above to a house whose plan
// imports its status stage.
func TestStackCheckCanFail(t *testing.T) {
	dir := t.TempDir()
	src := "package plan\n\nimport _ \"example.com/m/internal/status\"\n"
	if err := os.WriteFile(filepath.Join(dir, "plan.go"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	imps := imports(t, dir)
	if len(imps) != 1 || imps[0].path != "example.com/m/internal/status" {
		t.Fatalf("imports(%s) = %+v, want the one import of status", dir, imps)
	}
	plan, status := slices.IndexFunc(stack, func(f []string) bool { return slices.Contains(f, "internal/plan") }),
		slices.IndexFunc(stack, func(f []string) bool { return slices.Contains(f, "internal/status") })
	if plan < 0 || status < 0 || status <= plan {
		t.Fatalf("the stack puts plan on floor %d and status on floor %d: status must stand above plan", plan, status)
	}
}

type importAt struct {
	path string
	at   string // file:line
}

// imports are the imports of the non-test Go files in dir.
func imports(t *testing.T, dir string) []importAt {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	var out []importAt
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range f.Imports {
			p, err := strconv.Unquote(s.Path.Value)
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, importAt{path: p, at: fset.Position(s.Pos()).String()})
		}
	}
	return out
}

// packageDirs are the directories under root/sub that hold non-test Go
// files, relative to root.
func packageDirs(t *testing.T, root, sub string) []string {
	t.Helper()
	var dirs []string
	err := filepath.WalkDir(filepath.Join(root, sub), func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return err
		}
		rel, err := filepath.Rel(root, filepath.Dir(path))
		if err == nil && !slices.Contains(dirs, rel) && !strings.Contains(rel, "testdata") {
			dirs = append(dirs, rel)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return dirs
}

// repoRoot is the repository's root and its module path, from go.mod.
func repoRoot(t *testing.T) (string, string) {
	t.Helper()
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(root, "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if m, ok := strings.CutPrefix(line, "module "); ok {
			return root, strings.TrimSpace(m)
		}
	}
	t.Fatal("go.mod names no module")
	return "", ""
}
