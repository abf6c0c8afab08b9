//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/inferno-ai/function-inferno/test/e2e/kube"
)

var cacheClaimGVK = schema.GroupVersionKind{Group: "inference.inferno.io", Version: "v1alpha1", Kind: "ModelCache"}

// cache runs weights that outlive their services through the real control
// plane: a ModelCache pulls once; two InferenceServices mount it and pull
// nothing; deleting both leaves the volume; deleting the cache while a
// service still mounts it shows what Kubernetes does (the volume is held
// by pvc-protection until the last server stops; the service reports
// CacheMissing and Degraded), and the volume is gone once nothing mounts it.
func (s *infernoSuite) cache(t *testing.T) {
	ctx := context.Background()
	sc := env.summary.start(t, "14 cache")
	const ns, cacheName, pvc = "team-cache", "shared", "shared-cache"
	if err := env.createTeamNamespace(ctx, ns); err != nil {
		t.Fatal(err)
	}
	cache := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": cacheClaimGVK.GroupVersion().String(),
		"kind":       cacheClaimGVK.Kind,
		"metadata":   map[string]any{"name": cacheName, "namespace": ns},
		"spec": map[string]any{
			"uri":       "hf://e2e/cached-model",
			"revisions": []any{"main"},
			"storage":   map[string]any{"size": "1Gi", "accessMode": "ReadWriteMany"},
		},
	}}
	start := time.Now()
	applyClaim(ctx, t, cache)
	waitReady(ctx, t, cacheClaimGVK, ns, cacheName, 2*time.Minute)
	sc.note("ModelCache Ready in %.1fs", time.Since(start).Seconds())
	if c, err := env.admin.Get(ctx, cacheClaimGVK, ns, cacheName); err == nil {
		phase, _, _ := unstructured.NestedString(c.Object, "status", "phase")
		name, _, _ := unstructured.NestedString(c.Object, "status", "pvcName")
		if phase != "Ready" || name != pvc {
			t.Errorf("ModelCache status phase %q pvcName %q, want Ready and %s", phase, name, pvc)
		}
	}

	services := []string{"svc-a", "svc-b"}
	start = time.Now()
	for _, n := range services {
		applyClaim(ctx, t, serviceOnCache(t, ns, n, cacheName))
	}
	waitClaimsReady(ctx, t, ns, services, 2*time.Minute)
	sc.note("two services on the cache Ready in %.1fs", time.Since(start).Seconds())

	// One pull, one volume, many servers.
	jobs, err := env.admin.Typed.BatchV1().Jobs(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	pvcs, err := env.admin.Typed.CoreV1().PersistentVolumeClaims(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(jobs.Items) != 1 || len(pvcs.Items) != 1 || pvcs.Items[0].Name != pvc {
		t.Errorf("%d Jobs and PVCs %v in %s, want the cache's one pull Job and volume %s", len(jobs.Items), pvcNames(pvcs.Items), ns, pvc)
	}
	mounts := map[string]string{}
	for _, n := range services {
		d, err := env.admin.Typed.AppsV1().Deployments(ns).Get(ctx, n, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		for _, v := range d.Spec.Template.Spec.Volumes {
			if v.Name == "weights" && v.PersistentVolumeClaim != nil {
				mounts[n] = fmt.Sprintf("%s read-only=%v", v.PersistentVolumeClaim.ClaimName, v.PersistentVolumeClaim.ReadOnly)
			}
		}
	}
	if want := pvc + " read-only=true"; mounts["svc-a"] != want || mounts["svc-b"] != want {
		t.Errorf("services mount %v, want both %s", mounts, want)
	}
	sc.note("1 pull Job, 1 volume, 2 services mounting %s", pvc)

	// Deleting both services leaves the weights.
	deleteClaimsAndWait(ctx, t, ns, services)
	p, err := env.admin.Typed.CoreV1().PersistentVolumeClaims(ns).Get(ctx, pvc, metav1.GetOptions{})
	if err != nil || p.DeletionTimestamp != nil {
		t.Fatalf("volume %s after deleting both services: %v (deleting %v), want it kept", pvc, err, p.DeletionTimestamp != nil)
	}
	sc.note("both services deleted: %s kept", pvc)

	// Delete the cache under a running service.
	applyClaim(ctx, t, serviceOnCache(t, ns, "svc-a", cacheName))
	waitClaimsReady(ctx, t, ns, []string{"svc-a"}, 2*time.Minute)
	if err := env.admin.Delete(ctx, cacheClaimGVK, ns, cacheName); err != nil {
		t.Fatal(err)
	}
	start = time.Now()
	err = kube.Eventually(ctx, 2*time.Minute, 250*time.Millisecond, "the cache gone, its volume held by the running servers, the service Degraded", func(ctx context.Context) (bool, string, error) {
		_, cerr := env.admin.Get(ctx, cacheClaimGVK, ns, cacheName)
		p, err := env.admin.Typed.CoreV1().PersistentVolumeClaims(ns).Get(ctx, pvc, metav1.GetOptions{})
		if err != nil {
			return false, "", fmt.Errorf("volume %s: %w (it must outlast the servers that mount it)", pvc, err)
		}
		c, err := env.admin.Get(ctx, claimGVK, ns, "svc-a")
		if err != nil {
			return false, "", err
		}
		phase, _, _ := unstructured.NestedString(c.Object, "status", "phase")
		_, reason, _ := kube.Condition(c, "WeightsReady")
		ready := serverPods(ctx, t, ns, "svc-a")["1"]
		done := apierrors.IsNotFound(cerr) && p.DeletionTimestamp != nil && reason == "CacheMissing" && phase == "Degraded" && ready >= 1
		return done, fmt.Sprintf("cache gone %v, volume deleting %v (finalizers %v), svc-a %s/%s, %d ready servers", apierrors.IsNotFound(cerr), p.DeletionTimestamp != nil, p.Finalizers, phase, reason, ready), nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sc.note("cache deleted under svc-a: volume held (pvc-protection), servers still ready, svc-a Degraded/CacheMissing after %.1fs", time.Since(start).Seconds())

	deleteClaimsAndWait(ctx, t, ns, []string{"svc-a"})
	err = kube.Eventually(ctx, time.Minute, 250*time.Millisecond, "volume "+pvc+" gone once nothing mounts it", func(ctx context.Context) (bool, string, error) {
		_, err := env.admin.Typed.CoreV1().PersistentVolumeClaims(ns).Get(ctx, pvc, metav1.GetOptions{})
		return apierrors.IsNotFound(err), fmt.Sprint(err), nil
	})
	if err != nil {
		t.Error(err)
	} else {
		sc.note("svc-a deleted: %s gone", pvc)
	}
}

// serviceOnCache is a small fake-framework InferenceService on a ModelCache:
// no uri, no storage, no credentials.
func serviceOnCache(t *testing.T, ns, name, cache string) *unstructured.Unstructured {
	c := smallClaim(t, ns, name)
	setField(c, map[string]any{"cacheRef": map[string]any{"name": cache}, "revision": "main", "version": "1", "framework": "fake"}, "spec", "model")
	unstructured.RemoveNestedField(c.Object, "spec", "storage")
	return c
}

// waitReady waits until one claim of any kind is Ready=True.
func waitReady(ctx context.Context, t *testing.T, gvk schema.GroupVersionKind, ns, name string, timeout time.Duration) {
	t.Helper()
	err := kube.Eventually(ctx, timeout, 250*time.Millisecond, fmt.Sprintf("%s %s/%s Ready", gvk.Kind, ns, name), func(ctx context.Context) (bool, string, error) {
		c, err := env.admin.Get(ctx, gvk, ns, name)
		if err != nil {
			return false, "", err
		}
		st, _, _ := kube.Condition(c, "Ready")
		return st == "True", kube.ConditionsSummary(c), nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func pvcNames(l []corev1.PersistentVolumeClaim) string {
	var out []string
	for _, p := range l {
		out = append(out, p.Name)
	}
	return strings.Join(out, ",")
}
