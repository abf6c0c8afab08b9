package render

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/yaml"
)

// TestCrossplaneRenderFleet renders examples/fleet through the real
// crossplane CLI with the XRD, fresh and at each stage of
// examples/fleet/observed: the hub composes one provider-kubernetes Object
// per chosen workload cluster and nothing else, and the claim's status
// comes back through Crossplane's render pipeline. Then it takes one
// Object's manifest — what that cluster receives — and renders it on its
// own with apis/namespaced's Composition, as the workload cluster's
// Crossplane would: every stage can be previewed offline.
func TestCrossplaneRenderFleet(t *testing.T) {
	cli := crossplaneCLI(t)
	f, err := StartFunction(buildFunction(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(f.Stop)

	dir := filepath.Join(root, "examples", "fleet")
	objects := []string{"cluster-gpu-east", "cluster-gpu-west"}
	cases := []struct {
		stage, phase, placed, ready string
	}{
		{stage: "fresh", phase: "Pending", placed: "Placing", ready: "False"},
		{stage: "starting", phase: "Pulling", placed: "ClustersStarting", ready: "False"},
		{stage: "serving", phase: "Serving", placed: "Placed", ready: "True"},
		{stage: "unreachable", phase: "Degraded", placed: "ClusterUnreachable", ready: "False"},
	}
	var manifest map[string]any
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
			if diff := cmp.Diff(objects, names); diff != "" {
				t.Errorf("composed resources (-want +got):\n%s", diff)
			}
			for _, o := range composed {
				if o["kind"] != "Object" || o["apiVersion"] != "kubernetes.crossplane.io/v1alpha2" {
					t.Errorf("composed %v %v, want only provider-kubernetes Objects", o["apiVersion"], o["kind"])
				}
				manifest, _ = o["spec"].(map[string]any)["forProvider"].(map[string]any)["manifest"].(map[string]any)
			}
			status, _ := xr["status"].(map[string]any)
			conds, reasons := conditions(status), conditionReasons(status)
			if status["phase"] != tc.phase || reasons["Placed"] != tc.placed || conds["Ready"] != tc.ready {
				t.Errorf("phase %v, Placed %q, Ready %q; want %s, %s, %s", status["phase"], reasons["Placed"], conds["Ready"], tc.phase, tc.placed, tc.ready)
			}
			if clusters, _ := status["clusters"].([]any); len(clusters) != 2 {
				t.Errorf("status.clusters %v, want one entry per placed cluster", status["clusters"])
			}
		})
	}

	t.Run("remote", func(t *testing.T) {
		if manifest == nil {
			t.Fatal("no Object manifest to render")
		}
		b, err := yaml.Marshal(manifest)
		if err != nil {
			t.Fatal(err)
		}
		remote := filepath.Join(t.TempDir(), "remote.yaml")
		if err := os.WriteFile(remote, b, 0o644); err != nil {
			t.Fatal(err)
		}
		xr, names, _ := sortOutput(renderDocs(t, f, Args{
			CLI: cli, XR: remote,
			Composition: filepath.Join(root, "apis", "namespaced", "composition.yaml"),
			Functions:   filepath.Join(root, "examples", "functions.yaml"),
			XRD:         filepath.Join(root, "apis", "namespaced", "xrd.yaml"),
		}), "InferenceService")
		if diff := cmp.Diff([]string{"pull-job-*", "weights-pvc"}, names); diff != "" {
			t.Errorf("the workload cluster composes (-want +got):\n%s", diff)
		}
		if xr == nil || xr["status"].(map[string]any)["phase"] != "Pulling" {
			t.Errorf("remote composite %v, want phase Pulling", xr)
		}
	})
}
