//go:build e2e

package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/inferno-ai/function-inferno/test/e2e/kube"
)

var (
	lwsGVK = schema.GroupVersionKind{Group: "leaderworkerset.x-k8s.io", Version: "v1", Kind: "LeaderWorkerSet"}
)

// lwsModuleDir is the tools module that pins sigs.k8s.io/lws (v0.7.0).
const lwsModuleDir = "tools/e2e/lws"

// --- 28 multi-node ------------------------------------------------------------

// lwsGPUNodes is how many 8-GPU kwok nodes the scenario adds: 2 groups of
// 2 pods of 8 GPUs each, plus the surge group of a rolling update (3 × 2
// pods), one pod per node.
const lwsGPUNodes = 6

// multiNode runs examples/multi-node/claim.yaml (2 groups of 2 pods × 8
// GPUs, vLLM over Ray) through the real control plane with the upstream
// LeaderWorkerSet CRD and the real LWS controller of sigs.k8s.io/lws
// v0.7.0, its webhooks included (liveLWS), on kwok GPU nodes:
//  1. every object the function renders at every stage (the goldens of
//     fn's TestGoldenMultiNode, which hold its exact output) server-side
//     applies with strict field validation through LWS's own validating
//     and defaulting webhooks, and the groups' leader and worker pods pass
//     Pod Security "restricted" (dry-run);
//  2. the claim composes the LeaderWorkerSet through Crossplane; the LWS
//     controller makes the groups (leader and worker StatefulSets, pods
//     labelled and addressed by its pod webhook) and writes the status the
//     claim's phase follows to Serving; the Service's endpoints are the
//     two leaders;
//  3. a group that loses a worker is recreated whole by the controller
//     (RecreateGroupOnPodRestart); while it cannot schedule the claim is
//     Degraded and not Ready, then Serving again;
//  4. a spec change rolls the groups with a surge group (maxSurge 1) and
//     maxUnavailable 1, the least LWS takes: from a watch on the pods,
//     never fewer than 1 of the 2 groups serving; a single group is
//     replaced in place (no surge), as documented;
//  5. autoscaling with spec.nodes > 1 is refused, naming the field;
//  6. deleting the claim deletes the groups.
func (s *infernoSuite) multiNode(t *testing.T) {
	ctx := context.Background()
	sc := env.summary.start(t, "28 multi-node (LeaderWorkerSet, real LWS controller)")
	crd := installLWSCRD(ctx, t)
	t.Cleanup(func() {
		if err := env.admin.Delete(context.Background(), crdGVK, "", crd); err != nil && !apierrors.IsNotFound(err) {
			t.Logf("deleting CRD %s: %v", crd, err)
		}
	})
	at := time.Now()
	controller := startLWSController(ctx, t)
	sc.note("LWS controller v0.7.0 up, webhooks served to the API server, in %.1fs", time.Since(at).Seconds())
	nodes := addGPUNodes(ctx, t, lwsGPUNodes)

	const ns = "team-multinode"
	if err := env.createTeamNamespace(ctx, ns); err != nil {
		t.Fatal(err)
	}
	createCredentials(ctx, t, ns)

	// 1. What the function renders, stage by stage, strictly.
	applied, pods := strictApplyGoldens(ctx, t, ns)
	sc.note("%d rendered objects of 5 stages applied with strict validation through LWS's webhooks (dry-run), %d group pods pass restricted", applied, pods)

	// 2. Through Crossplane and the LWS controller, with the example's
	// Composition (NetworkPolicies on: spec.nodes > 1 is refused without
	// them), which the claim picks by label.
	if _, err := env.admin.ApplyFile(ctx, filepath.Join(repoRoot(), "examples", "multi-node", "composition.yaml")); err != nil {
		t.Fatal(err)
	}
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
	phases := waitClaimPhase(ctx, t, ns, name, "Serving", "GroupsAvailable", true, 3*time.Minute)
	sc.note("claim → Serving/GroupsAvailable and Ready in %.1fs, phases seen %v", time.Since(start).Seconds(), phases)
	if !slices.Contains(phases, "Starting") {
		t.Errorf("phases %v: the claim was never Starting while its groups came up", phases)
	}

	groups := lwsGroups(ctx, t, ns, name)
	checkGroups(t, groups, 2, 2)
	leaders := checkLeaderEndpoints(ctx, t, ns, name, groups)
	sc.note("2 groups of 2 pods on %d distinct nodes, made by the controller (worker-index labels, LWS_LEADER_ADDRESS from its pod webhook); the Service's endpoints are the leaders %v", distinctNodes(groups), leaders)

	// 3. A group that loses a worker is recreated whole; held off the
	// nodes for a moment, the claim is Degraded.
	cordon(ctx, t, append([]string{FakeNodeName}, nodes...), true)
	victim := groups["1"].workers[0]
	oldLeader := groups["1"].leader.UID
	at = time.Now()
	if err := env.admin.Typed.CoreV1().Pods(ns).Delete(ctx, victim.Name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	waitClaimPhase(ctx, t, ns, name, "Degraded", "GroupsDegraded", false, 2*time.Minute)
	sc.note("worker %s deleted, nodes cordoned → Degraded/GroupsDegraded, not Ready, in %.1fs", victim.Name, time.Since(at).Seconds())
	cordon(ctx, t, append([]string{FakeNodeName}, nodes...), false)
	at = time.Now()
	waitClaimPhase(ctx, t, ns, name, "Serving", "GroupsAvailable", true, 3*time.Minute)
	groups = lwsGroups(ctx, t, ns, name)
	checkGroups(t, groups, 2, 2)
	if groups["1"].leader.UID == oldLeader {
		t.Errorf("group 1's leader %s kept its UID: the controller did not recreate the group (RecreateGroupOnPodRestart)", groups["1"].leader.Name)
	}
	sc.note("nodes back → group 1 recreated whole (new leader), Serving/GroupsAvailable in %.1fs", time.Since(at).Seconds())

	// 4. A spec change rolls the groups, one surge group at a time.
	rec := recordGroups(ctx, t, ns, name)
	gen := lws.GetGeneration()
	setField(claim, "30", "spec", "resources", "cpu")
	at = time.Now()
	applyClaim(ctx, t, claim)
	waitFor(ctx, t, time.Minute, "the LeaderWorkerSet's new template", func(ctx context.Context) (bool, string, error) {
		l, err := env.admin.Get(ctx, lwsGVK, ns, name)
		if err != nil {
			return false, "", err
		}
		return l.GetGeneration() > gen, fmt.Sprintf("generation %d", l.GetGeneration()), nil
	})
	waitFor(ctx, t, 4*time.Minute, "every group on the new template", func(ctx context.Context) (bool, string, error) {
		g := lwsGroupsNow(ctx, ns, name)
		n := 0
		for _, gr := range g {
			if gr.ready(2) && gr.leader.Spec.Containers[0].Resources.Requests.Cpu().String() == "30" {
				n++
			}
		}
		return n == 2 && len(g) == 2, fmt.Sprintf("%d of %d groups ready on cpu 30", n, len(g)), nil
	})
	waitClaimPhase(ctx, t, ns, name, "Serving", "GroupsAvailable", true, 2*time.Minute)
	low, most, seen := rec.summary()
	// LWS keeps replicas − maxUnavailable groups serving, and the
	// function's maxUnavailable for groups is 1 (groupsMaxUnavailable):
	// it releases the surge group while it replaces the last old one.
	if low < 1 {
		t.Errorf("during the rolling update %d groups served at one moment (want never below 1: 2 groups, maxUnavailable 1); the pod watch:\n%s", low, strings.Join(rec.timeline, "\n"))
	}
	if most < 3 {
		t.Errorf("at most %d groups existed during the rolling update: no surge group (maxSurge 1); the pod watch:\n%s", most, strings.Join(rec.timeline, "\n"))
	}
	sc.note("rolling update of 2 groups (cpu 32 → 30): all on the new template in %.1fs; from a pod watch (%d events) never fewer than %d serving, at most %d groups", time.Since(at).Seconds(), seen, low, most)

	// One group rolls in place: LWS v0.7.0 surges only when the replicas
	// exceed maxSurge, so the only group is stopped before its
	// replacement starts. The function warns of it (docs/multi-node.md);
	// this holds the documentation to what the controller does.
	setField(claim, map[string]any{"min": int64(1)}, "spec", "replicas")
	applyClaim(ctx, t, claim)
	waitFor(ctx, t, 2*time.Minute, "one group", func(ctx context.Context) (bool, string, error) {
		g := lwsGroupsNow(ctx, ns, name)
		return len(g) == 1 && g["0"].ready(2), fmt.Sprintf("%d groups", len(g)), nil
	})
	rec = recordGroups(ctx, t, ns, name)
	l1, err := env.admin.Get(ctx, lwsGVK, ns, name)
	if err != nil {
		t.Fatal(err)
	}
	setField(claim, "31", "spec", "resources", "cpu")
	at = time.Now()
	applyClaim(ctx, t, claim)
	waitFor(ctx, t, 2*time.Minute, "the LeaderWorkerSet's new template", func(ctx context.Context) (bool, string, error) {
		l, err := env.admin.Get(ctx, lwsGVK, ns, name)
		if err != nil {
			return false, "", err
		}
		return l.GetGeneration() > l1.GetGeneration(), fmt.Sprintf("generation %d", l.GetGeneration()), nil
	})
	templated := time.Since(at)
	waitFor(ctx, t, 4*time.Minute, "the one group on the new template", func(ctx context.Context) (bool, string, error) {
		g := lwsGroupsNow(ctx, ns, name)
		return len(g) == 1 && g["0"].ready(2) && g["0"].leader.Spec.Containers[0].Resources.Requests.Cpu().String() == "31", fmt.Sprintf("%d groups", len(g)), nil
	})
	replaced := time.Since(at)
	waitClaimPhase(ctx, t, ns, name, "Serving", "GroupsAvailable", true, 2*time.Minute)
	low, most, seen = rec.summary()
	if low != 0 || most != 1 {
		t.Errorf("one group rolled with at least %d serving and at most %d groups: LWS surged after all; docs/multi-node.md and the function's single-group warning say it does not", low, most)
	}
	// The three times apart: the steps before change the LWS status often
	// enough to open Crossplane's XR circuit breaker, and the composite
	// then moves on its 1-minute poll (docs/testing.md).
	sc.note("one group (cpu 30 → 31): claim change → new template %.1fs → group replaced in place %.1fs → claim Serving %.1fs; %d serving at the lowest, at most %d group (%d events): no surge, as documented", templated.Seconds(), replaced.Seconds(), time.Since(at).Seconds(), low, most, seen)

	// 5. Refused: autoscaling groups.
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

	// 6. Deleting the claim deletes the groups (garbage collection).
	if err := env.admin.Delete(ctx, claimGVK, ns, name); err != nil {
		t.Fatal(err)
	}
	at = time.Now()
	waitFor(ctx, t, 2*time.Minute, "the LeaderWorkerSet, its StatefulSets and pods deleted with the claim", func(ctx context.Context) (bool, string, error) {
		_, err := env.admin.Get(ctx, lwsGVK, ns, name)
		if !apierrors.IsNotFound(err) {
			return false, "the LeaderWorkerSet is still there", err
		}
		sets, err := env.admin.Typed.AppsV1().StatefulSets(ns).List(ctx, metav1.ListOptions{LabelSelector: lwsNameLabel + "=" + name})
		if err != nil {
			return false, "", err
		}
		pods, err := env.admin.Typed.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: lwsNameLabel + "=" + name})
		if err != nil {
			return false, "", err
		}
		return len(sets.Items) == 0 && len(pods.Items) == 0, fmt.Sprintf("%d StatefulSets, %d pods left", len(sets.Items), len(pods.Items)), nil
	})
	sc.note("claim deleted → LeaderWorkerSet, StatefulSets and group pods gone in %.1fs", time.Since(at).Seconds())
	if r := controller.refusals(); len(r) > 0 {
		t.Errorf("the API server refused the LWS controller (its ClusterRole) %d times, first: %s", len(r), r[0])
	}
}

