//go:build e2e

package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
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

var (
	lwsGVK = schema.GroupVersionKind{Group: "leaderworkerset.x-k8s.io", Version: "v1", Kind: "LeaderWorkerSet"}
)

// lwsModuleDir is the tools module that pins sigs.k8s.io/lws (v0.7.0).
const lwsModuleDir = "tools/e2e/lws"

// --- 28 multi-node ------------------------------------------------------------

// multiNode runs examples/multi-node/claim.yaml (2 groups of 2 pods × 8
// GPUs, vLLM over Ray) through the real control plane with the upstream
// LeaderWorkerSet CRD of sigs.k8s.io/lws v0.7.0:
//  1. every object the function renders at every stage (the goldens of
//     fn's TestGoldenMultiNode, which hold its exact output) server-side
//     applies with strict field validation, and the groups' leader and
//     worker pods pass Pod Security "restricted" (dry-run);
//  2. the claim composes the LeaderWorkerSet through Crossplane, and the
//     claim's phase and readiness follow the LWS status the test writes
//     as the LWS controller would: progressing, all groups ready, one
//     group lost, a rolling update after a spec change, ready again;
//  3. the Service selects the leaders only;
//  4. autoscaling with spec.nodes > 1 is refused, naming the field.
//
// The LWS controller does not run: it serves its own webhooks (pod
// mutation sets LWS_LEADER_ADDRESS), which the API server would have to
// reach; see docs/multi-node.md.
func (s *infernoSuite) multiNode(t *testing.T) {
	ctx := context.Background()
	sc := env.summary.start(t, "28 multi-node (LeaderWorkerSet)")
	crd := installLWSCRD(ctx, t)
	t.Cleanup(func() {
		if err := env.admin.Delete(context.Background(), crdGVK, "", crd); err != nil && !apierrors.IsNotFound(err) {
			t.Logf("deleting CRD %s: %v", crd, err)
		}
	})
	const ns = "team-multinode"
	if err := env.createTeamNamespace(ctx, ns); err != nil {
		t.Fatal(err)
	}
	createCredentials(ctx, t, ns)

	// 1. What the function renders, stage by stage, strictly.
	applied, pods := strictApplyGoldens(ctx, t, ns)
	sc.note("%d rendered objects of 5 stages applied with strict validation (dry-run), %d group pods pass restricted", applied, pods)

	// 2. Through Crossplane.
	b := mustRead(t, filepath.Join(repoRoot(), "examples", "multi-node", "claim.yaml"))
	objs, err := kube.DecodeYAML(b)
	if err != nil || len(objs) != 1 {
		t.Fatalf("examples/multi-node/claim.yaml: %v", err)
	}
	claim := objs[0]
	claim.SetNamespace(ns)
	name := claim.GetName()
	start := time.Now()
	applyClaim(ctx, t, claim)
	t.Cleanup(func() { _ = env.admin.Delete(context.Background(), claimGVK, ns, name) })

	var lws *unstructured.Unstructured
	waitFor(ctx, t, 2*time.Minute, "the LeaderWorkerSet composed", func(ctx context.Context) (bool, string, error) {
		l, err := env.admin.Get(ctx, lwsGVK, ns, name)
		if apierrors.IsNotFound(err) {
			return false, claimSummary(ctx, ns, name), nil
		}
		lws = l
		return err == nil, "", err
	})
	sc.note("claim → LeaderWorkerSet in %.1fs (pull Job on kwok)", time.Since(start).Seconds())
	if size, _, _ := unstructured.NestedInt64(lws.Object, "spec", "leaderWorkerTemplate", "size"); size != 2 {
		t.Errorf("group size %d, want 2", size)
	}
	if r, _, _ := unstructured.NestedInt64(lws.Object, "spec", "replicas"); r != 2 {
		t.Errorf("replicas %d, want 2", r)
	}
	if _, err := env.admin.Get(ctx, schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "Deployment"}, ns, name); !apierrors.IsNotFound(err) {
		t.Errorf("a Deployment %s/%s exists beside the LeaderWorkerSet (err %v)", ns, name, err)
	}
	svc, err := env.admin.Typed.CoreV1().Services(ns).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if svc.Spec.Selector["leaderworkerset.sigs.k8s.io/worker-index"] != "0" {
		t.Errorf("Service selector %v: want the leaders only", svc.Spec.Selector)
	}

	stage := func(what string, st map[string]any, phase, reason string, ready bool) {
		t.Helper()
		at := time.Now()
		writeLWSStatus(ctx, t, ns, name, st)
		waitFor(ctx, t, time.Minute, fmt.Sprintf("%s: phase %s, ServerReady %s, Ready %v", what, phase, reason, ready), func(ctx context.Context) (bool, string, error) {
			c, err := env.admin.Get(ctx, claimGVK, ns, name)
			if err != nil {
				return false, "", err
			}
			p, _, _ := unstructured.NestedString(c.Object, "status", "phase")
			_, r, _ := kube.Condition(c, "ServerReady")
			rd, _, _ := kube.Condition(c, "Ready")
			return p == phase && r == reason && (rd == "True") == ready, fmt.Sprintf("phase %q, %s", p, kube.ConditionsSummary(c)), nil
		})
		sc.note("%s → %s/%s in %.1fs", what, phase, reason, time.Since(at).Seconds())
	}
	stage("LWS progressing, 0 of 2 groups", lwsStatus(2, 2, 0, "progressing"), "Starting", "GroupsStarting", false)
	stage("LWS Available, 2 of 2 groups", lwsStatus(2, 2, 2, "available"), "Serving", "GroupsAvailable", true)
	stage("a group lost", lwsStatus(2, 2, 1, "progressing"), "Degraded", "GroupsDegraded", false)
	stage("the group recreated", lwsStatus(2, 2, 2, "available"), "Serving", "GroupsAvailable", true)

	// A spec change rolls the groups: a new template, generation 2.
	gen := lws.GetGeneration()
	setField(claim, "30", "spec", "resources", "cpu")
	applyClaim(ctx, t, claim)
	waitFor(ctx, t, time.Minute, "the LeaderWorkerSet's new template", func(ctx context.Context) (bool, string, error) {
		l, err := env.admin.Get(ctx, lwsGVK, ns, name)
		if err != nil {
			return false, "", err
		}
		return l.GetGeneration() > gen, fmt.Sprintf("generation %d", l.GetGeneration()), nil
	})
	stage("rolling update, 1 of 2 groups updated", lwsStatus(2, 1, 2, "updating"), "Serving", "GroupsRollingOut", false)
	stage("rolling update done", lwsStatus(2, 2, 2, "available"), "Serving", "GroupsAvailable", true)

	// 4. Refused: autoscaling groups.
	bad := claim.DeepCopy()
	bad.SetName("autoscaled-groups")
	setField(bad, map[string]any{"enabled": true}, "spec", "autoscaling")
	setField(bad, map[string]any{"min": int64(1), "max": int64(3)}, "spec", "replicas")
	applyClaim(ctx, t, bad)
	t.Cleanup(func() { _ = env.admin.Delete(context.Background(), claimGVK, ns, "autoscaled-groups") })
	var refusal string
	waitFor(ctx, t, time.Minute, "autoscaling groups refused", func(ctx context.Context) (bool, string, error) {
		// The Fatal is the composite's Synced condition (the claim's
		// Synced is about its binding to the composite).
		xrs, err := env.admin.List(ctx, xrGVK, "", "crossplane.io/claim-name=autoscaled-groups")
		if err != nil || len(xrs) == 0 {
			return false, "no composite yet", err
		}
		st, _, msg := kube.Condition(&xrs[0], "Synced")
		refusal = msg
		return st == "False" && strings.Contains(msg, "spec.autoscaling.enabled"), kube.ConditionsSummary(&xrs[0]), nil
	})
	if l, err := env.admin.Get(ctx, lwsGVK, ns, "autoscaled-groups"); !apierrors.IsNotFound(err) {
		t.Errorf("the refused claim composed a LeaderWorkerSet (%v, %v)", l != nil, err)
	}
	sc.note("spec.autoscaling with spec.nodes 2 refused: composite Synced=False, %q", truncate(refusal, 140))

	// Deleting the claim deletes the groups (garbage collection).
	if err := env.admin.Delete(ctx, claimGVK, ns, name); err != nil {
		t.Fatal(err)
	}
	waitFor(ctx, t, 2*time.Minute, "the LeaderWorkerSet deleted with the claim", func(ctx context.Context) (bool, string, error) {
		_, err := env.admin.Get(ctx, lwsGVK, ns, name)
		return apierrors.IsNotFound(err), "still there", nil
	})
	sc.note("claim deleted → LeaderWorkerSet gone")
}

