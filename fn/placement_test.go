package fn

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"github.com/google/go-cmp/cmp"
	"github.com/inferno-ai/function-inferno/apis/inference/v1alpha1"
	"github.com/inferno-ai/function-inferno/internal/kinds/providerkubernetes"
	"github.com/inferno-ai/function-inferno/internal/render"
	"google.golang.org/protobuf/proto"
)

const (
	fleetXR          = "../examples/fleet/xr.yaml"
	fleetComposition = "../examples/fleet/composition.yaml"
	fleetObserved    = "../examples/fleet/observed"
)

// fleetStages are the stages of examples/fleet, each an observed state
// examples/fleet/observed/<stage>.yaml holds.
var fleetStages = []string{"starting", "serving", "unreachable"}

// TestGoldenFleet renders examples/fleet/xr.yaml (a claim on a hub, placed
// on two of its workload clusters) fresh and at every stage and compares
// the responses with fn/testdata/golden/fleet-*. With -update it rewrites
// the golden files and the observed fixtures the render tests read.
func TestGoldenFleet(t *testing.T) {
	input := exampleInput(t, fleetComposition)
	xr := readYAML(t, fleetXR)
	t.Run("fresh", func(t *testing.T) {
		compareGolden(t, "fleet-fresh", run(t, newRequest(t, xr, input)))
	})
	t.Run("namespaced-fresh", func(t *testing.T) {
		compareGolden(t, "fleet-namespaced-fresh", run(t, newRequest(t, namespacedFleetXR(t), input)))
	})
	for _, stage := range fleetStages {
		t.Run(stage, func(t *testing.T) {
			fixture := filepath.Join(fleetObserved, stage+".yaml")
			if *update {
				writeObserved(t, fixture, "examples/fleet/xr.yaml", stage, fleetStageObserved(t, xr, input, stage))
			}
			compareGolden(t, "fleet-"+stage, run(t, newRequest(t, xr, input, readObserved(t, fixture)...)))
		})
	}
}

// fleetStageObserved is the Objects of a fresh render as provider-kubernetes
// reports them at stage.
func fleetStageObserved(t testing.TB, xr, input map[string]any, stage string) []observedObject {
	t.Helper()
	fresh := run(t, newRequest(t, xr, input))
	var out []observedObject
	for i, name := range desiredNames(fresh) {
		cluster, _ := render.ClusterOfResource(name)
		switch {
		case stage == "starting":
			out = append(out, remoteObserved(t, fresh, cluster, "True", remoteService("chat", "team-a", "Pulling", 0, "Pulling", "WaitingForWeights")))
		case stage == "unreachable" && i == 0:
			o := remoteObserved(t, fresh, cluster, "True", remoteService("chat", "team-a", "Serving", 2, "Pulled", "Available"))
			setSynced(o, "False", "ReconcileError", `cannot get object: Get "https://10.0.0.1:6443/apis/inference.inferno.dev/v1alpha1/namespaces/team-a/inferenceservices/chat": dial tcp 10.0.0.1:6443: connect: connection refused`)
			out = append(out, o)
		default:
			out = append(out, remoteObserved(t, fresh, cluster, "True", remoteService("chat", "team-a", "Serving", 2, "Pulled", "Available")))
		}
	}
	return out
}

// remoteService is a workload cluster's InferenceService as
// provider-kubernetes copies it into status.atProvider.manifest.
func remoteService(name, ns string, phase v1alpha1.Phase, ready int, weights, server string) map[string]any {
	st := map[string]any{
		"phase": string(phase), "readyReplicas": ready,
		"message": "as the cluster reports it",
		"conditions": []any{
			map[string]any{"type": "WeightsReady", "status": "False", "reason": weights},
			map[string]any{"type": "ServerReady", "status": "False", "reason": server},
			map[string]any{"type": "Ready", "status": "False", "reason": "Creating"},
		},
	}
	if phase == v1alpha1.PhaseServing {
		st["url"] = render.ServiceURLOf(name, ns)
		st["conditions"] = []any{
			map[string]any{"type": "WeightsReady", "status": "True", "reason": weights},
			map[string]any{"type": "ServerReady", "status": "True", "reason": server},
			map[string]any{"type": "Ready", "status": "True", "reason": "Available"},
		}
	}
	return map[string]any{
		"apiVersion": "inference.inferno.dev/v1alpha1", "kind": "InferenceService",
		"metadata": map[string]any{"name": name, "namespace": ns},
		"status":   st,
	}
}