// The labels the LWS pod webhook puts on every pod of a group.
const (
	lwsNameLabel        = "leaderworkerset.sigs.k8s.io/name"
	lwsGroupIndexLabel  = "leaderworkerset.sigs.k8s.io/group-index"
	lwsWorkerIndexLabel = "leaderworkerset.sigs.k8s.io/worker-index"
)

// lwsGroup is one group's pods as the controller made them.
type lwsGroup struct {
	leader  *corev1.Pod
	workers []corev1.Pod
}

// ready: the leader and every worker of a group of size pods are Ready and
// not being deleted.
func (g lwsGroup) ready(size int) bool {
	if g.leader == nil || !isServing(g.leader) || len(g.workers) != size-1 {
		return false
	}
	for i := range g.workers {
		if !isServing(&g.workers[i]) {
			return false
		}
	}
	return true
}

// isServing: Ready and not being deleted.
func isServing(p *corev1.Pod) bool { return p.DeletionTimestamp == nil && podReady(p) }

// groupsOf sorts an LWS's pods into groups by the webhook's labels.
func groupsOf(pods []corev1.Pod) map[string]lwsGroup {
	out := map[string]lwsGroup{}
	for i := range pods {
		p := pods[i]
		gi := p.Labels[lwsGroupIndexLabel]
		g := out[gi]
		if p.Labels[lwsWorkerIndexLabel] == "0" {
			g.leader = &p
		} else {
			g.workers = append(g.workers, p)
		}
		out[gi] = g
	}
	return out
}

