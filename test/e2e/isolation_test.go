//go:build e2e

package e2e

import (
	"context"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/inferno-ai/function-inferno/test/e2e/kube"
)

// --- 07 isolation -----------------------------------------------------------

func (s *infernoSuite) isolation(t *testing.T) {
	if !s.servingOK {
		t.Skip("serving failed")
	}
	ctx := context.Background()
	sc := env.summary.start(t, "07 isolation")
	if err := env.createTeamNamespace(ctx, "team-b"); err != nil {
		t.Fatal(err)
	}
	createCredentials(ctx, t, "team-b")
	// Same claim name as team-a's: nothing may collide.
	start := time.Now()
	applyClaim(ctx, t, exampleClaim(t, "team-b", "llama"))
	waitClaimsReady(ctx, t, "team-b", []string{"llama"}, 2*time.Minute)
	sc.note("team-b/llama Ready in %.1fs", time.Since(start).Seconds())

	a, err := env.admin.Get(ctx, claimGVK, "team-a", "llama")
	if err != nil {
		t.Fatal(err)
	}
	b, err := env.admin.Get(ctx, claimGVK, "team-b", "llama")
	if err != nil {
		t.Fatal(err)
	}
	xa, _, _ := unstructured.NestedString(a.Object, "spec", "resourceRef", "name")
	xb, _, _ := unstructured.NestedString(b.Object, "spec", "resourceRef", "name")
	if xa == "" || xa == xb {
		t.Errorf("claims team-a/llama and team-b/llama share composite %q/%q", xa, xb)
	}
	for _, ns := range []string{"team-a", "team-b"} {
		d, err := env.admin.Typed.AppsV1().Deployments(ns).Get(ctx, "llama", metav1.GetOptions{})
		if err != nil {
			t.Errorf("%s: %v", ns, err)
			continue
		}
		want := xa
		if ns == "team-b" {
			want = xb
		}
		if owner := controllerName(d.OwnerReferences); owner != want {
			t.Errorf("%s/llama Deployment is controlled by %q, want its own composite %q", ns, owner, want)
		}
		if d.Status.AvailableReplicas < 1 {
			t.Errorf("%s/llama has %d available replicas", ns, d.Status.AvailableReplicas)
		}
	}
	if st, _, _ := kube.Condition(a, "Ready"); st != "True" {
		t.Errorf("team-a/llama is no longer Ready after team-b's claim: %s", kube.ConditionsSummary(a))
	}
}