// remoteObserved is cluster's Object of rsp as observed: Synced as given,
// Ready as the remote Ready condition says (DeriveFromObject), and the
// remote object in status.atProvider.manifest.
func remoteObserved(t testing.TB, rsp *fnv1.RunFunctionResponse, cluster, synced string, remote map[string]any) observedObject {
	t.Helper()
	ready := "False"
	if conds, _ := nested(remote, "status", "conditions"); conds != nil {
		for _, c := range conds.([]any) {
			if c.(map[string]any)["type"] == "Ready" {
				ready = c.(map[string]any)["status"].(string)
			}
		}
	}
	return observedFrom(t, rsp, render.ClusterResource(cluster), map[string]any{
		"conditions": []any{
			map[string]any{"type": "Synced", "status": synced, "reason": "ReconcileSuccess", "lastTransitionTime": "2026-12-07T10:00:00Z"},
			map[string]any{"type": "Ready", "status": ready, "reason": map[string]string{"True": "Available", "False": "Unavailable"}[ready], "lastTransitionTime": "2026-12-07T10:00:00Z"},
		},
		"atProvider": map[string]any{"manifest": remote},
	})
}

// setSynced sets an observed Object's Synced condition.
func setSynced(o observedObject, status, reason, message string) {
	conds := o.Object["status"].(map[string]any)["conditions"].([]any)
	conds[0] = map[string]any{"type": "Synced", "status": status, "reason": reason, "message": message, "lastTransitionTime": "2026-12-07T10:05:00Z"}
}

// fleetInput is examples/fleet's Input with change applied to its
// clusters.
func fleetInput(t testing.TB, change func(clusters []any)) map[string]any {
	t.Helper()
	in := exampleInput(t, fleetComposition)
	if change != nil {
		clusters, _ := nested(in, "fleet", "clusters")
		change(clusters.([]any))
	}
	return in
}

// clusterNamed is the Input's entry for cluster name.
func clusterNamed(clusters []any, name string) map[string]any {
	for _, c := range clusters {
		if c.(map[string]any)["name"] == name {
			return c.(map[string]any)
		}
	}
	panic("no cluster " + name)
}

// placedOn are the clusters a response composes Objects for.
func placedOn(rsp *fnv1.RunFunctionResponse) []string {
	var out []string
	for _, n := range desiredNames(rsp) {
		if c, ok := render.ClusterOfResource(n); ok {
			out = append(out, c)
		}
	}
	return out
}

// clustersStatus is status.clusters of a response.
func clustersStatus(t testing.TB, rsp *fnv1.RunFunctionResponse) []v1alpha1.ClusterStatus {
	t.Helper()
	st := compositeStatus(t, rsp)
	return st.Clusters
}

func compositeStatus(t testing.TB, rsp *fnv1.RunFunctionResponse) v1alpha1.InferenceServiceStatus {
	t.Helper()
	var st v1alpha1.InferenceServiceStatus
	m := rsp.GetDesired().GetComposite().GetResource().AsMap()
	sm, _ := m["status"].(map[string]any)
	if err := fromMap(sm, &st); err != nil {
		t.Fatal(err)
	}
	return st
}

