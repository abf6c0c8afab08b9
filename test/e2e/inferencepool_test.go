//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	authorizationv1 "k8s.io/api/authorization/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/inferno-ai/function-inferno/test/e2e/kube"
)

var inferencePoolGVK = schema.GroupVersionKind{Group: "inference.networking.k8s.io", Version: "v1", Kind: "InferencePool"}

// poolCompositionLabel is the label value by which claims choose
// examples/inference-pool/composition.yaml (routeLabel's key).
const poolCompositionLabel = "inference-pool"

// --- 30 inference pool ------------------------------------------------------

// inferencePool runs a claim through the Gateway API Inference Extension:
// the InferencePool CRD v1 is installed from the pinned Go module
// (sigs.k8s.io/gateway-api-inference-extension, the root go.mod's), the
// real Crossplane creates the pool, the endpoint picker's six objects (its
// Role and RoleBinding through the API server's escalation check) and the
// route to the pool, kwok runs the picker's pod, and the test plays the
// Gateway implementation: it writes the pool's and the route's status.
// The picker's container does not run (kwok fakes it; there is no Envoy to
// call it either).
func (s *infernoSuite) inferencePool(t *testing.T) {
	ctx := context.Background()
	sc := env.summary.start(t, "30 inference pool")
	// Scenario 23 deletes the HTTPRoute CRD as it ends: applying it again
	// while it terminates would see it vanish under the route.
	waitCRDGone(ctx, t, "httproutes.gateway.networking.k8s.io")
	waitCRDGone(ctx, t, "inferencepools.inference.networking.k8s.io")
	crds := []string{installHTTPRouteCRD(ctx, t), installInferencePoolCRD(ctx, t)}
	defer func() {
		for _, crd := range crds {
			if err := env.admin.Delete(ctx, schema.GroupVersionKind{Group: "apiextensions.k8s.io", Version: "v1", Kind: "CustomResourceDefinition"}, "", crd); err != nil {
				t.Logf("deleting CRD %s: %v", crd, err)
			}
		}
	}()
	if _, err := env.admin.ApplyFile(ctx, filepath.Join(repoRoot(), "examples", "inference-pool", "composition.yaml")); err != nil {
		t.Fatal(err)
	}
	const ns, name = "team-pool", "pooled"
	if err := env.createTeamNamespace(ctx, ns); err != nil {
		t.Fatal(err)
	}
	claim := smallClaim(t, ns, name)
	setField(claim, map[string]any{"matchLabels": map[string]any{routeLabel: poolCompositionLabel}}, "spec", "compositionSelector")
	setField(claim, map[string]any{"min": int64(2), "max": int64(2)}, "spec", "replicas")
	start := time.Now()
	applyClaim(ctx, t, claim)

	// Everything rendered and created by Crossplane; the picker available
	// on a kwok node; nobody has accepted the pool: PoolPending, not Ready.
	err := kube.Eventually(ctx, 2*time.Minute, 250*time.Millisecond, "pool, picker and route created, picker available, claim waiting on the Gateway", func(ctx context.Context) (bool, string, error) {
		c, err := env.admin.Get(ctx, claimGVK, ns, name)
		if err != nil {
			return false, "", err
		}
		_, reason, _ := kube.Condition(c, "InferencePoolReady")
		ready, _, _ := kube.Condition(c, "Ready")
		return reason == "PoolPending" && ready != "True", fmt.Sprintf("InferencePoolReady %s, Ready %s; %s", reason, ready, kube.ConditionsSummary(c)), nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sc.note("claim → pool, picker (6 objects) and route, picker available, PoolPending in %.1fs", time.Since(start).Seconds())
	pool, err := env.admin.Get(ctx, inferencePoolGVK, ns, name)
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range []struct {
		gvk  schema.GroupVersionKind
		name string
	}{
		{schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "Deployment"}, name + "-epp"},
		{schema.GroupVersionKind{Version: "v1", Kind: "Service"}, name + "-epp"},
		{schema.GroupVersionKind{Version: "v1", Kind: "ServiceAccount"}, name + "-epp"},
		{schema.GroupVersionKind{Version: "v1", Kind: "ConfigMap"}, name + "-epp"},
		{schema.GroupVersionKind{Group: "rbac.authorization.k8s.io", Version: "v1", Kind: "Role"}, name + "-epp"},
		{schema.GroupVersionKind{Group: "rbac.authorization.k8s.io", Version: "v1", Kind: "RoleBinding"}, name + "-epp"},
		{httpRouteGVK, name},
	} {
		got, err := env.admin.Get(ctx, o.gvk, ns, o.name)
		if err != nil {
			t.Errorf("%s %s: %v", o.gvk.Kind, o.name, err)
			continue
		}
		if ref := metav1.GetControllerOf(got); ref == nil || ref.Kind != "XInferenceService" {
			t.Errorf("%s %s is not controlled by the composite: %v", o.gvk.Kind, o.name, ref)
		}
	}
	// The pool selects the claim's servers and nothing else: not the
	// picker, not the pull pods.
	sel, _, _ := unstructured.NestedStringMap(pool.Object, "spec", "selector", "matchLabels")
	pods, err := env.admin.Typed.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	selected, pickerNode := 0, ""
	for _, p := range pods.Items {
		match := labels.SelectorFromSet(sel).Matches(labels.Set(p.Labels))
		server := p.Labels["app.kubernetes.io/component"] == "model-server"
		if match != server {
			t.Errorf("pod %s (component %s): selected by the pool %v, a server %v", p.Name, p.Labels["app.kubernetes.io/component"], match, server)
		}
		if match && p.DeletionTimestamp == nil {
			selected++
		}
		if p.Labels["app.kubernetes.io/component"] == "endpoint-picker" {
			pickerNode = p.Spec.NodeName
			if !podReady(&p) || p.Spec.AutomountServiceAccountToken == nil || !*p.Spec.AutomountServiceAccountToken || p.Spec.ServiceAccountName != name+"-epp" {
				t.Errorf("picker pod %s: ready %v, service account %s, token %v", p.Name, podReady(&p), p.Spec.ServiceAccountName, p.Spec.AutomountServiceAccountToken)
			}
		}
	}
	if selected != 2 || pickerNode == "" {
		t.Errorf("the pool selects %d pods, want the 2 servers; picker on node %q", selected, pickerNode)
	}
	if node, err := env.admin.Typed.CoreV1().Nodes().Get(ctx, pickerNode, metav1.GetOptions{}); err == nil && node.Annotations["kwok.x-k8s.io/node"] != "fake" {
		t.Errorf("the picker runs on %s, not a kwok node", pickerNode)
	}
	// The picker's identity may read its namespace's pods and pools, not
	// another's, and not write.
	for _, c := range []struct {
		ns, verb, group, resource string
		want                      bool
	}{
		{ns, "list", "", "pods", true},
		{ns, "watch", "inference.networking.k8s.io", "inferencepools", true},
		{ns, "get", "inference.networking.x-k8s.io", "inferenceobjectives", true},
		{ns, "update", "inference.networking.k8s.io", "inferencepools", false},
		{ns, "get", "", "secrets", false},
		{"default", "list", "", "pods", false},
	} {
		if got := canI(ctx, t, "system:serviceaccount:"+ns+":"+name+"-epp", c.ns, c.verb, c.group, c.resource); got != c.want {
			t.Errorf("picker may %s %s.%s in %s: %v, want %v", c.verb, c.resource, c.group, c.ns, got, c.want)
		}
	}

	// Play the Gateway implementation: accept the pool and the route.
	start = time.Now()
	writePoolStatus(ctx, t, ns, name, "True", "SupportedByParent", "")
	acceptRoute(ctx, t, ns, name)
	waitPoolReason(ctx, t, ns, name, "PoolRouted", "True")
	sc.note("pool and route accepted → claim Ready, PoolRouted in %.1fs", time.Since(start).Seconds())

	// The real picker, with the rendered arguments, configuration and
	// identity, finds the pool's servers (it watches InferenceObjectives
	// too, and exits without their CRD).
	waitCRDGone(ctx, t, "inferenceobjectives.inference.networking.x-k8s.io")
	crds = append(crds, installInferenceExtensionCRD(ctx, t, "inference.networking.x-k8s.io_inferenceobjectives.yaml"))
	start = time.Now()
	live := startLivePicker(ctx, t, ns, name)
	if live != nil {
		live.waitPodsAdded(ctx, t, name, readyPoolPods(ctx, t, ns, sel))
		sc.note("the real EPP v1.2.0 (host process, the rendered args, config and ServiceAccount token) added the pool's 2 ready servers in %.1fs", time.Since(start).Seconds())
	}

	// A claim that serves a LoRA adapter, behind its own pool: its picker
	// routes by adapter name (the lora-affinity scorer, which the function
	// adds to the platform's configuration), and the real EPP builds its
	// scheduler from that configuration and adds the claim's server.
	const loraName = "pooled-lora"
	lora := smallClaim(t, ns, loraName)
	setField(lora, map[string]any{"matchLabels": map[string]any{routeLabel: poolCompositionLabel}}, "spec", "compositionSelector")
	setField(lora, []any{map[string]any{"name": "sql", "uri": "hf://e2e/pooled-sql-lora"}}, "spec", "adapters")
	start = time.Now()
	applyClaim(ctx, t, lora)
	t.Cleanup(func() { _ = env.admin.Delete(context.Background(), claimGVK, ns, loraName) })
	var loraSel map[string]string
	err = kube.Eventually(ctx, 2*time.Minute, 250*time.Millisecond, "the adapter claim's picker configured and its server ready", func(ctx context.Context) (bool, string, error) {
		cm, err := env.admin.Typed.CoreV1().ConfigMaps(ns).Get(ctx, loraName+"-epp", metav1.GetOptions{})
		if err != nil {
			return false, "no picker ConfigMap yet", nil
		}
		if cfg := cm.Data["config.yaml"]; !strings.Contains(cfg, "lora-affinity-scorer") {
			return false, "", fmt.Errorf("the picker configuration of a claim with adapters has no lora-affinity-scorer:\n%s", cfg)
		}
		p, err := env.admin.Get(ctx, inferencePoolGVK, ns, loraName)
		if err != nil {
			return false, "no pool yet", nil
		}
		loraSel, _, _ = unstructured.NestedStringMap(p.Object, "spec", "selector", "matchLabels")
		n := len(readyPoolPods(ctx, t, ns, loraSel))
		return n == 1, fmt.Sprintf("%d servers ready; %s", n, claimSummary(ctx, ns, loraName)), nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if live != nil {
		liveLoRA := startLivePicker(ctx, t, ns, loraName)
		liveLoRA.waitPodsAdded(ctx, t, loraName, readyPoolPods(ctx, t, ns, loraSel))
		if !liveLoRA.scheduledWith(t, "lora-affinity-scorer") {
			t.Errorf("the real picker of the adapter claim did not build its scheduler with lora-affinity-scorer; see %s", liveLoRA.log)
		}
		sc.note("a claim with a LoRA adapter: its picker configuration gains lora-affinity-scorer; the real EPP scheduled with it and added the server, %.1fs after apply", time.Since(start).Seconds())
	}
	deleteClaimsAndWait(ctx, t, ns, []string{loraName})

	// The Gateway stops supporting pools: the claim says so and is not Ready.
	start = time.Now()
	writePoolStatus(ctx, t, ns, name, "False", "NotSupportedByParent", "this Gateway does not take InferencePool backends")
	waitPoolReason(ctx, t, ns, name, "PoolNotAccepted", "False")
	writePoolStatus(ctx, t, ns, name, "True", "SupportedByParent", "")
	waitPoolReason(ctx, t, ns, name, "PoolRouted", "True")
	sc.note("pool refused → PoolNotAccepted, Ready False, and back in %.1fs", time.Since(start).Seconds())

	// A canary behind the same pool: its servers join the pool's selection.
	setField(claim, []any{
		map[string]any{"version": "1", "weight": int64(50)},
		map[string]any{"version": "2", "weight": int64(50), "uri": "hf://e2e/pooled-v2"},
	}, "spec", "traffic")
	start = time.Now()
	applyClaim(ctx, t, claim)
	err = kube.Eventually(ctx, 2*time.Minute, 250*time.Millisecond, "both versions serving behind the pool", func(ctx context.Context) (bool, string, error) {
		c, err := env.admin.Get(ctx, claimGVK, ns, name)
		if err != nil {
			return false, "", err
		}
		_, split, _ := kube.Condition(c, "TrafficSplit")
		_, pr, _ := kube.Condition(c, "InferencePoolReady")
		ready, _, _ := kube.Condition(c, "Ready")
		pods := serverPods(ctx, t, ns, name)
		return split == "PoolSplit" && pr == "PoolRouted" && ready == "True" && pods["1"] == 1 && pods["2"] == 1,
			fmt.Sprintf("TrafficSplit %s, InferencePoolReady %s, Ready %s, servers %v", split, pr, ready, pods), nil
	})
	if err != nil {
		t.Fatal(err)
	}
	pods, err = env.admin.Typed.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: labels.SelectorFromSet(sel).String()})
	if err != nil {
		t.Fatal(err)
	}
	versions := map[string]int{}
	for _, p := range pods.Items {
		if p.DeletionTimestamp == nil && podReady(&p) {
			versions[p.Labels["app.kubernetes.io/version"]]++
		}
	}
	if versions["1"] != 1 || versions["2"] != 1 {
		t.Errorf("the pool selects ready servers %v, want one of each version", versions)
	}
	sc.note("canary 50/50 on the pool: both versions selected, PoolSplit, Ready in %.1fs", time.Since(start).Seconds())
	if live != nil {
		live.waitPodsAdded(ctx, t, name, readyPoolPods(ctx, t, ns, sel))
		sc.note("the live picker added the canary's server too")
	}

	// Every object the function renders at every stage (its goldens) is
	// accepted by the API server with strict field validation.
	n := dryRunGoldens(ctx, t, ns, "inference-pool-")
	sc.note("%d rendered objects of 6 stages accepted by server-side apply, strict field validation (dry run)", n)

	deleteClaimsAndWait(ctx, t, ns, []string{name})
	if err := kube.Eventually(ctx, time.Minute, 250*time.Millisecond, "the pool and the picker garbage-collected with the claim", func(ctx context.Context) (bool, string, error) {
		_, perr := env.admin.Get(ctx, inferencePoolGVK, ns, name)
		_, derr := env.admin.Typed.AppsV1().Deployments(ns).Get(ctx, name+"-epp", metav1.GetOptions{})
		_, rerr := env.admin.Typed.RbacV1().Roles(ns).Get(ctx, name+"-epp", metav1.GetOptions{})
		return apierrors.IsNotFound(perr) && apierrors.IsNotFound(derr) && apierrors.IsNotFound(rerr), fmt.Sprint(perr, derr, rerr), nil
	}); err != nil {
		t.Error(err)
	}
}

// waitCRDGone waits until the CRD of that name is not being deleted: gone,
// or there and not terminating.
func waitCRDGone(ctx context.Context, t *testing.T, name string) {
	t.Helper()
	err := kube.Eventually(ctx, 2*time.Minute, 250*time.Millisecond, "CRD "+name+" not terminating", func(ctx context.Context) (bool, string, error) {
		crd, err := env.admin.Get(ctx, schema.GroupVersionKind{Group: "apiextensions.k8s.io", Version: "v1", Kind: "CustomResourceDefinition"}, "", name)
		if apierrors.IsNotFound(err) {
			return true, "", nil
		}
		if err != nil {
			return false, "", err
		}
		return crd.GetDeletionTimestamp() == nil, "terminating", nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// installInferencePoolCRD applies the InferencePool CRD (v1) of the
// sigs.k8s.io/gateway-api-inference-extension module the root go.mod pins.
func installInferencePoolCRD(ctx context.Context, t *testing.T) string {
	t.Helper()
	return installInferenceExtensionCRD(ctx, t, "inference.networking.k8s.io_inferencepools.yaml")
}

// installInferenceExtensionCRD applies one CRD of that module's
// config/crd/bases.
func installInferenceExtensionCRD(ctx context.Context, t *testing.T, file string) string {
	t.Helper()
	dir := moduleDir(t, "sigs.k8s.io/gateway-api-inference-extension", "")
	return applyCRDFile(ctx, t, filepath.Join(dir, "config", "crd", "bases", file))
}

// writePoolStatus writes the status a Gateway implementation writes on an
// InferencePool for the Composition's Gateway (gateways/inference):
// Accepted with that status and reason, ResolvedRefs True.
func writePoolStatus(ctx context.Context, t *testing.T, ns, name, accepted, reason, message string) {
	t.Helper()
	p, err := env.admin.Get(ctx, inferencePoolGVK, ns, name)
	if err != nil {
		t.Fatal(err)
	}
	now := metav1.Now().UTC().Format(time.RFC3339)
	cond := func(typ, status, reason, msg string) map[string]any {
		return map[string]any{"type": typ, "status": status, "reason": reason, "message": msg, "lastTransitionTime": now, "observedGeneration": p.GetGeneration()}
	}
	setField(p, map[string]any{"parents": []any{map[string]any{
		"parentRef":      map[string]any{"group": "gateway.networking.k8s.io", "kind": "Gateway", "name": "inference", "namespace": "gateways"},
		"controllerName": gatewayController,
		"conditions":     []any{cond("Accepted", accepted, reason, message), cond("ResolvedRefs", "True", "ResolvedRefs", "")},
	}}}, "status")
	res, err := env.admin.Resource(inferencePoolGVK, ns)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := res.UpdateStatus(ctx, p, metav1.UpdateOptions{}); err != nil {
		t.Fatalf("writing the pool's status as a Gateway implementation would: %v", err)
	}
}

// waitPoolReason waits for the claim's InferencePoolReady reason and Ready
// status.
func waitPoolReason(ctx context.Context, t *testing.T, ns, name, reason, ready string) {
	t.Helper()
	err := kube.Eventually(ctx, 2*time.Minute, 250*time.Millisecond, fmt.Sprintf("InferencePoolReady %s, Ready %s", reason, ready), func(ctx context.Context) (bool, string, error) {
		c, err := env.admin.Get(ctx, claimGVK, ns, name)
		if err != nil {
			return false, "", err
		}
		_, r, msg := kube.Condition(c, "InferencePoolReady")
		st, _, _ := kube.Condition(c, "Ready")
		return r == reason && st == ready, fmt.Sprintf("InferencePoolReady %s (%s), Ready %s", r, msg, st), nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// canI asks the API server whether user may do verb on group/resource in
// namespace ns (a SubjectAccessReview).
func canI(ctx context.Context, t *testing.T, user, ns, verb, group, resource string) bool {
	t.Helper()
	sar := &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
		User:               user,
		Groups:             []string{"system:serviceaccounts", "system:serviceaccounts:" + strings.Split(user, ":")[2], "system:authenticated"},
		ResourceAttributes: &authorizationv1.ResourceAttributes{Namespace: ns, Verb: verb, Group: group, Resource: resource},
	}}
	got, err := env.admin.Typed.AuthorizationV1().SubjectAccessReviews().Create(ctx, sar, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return got.Status.Allowed
}

// dryRunGoldens server-side-applies, as a dry run with strict field
// validation, every desired object of the goldens fn/testdata/golden/
// <prefix>*.yaml (the function's output at each stage of an example) into
// namespace ns, and returns how many it applied.
func dryRunGoldens(ctx context.Context, t *testing.T, ns, prefix string) int {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join(repoRoot(), "fn", "testdata", "golden", prefix+"*.yaml"))
	if err != nil || len(paths) == 0 {
		t.Fatalf("no goldens %s*: %v", prefix, err)
	}
	n := 0
	for _, path := range paths {
		for _, g := range goldenObjects(t, filepath.Base(path), ns) {
			if err := applyDryRun(ctx, env.admin, g.Object); err != nil {
				t.Errorf("%s: %s (%s) refused: %v", filepath.Base(path), g.Resource, g.Object.GetKind(), err)
			}
			n++
		}
	}
	return n
}

// readyPoolPods names the ready pods a pool's selector matches.
func readyPoolPods(ctx context.Context, t *testing.T, ns string, sel map[string]string) []string {
	t.Helper()
	pods, err := env.admin.Typed.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: labels.SelectorFromSet(sel).String()})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, p := range pods.Items {
		if p.DeletionTimestamp == nil && podReady(&p) {
			out = append(out, p.Name)
		}
	}
	return out
}
