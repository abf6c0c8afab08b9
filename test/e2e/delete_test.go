//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/inferno-ai/function-inferno/test/e2e/kube"
)

// --- 06 delete --------------------------------------------------------------

func (s *infernoSuite) deleteClaim(t *testing.T) {
	if !s.servingOK {
		t.Skip("serving failed")
	}
	ctx := context.Background()
	sc := env.summary.start(t, "06 delete")
	claim, err := env.admin.Get(ctx, claimGVK, "team-a", "llama")
	if err != nil {
		t.Fatal(err)
	}
	xr, _, _ := unstructured.NestedString(claim.Object, "spec", "resourceRef", "name")
	pvc, err := env.admin.Typed.CoreV1().PersistentVolumeClaims("team-a").Get(ctx, "llama-weights", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("llama-weights PVC before delete: %v", err)
	}
	start := time.Now()
	if err := env.admin.Delete(ctx, claimGVK, "team-a", "llama"); err != nil {
		t.Fatal(err)
	}
	err = kube.Eventually(ctx, 2*time.Minute, 250*time.Millisecond, "everything of team-a/llama gone", func(ctx context.Context) (bool, string, error) {
		left := composedLeft(ctx, "team-a", "llama")
		if _, err := env.admin.Get(ctx, xrGVK, "", xr); !apierrors.IsNotFound(err) {
			left = append(left, "XR "+xr)
		}
		if pvc.Spec.VolumeName != "" {
			if _, err := env.admin.Typed.CoreV1().PersistentVolumes().Get(ctx, pvc.Spec.VolumeName, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
				left = append(left, "PV "+pvc.Spec.VolumeName)
			}
		}
		return len(left) == 0, strings.Join(left, ", "), nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sc.note("claim, XR, PVC, Job, Deployment, Service, HPA, pods and PV gone in %.1fs", time.Since(start).Seconds())
	// team-b's claim of the same name is untouched.
	if b, err := env.admin.Get(ctx, claimGVK, "team-b", "llama"); err != nil {
		t.Errorf("team-b/llama: %v", err)
	} else if st, _, _ := kube.Condition(b, "Ready"); st != "True" {
		t.Errorf("team-b/llama lost Ready when team-a/llama was deleted: %s", kube.ConditionsSummary(b))
	}
}

// composedLeft lists what still exists in ns for a claim: every kind the
// function composes, plus pods.
func composedLeft(ctx context.Context, ns, claim string) []string {
	sel := metav1.ListOptions{LabelSelector: instanceLabel + "=" + claim}
	var left []string
	add := func(kind string, n int, err error) {
		if err != nil {
			left = append(left, kind+": "+err.Error())
		} else if n > 0 {
			left = append(left, fmt.Sprintf("%d %s", n, kind))
		}
	}
	if l, err := env.admin.Typed.CoreV1().PersistentVolumeClaims(ns).List(ctx, sel); err == nil {
		add("PVC", len(l.Items), nil)
	} else {
		add("PVC", 0, err)
	}
	if l, err := env.admin.Typed.BatchV1().Jobs(ns).List(ctx, sel); err == nil {
		add("Job", len(l.Items), nil)
	} else {
		add("Job", 0, err)
	}
	if l, err := env.admin.Typed.AppsV1().Deployments(ns).List(ctx, sel); err == nil {
		add("Deployment", len(l.Items), nil)
	} else {
		add("Deployment", 0, err)
	}
	if l, err := env.admin.Typed.CoreV1().Services(ns).List(ctx, sel); err == nil {
		add("Service", len(l.Items), nil)
	} else {
		add("Service", 0, err)
	}
	if l, err := env.admin.Typed.AutoscalingV2().HorizontalPodAutoscalers(ns).List(ctx, sel); err == nil {
		add("HPA", len(l.Items), nil)
	} else {
		add("HPA", 0, err)
	}
	if l, err := env.admin.Typed.CoreV1().Pods(ns).List(ctx, sel); err == nil {
		add("pod", len(l.Items), nil)
	} else {
		add("pod", 0, err)
	}
	if _, err := env.admin.Get(ctx, claimGVK, ns, claim); !apierrors.IsNotFound(err) {
		left = append(left, "claim")
	}
	return left
}
