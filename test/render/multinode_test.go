package render

import (
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestCrossplaneRenderMultiNode renders examples/multi-node (spec.nodes 2,
// 8 GPUs per pod) through the real crossplane CLI, with the XRD (so
// spec.nodes and spec.parallelism go through its schema), fresh and at
// every stage of examples/multi-node/observed: the servers are a
// LeaderWorkerSet of 2 groups, never a Deployment; the Service selects
// the groups' leaders; readiness and the phase follow the LWS status.
func TestCrossplaneRenderMultiNode(t *testing.T) {
	cli := crossplaneCLI(t)
	f, err := StartFunction(buildFunction(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(f.Stop)

	// Its Composition turns the NetworkPolicies on, which groups need: the
	// servers', the pull pods' and one per group (2, and a surge group).
	policies := []string{"network-policy", "network-policy-group-0", "network-policy-group-1", "network-policy-group-2", "network-policy-pull"}
	servers := append([]string{"leaderworkerset"}, append(policies, "pull-job-*", "service", "weights-pvc")...)
	cases := []struct {
		stage         string
		resources     []string
		phase, reason string // status.phase, ServerReady's reason
		server, ready string // ServerReady and Ready statuses
	}{
		{stage: "fresh", resources: append(policies[:len(policies):len(policies)], "pull-job-*", "weights-pvc"), phase: "Pulling", reason: "WaitingForWeights", server: "False", ready: "False"},
		{stage: "starting", resources: servers, phase: "Starting", reason: "GroupsStarting", server: "False", ready: "False"},
		{stage: "serving", resources: servers, phase: "Serving", reason: "GroupsAvailable", server: "True", ready: "True"},
		{stage: "degraded", resources: servers, phase: "Degraded", reason: "GroupsDegraded", server: "False", ready: "False"},
		{stage: "rolling", resources: servers, phase: "Serving", reason: "GroupsRollingOut", server: "False", ready: "False"},
	}
	dir := filepath.Join(root, "examples", "multi-node")
	for _, tc := range cases {
		t.Run(tc.stage, func(t *testing.T) {
			a := Args{
				CLI: cli, XR: filepath.Join(dir, "xr.yaml"),
				Composition: filepath.Join(dir, "composition.yaml"),
				Functions:   filepath.Join(root, "examples", "functions.yaml"),
				XRD:         filepath.Join(root, "apis", "xrd.yaml"),
			}
			if tc.stage != "fresh" {
				a.Observed = filepath.Join(dir, "observed", tc.stage+".yaml")
			}
			xr, names, composed := sortOutput(renderDocs(t, f, a), "XInferenceService")
			if diff := cmp.Diff(tc.resources, names); diff != "" {
				t.Errorf("composed resources (-want +got):\n%s", diff)
			}
			if xr == nil {
				t.Fatal("the output has no XInferenceService")
			}
			status, _ := xr["status"].(map[string]any)
			if status["phase"] != tc.phase {
				t.Errorf("status.phase %v, want %s (%v)", status["phase"], tc.phase, status["message"])
			}
			conds := conditions(status)
			reason := ""
			list, _ := status["conditions"].([]any)
			for _, c := range list {
				if m, _ := c.(map[string]any); m["type"] == "ServerReady" {
					reason, _ = m["reason"].(string)
				}
			}
			if reason != tc.reason || conds["ServerReady"] != tc.server || conds["Ready"] != tc.ready {
				t.Errorf("ServerReady=%s (%s), Ready=%s; want %s (%s), %s", conds["ServerReady"], reason, conds["Ready"], tc.server, tc.reason, tc.ready)
			}
			for _, d := range composed {
				spec, _ := d["spec"].(map[string]any)
				switch d["kind"] {
				case "LeaderWorkerSet":
					if d["apiVersion"] != "leaderworkerset.x-k8s.io/v1" {
						t.Errorf("LeaderWorkerSet apiVersion %v", d["apiVersion"])
					}
					tmpl, _ := spec["leaderWorkerTemplate"].(map[string]any)
					if tmpl["size"] != float64(2) && tmpl["size"] != int64(2) && tmpl["size"] != 2 {
						t.Errorf("group size %v (%T), want 2", tmpl["size"], tmpl["size"])
					}
				case "Service":
					sel, _ := spec["selector"].(map[string]any)
					if sel["leaderworkerset.sigs.k8s.io/worker-index"] != "0" {
						t.Errorf("Service selector %v: want the leaders only (worker-index 0)", sel)
					}
				}
			}
		})
	}
}