// TestPlacement walks a placed claim through the fleet's changes: where it
// lands, that it stays (sticky), that a drained or removed cluster is left
// only once its replacement serves (make before break), that a full
// cluster is skipped with a reason, and that an unreachable one is kept
// and named.
func TestPlacement(t *testing.T) {
	xr := readYAML(t, fleetXR)
	serving := func(rsp *fnv1.RunFunctionResponse, clusters ...string) []observedObject {
		var out []observedObject
		for _, c := range clusters {
			out = append(out, remoteObserved(t, rsp, c, "True", remoteService("chat", "team-a", "Serving", 2, "Pulled", "Available")))
		}
		return out
	}
	fresh := run(t, newRequest(t, xr, fleetInput(t, nil)))
	first := placedOn(fresh)
	if len(first) != 2 || !slices.Contains(first, "gpu-west") || slices.Contains(first, "gpu-eu") {
		t.Fatalf("fresh: placed on %v, want gpu-west and one us-east cluster (spread by region, gpu-eu is draining and l40s)", first)
	}
	east := first[0]
	if east == "gpu-west" {
		east = first[1]
	}
	otherEast := map[string]string{"gpu-east": "gpu-east-2", "gpu-east-2": "gpu-east"}[east]
	settled := serving(fresh, first...)

	cases := []struct {
		name     string
		input    map[string]any
		observed []observedObject
		// placed are the clusters with Objects; reason is Placed's.
		placed []string
		reason string
		phase  v1alpha1.Phase
		// clusterPhases are status.clusters' phases by cluster.
		clusterPhases map[string]v1alpha1.Phase
	}{
		{
			name: "settled", input: fleetInput(t, nil), observed: settled,
			placed: first, reason: "Placed", phase: v1alpha1.PhaseServing,
		},
		{
			// Another us-east cluster frees up GPUs and another region
			// appears: nothing moves.
			name: "sticky", observed: settled,
			input: fleetInput(t, func(cs []any) {
				clusterNamed(cs, "gpu-eu")["draining"] = false
				clusterNamed(cs, "gpu-eu")["labels"] = map[string]any{"region": "eu-central", "gpu": "h100"}
				clusterNamed(cs, otherEast)["capacity"] = map[string]any{"gpus": 1000}
			}),
			placed: first, reason: "Placed", phase: v1alpha1.PhaseServing,
		},
		{
			// A serving cluster without free GPUs keeps the claim: its
			// share is already counted.
			name: "full but serving", observed: settled,
			input: fleetInput(t, func(cs []any) {
				clusterNamed(cs, east)["capacity"] = map[string]any{"gpus": 0}
			}),
			placed: first, reason: "Placed", phase: v1alpha1.PhaseServing,
		},
		{
			// The us-east cluster drains: the other takes over, and the
			// drained one serves until it does.
			name: "draining, replacement starting", observed: settled,
			input:  fleetInput(t, func(cs []any) { clusterNamed(cs, east)["draining"] = true }),
			placed: sorted("gpu-west", east, otherEast), reason: "ClustersStarting", phase: v1alpha1.PhaseServing,
			clusterPhases: map[string]v1alpha1.Phase{east: v1alpha1.PhaseDraining, otherEast: v1alpha1.PhasePending, "gpu-west": v1alpha1.PhaseServing},
		},
		{
			name: "draining, replacement serving", observed: append(append([]observedObject(nil), settled...), serving(run(t, newRequest(t, xr, fleetInput(t, func(cs []any) { clusterNamed(cs, east)["draining"] = true }), settled...)), otherEast)...),
			input:  fleetInput(t, func(cs []any) { clusterNamed(cs, east)["draining"] = true }),
			placed: sorted("gpu-west", otherEast), reason: "Placed", phase: v1alpha1.PhaseServing,
		},
		{
			// The platform stops offering the cluster: reached with the
			// configuration its Object had, until the replacement serves.
			name: "removed from the Input", observed: settled,
			input: fleetInput(t, func(cs []any) {
				for i, c := range cs {
					if c.(map[string]any)["name"] == east {
						cs[i] = map[string]any{"name": "gpu-south", "providerConfigName": "gpu-south", "labels": map[string]any{"region": "sa-east", "gpu": "l4"}}
					}
				}
			}),
			placed: sorted("gpu-west", east, otherEast), reason: "ClustersStarting", phase: v1alpha1.PhaseServing,
		},
		{
			// Draining with nowhere else to go: it keeps serving.
			name: "draining, no replacement", observed: settled,
			input: fleetInput(t, func(cs []any) {
				clusterNamed(cs, east)["draining"] = true
				clusterNamed(cs, otherEast)["draining"] = true
			}),
			placed: first, reason: "PlacedShort", phase: v1alpha1.PhaseServing,
		},
		{
			name:  "new claim, full clusters skipped",
			input: fleetInput(t, func(cs []any) { clusterNamed(cs, "gpu-west")["capacity"] = map[string]any{"gpus": 1} }),
			// gpu-west has 1 GPU free, the claim needs 2: both us-east.
			placed: sorted("gpu-east", "gpu-east-2"), reason: "Placing", phase: v1alpha1.PhasePending,
		},
		{
			name: "unreachable", input: fleetInput(t, nil),
			observed: func() []observedObject {
				out := serving(fresh, first...)
				setSynced(out[0], "False", "ReconcileError", "connect: connection refused")
				return out
			}(),
			placed: first, reason: "ClusterUnreachable", phase: v1alpha1.PhaseDegraded,
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			rsp := run(t, newRequest(t, xr, tc.input, tc.observed...))
			if m := fatalMessage(rsp); m != "" {
				t.Fatal(m)
			}
			if diff := cmp.Diff(sorted(tc.placed...), placedOn(rsp)); diff != "" {
				t.Errorf("placed on (-want +got):\n%s", diff)
			}
			if got := conditionReason(rsp, "Placed"); got != tc.reason {
				t.Errorf("Placed reason %q, want %q", got, tc.reason)
			}
			st := compositeStatus(t, rsp)
			if st.Phase != tc.phase {
				t.Errorf("phase %q, want %q (%s)", st.Phase, tc.phase, st.Message)
			}
			for c, want := range tc.clusterPhases {
				i := slices.IndexFunc(st.Clusters, func(cs v1alpha1.ClusterStatus) bool { return cs.Name == c })
				if i < 0 || st.Clusters[i].Phase != want {
					t.Errorf("status.clusters %s: %+v, want phase %s", c, st.Clusters, want)
				}
			}
			for _, name := range desiredNames(rsp) {
				o := desiredObject[providerkubernetes.Object](t, rsp, name)
				cluster, _ := render.ClusterOfResource(name)
				if o.Spec.ProviderConfigRef == nil || o.Spec.ProviderConfigRef.Name != cluster {
					t.Errorf("%s: providerConfigRef %+v, want the cluster's own (%s)", name, o.Spec.ProviderConfigRef, cluster)
				}
			}
		})
	}
}

