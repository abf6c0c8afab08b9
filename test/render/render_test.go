package render

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// Paths from this package to the repository's files.
const root = "../.."

// TestCrossplaneRender renders examples/xr.yaml through the real crossplane
// CLI (v2.2.1, pinned in tools/go.mod) at every lifecycle stage, against the
// function binary built from this tree and served over gRPC on loopback.
func TestCrossplaneRender(t *testing.T) {
	cli := crossplaneCLI(t)
	fn := buildFunction(t)
	f, err := StartFunction(fn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(f.Stop)

	// resources is composition-resource-name → kind; phase and conditions
	// are the XR's status.
	cases := []struct {
		stage     string
		resources map[string]string
		phase     string
		weights   string // WeightsReady status
		server    string // ServerReady status
		ready     string // Crossplane's Ready status of the XR
		url       bool
	}{
		{stage: "", resources: map[string]string{"weights-pvc": "PersistentVolumeClaim", "pull-job-*": "Job"}, phase: "Pulling", weights: "False", server: "False", ready: "False"},
		{stage: "pulling", resources: map[string]string{"weights-pvc": "PersistentVolumeClaim", "pull-job-*": "Job"}, phase: "Pulling", weights: "False", server: "False", ready: "False"},
		{stage: "failed", resources: map[string]string{"weights-pvc": "PersistentVolumeClaim", "pull-job-*": "Job"}, phase: "Failed", weights: "False", server: "False", ready: "False"},
		{stage: "starting", resources: allKinds(), phase: "Starting", weights: "True", server: "False", ready: "False", url: true},
		{stage: "serving", resources: allKinds(), phase: "Serving", weights: "True", server: "True", ready: "True", url: true},
		{stage: "degraded", resources: allKinds(), phase: "Degraded", weights: "True", server: "False", ready: "False", url: true},
	}
	for _, tc := range cases {
		name := tc.stage
		if name == "" {
			name = "fresh"
		}
		t.Run(name, func(t *testing.T) {
			a := Args{
				CLI:         cli,
				XR:          filepath.Join(root, "examples", "xr.yaml"),
				Composition: filepath.Join(root, "apis", "composition.yaml"),
				Functions:   filepath.Join(root, "examples", "functions.yaml"),
			}
			if tc.stage != "" {
				a.Observed = filepath.Join(root, "examples", "observed", tc.stage+".yaml")
			}
			docs := renderDocs(t, f, a)

			var xr map[string]any
			got := map[string]string{}
			for _, d := range docs {
				kind, _ := d["kind"].(string)
				switch kind {
				case "XInferenceService":
					xr = d
					continue
				case "Result":
					continue
				}
				meta, _ := d["metadata"].(map[string]any)
				ann, _ := meta["annotations"].(map[string]any)
				rn, _ := ann["crossplane.io/composition-resource-name"].(string)
				if strings.HasPrefix(rn, "pull-job-") {
					rn = "pull-job-*"
				}
				got[rn] = kind
				if ns := meta["namespace"]; ns != "team-a" {
					t.Errorf("%s %s is in namespace %v, want the claim's namespace team-a", kind, meta["name"], ns)
				}
				if n, _ := meta["name"].(string); !strings.HasPrefix(n, "llama") {
					t.Errorf("%s is named %q, want it named after the claim llama", kind, n)
				}
			}
			if diff := cmp.Diff(tc.resources, got); diff != "" {
				t.Errorf("composed resources (composition-resource-name → kind) (-want +got):\n%s", diff)
			}
			if xr == nil {
				t.Fatal("the output has no XInferenceService")
			}
			status, _ := xr["status"].(map[string]any)
			if status["phase"] != tc.phase {
				t.Errorf("status.phase = %v, want %s (message: %v)", status["phase"], tc.phase, status["message"])
			}
			conds := conditions(status)
			for typ, want := range map[string]string{"WeightsReady": tc.weights, "ServerReady": tc.server, "Ready": tc.ready} {
				if conds[typ] != want {
					t.Errorf("condition %s = %q, want %q (all: %v)", typ, conds[typ], want, conds)
				}
			}
			if url, _ := status["url"].(string); tc.url != (url == "http://llama.team-a.svc.cluster.local:80") {
				t.Errorf("status.url = %q, want set: %v", url, tc.url)
			}
		})
	}
}

func allKinds() map[string]string {
	return map[string]string{
		"weights-pvc": "PersistentVolumeClaim", "pull-job-*": "Job",
		"deployment": "Deployment", "service": "Service", "hpa": "HorizontalPodAutoscaler",
	}
}

func conditions(status map[string]any) map[string]string {
	out := map[string]string{}
	list, _ := status["conditions"].([]any)
	for _, c := range list {
		m, _ := c.(map[string]any)
		typ, _ := m["type"].(string)
		st, _ := m["status"].(string)
		out[typ] = st
	}
	return out
}

// crossplaneCLI is the pinned crossplane CLI that `make tools` builds.
func crossplaneCLI(t *testing.T) string {
	t.Helper()
	p := os.Getenv("CROSSPLANE_CLI")
	if p == "" {
		p = filepath.Join(root, "bin", "crossplane")
	}
	abs, err := filepath.Abs(p)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(abs); err != nil {
		t.Fatalf("the crossplane CLI is not at %s (%v): run `make tools` first, or set CROSSPLANE_CLI", abs, err)
	}
	return abs
}

// buildFunction builds the function from this tree, so the test never runs
// a stale binary.
func buildFunction(t *testing.T) string {
	t.Helper()
	out := filepath.Join(t.TempDir(), "function-inferno")
	cmd := exec.Command("go", "build", "-o", out, ".")
	cmd.Dir = root
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, b)
	}
	return out
}
