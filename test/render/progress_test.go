package render

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestCrossplaneRenderProgress renders examples/xr.yaml under
// examples/progress/composition.yaml through the real crossplane CLI:
// fresh, the pull comes with its progress ConfigMap (no data),
// ServiceAccount, Role and RoleBinding, and the claim with a PodMonitor;
// pulling, the pod's report observed in the ConfigMap is status.pulls and
// the WeightsReady message, through Crossplane's own render.
func TestCrossplaneRenderProgress(t *testing.T) {
	cli := crossplaneCLI(t)
	f, err := StartFunction(buildFunction(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(f.Stop)
	dir := filepath.Join(root, "examples", "progress")
	args := func(observed string) Args {
		a := Args{CLI: cli, XR: filepath.Join(root, "examples", "xr.yaml"), Composition: filepath.Join(dir, "composition.yaml"), Functions: filepath.Join(root, "examples", "functions.yaml")}
		if observed != "" {
			a.Observed = filepath.Join(dir, "observed", observed)
		}
		return a
	}
	cases := []struct {
		stage, observed, phase, message string
		pulls                           []any
	}{
		{stage: "fresh", phase: "Pulling"},
		{stage: "pulling", observed: "pulling.yaml", phase: "Pulling", message: ": 3.1 of 15.0 GiB (20%), 120.0 MiB/s, ETA 2m (reported 2026-12-03T10:00:27Z)"},
	}
	for _, tc := range cases {
		t.Run(tc.stage, func(t *testing.T) {
			xr, names, composed := sortOutput(renderDocs(t, f, args(tc.observed)), "XInferenceService")
			var kinds []string
			for _, d := range composed {
				meta, _ := d["metadata"].(map[string]any)
				ann, _ := meta["annotations"].(map[string]any)
				if rn, _ := ann["crossplane.io/composition-resource-name"].(string); strings.HasPrefix(rn, "pull-progress") || rn == "pod-monitor" {
					kinds = append(kinds, d["kind"].(string))
				}
				if d["kind"] == "ConfigMap" && d["data"] != nil {
					t.Errorf("the progress ConfigMap renders data %v: it is the pull pod's", d["data"])
				}
			}
			slices.Sort(kinds)
			if diff := cmp.Diff([]string{"ConfigMap", "PodMonitor", "Role", "RoleBinding", "ServiceAccount"}, kinds); diff != "" {
				t.Errorf("progress objects and PodMonitor (-want +got):\n%s\nall: %v", diff, names)
			}
			status, _ := xr["status"].(map[string]any)
			if status["phase"] != tc.phase {
				t.Errorf("status.phase %v, want %s (%v)", status["phase"], tc.phase, status["message"])
			}
			if msg, _ := status["message"].(string); tc.message != "" && !strings.HasSuffix(msg, tc.message) {
				t.Errorf("status.message %q, want it to end %q", msg, tc.message)
			}
			pulls, _ := status["pulls"].([]any)
			if len(pulls) != 1 {
				t.Fatalf("status.pulls %v, want one", status["pulls"])
			}
			p, _ := pulls[0].(map[string]any)
			if tc.observed != "" && (p["state"] != "Pulling" || p["progress"] != "3.1 of 15.0 GiB (20%), 120.0 MiB/s, ETA 2m") {
				t.Errorf("status.pulls[0] %v", p)
			}
		})
	}
}
