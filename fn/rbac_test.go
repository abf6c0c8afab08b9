package fn

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/yaml"
)

// TestRBACCoversEveryComposedKind: Crossplane creates, updates and deletes
// every object the function renders, with the permissions apis/rbac.yaml
// gives it. Every kind of every golden render (every example at every
// stage) must be covered for all seven verbs, and every rule must be whole:
// a rule without verbs (as a merge once left one) grants nothing, silently.
func TestRBACCoversEveryComposedKind(t *testing.T) {
	b, err := os.ReadFile("../apis/rbac.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var role rbacv1.ClusterRole
	if err := yaml.UnmarshalStrict(b, &role); err != nil {
		t.Fatal(err)
	}
	for i, r := range role.Rules {
		if len(r.APIGroups) == 0 || len(r.Resources) == 0 || len(r.Verbs) == 0 {
			t.Errorf("apis/rbac.yaml rule %d (%v) lacks apiGroups, resources or verbs", i, r.Resources)
		}
	}
	allows := func(group, resource, verb string) bool {
		for _, r := range role.Rules {
			if slices.Contains(r.APIGroups, group) && slices.Contains(r.Resources, resource) && slices.Contains(r.Verbs, verb) {
				return true
			}
		}
		return false
	}

	kinds := map[string]string{} // group/resource → a golden that renders it
	for gvk, golden := range goldenKinds(t) {
		kinds[gvk.Group+"/"+plural(gvk.Kind)] = golden
	}
	if len(kinds) < 10 {
		t.Fatalf("only %d kinds in the goldens: %v", len(kinds), kinds)
	}
	for gr, golden := range kinds {
		group, resource, _ := strings.Cut(gr, "/")
		for _, v := range []string{"get", "list", "watch", "create", "update", "patch", "delete"} {
			if !allows(group, resource, v) {
				t.Errorf("apis/rbac.yaml does not let Crossplane %s %s.%s, which %s renders", v, resource, group, golden)
			}
		}
	}
}

// plural is the resource name of a kind the function renders (English
// plurals of the few endings they have).
func plural(kind string) string {
	k := strings.ToLower(kind)
	if strings.HasSuffix(k, "y") {
		return strings.TrimSuffix(k, "y") + "ies"
	}
	return k + "s"
}

// goldenKinds are the kinds of every golden render (every example at every
// stage), each with a golden that renders it.
func goldenKinds(t *testing.T) map[schema.GroupVersionKind]string {
	t.Helper()
	goldens, err := filepath.Glob("testdata/golden/*.yaml")
	if err != nil || len(goldens) == 0 {
		t.Fatalf("no goldens: %v", err)
	}
	kinds := map[schema.GroupVersionKind]string{}
	for _, g := range goldens {
		b, err := os.ReadFile(g)
		if err != nil {
			t.Fatal(err)
		}
		var golden struct {
			Desired struct {
				Resources map[string]struct {
					Resource struct {
						APIVersion string `json:"apiVersion"`
						Kind       string `json:"kind"`
					} `json:"resource"`
				} `json:"resources"`
			} `json:"desired"`
		}
		if err := yaml.Unmarshal(b, &golden); err != nil {
			t.Fatalf("%s: %v", g, err)
		}
		for _, r := range golden.Desired.Resources {
			kinds[schema.FromAPIVersionAndKind(r.Resource.APIVersion, r.Resource.Kind)] = filepath.Base(g)
		}
	}
	return kinds
}