func lwsGroupsNow(ctx context.Context, ns, name string) map[string]lwsGroup {
	pods, err := env.admin.Typed.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: lwsNameLabel + "=" + name})
	if err != nil {
		return nil
	}
	return groupsOf(pods.Items)
}

// lwsGroups waits until the LWS's groups have settled (every pod Ready, none
// being deleted) and returns them.
func lwsGroups(ctx context.Context, t *testing.T, ns, name string) map[string]lwsGroup {
	t.Helper()
	var groups map[string]lwsGroup
	waitFor(ctx, t, 2*time.Minute, "the groups' pods Ready", func(ctx context.Context) (bool, string, error) {
		groups = lwsGroupsNow(ctx, ns, name)
		n := 0
		for _, g := range groups {
			if g.ready(2) {
				n++
			}
		}
		return n == len(groups) && n > 0, fmt.Sprintf("%d of %d groups ready", n, len(groups)), nil
	})
	return groups
}

// checkGroups checks what the controller and its pod webhook made: n
// groups of size pods, the webhook's labels and the workers' leader address,
// each pod on its own node (8 GPUs a pod, 8 a node).
func checkGroups(t *testing.T, groups map[string]lwsGroup, n, size int) {
	t.Helper()
	if len(groups) != n {
		t.Errorf("%d groups, want %d", len(groups), n)
	}
	for gi, g := range groups {
		if g.leader == nil {
			t.Errorf("group %s has no leader (worker-index 0)", gi)
			continue
		}
		if len(g.workers) != size-1 {
			t.Errorf("group %s has %d workers, want %d", gi, len(g.workers), size-1)
		}
		for _, w := range g.workers {
			addr := ""
			for _, e := range w.Spec.Containers[0].Env {
				if e.Name == "LWS_LEADER_ADDRESS" {
					addr = e.Value
				}
			}
			if !strings.HasPrefix(addr, g.leader.Name+".") {
				t.Errorf("worker %s: LWS_LEADER_ADDRESS %q, want the leader %s's address (the pod webhook sets it)", w.Name, addr, g.leader.Name)
			}
		}
	}
	if d, all := distinctNodes(groups), n*size; d != all {
		t.Errorf("the %d pods of the groups share nodes (%d distinct): each wants a whole node's 8 GPUs", all, d)
	}
}

