package crossplanecore

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/inferno-ai/function-inferno/test/e2e/kube"
)

// TestRenderChartRBAC renders the pinned chart's RBAC templates and checks
// the parts the e2e test depends on: Crossplane's ClusterRole aggregates
// roles labelled rbac.crossplane.io/aggregate-to-crossplane, and the
// bindings name the crossplane and rbac-manager ServiceAccounts.
func TestRenderChartRBAC(t *testing.T) {
	dir, err := ModuleDir(context.Background(), filepath.Join("..", "..", "..", "tools", "e2e", "crossplane"))
	if err != nil {
		t.Skipf("crossplane module not available: %v", err)
	}
	out, err := RenderChartRBAC(filepath.Join(dir, "cluster", "charts", "crossplane"), Namespace)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(out), "{{") {
		t.Fatalf("unrendered template left:\n%s", out)
	}
	objs, err := kube.DecodeYAML(out)
	if err != nil {
		t.Fatalf("rendered RBAC is not YAML: %v\n%s", err, out)
	}
	byName := map[string]map[string]any{}
	for _, o := range objs {
		byName[o.GetKind()+"/"+o.GetName()] = o.Object
	}
	role, ok := byName["ClusterRole/crossplane"]
	if !ok {
		t.Fatalf("no ClusterRole crossplane among %d objects", len(objs))
	}
	sel, _ := role["aggregationRule"].(map[string]any)
	if !strings.Contains(toString(sel), "rbac.crossplane.io/aggregate-to-crossplane") {
		t.Errorf("ClusterRole crossplane does not aggregate aggregate-to-crossplane roles: %v", role)
	}
	for name, sa := range map[string]string{"ClusterRoleBinding/crossplane": "crossplane", "ClusterRoleBinding/crossplane-rbac-manager": "rbac-manager"} {
		b, ok := byName[name]
		if !ok {
			t.Errorf("missing %s", name)
			continue
		}
		if s := toString(b["subjects"]); !strings.Contains(s, sa) || !strings.Contains(s, Namespace) {
			t.Errorf("%s subjects %s, want ServiceAccount %s/%s", name, s, Namespace, sa)
		}
	}
	for _, name := range []string{"ClusterRole/crossplane:system:aggregate-to-crossplane", "ClusterRole/crossplane-rbac-manager", "ClusterRole/crossplane:allowed-provider-permissions", "ClusterRole/crossplane-admin"} {
		if _, ok := byName[name]; !ok {
			t.Errorf("missing %s", name)
		}
	}
}

// toString flattens a decoded YAML value for substring checks.
func toString(v any) string { return fmt.Sprint(v) }
