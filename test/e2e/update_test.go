//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/inferno-ai/function-inferno/test/e2e/kube"
)

// --- 05 update --------------------------------------------------------------

func (s *infernoSuite) update(t *testing.T) {
	if !s.servingOK {
		t.Skip("serving failed")
	}
	ctx := context.Background()
	sc := env.summary.start(t, "05 update")
	oldJob := s.llama.snapshot().jobName
	before, err := env.admin.Typed.AppsV1().Deployments("team-a").Get(ctx, "llama", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}

	claim := exampleClaim(t, "team-a", "llama")
	setField(claim, int64(2), "spec", "replicas", "min")
	setField(claim, int64(4), "spec", "replicas", "max")
	setField(claim, "2", "spec", "resources", "cpu")
	setField(claim, "e2e-revision-2", "spec", "model", "revision")
	start := time.Now()
	applyClaim(ctx, t, claim)

	// New revision -> a new pull Job (Jobs are immutable).
	var newJob string
	if err := kube.Eventually(ctx, 60*time.Second, 200*time.Millisecond, "a new pull Job for the new revision", func(ctx context.Context) (bool, string, error) {
		jobs, err := env.admin.Typed.BatchV1().Jobs("team-a").List(ctx, metav1.ListOptions{LabelSelector: instanceLabel + "=llama"})
		if err != nil {
			return false, "", err
		}
		var names []string
		for _, j := range jobs.Items {
			names = append(names, j.Name)
			if j.Name != oldJob && strings.HasPrefix(j.Name, "llama-pull-") {
				newJob = j.Name
			}
		}
		return newJob != "", fmt.Sprintf("jobs %v", names), nil
	}); err != nil {
		t.Error(err)
	} else {
		sc.note("new Job %s after %.1fs", newJob, time.Since(start).Seconds())
	}

	// Deployment follows: CPU request 2; HPA bounds 2..4.
	err = kube.Eventually(ctx, 2*time.Minute, 250*time.Millisecond, "Deployment and HPA updated", func(ctx context.Context) (bool, string, error) {
		d, err := env.admin.Typed.AppsV1().Deployments("team-a").Get(ctx, "llama", metav1.GetOptions{})
		if err != nil {
			return false, "", err
		}
		cpu := serverCPU(d)
		h, err := env.admin.Typed.AutoscalingV2().HorizontalPodAutoscalers("team-a").Get(ctx, "llama", metav1.GetOptions{})
		if err != nil {
			return false, "", err
		}
		minR := int32(0)
		if h.Spec.MinReplicas != nil {
			minR = *h.Spec.MinReplicas
		}
		return cpu == "2" && minR == 2 && h.Spec.MaxReplicas == 4,
			fmt.Sprintf("server cpu request %q, HPA %d..%d", cpu, minR, h.Spec.MaxReplicas), nil
	})
	if err != nil {
		t.Error(err)
	}
	after, err := env.admin.Typed.AppsV1().Deployments("team-a").Get(ctx, "llama", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if after.UID != before.UID {
		t.Errorf("the Deployment was replaced (uid %s -> %s), want it updated in place", before.UID, after.UID)
	}
	if after.Spec.Replicas != nil && before.Spec.Replicas == nil {
		t.Errorf("the Deployment gained spec.replicas=%d while an HPA owns scaling", *after.Spec.Replicas)
	}
	// The servers move to the new weights only once the new Job is done:
	// the pod template's weights annotation changes, the rollout
	// finishes, and the claim is Serving the new revision (not "the
	// previous weights").
	oldWeights := before.Spec.Template.Annotations[weightsAnnotation]
	if oldWeights == "" {
		t.Errorf("Deployment pod template has no %s annotation", weightsAnnotation)
	}
	sawPrevious := false
	err = kube.Eventually(ctx, 2*time.Minute, 250*time.Millisecond, "servers on the new weights, claim Serving and Ready", func(ctx context.Context) (bool, string, error) {
		d, err := env.admin.Typed.AppsV1().Deployments("team-a").Get(ctx, "llama", metav1.GetOptions{})
		if err != nil {
			return false, "", err
		}
		c, err := env.admin.Get(ctx, claimGVK, "team-a", "llama")
		if err != nil {
			return false, "", err
		}
		phase, _, _ := unstructured.NestedString(c.Object, "status", "phase")
		msg, _, _ := unstructured.NestedString(c.Object, "status", "message")
		if strings.Contains(msg, "previous weights") {
			sawPrevious = true
		}
		ready, _, _ := kube.Condition(c, "Ready")
		newWeights := d.Spec.Template.Annotations[weightsAnnotation]
		rolledOut := d.Status.ObservedGeneration >= d.Generation && d.Status.UpdatedReplicas == d.Status.Replicas &&
			d.Status.AvailableReplicas == d.Status.Replicas && d.Status.UnavailableReplicas == 0
		done := newWeights != oldWeights && rolledOut && phase == "Serving" && ready == "True" && !strings.Contains(msg, "previous weights")
		return done, fmt.Sprintf("weights %s->%s, rolled out %v, phase %s, Ready %s, message %q", oldWeights, newWeights, rolledOut, phase, ready, msg), nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if newJob != "" {
		j, err := env.admin.Typed.BatchV1().Jobs("team-a").Get(ctx, newJob, metav1.GetOptions{})
		if err != nil || !jobDone(j, batchv1.JobComplete) {
			t.Errorf("servers moved to the new weights but the new pull Job %s is not Complete (%v)", newJob, err)
		}
	}
	sc.note("new weights served, rolled out, Ready again in %.1fs (reported the previous weights meanwhile: %v)", time.Since(start).Seconds(), sawPrevious)
	// Crossplane v2.4 stops reacting to an XR's watch events for a while
	// when they come too fast (burst 100, refill 1/s); a rollout of two
	// replicas plus a new Job can trip it, and the XR then waits for the
	// next poll (1 min). Say so when it happened.
	if n := countInLog("crossplane.log", "Circuit breaker is open"); n > 0 {
		sc.note("Crossplane's XR circuit breaker opened %d time(s) so far (convergence then waits for the 1 min poll)", n)
	}
}

func serverCPU(d *appsv1.Deployment) string {
	for _, c := range d.Spec.Template.Spec.Containers {
		if q, ok := c.Resources.Requests[corev1.ResourceCPU]; ok {
			return q.String()
		}
	}
	return ""
}
