//go:build e2e

package e2e

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/inferno-ai/function-inferno/test/e2e/controlplane"
	"github.com/inferno-ai/function-inferno/test/e2e/kube"
)

// --- 11 RBAC ----------------------------------------------------------------

// rbac asserts Crossplane's identity holds what it needs (through its chart
// role and the aggregated role we ship) and nothing like cluster-admin. The
// scenarios then prove the same thing the hard way: every object the
// function composes is created by that identity.
func (s *infernoSuite) rbac(t *testing.T) {
	ctx := context.Background()
	sc := env.summary.start(t, "11 rbac")
	allowed := []struct{ group, resource, verb string }{
		{"", "persistentvolumeclaims", "create"},
		{"batch", "jobs", "create"},
		{"apps", "deployments", "update"},
		{"", "services", "create"},
		{"autoscaling", "horizontalpodautoscalers", "create"},
		{"gateway.networking.k8s.io", "httproutes", "create"},
		{"keda.sh", "scaledobjects", "create"},
		{"leaderworkerset.x-k8s.io", "leaderworkersets", "create"},
		{"inference.inferno.io", "inferenceservices", "update"},
	}
	for _, a := range allowed {
		if ok, why := can(ctx, t, controlplane.Crossplane, a.verb, a.group, a.resource, "team-a"); !ok {
			t.Errorf("crossplane cannot %s %s.%s in team-a: %s", a.verb, a.resource, a.group, why)
		}
	}
	denied := []struct{ group, resource, verb, ns string }{
		{"*", "*", "*", ""}, // cluster-admin
		{"rbac.authorization.k8s.io", "clusterrolebindings", "create", ""},
		{"", "nodes", "delete", ""},
		{"", "pods", "create", "team-a"},
		{"", "namespaces", "delete", ""},
	}
	for _, d := range denied {
		if ok, _ := can(ctx, t, controlplane.Crossplane, d.verb, d.group, d.resource, d.ns); ok {
			t.Errorf("crossplane may %s %s.%s (ns %q): it must not hold more than its chart role and ours", d.verb, d.resource, d.group, d.ns)
		}
	}
	for _, g := range controlplane.Crossplane.Groups {
		if g == "system:masters" {
			t.Error("crossplane runs as system:masters")
		}
	}
	sc.note("%d permissions granted, %d denied as expected", len(allowed), len(denied))
}

func can(ctx context.Context, t *testing.T, id controlplane.Identity, verb, group, resource, ns string) (bool, string) {
	t.Helper()
	sar := map[string]any{
		"apiVersion": "authorization.k8s.io/v1",
		"kind":       "SubjectAccessReview",
		"spec": map[string]any{
			"user":   id.User,
			"groups": toAny(id.Groups),
			"resourceAttributes": map[string]any{
				"verb": verb, "group": group, "resource": resource, "namespace": ns,
			},
		},
	}
	ri, err := env.admin.Resource(schema.GroupVersionKind{Group: "authorization.k8s.io", Version: "v1", Kind: "SubjectAccessReview"}, "")
	if err != nil {
		t.Fatal(err)
	}
	out, err := ri.Create(ctx, &unstructured.Unstructured{Object: sar}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ok, _, _ := unstructured.NestedBool(out.Object, "status", "allowed")
	reason, _, _ := unstructured.NestedString(out.Object, "status", "reason")
	return ok, reason
}

// rbacMissing shows the RBAC scenario has teeth: without the ClusterRole we
// ship, Crossplane (holding only its chart role) cannot create the pull Job
// or the PVC, and the claim says so; with it back, the claim recovers.
func (s *infernoSuite) rbacMissing(t *testing.T) {
	ctx := context.Background()
	sc := env.summary.start(t, "11b rbac: a missing permission is caught")
	shipped, err := kube.DecodeYAML(mustRead(t, filepath.Join(repoRoot(), "apis", "rbac.yaml")))
	if err != nil || len(shipped) == 0 {
		t.Fatalf("apis/rbac.yaml: %v", err)
	}
	for _, o := range shipped {
		if err := env.admin.Delete(ctx, o.GroupVersionKind(), o.GetNamespace(), o.GetName()); err != nil {
			t.Fatal(err)
		}
	}
	if err := kube.Eventually(ctx, 30*time.Second, 200*time.Millisecond, "Crossplane's aggregated role to lose batch/jobs", func(ctx context.Context) (bool, string, error) {
		ok, why := can(ctx, t, controlplane.Crossplane, "create", "batch", "jobs", "team-rbac")
		return !ok, why, nil
	}); err != nil {
		t.Fatal(err)
	}
	const ns = "team-rbac"
	if err := env.createTeamNamespace(ctx, ns); err != nil {
		t.Fatal(err)
	}
	applyClaim(ctx, t, smallClaim(t, ns, "norbac"))
	var seen string
	err = kube.Eventually(ctx, 60*time.Second, 250*time.Millisecond, "the composite to report the missing permission", func(ctx context.Context) (bool, string, error) {
		xrs, err := env.admin.List(ctx, xrGVK, "", "crossplane.io/claim-name=norbac")
		if err != nil || len(xrs) == 0 {
			return false, "no composite yet", err
		}
		st, _, msg := kube.Condition(&xrs[0], "Synced")
		seen = msg
		return st == "False" && strings.Contains(msg, "forbidden"), kube.ConditionsSummary(&xrs[0]), nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sc.note("without apis/rbac.yaml: Synced=False, %q", truncate(seen, 160))
	start := time.Now()
	if _, err := env.admin.ApplyFile(ctx, filepath.Join(repoRoot(), "apis", "rbac.yaml")); err != nil {
		t.Fatal(err)
	}
	waitClaimsReady(ctx, t, ns, []string{"norbac"}, 3*time.Minute)
	sc.note("RBAC restored -> claim Ready in %.1fs", time.Since(start).Seconds())
}