func sorted(s ...string) []string {
	out := slices.Clone(s)
	slices.Sort(out)
	return out
}

// TestPlacementDeterministicAndSpread: a placement depends on the claim
// and the fleet alone — the same request, the same clusters — and claims
// spread over the fleet rather than all taking its first cluster.
func TestPlacementDeterministicAndSpread(t *testing.T) {
	in := fleetInput(t, nil)
	seen := map[string]int{}
	for i := range 40 {
		xr := readYAML(t, fleetXR)
		setPath(xr, fmt.Sprintf("chat-%d", i), "metadata", "labels", "crossplane.io/claim-name")
		setPath(xr, int64(1), "spec", "placement", "count")
		delete(xr["spec"].(map[string]any)["placement"].(map[string]any), "spreadBy")
		a, b := run(t, newRequest(t, xr, in)), run(t, newRequest(t, xr, in))
		if !proto.Equal(a, b) {
			t.Fatalf("claim %d: two renders of one request differ", i)
		}
		seen[strings.Join(placedOn(a), ",")]++
	}
	if len(seen) != 3 {
		t.Errorf("40 claims of count 1 landed on %v; want all three h100 clusters used", seen)
	}
}

// TestPlacementNamespacedHub: a namespaced composite on the hub composes
// namespaced Objects in its own namespace that reference
// ClusterProviderConfigs (never a ProviderConfig of the tenant's
// namespace).
func TestPlacementNamespacedHub(t *testing.T) {
	xr := namespacedFleetXR(t)
	rsp := run(t, newRequest(t, xr, fleetInput(t, nil)))
	if m := fatalMessage(rsp); m != "" {
		t.Fatal(m)
	}
	for _, name := range desiredNames(rsp) {
		o := desiredObject[providerkubernetes.Object](t, rsp, name)
		cluster, _ := render.ClusterOfResource(name)
		if o.APIVersion != providerkubernetes.NamespacedAPIVersion || o.Namespace != "team-b" || o.Name != "chat-"+cluster {
			t.Errorf("%s: %s %s/%s, want a namespaced Object team-b/chat-%s", name, o.APIVersion, o.Namespace, o.Name, cluster)
		}
		if diff := cmp.Diff(&providerkubernetes.ProviderConfigRef{Kind: "ClusterProviderConfig", Name: cluster}, o.Spec.ProviderConfigRef); diff != "" {
			t.Errorf("%s providerConfigRef (-want +got):\n%s", name, diff)
		}
		var remote render.RemoteService
		if err := json.Unmarshal(o.Spec.ForProvider.Manifest.Raw, &remote); err != nil {
			t.Fatal(err)
		}
		if remote.Metadata != (render.RemoteMetadata{Name: "chat", Namespace: "hub-team-b"}) || remote.Spec.Placement != nil {
			t.Errorf("%s: remote %+v with placement %v; want chat in hub-team-b (the mapped namespace), without placement", name, remote.Metadata, remote.Spec.Placement)
		}
	}
}