func distinctNodes(groups map[string]lwsGroup) int {
	nodes := map[string]bool{}
	for _, g := range groups {
		if g.leader != nil {
			nodes[g.leader.Spec.NodeName] = true
		}
		for _, w := range g.workers {
			nodes[w.Spec.NodeName] = true
		}
	}
	return len(nodes)
}

// checkLeaderEndpoints waits until the claim's Service's EndpointSlices
// hold exactly the leaders' addresses and returns the leaders' names.
func checkLeaderEndpoints(ctx context.Context, t *testing.T, ns, name string, groups map[string]lwsGroup) []string {
	t.Helper()
	want := map[string]string{}
	var names []string
	for _, g := range groups {
		if g.leader != nil {
			want[g.leader.Status.PodIP] = g.leader.Name
			names = append(names, g.leader.Name)
		}
	}
	sort.Strings(names)
	waitFor(ctx, t, time.Minute, "the Service's endpoints are the leaders", func(ctx context.Context) (bool, string, error) {
		eps, err := env.admin.Typed.DiscoveryV1().EndpointSlices(ns).List(ctx, metav1.ListOptions{LabelSelector: "kubernetes.io/service-name=" + name})
		if err != nil {
			return false, "", err
		}
		got := map[string]bool{}
		for _, s := range eps.Items {
			for _, e := range s.Endpoints {
				if e.Conditions.Ready != nil && *e.Conditions.Ready {
					for _, a := range e.Addresses {
						got[a] = true
					}
				}
			}
		}
		if len(got) != len(want) {
			return false, fmt.Sprintf("endpoints %v, leaders %v", got, want), nil
		}
		for a := range got {
			if _, ok := want[a]; !ok {
				return false, fmt.Sprintf("endpoint %s is not a leader (leaders %v)", a, want), nil
			}
		}
		return true, "", nil
	})
	return names
}

