package render

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// TestCrossplaneRenderScaleToZero renders examples/scale-to-zero through
// the real crossplane CLI: on its KEDA-enabled Composition the claim gets
// a ScaledObject (no HPA) for a Deployment that sets no replicas, is
// Serving on its first server and Idle at zero, with its URL; on the
// default Composition the same claim is refused, naming input.keda.
func TestCrossplaneRenderScaleToZero(t *testing.T) {
	cli := crossplaneCLI(t)
	f, err := StartFunction(buildFunction(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(f.Stop)
	dir := filepath.Join(root, "examples", "scale-to-zero")
	args := func(composition, observed string) Args {
		a := Args{CLI: cli, XR: filepath.Join(dir, "xr.yaml"), Composition: composition, Functions: filepath.Join(root, "examples", "functions.yaml")}
		if observed != "" {
			a.Observed = filepath.Join(dir, "observed", observed)
		}
		return a
	}
	keda := filepath.Join(dir, "composition.yaml")

	cases := []struct {
		stage, observed string
		resources       []string
		phase           string
	}{
		{stage: "fresh", resources: []string{"pull-job-*", "weights-pvc"}, phase: "Pulling"},
		{stage: "serving", observed: "serving.yaml", resources: []string{"deployment", "httpscaledobject", "pull-job-*", "scaledobject", "service", "weights-pvc"}, phase: "Serving"},
		{stage: "idle", observed: "idle.yaml", resources: []string{"deployment", "httpscaledobject", "pull-job-*", "scaledobject", "service", "weights-pvc"}, phase: "Idle"},
	}
	for _, tc := range cases {
		t.Run(tc.stage, func(t *testing.T) {
			xr, names, composed := sortOutput(renderDocs(t, f, args(keda, tc.observed)), "XInferenceService")
			if diff := cmp.Diff(tc.resources, names); diff != "" {
				t.Errorf("composed resources (-want +got):\n%s", diff)
			}
			status, _ := xr["status"].(map[string]any)
			if status["phase"] != tc.phase {
				t.Errorf("status.phase %v, want %s (%v)", status["phase"], tc.phase, status["message"])
			}
			if tc.stage == "idle" && status["url"] != "http://chat.team-a.svc.cluster.local:80" {
				t.Errorf("idle: status.url %v", status["url"])
			}
			for _, d := range composed {
				spec, _ := d["spec"].(map[string]any)
				switch d["kind"] {
				case "Deployment":
					if _, ok := spec["replicas"]; ok {
						t.Errorf("the Deployment sets spec.replicas %v; KEDA owns them", spec["replicas"])
					}
				case "ScaledObject":
					if d["apiVersion"] != "keda.sh/v1alpha1" || spec["minReplicaCount"] != int64(0) && spec["minReplicaCount"] != float64(0) {
						t.Errorf("ScaledObject %v with minReplicaCount %v", d["apiVersion"], spec["minReplicaCount"])
					}
				}
			}
		})
	}

	t.Run("refused", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		out, err := f.Render(ctx, args(filepath.Join(root, "apis", "composition.yaml"), ""))
		if err == nil {
			t.Fatalf("crossplane render accepted a claim that scales to zero on a Composition without input.keda:\n%s", out)
		}
		if !strings.Contains(err.Error(), "spec.replicas.min:") || !strings.Contains(err.Error(), "input.keda") {
			t.Errorf("the fatal result does not name spec.replicas.min and input.keda:\n%v", err)
		}
	})
}