// TestPlacementRefused: a claim can only name clusters and a namespace the
// platform maps for it, and the fleet's own settings are checked; each
// refusal names the field and the fix.
func TestPlacementRefused(t *testing.T) {
	cases := []struct {
		name  string
		xr    func(xr map[string]any)
		input func(in map[string]any)
		want  string
	}{
		{name: "no fleet", input: func(in map[string]any) { delete(in, "fleet") },
			want: "spec.placement: this platform offers no workload clusters"},
		{name: "unmapped namespace", xr: func(xr map[string]any) { setPath(xr, "team-c", "metadata", "labels", "crossplane.io/claim-namespace") },
			want: `spec.placement: namespace "team-c" may not place services on workload clusters: input.fleet.namespaces does not map it`},
		{name: "unknown cluster", xr: func(xr map[string]any) {
			setPath(xr, []any{"gpu-east", "kube-system-cluster"}, "spec", "placement", "clusters")
		},
			want: `spec.placement.clusters[1]: "kube-system-cluster" is not a cluster this platform offers (input.fleet.clusters: gpu-east, gpu-west, gpu-east-2, gpu-eu)`},
		{name: "bad spreadBy", xr: func(xr map[string]any) { setPath(xr, "not a key!", "spec", "placement", "spreadBy") },
			want: `spec.placement.spreadBy: "not a key!" is not a label key`},
		{name: "two namespaces onto one", input: func(in map[string]any) {
			ns, _ := nested(in, "fleet", "namespaces")
			setPath(in, append(ns.([]any), map[string]any{"claimNamespace": "team-c", "namespace": "team-a"}), "fleet", "namespaces")
		}, want: `input.fleet.namespaces[2].namespace: "team-a" is also the target of input.fleet.namespaces[0]: two claim namespaces would share remote names`},
		{name: "cluster twice", input: func(in map[string]any) {
			cs, _ := nested(in, "fleet", "clusters")
			setPath(in, append(cs.([]any), map[string]any{"name": "gpu-east", "providerConfigName": "x"}), "fleet", "clusters")
		}, want: `input.fleet.clusters[4].name: "gpu-east" is listed twice`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			xr, in := readYAML(t, fleetXR), fleetInput(t, nil)
			if tc.xr != nil {
				tc.xr(xr)
			}
			if tc.input != nil {
				tc.input(in)
			}
			rsp := run(t, newRequest(t, xr, in))
			if got := fatalMessage(rsp); !strings.Contains(got, tc.want) {
				t.Errorf("fatal %q\nwant it to contain %q", got, tc.want)
			}
			if n := len(rsp.GetDesired().GetResources()); n != 0 {
				t.Errorf("a refused claim composed %d objects", n)
			}
		})
	}
}

