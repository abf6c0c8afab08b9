//go:build e2e

package e2e

import (
	"context"
	"path/filepath"
	"sort"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/yaml"

	"github.com/inferno-ai/function-inferno/test/e2e/kube"
)

// goldenObject is one desired object of a golden render.
type goldenObject struct {
	// Resource is its composition resource name.
	Resource string
	Object   *unstructured.Unstructured
}

// goldenObjects reads the desired objects of a golden render of fn (a
// fn/testdata/golden file: the function's exact output for an example at
// one stage, but for a pull script's text, which stands there as a token
// such as <<script scripts/hf.sh sha256:…>>, a string the API server takes
// as it takes the script), in composition resource name order, moved to
// namespace ns (a RoleBinding's subjects too) and without status, which
// no apply sets.
func goldenObjects(t *testing.T, file, ns string) []goldenObject {
	t.Helper()
	path := filepath.Join(repoRoot(), "fn", "testdata", "golden", file)
	var golden struct {
		Desired struct {
			Resources map[string]struct {
				Resource map[string]any `json:"resource"`
			} `json:"resources"`
		} `json:"desired"`
	}
	if err := yaml.Unmarshal(mustRead(t, path), &golden); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	out := make([]goldenObject, 0, len(golden.Desired.Resources))
	for rn, r := range golden.Desired.Resources {
		o := &unstructured.Unstructured{Object: r.Resource}
		o.SetNamespace(ns)
		unstructured.RemoveNestedField(o.Object, "status")
		if subjects, ok, _ := unstructured.NestedSlice(o.Object, "subjects"); ok {
			for _, s := range subjects {
				if m, ok := s.(map[string]any); ok {
					m["namespace"] = ns
				}
			}
			setField(o, subjects, "subjects")
		}
		out = append(out, goldenObject{Resource: rn, Object: o})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Resource < out[j].Resource })
	return out
}

// applyDryRun server-side-applies o through client as a dry run with
// strict field validation: the API server refuses any field its schema
// (a CRD's included) lacks, and stores nothing.
func applyDryRun(ctx context.Context, client *kube.Client, o *unstructured.Unstructured) error {
	ri, err := client.Resource(o.GroupVersionKind(), o.GetNamespace())
	if err != nil {
		return err
	}
	body, err := o.MarshalJSON()
	if err != nil {
		return err
	}
	_, err = ri.Patch(ctx, o.GetName(), types.ApplyPatchType, body, metav1.PatchOptions{
		FieldManager: kube.FieldManager, Force: ptrTo(true), DryRun: []string{metav1.DryRunAll}, FieldValidation: "Strict",
	})
	return err
}
