//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/inferno-ai/function-inferno/test/e2e/kube"
)

const (
	// gatewayComposition is examples/canary/composition-gateway.yaml
	// under a name of its own: claims choose it by routeLabel.
	gatewayComposition = "xinferenceservices-gateway.inference.inferno.io"
	routeLabel         = "inference.inferno.io/route"
	// gatewayController is the controller the test plays: it writes the
	// route's status as a Gateway API implementation would.
	gatewayController = "e2e.inferno.io/gateway"
)

// --- 23 route and standby ---------------------------------------------------

// route runs a split through an HTTPRoute with one version on standby
// (weight 0): the route is accepted by the real API server with Gateway
// API's CRD, its readiness follows the status a gateway controller writes
// (played by the test), and the standby version runs no server until it
// gets weight.
func (s *infernoSuite) route(t *testing.T) {
	ctx := context.Background()
	sc := env.summary.start(t, "23 route and standby")
	crd := installHTTPRouteCRD(ctx, t)
	defer func() {
		if err := env.admin.Delete(ctx, schema.GroupVersionKind{Group: "apiextensions.k8s.io", Version: "v1", Kind: "CustomResourceDefinition"}, "", crd); err != nil {
			t.Logf("deleting CRD %s: %v", crd, err)
		}
	}()
	objs, err := kube.DecodeYAML(mustRead(t, filepath.Join(repoRoot(), "examples", "canary", "composition-gateway.yaml")))
	if err != nil || len(objs) != 1 {
		t.Fatalf("examples/canary/composition-gateway.yaml: %v", err)
	}
	comp := objs[0]
	comp.SetName(gatewayComposition)
	comp.SetLabels(map[string]string{routeLabel: "gateway"})
	if _, err := env.admin.Apply(ctx, comp); err != nil {
		t.Fatal(err)
	}
	const ns, name = "team-route", "routed"
	if err := env.createTeamNamespace(ctx, ns); err != nil {
		t.Fatal(err)
	}
	routed := func(ns string) *unstructured.Unstructured {
		claim := smallClaim(t, ns, name)
		setField(claim, map[string]any{"matchLabels": map[string]any{routeLabel: "gateway"}}, "spec", "compositionSelector")
		setField(claim, map[string]any{"min": int64(2), "max": int64(2)}, "spec", "replicas")
		setField(claim, []any{
			map[string]any{"version": "1", "weight": int64(100)},
			map[string]any{"version": "2", "weight": int64(0), "uri": "hf://e2e/routed-v2"},
		}, "spec", "traffic")
		return claim
	}
	claim := routed(ns)
	start := time.Now()
	applyClaim(ctx, t, claim)
	// A second team's claim of the same name on the same shared Gateway:
	// its route must match none of the first one's requests (issue 21).
	if err := env.createTeamNamespace(ctx, otherRouteTeam); err != nil {
		t.Fatal(err)
	}
	applyClaim(ctx, t, routed(otherRouteTeam))

	// The route exists, nobody has accepted it: pending, not Ready.
	var route *unstructured.Unstructured
	err = kube.Eventually(ctx, 2*time.Minute, 250*time.Millisecond, "the route rendered, version 2 on Standby, the claim waiting on the route", func(ctx context.Context) (bool, string, error) {
		c, err := env.admin.Get(ctx, claimGVK, ns, name)
		if err != nil {
			return false, "", err
		}
		route, err = env.admin.Get(ctx, httpRouteGVK, ns, name)
		if err != nil {
			return false, "no route yet", nil
		}
		_, reason, _ := kube.Condition(c, "TrafficSplit")
		ready, _, _ := kube.Condition(c, "Ready")
		return trafficPhases(c) == "1=Serving,2=Standby" && reason == "RoutePending" && ready != "True",
			fmt.Sprintf("traffic %s, TrafficSplit %s, Ready %s", trafficPhases(c), reason, ready), nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sc.note("route rendered, version 2 Standby, TrafficSplit RoutePending in %.1fs", time.Since(start).Seconds())
	sharedGatewayHostnames(ctx, t, sc, route, ns, otherRouteTeam, name)
	if d, err := env.admin.Typed.AppsV1().Deployments(ns).Get(ctx, name+"-2", metav1.GetOptions{}); err == nil && (d.Spec.Replicas == nil || *d.Spec.Replicas != 0) {
		t.Errorf("the standby version's Deployment asks for %v servers, want none", d.Spec.Replicas)
	}
	if n := serverPods(ctx, t, ns, name)["2"]; n != 0 {
		t.Errorf("the standby version runs %d servers, want none", n)
	}
	if got := routeWeights(route); got["routed-1"] == 0 || got["routed-2"] != 0 {
		t.Errorf("route backend weights %v, want all on routed-1", got)
	}

	// Play the gateway: accept the route for every parent.
	start = time.Now()
	acceptRoute(ctx, t, ns, name)
	waitClaimsReady(ctx, t, ns, []string{name}, time.Minute)
	c, err := env.admin.Get(ctx, claimGVK, ns, name)
	if err != nil {
		t.Fatal(err)
	}
	_, reason, _ := kube.Condition(c, "TrafficSplit")
	url, _, _ := unstructured.NestedString(c.Object, "status", "routeURL")
	if reason != "Routed" || !strings.Contains(url, name+"."+ns+".") {
		t.Errorf("accepted route: TrafficSplit %q, routeURL %q", reason, url)
	}
	sc.note("route accepted → claim Ready, TrafficSplit Routed in %.1fs; %s", time.Since(start).Seconds(), url)

	// Weight to the standby version: its servers start and the route gives
	// it weight once they are ready.
	setField(claim, []any{
		map[string]any{"version": "1", "weight": int64(50)},
		map[string]any{"version": "2", "weight": int64(50), "uri": "hf://e2e/routed-v2"},
	}, "spec", "traffic")
	start = time.Now()
	applyClaim(ctx, t, claim)
	err = kube.Eventually(ctx, 2*time.Minute, 250*time.Millisecond, "50/50 routed, both versions serving", func(ctx context.Context) (bool, string, error) {
		c, err := env.admin.Get(ctx, claimGVK, ns, name)
		if err != nil {
			return false, "", err
		}
		r, err := env.admin.Get(ctx, httpRouteGVK, ns, name)
		if err != nil {
			return false, "", err
		}
		w := routeWeights(r)
		return trafficPhases(c) == "1=Serving,2=Serving" && w["routed-1"] > 0 && w["routed-2"] > 0,
			fmt.Sprintf("traffic %s, route weights %v", trafficPhases(c), w), nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sc.note("standby → 50/50: version 2 serving and weighted on the route in %.1fs", time.Since(start).Seconds())
	deleteClaimsAndWait(ctx, t, ns, []string{name})
	deleteClaimsAndWait(ctx, t, otherRouteTeam, []string{name})
	if err := kube.Eventually(ctx, time.Minute, 250*time.Millisecond, "the route garbage-collected with its claim", func(ctx context.Context) (bool, string, error) {
		_, err := env.admin.Get(ctx, httpRouteGVK, ns, name)
		return apierrors.IsNotFound(err), fmt.Sprint(err), nil
	}); err != nil {
		t.Error(err)
	}
}

// otherRouteTeam is the second team whose claim shares scenario 23's
// Gateway under the same name.
const otherRouteTeam = "team-route-b"

// sharedGatewayHostnames checks, on the routes the real API server holds,
// that two teams' claims of the same name on one shared Gateway get
// hostnames of their own: both routes attach to the same listener, and no
// hostname of one matches a request for the other, by Gateway API's rules
// (an empty list matches every host; *.d matches any host under d).
func sharedGatewayHostnames(ctx context.Context, t *testing.T, sc *scenario, first *unstructured.Unstructured, ns, otherNS, name string) {
	t.Helper()
	var second *unstructured.Unstructured
	err := kube.Eventually(ctx, 2*time.Minute, 250*time.Millisecond, "the second team's route rendered", func(ctx context.Context) (bool, string, error) {
		r, err := env.admin.Get(ctx, httpRouteGVK, otherNS, name)
		if apierrors.IsNotFound(err) {
			return false, "no route yet", nil
		}
		second = r
		return err == nil, fmt.Sprint(err), err
	})
	if err != nil {
		t.Fatal(err)
	}
	parents := func(r *unstructured.Unstructured) string {
		p, _, _ := unstructured.NestedSlice(r.Object, "spec", "parentRefs")
		return fmt.Sprint(p)
	}
	if parents(first) != parents(second) {
		t.Fatalf("the two routes attach to different parents (%s and %s): the row needs one shared Gateway", parents(first), parents(second))
	}
	a, _, _ := unstructured.NestedStringSlice(first.Object, "spec", "hostnames")
	b, _, _ := unstructured.NestedStringSlice(second.Object, "spec", "hostnames")
	if len(a) == 0 || len(b) == 0 {
		t.Fatalf("a route on a shared Gateway without hostnames matches every host: %s/%s %v, %s/%s %v", ns, name, a, otherNS, name, b)
	}
	for _, h := range a {
		for _, g := range b {
			if hostnamesIntersect(h, g) {
				t.Errorf("route %s/%s's hostname %q and route %s/%s's %q match the same requests", ns, name, h, otherNS, name, g)
			}
		}
	}
	sc.note("two teams' claims %q on one shared Gateway: hostnames %v and %v, disjoint", name, a, b)
}

// hostnamesIntersect reports whether some request host matches both route
// hostnames, each exact or a wildcard *.suffix (Gateway API: the wildcard
// stands for one or more labels).
func hostnamesIntersect(a, b string) bool {
	a, b = strings.ToLower(a), strings.ToLower(b)
	wa, wb := strings.HasPrefix(a, "*."), strings.HasPrefix(b, "*.")
	switch {
	case !wa && !wb:
		return a == b
	case wa && !wb:
		return strings.HasSuffix(b, a[1:])
	case !wa && wb:
		return strings.HasSuffix(a, b[1:])
	default: // both wildcards: one suffix is under the other
		return strings.HasSuffix(a[1:], b[1:]) || strings.HasSuffix(b[1:], a[1:])
	}
}

// routeWeights maps a route's backend Service names to their weights.
func routeWeights(r *unstructured.Unstructured) map[string]int64 {
	out := map[string]int64{}
	rules, _, _ := unstructured.NestedSlice(r.Object, "spec", "rules")
	for _, rule := range rules {
		refs, _, _ := unstructured.NestedSlice(rule.(map[string]any), "backendRefs")
		for _, ref := range refs {
			m := ref.(map[string]any)
			name, _ := m["name"].(string)
			w, ok := m["weight"].(int64)
			if !ok {
				w = 1 // the API's default weight
			}
			out[name] += w
		}
	}
	return out
}

// acceptRoute writes the status a gateway controller writes for a route it
// accepts and whose backends it resolved, for each of the route's parents.
func acceptRoute(ctx context.Context, t *testing.T, ns, name string) {
	t.Helper()
	r, err := env.admin.Get(ctx, httpRouteGVK, ns, name)
	if err != nil {
		t.Fatal(err)
	}
	parents, _, _ := unstructured.NestedSlice(r.Object, "spec", "parentRefs")
	now := metav1.Now().UTC().Format(time.RFC3339)
	var status []any
	for _, p := range parents {
		cond := func(typ, reason string) map[string]any {
			return map[string]any{"type": typ, "status": "True", "reason": reason, "message": "e2e gateway",
				"lastTransitionTime": now, "observedGeneration": r.GetGeneration()}
		}
		status = append(status, map[string]any{
			"parentRef":      p,
			"controllerName": gatewayController,
			"conditions":     []any{cond("Accepted", "Accepted"), cond("ResolvedRefs", "ResolvedRefs")},
		})
	}
	setField(r, map[string]any{"parents": status}, "status")
	res, err := env.admin.Resource(httpRouteGVK, ns)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := res.UpdateStatus(ctx, r, metav1.UpdateOptions{}); err != nil {
		t.Fatalf("writing the route's status as a gateway would: %v", err)
	}
}
