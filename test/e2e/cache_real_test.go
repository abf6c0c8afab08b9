//go:build e2e

package e2e

import (
	"context"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// --- 20 cache on the real node ----------------------------------------------

// cacheReal: one ModelCache pulled once on the real node, two services
// mounting it answer with the same weights.
func (s *infernoSuite) cacheReal(t *testing.T) {
	if !s.realServeOK {
		t.Skip("16 serve did not pass")
	}
	ctx := context.Background()
	sc := env.summary.start(t, "20 cache (real node)")
	sc.onRealNode(false)
	w := publishWeights(t, "shared", "inferno shared cache")
	const cacheName = "shared"
	cache := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": cacheClaimGVK.GroupVersion().String(),
		"kind":       cacheClaimGVK.Kind,
		"metadata":   map[string]any{"name": cacheName, "namespace": realNS},
		"spec":       map[string]any{"uri": w.URI, "revisions": []any{"main"}, "storage": map[string]any{"size": "1Gi"}},
	}}
	onRealPool(cache)
	start := time.Now()
	applyClaim(ctx, t, cache)
	waitReady(ctx, t, cacheClaimGVK, realNS, cacheName, 2*time.Minute)
	sc.note("ModelCache Ready in %.1fs", time.Since(start).Seconds())
	names := []string{"svc-a", "svc-b"}
	for _, n := range names {
		c := realClaim(t, n, "", "1", 1)
		setField(c, map[string]any{"cacheRef": map[string]any{"name": cacheName}, "revision": "main", "version": "1", "framework": "fake"}, "spec", "model")
		applyClaim(ctx, t, c)
	}
	waitClaimsReady(ctx, t, realNS, names, 3*time.Minute)
	sc.note("two services on it Ready in %.1fs", time.Since(start).Seconds())
	want := oracle(t, w)
	digests := map[string]bool{}
	for _, n := range names {
		got, _ := firstAnswer(ctx, t, serviceURL(ctx, t, realNS, n), n, time.Minute)
		if got.Text != want {
			t.Errorf("%s answered %q, want the cache's weights' %q", n, got.Text, want)
		}
		digests[got.Weights] = true
	}
	if len(digests) != 1 {
		t.Errorf("the two services serve different weights: %v", digests)
	}
	if served := env.origin.Served("/shared/model.markov"); served != 1 {
		t.Errorf("the origin served the cache's weights %d times, want 1 (one pull for both services)", served)
	}
	for _, n := range names {
		if jobs := pullJobs(ctx, t, realNS, n); len(jobs) != 0 {
			t.Errorf("%s has %d pull Jobs of its own, want none", n, len(jobs))
		}
	}
	sc.note("both answer the same digest; the origin served the weights once")
	deleteClaimsAndWait(ctx, t, realNS, names)
	if err := env.admin.Delete(ctx, cacheClaimGVK, realNS, cacheName); err != nil {
		t.Error(err)
	}
}
