//go:build e2e

package e2e

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/inferno-ai/function-inferno/test/e2e/kube"
)

// crdGVK is the kind of a CustomResourceDefinition.
var crdGVK = schema.GroupVersionKind{Group: "apiextensions.k8s.io", Version: "v1", Kind: "CustomResourceDefinition"}

// moduleDir is the module cache's directory of module, at the version the
// go.mod in dir (relative to the repository root; "" for the root) pins:
// the upstream CRDs the e2e installs come from their projects' own modules.
func moduleDir(t *testing.T, module, dir string) string {
	t.Helper()
	cmd := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", module)
	cmd.Dir = filepath.Join(repoRoot(), dir)
	out, err := cmd.Output()
	if err != nil || strings.TrimSpace(string(out)) == "" {
		t.Fatalf("finding %s in %s/go.mod: %v (%q)", module, dir, err, out)
	}
	return strings.TrimSpace(string(out))
}

// applyCRDFile applies the one CustomResourceDefinition in the file at path;
// see applyCRD.
func applyCRDFile(ctx context.Context, t *testing.T, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return applyCRD(ctx, t, path, data)
}

// applyCRD applies the one CustomResourceDefinition in data (from where,
// for messages), waits until the API server has established it, and
// refreshes the admin client's discovery so that the next apply of its
// kind finds it. It returns the CRD's name.
func applyCRD(ctx context.Context, t *testing.T, where string, data []byte) string {
	t.Helper()
	objs, err := env.admin.ApplyYAML(ctx, bytes.TrimSpace(data))
	if err != nil || len(objs) != 1 {
		t.Fatalf("applying %s: %v (%d objects)", where, err, len(objs))
	}
	name := objs[0].GetName()
	waitFor(ctx, t, 30*time.Second, "CRD "+name+" established", func(ctx context.Context) (bool, string, error) {
		crd, err := env.admin.Get(ctx, crdGVK, "", name)
		if err != nil {
			return false, "", err
		}
		st, _, _ := kube.Condition(crd, "Established")
		return st == "True", "", nil
	})
	env.admin.ResetDiscovery()
	return name
}
