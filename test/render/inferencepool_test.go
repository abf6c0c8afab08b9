package render

import (
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestCrossplaneRenderInferencePool renders the inference-pool example
// (examples/inference-pool) through the real crossplane CLI at each stage
// of examples/inference-pool/observed: the picker starting, no Gateway
// implementation reporting yet, everything accepted, the pool refused by
// the Gateway, and the canary example on a pool. Crossplane's Ready
// follows the readiness the function gives the pool, the picker and the
// route.
func TestCrossplaneRenderInferencePool(t *testing.T) {
	cli := crossplaneCLI(t)
	f, err := StartFunction(buildFunction(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(f.Stop)

	single := []string{
		"deployment", "inference-pool", "picker", "picker-config", "picker-role", "picker-rolebinding",
		"picker-service", "picker-serviceaccount", "pull-job-*", "route", "service", "weights-pvc",
	}
	canary := []string{
		"deployment", "deployment-2", "inference-pool", "picker", "picker-config", "picker-role", "picker-rolebinding",
		"picker-service", "picker-serviceaccount", "pull-job-*", "pull-job-*", "route", "service", "service-1", "service-2", "weights-pvc",
	}
	cases := []struct {
		stage, xr     string
		resources     []string
		pool, reason  string // InferencePoolReady's status and reason
		ready         string // Crossplane's Ready
		phase, split  string // status.phase and TrafficSplit's reason ("" for none)
		poolBackend   bool   // the route's one backend is the InferencePool
		pickerRunning bool
	}{
		{stage: "picker-starting", xr: "examples/inference-pool/xr.yaml", resources: single, pool: "False", reason: "PickerStarting", ready: "False", phase: "Serving"},
		{stage: "pending", xr: "examples/inference-pool/xr.yaml", resources: single, pool: "False", reason: "PoolPending", ready: "False", phase: "Serving"},
		{stage: "routed", xr: "examples/inference-pool/xr.yaml", resources: single, pool: "True", reason: "PoolRouted", ready: "True", phase: "Serving"},
		{stage: "rejected", xr: "examples/inference-pool/xr.yaml", resources: single, pool: "False", reason: "PoolNotAccepted", ready: "False", phase: "Serving"},
		{stage: "canary", xr: "examples/canary/xr.yaml", resources: canary, pool: "True", reason: "PoolRouted", ready: "True", phase: "Serving", split: "PoolSplit"},
	}
	for _, tc := range cases {
		t.Run(tc.stage, func(t *testing.T) {
			a := Args{
				CLI:         cli,
				XR:          filepath.Join(root, tc.xr),
				Composition: filepath.Join(root, "examples", "inference-pool", "composition.yaml"),
				Functions:   filepath.Join(root, "examples", "functions.yaml"),
				Observed:    filepath.Join(root, "examples", "inference-pool", "observed", tc.stage+".yaml"),
			}
			xr, got, composed := sortOutput(renderDocs(t, f, a), "XInferenceService")
			if diff := cmp.Diff(tc.resources, got); diff != "" {
				t.Errorf("composed resources (-want +got):\n%s", diff)
			}
			for _, d := range composed {
				meta, _ := d["metadata"].(map[string]any)
				if meta["namespace"] != "team-a" {
					t.Errorf("%s %v is in namespace %v, want team-a", d["kind"], meta["name"], meta["namespace"])
				}
				if d["kind"] == "HTTPRoute" {
					if b := routeBackends(d); b != "llama=<nil>" {
						t.Errorf("HTTPRoute backends %q, want the InferencePool llama alone", b)
					}
					spec, _ := d["spec"].(map[string]any)
					rules, _ := spec["rules"].([]any)
					ref := rules[0].(map[string]any)["backendRefs"].([]any)[0].(map[string]any)
					if ref["kind"] != "InferencePool" || ref["group"] != "inference.networking.k8s.io" {
						t.Errorf("HTTPRoute backend %v, want an InferencePool", ref)
					}
				}
			}
			if xr == nil {
				t.Fatal("the output has no XInferenceService")
			}
			status, _ := xr["status"].(map[string]any)
			if status["phase"] != tc.phase {
				t.Errorf("status.phase %v, want %s (%v)", status["phase"], tc.phase, status["message"])
			}
			st, reasons := conditions(status), conditionReasons(status)
			if st["InferencePoolReady"] != tc.pool || reasons["InferencePoolReady"] != tc.reason || st["Ready"] != tc.ready {
				t.Errorf("InferencePoolReady=%q (%s) Ready=%q, want %q (%s) and %q", st["InferencePoolReady"], reasons["InferencePoolReady"], st["Ready"], tc.pool, tc.reason, tc.ready)
			}
			if reasons["TrafficSplit"] != tc.split {
				t.Errorf("TrafficSplit reason %q, want %q", reasons["TrafficSplit"], tc.split)
			}
			if url, _ := status["routeURL"].(string); url != "http://llama.team-a.models.example.com" {
				t.Errorf("status.routeURL %q", url)
			}
		})
	}
}

// conditionReasons maps each condition type of a status to its reason.
func conditionReasons(status map[string]any) map[string]string {
	out := map[string]string{}
	list, _ := status["conditions"].([]any)
	for _, c := range list {
		m, _ := c.(map[string]any)
		typ, _ := m["type"].(string)
		r, _ := m["reason"].(string)
		out[typ] = r
	}
	return out
}
