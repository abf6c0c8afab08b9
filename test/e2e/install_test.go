//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/inferno-ai/function-inferno/test/e2e/controlplane"
	"github.com/inferno-ai/function-inferno/test/e2e/kube"
)

// --- 01 install -------------------------------------------------------------

func (s *infernoSuite) install(t *testing.T) {
	ctx := context.Background()
	sc := env.summary.start(t, "01 install")
	start := time.Now()
	metricsPort, err := controlplane.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	installFunction(ctx, t, RealFunctionName, repoRoot(), ".", "package", "examples",
		fmt.Sprintf("--metrics-address=127.0.0.1:%d", metricsPort))
	s.fnMetrics = fmt.Sprintf("http://127.0.0.1:%d/metrics", metricsPort)
	sc.note("package built+pushed+installed, revision Healthy in %.1fs", time.Since(start).Seconds())

	// The XRDs and Compositions come in the Configuration packages
	// (01b-configuration); the ClusterRole cannot be packaged.
	if _, err := env.admin.ApplyFile(ctx, filepath.Join(repoRoot(), "apis", "rbac.yaml")); err != nil {
		t.Fatal(err)
	}
	// The shipped ClusterRole must have been aggregated into Crossplane's
	// (by the real clusterrole-aggregation controller).
	if err := kube.Eventually(ctx, 30*time.Second, 200*time.Millisecond, "ClusterRole crossplane aggregates batch/jobs", func(ctx context.Context) (bool, string, error) {
		cr, err := env.admin.Typed.RbacV1().ClusterRoles().Get(ctx, "crossplane", metav1.GetOptions{})
		if err != nil {
			return false, "", err
		}
		for _, r := range cr.Rules {
			if contains(r.APIGroups, "batch") && contains(r.Resources, "jobs") {
				return true, "", nil
			}
		}
		return false, fmt.Sprintf("%d rules, none for batch/jobs", len(cr.Rules)), nil
	}); err != nil {
		t.Error(err)
	}
}