// installLWSCRD applies the LeaderWorkerSet CRD of the pinned
// sigs.k8s.io/lws and waits until it is established.
func installLWSCRD(ctx context.Context, t *testing.T) string {
	t.Helper()
	dir := moduleDir(t, "sigs.k8s.io/lws", lwsModuleDir)
	return applyCRDFile(ctx, t, filepath.Join(dir, "config", "crd", "bases", "leaderworkerset.x-k8s.io_leaderworkersets.yaml"))
}

// strictApplyGoldens server-side applies (dry-run, strict field
// validation) every object of fn/testdata/golden/multi-node-*.yaml, the
// function's exact output for examples/multi-node at each stage, moved to
// ns; and dry-runs a Pod of each group template there, under Pod Security
// "restricted". It returns how many objects and pods it applied.
func strictApplyGoldens(ctx context.Context, t *testing.T, ns string) (objects, pods int) {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(repoRoot(), "fn", "testdata", "golden", "multi-node-*.yaml"))
	if err != nil || len(files) < 5 {
		t.Fatalf("multi-node goldens: %v (%d files)", err, len(files))
	}
	client, err := kube.NewClient(env.admin.Config)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		for _, g := range goldenObjects(t, filepath.Base(f), ns) {
			o := g.Object
			if err := applyDryRun(ctx, client, o); err != nil {
				t.Errorf("%s: %s %s: strict server-side apply: %v", filepath.Base(f), o.GetKind(), g.Resource, err)
			}
			objects++
			if o.GetKind() != "LeaderWorkerSet" {
				continue
			}
			for _, role := range []string{"leaderTemplate", "workerTemplate"} {
				tmpl, _, _ := unstructured.NestedMap(o.Object, "spec", "leaderWorkerTemplate", role)
				var pt corev1.PodTemplateSpec
				if err := runtimeFromMap(tmpl, &pt); err != nil {
					t.Fatal(err)
				}
				pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: o.GetName() + "-" + strings.ToLower(strings.TrimSuffix(role, "Template")) + "-dryrun", Namespace: ns, Labels: pt.Labels}, Spec: pt.Spec}
				if _, err := client.Typed.CoreV1().Pods(ns).Create(ctx, pod, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}}); err != nil {
					t.Errorf("%s: the %s's pod: %v", filepath.Base(f), role, err)
				}
				pods++
			}
		}
	}
	if w := client.TakeWarnings(); len(w) > 0 {
		t.Errorf("the API server warned on the rendered objects: %v", w)
	}
	return objects, pods
}