// cordon marks nodes unschedulable (or not), as kubectl cordon does; the
// cleanup puts them back.
func cordon(ctx context.Context, t *testing.T, nodes []string, on bool) {
	t.Helper()
	patch := []byte(fmt.Sprintf(`{"spec":{"unschedulable":%v}}`, on))
	for _, n := range nodes {
		if _, err := env.admin.Typed.CoreV1().Nodes().Patch(ctx, n, types.StrategicMergePatchType, patch, metav1.PatchOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	if on {
		t.Cleanup(func() { cordon(context.Background(), t, nodes, false) })
	}
}

// addGPUNodes adds n kwok GPU nodes (8 GPUs each, pod addresses of their
// own) for the groups and deletes them when the scenario ends.
func addGPUNodes(ctx context.Context, t *testing.T, n int) []string {
	t.Helper()
	var names []string
	for i := 1; i <= n; i++ {
		name := fmt.Sprintf("gpu-node-lws-%d", i)
		if err := env.createFakeNode(ctx, name, fmt.Sprintf("10.244.%d.0/24", i)); err != nil {
			t.Fatal(err)
		}
		names = append(names, name)
	}
	t.Cleanup(func() {
		for _, name := range names {
			_ = env.admin.Typed.CoreV1().Nodes().Delete(context.Background(), name, metav1.DeleteOptions{})
		}
	})
	return names
}

// groupRecorder follows an LWS's pods through a watch (every change the API
// server sends, not samples) and counts, after each, the groups serving:
// those whose leader is Ready and not being deleted, which is what the
// Service sends requests to. (The rendered leader serves only once every
// worker joined, so in a cluster a Ready leader is a whole group; kwok
// makes pods Ready each on its own.)
type groupRecorder struct {
	mu     sync.Mutex
	pods   map[string]corev1.Pod
	low    int
	most   int
	events int
	// timeline is each event's pod and the groups after it, for the
	// failure message.
	timeline []string
}

func recordGroups(ctx context.Context, t *testing.T, ns, name string) *groupRecorder {
	t.Helper()
	sel := metav1.ListOptions{LabelSelector: lwsNameLabel + "=" + name}
	list, err := env.admin.Typed.CoreV1().Pods(ns).List(ctx, sel)
	if err != nil {
		t.Fatal(err)
	}
	r := &groupRecorder{pods: map[string]corev1.Pod{}}
	for _, p := range list.Items {
		r.pods[p.Name] = p
	}
	r.low, r.most = r.count()
	// From the list's version on: every change after the state counted.
	sel.ResourceVersion = list.ResourceVersion
	w, err := env.admin.Typed.CoreV1().Pods(ns).Watch(ctx, sel)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(w.Stop)
	go func() {
		for ev := range w.ResultChan() {
			p, ok := ev.Object.(*corev1.Pod)
			if !ok {
				continue
			}
			r.mu.Lock()
			if ev.Type == watch.Deleted {
				delete(r.pods, p.Name)
			} else {
				r.pods[p.Name] = *p
			}
			r.events++
			ready, groups := r.count()
			r.timeline = append(r.timeline, fmt.Sprintf("%s %s ready=%v deleting=%v rev=%s → %d of %d groups ready",
				ev.Type, p.Name, podReady(p), p.DeletionTimestamp != nil, p.Labels["leaderworkerset.sigs.k8s.io/template-revision-hash"], ready, groups))
			r.low = min(r.low, ready)
			r.most = max(r.most, groups)
			r.mu.Unlock()
		}
	}()
	return r
}

// count is the groups serving and the groups there are, now.
func (r *groupRecorder) count() (serving, groups int) {
	var all []corev1.Pod
	for _, p := range r.pods {
		all = append(all, p)
	}
	g := groupsOf(all)
	for _, gr := range g {
		if gr.leader != nil && isServing(gr.leader) {
			serving++
		}
	}
	return serving, len(g)
}

// summary: the fewest groups serving after any event, the most groups
// there were, and how many events the watch brought.
func (r *groupRecorder) summary() (low, most, events int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.low, r.most, r.events
}

// waitClaimPhase waits until the claim has phase, ServerReady reason and
// Ready as given, and returns the phases it was seen in on the way.
func waitClaimPhase(ctx context.Context, t *testing.T, ns, name, phase, reason string, ready bool, timeout time.Duration) []string {
	t.Helper()
	var seen []string
	waitFor(ctx, t, timeout, fmt.Sprintf("claim %s/%s: phase %s, ServerReady %s, Ready %v", ns, name, phase, reason, ready), func(ctx context.Context) (bool, string, error) {
		c, err := env.admin.Get(ctx, claimGVK, ns, name)
		if err != nil {
			return false, "", err
		}
		p, _, _ := unstructured.NestedString(c.Object, "status", "phase")
		if p != "" && (len(seen) == 0 || seen[len(seen)-1] != p) {
			seen = append(seen, p)
		}
		_, r, _ := kube.Condition(c, "ServerReady")
		rd, _, _ := kube.Condition(c, "Ready")
		return p == phase && r == reason && (rd == "True") == ready, fmt.Sprintf("phase %q, %s", p, kube.ConditionsSummary(c)), nil
	})
	return seen
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
