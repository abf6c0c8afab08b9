//go:build e2e

package e2e

import (
	"context"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/inferno-ai/function-inferno/test/e2e/kube"
)

// --- 04 failure -----------------------------------------------------------

func (s *infernoSuite) failure(t *testing.T) {
	if s.brokenApplied.IsZero() {
		t.Skip("the failing claim was not applied")
	}
	ctx := context.Background()
	sc := env.summary.start(t, "04 failure")
	var claim *unstructured.Unstructured
	// backoffLimit 3 and the Job controller's 10 s/20 s/40 s pod backoff
	// put the Job's Failed condition about 75 s after the first pod.
	err := kube.Eventually(ctx, 4*time.Minute, 500*time.Millisecond, "broken claim phase Failed", func(ctx context.Context) (bool, string, error) {
		c, err := env.admin.Get(ctx, claimGVK, "team-a", "broken")
		if err != nil {
			return false, "", err
		}
		claim = c
		phase, _, _ := unstructured.NestedString(c.Object, "status", "phase")
		return phase == "Failed", "phase " + phase + "; " + kube.ConditionsSummary(c), nil
	})
	if err != nil {
		t.Fatal(err)
	}
	msg, _, _ := unstructured.NestedString(claim.Object, "status", "message")
	jobs, err := env.admin.Typed.BatchV1().Jobs("team-a").List(ctx, metav1.ListOptions{LabelSelector: instanceLabel + "=broken"})
	if err != nil {
		t.Fatal(err)
	}
	if len(jobs.Items) != 1 {
		t.Fatalf("%d pull Jobs for the broken claim, want 1", len(jobs.Items))
	}
	var jobReason string
	for _, c := range jobs.Items[0].Status.Conditions {
		if c.Type == batchv1.JobFailed && c.Status == corev1.ConditionTrue {
			jobReason = c.Reason
			// When it happened, not when this scenario (which runs late,
			// while the Job retries) looked: the condition's own time.
			sc.note("apply->Job Failed %.0fs (second precision); observed %.0fs after apply", c.LastTransitionTime.Sub(s.brokenApplied.Truncate(time.Second)).Seconds(), time.Since(s.brokenApplied).Seconds())
		}
	}
	if jobReason == "" || !strings.Contains(msg, jobReason) {
		t.Errorf("claim message %q does not carry the Job's failure reason %q", msg, jobReason)
	}
	if st, _, _ := kube.Condition(claim, "Ready"); st == "True" {
		t.Error("a claim whose pull failed is Ready")
	}
	if _, err := env.admin.Typed.AppsV1().Deployments("team-a").Get(ctx, "broken", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("a Deployment exists for a claim whose weights never arrived (err %v)", err)
	}
	sc.note("message: %s", msg)
	deleteClaimsAndWait(ctx, t, "team-a", []string{"broken"})
}