// TestPlacementRemoteStatusUntrusted: a workload cluster's report is
// checked before it reaches the hub's claim: an unknown phase, replicas
// beyond the claim's, a URL elsewhere, undocumented reasons and a long
// message with control characters are left out or bounded; a report of
// another object is not read at all.
func TestPlacementRemoteStatusUntrusted(t *testing.T) {
	xr, in := readYAML(t, fleetXR), fleetInput(t, nil)
	fresh := run(t, newRequest(t, xr, in))
	cs := placedOn(fresh)
	forged := remoteService("chat", "team-a", "Serving", 2, "Pulled", "Available")
	st := forged["status"].(map[string]any)
	st["phase"], st["readyReplicas"], st["url"] = "Pwned", 1000000, "http://phish.example.com/login"
	st["message"] = strings.Repeat("x", 300) + "\n\x1b[31m"
	st["conditions"] = append(st["conditions"].([]any), map[string]any{"type": "ServerReady", "reason": "Trust me"})
	other := remoteService("someone-else", "team-b", "Serving", 2, "Pulled", "Available")
	rsp := run(t, newRequest(t, xr, in,
		remoteObserved(t, fresh, cs[0], "True", forged),
		remoteObserved(t, fresh, cs[1], "True", other)))
	got := clustersStatus(t, rsp)
	for _, c := range got {
		if c.Phase == "Pwned" || c.ReadyReplicas > 2 || strings.Contains(c.URL, "phish") || slices.Contains(c.Reasons, "Trust me") || strings.ContainsAny(c.Message, "\n\x1b") || len([]rune(c.Message)) > 257 {
			t.Errorf("status.clusters %s took the cluster's word: %+v", c.Name, c)
		}
	}
	if s := compositeStatus(t, rsp); strings.Contains(s.URL, "phish") {
		t.Errorf("status.url %q is the cluster's forgery", s.URL)
	}
	var warned int
	for _, r := range rsp.GetResults() {
		if strings.Contains(r.GetMessage(), "status.clusters: cluster") {
			warned++
		}
	}
	if warned != 2 {
		t.Errorf("%d warnings about the clusters' reports, want 2: %v", warned, rsp.GetResults())
	}
}

// TestPlacementLeavesTheRestAlone: with input.fleet set, a claim without
// spec.placement renders byte for byte what it renders without a fleet.
func TestPlacementLeavesTheRestAlone(t *testing.T) {
	xr := readYAML(t, "../examples/xr.yaml")
	plain := run(t, newRequest(t, xr, compositionInput(t)))
	in := compositionInput(t)
	in["fleet"] = fleetInput(t, nil)["fleet"]
	withFleet := run(t, newRequest(t, xr, in))
	if !proto.Equal(plain, withFleet) {
		t.Error("input.fleet changed the render of a claim without spec.placement")
	}
}

// namespacedFleetXR is examples/fleet's claim as a namespaced composite of
// team-b on the hub.
func namespacedFleetXR(t testing.TB) map[string]any {
	xr := readYAML(t, fleetXR)
	xr["apiVersion"], xr["kind"] = "inference.inferno.dev/v1alpha1", "InferenceService"
	xr["metadata"] = map[string]any{"name": "chat", "namespace": "team-b"}
	delete(xr["spec"].(map[string]any), "claimRef")
	delete(xr["spec"].(map[string]any), "compositionRef")
	return xr
}
