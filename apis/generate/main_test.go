package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// root is the repository, seen from this package.
const root = "../.."

// TestGeneratedFilesAreFresh fails when a generated file no longer matches
// what the Go types generate: someone changed apis/ or input/ and did not
// run `make generate`.
func TestGeneratedFilesAreFresh(t *testing.T) {
	cg := controllerGen(t)

	files, err := generate(cg, root)
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range files {
		compareFile(t, filepath.Join(root, name), want)
	}
	// A reference whose XRD is gone is stale too.
	docs, err := filepath.Glob(filepath.Join(root, docsDir, "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range docs {
		rel, err := filepath.Rel(root, d)
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := files[filepath.ToSlash(rel)]; !ok {
			t.Errorf("%s documents no generated XRD: delete it, or run `make generate`", rel)
		}
	}

	for _, g := range []struct {
		path string
		args []string
	}{
		{"apis/inference/v1alpha1/zz_generated.deepcopy.go", []string{"object", "paths=./apis/...", "output:object:stdout"}},
		{"input/v1beta1/zz_generated.deepcopy.go", []string{"object", "paths=./input/...", "output:object:stdout"}},
		{"internal/kinds/keda/zz_generated.deepcopy.go", []string{"object", "paths=./internal/kinds/keda", "output:object:stdout"}},
		{"internal/kinds/lws/zz_generated.deepcopy.go", []string{"object", "paths=./internal/kinds/lws", "output:object:stdout"}},
		{"internal/kinds/monitoring/zz_generated.deepcopy.go", []string{"object", "paths=./internal/kinds/monitoring", "output:object:stdout"}},
		{"package/input/fn.inferno.io_inputs.yaml", []string{"crd:crdVersions=v1", "paths=./input/...", "output:crd:stdout"}},
	} {
		cmd := exec.Command(cg, g.args...)
		cmd.Dir = root
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("controller-gen %v: %v\n%s", g.args, err, stderr.String())
		}
		compareFile(t, filepath.Join(root, g.path), out)
	}
}

func compareFile(t *testing.T, path string, want []byte) {
	t.Helper()
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v: run `make generate`", err)
	}
	if diff := cmp.Diff(string(want), string(got)); diff != "" {
		t.Errorf("%s is stale; run `make generate` (-want +got):\n%s", path, diff)
	}
}

// controllerGen is the pinned controller-gen that `make tools` builds.
func controllerGen(t *testing.T) string {
	t.Helper()
	p := os.Getenv("CONTROLLER_GEN")
	if p == "" {
		p = filepath.Join(root, "bin", "controller-gen")
	}
	abs, err := filepath.Abs(p)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(abs); err != nil {
		t.Fatalf("controller-gen is not at %s (%v): run `make tools` first, or set CONTROLLER_GEN", abs, err)
	}
	return abs
}
