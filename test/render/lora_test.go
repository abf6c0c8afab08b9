package render

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestCrossplaneRenderAdapters renders the LoRA example (examples/lora)
// through the real crossplane CLI fresh and at each stage of
// examples/lora/observed, and the example with a third adapter added over
// its serving stage: an adapter pull Job each, servers only once the base
// model and every adapter are pulled, vLLM's adapter arguments, and
// status.adapters.
func TestCrossplaneRenderAdapters(t *testing.T) {
	cli := crossplaneCLI(t)
	f, err := StartFunction(buildFunction(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(f.Stop)
	dir := filepath.Join(root, "examples", "lora")

	type adapter struct{ Name, Phase string }
	cases := []struct {
		name, xr, observed string
		resources          []string
		phase, adapters    string // status.phase and the AdaptersReady condition's status
		ready              string
		list               []adapter
	}{
		{
			name: "fresh", xr: "xr.yaml",
			resources: []string{"pull-job-*", "pull-job-*", "pull-job-*", "weights-pvc"},
			phase:     "Pulling", adapters: "False", ready: "False",
			list: []adapter{{"sql", "Pending"}, {"support", "Pending"}},
		},
		{
			name: "pulling", xr: "xr.yaml", observed: "pulling",
			resources: []string{"pull-job-*", "pull-job-*", "pull-job-*", "weights-pvc"},
			phase:     "Pulling", adapters: "False", ready: "False",
			list: []adapter{{"sql", "Pulling"}, {"support", "Pulling"}},
		},
		{
			name: "adapter-failed", xr: "xr.yaml", observed: "adapter-failed",
			resources: []string{"pull-job-*", "pull-job-*", "pull-job-*", "weights-pvc"},
			phase:     "Failed", adapters: "False", ready: "False",
			list: []adapter{{"sql", "Pulled"}, {"support", "Failed"}},
		},
		{
			name: "serving", xr: "xr.yaml", observed: "serving",
			resources: []string{"deployment", "pull-job-*", "pull-job-*", "pull-job-*", "service", "weights-pvc"},
			phase:     "Serving", adapters: "True", ready: "True",
			list: []adapter{{"sql", "Serving"}, {"support", "Serving"}},
		},
		{
			name: "added", xr: "added.yaml", observed: "serving",
			resources: []string{"deployment", "pull-job-*", "pull-job-*", "pull-job-*", "pull-job-*", "service", "weights-pvc"},
			phase:     "Serving", adapters: "False", ready: "False",
			list: []adapter{{"sql", "Serving"}, {"support", "Serving"}, {"legal", "Pending"}},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			a := Args{CLI: cli, XR: filepath.Join(dir, tc.xr), Composition: filepath.Join(root, "apis", "composition.yaml"), Functions: filepath.Join(root, "examples", "functions.yaml")}
			if tc.observed != "" {
				a.Observed = filepath.Join(dir, "observed", tc.observed+".yaml")
			}
			xr, got, composed := sortOutput(renderDocs(t, f, a), "XInferenceService")
			if diff := cmp.Diff(tc.resources, got); diff != "" {
				t.Errorf("composed resources (-want +got):\n%s", diff)
			}
			for _, d := range composed {
				if d["kind"] != "Deployment" {
					continue
				}
				y := toYAMLString(d)
				for _, want := range []string{"--enable-lora", "--lora-modules", "mountPath: /adapters", "subPath: adapters"} {
					if !strings.Contains(y, want) {
						t.Errorf("the Deployment lacks %q", want)
					}
				}
				if strings.Contains(y, "legal=") {
					t.Errorf("the Deployment serves legal before its pull completed")
				}
			}
			if xr == nil {
				t.Fatal("the output has no XInferenceService")
			}
			status, _ := xr["status"].(map[string]any)
			conds := conditions(status)
			if status["phase"] != tc.phase || conds["AdaptersReady"] != tc.adapters || conds["Ready"] != tc.ready {
				t.Errorf("phase %v AdaptersReady %q Ready %q, want %s %s %s (message %v)", status["phase"], conds["AdaptersReady"], conds["Ready"], tc.phase, tc.adapters, tc.ready, status["message"])
			}
			var list []adapter
			entries, _ := status["adapters"].([]any)
			for _, e := range entries {
				m, _ := e.(map[string]any)
				n, _ := m["name"].(string)
				p, _ := m["phase"].(string)
				list = append(list, adapter{n, p})
			}
			if diff := cmp.Diff(tc.list, list); diff != "" {
				t.Errorf("status.adapters (-want +got):\n%s", diff)
			}
		})
	}
}