func runtimeFromMap(m map[string]any, out any) error {
	b, err := json.Marshal(m)
	if err != nil {
		return err
	}
	return json.Unmarshal(b, out)
}

// lwsStatus is a LeaderWorkerSet status as its controller writes it
// (sigs.k8s.io/lws v0.7.0, updateConditions): groups counted; Available
// and Progressing exclusive; UpdateInProgress beside Progressing while
// groups are not on the current templates.
func lwsStatus(replicas, updated, ready int64, state string) map[string]any {
	now := metav1.Now().UTC().Format(time.RFC3339)
	cond := func(typ, status, reason, msg string) map[string]any {
		return map[string]any{"type": typ, "status": status, "reason": reason, "message": msg, "lastTransitionTime": now}
	}
	st := map[string]any{"replicas": replicas, "updatedReplicas": updated, "readyReplicas": ready}
	switch state {
	case "available":
		st["conditions"] = []any{cond("Available", "True", "AllGroupsReady", "All replicas are ready"), cond("Progressing", "False", "GroupsProgressing", "Replicas are progressing")}
	case "updating":
		st["conditions"] = []any{cond("Available", "False", "AllGroupsReady", "All replicas are ready"), cond("Progressing", "True", "GroupsProgressing", "Replicas are progressing"), cond("UpdateInProgress", "True", "GroupsUpdating", "Rolling Upgrade is in progress")}
	default:
		st["conditions"] = []any{cond("Available", "False", "AllGroupsReady", "All replicas are ready"), cond("Progressing", "True", "GroupsProgressing", "Replicas are progressing")}
	}
	return st
}

// writeLWSStatus writes a LeaderWorkerSet's status subresource as its
// controller would, keeping the hpaPodSelector it sets on the first sync.
func writeLWSStatus(ctx context.Context, t *testing.T, ns, name string, st map[string]any) {
	t.Helper()
	ri, err := env.admin.Resource(lwsGVK, ns)
	if err != nil {
		t.Fatal(err)
	}
	err = kube.Eventually(ctx, 10*time.Second, 100*time.Millisecond, "LWS status written", func(ctx context.Context) (bool, string, error) {
		l, err := ri.Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, "", err
		}
		st["hpaPodSelector"] = "leaderworkerset.sigs.k8s.io/name=" + name + ",leaderworkerset.sigs.k8s.io/worker-index=0"
		l.Object["status"] = st
		_, err = ri.UpdateStatus(ctx, l, metav1.UpdateOptions{FieldValidation: "Strict"})
		if apierrors.IsConflict(err) {
			return false, err.Error(), nil
		}
		return err == nil, "", err
	})
	if err != nil {
		t.Fatal(err)
	}
}

// waitFor is kube.Eventually, failing the test.
func waitFor(ctx context.Context, t *testing.T, timeout time.Duration, what string, check func(ctx context.Context) (bool, string, error)) {
	t.Helper()
	if err := kube.Eventually(ctx, timeout, 200*time.Millisecond, what, check); err != nil {
		t.Fatal(err)
	}
}

// claimSummary is a claim's phase and conditions, for waiting messages.
func claimSummary(ctx context.Context, ns, name string) string {
	c, err := env.admin.Get(ctx, claimGVK, ns, name)
	if err != nil {
		return err.Error()
	}
	p, _, _ := unstructured.NestedString(c.Object, "status", "phase")
	return fmt.Sprintf("claim phase %q, %s", p, kube.ConditionsSummary(c))
}
