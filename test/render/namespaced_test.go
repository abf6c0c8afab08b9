package render

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// TestCrossplaneRenderNamespaced renders examples/namespaced/xr.yaml — a
// Crossplane v2 namespaced InferenceService (inference.inferno.dev) with no
// claim — through the real crossplane CLI with apis/namespaced's
// Composition and XRD, at every lifecycle stage from
// examples/namespaced/observed.
//
// The CLI itself puts a namespaced XR's composed resources into the XR's
// namespace, as Crossplane does; the function's own placement is held by
// fn's TestNamespacedComposesInItsNamespace. What this adds: the v2 XRD
// loads and defaults the XR, the Composition matches the new group and
// kind, objects are named after the XR, and status and conditions come
// back through Crossplane's own render pipeline.
func TestCrossplaneRenderNamespaced(t *testing.T) {
	cli := crossplaneCLI(t)
	f, err := StartFunction(buildFunction(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(f.Stop)

	const name, namespace = "llama", "team-a"
	weights := map[string]string{"weights-pvc": "PersistentVolumeClaim", "pull-job-*": "Job"}
	cases := []struct {
		stage     string
		resources map[string]string
		phase     string
		weights   string // WeightsReady status
		server    string // ServerReady status
		ready     string // Crossplane's Ready status of the XR
		url       bool
	}{
		{stage: "fresh", resources: weights, phase: "Pulling", weights: "False", server: "False", ready: "False"},
		{stage: "pulling", resources: weights, phase: "Pulling", weights: "False", server: "False", ready: "False"},
		{stage: "failed", resources: weights, phase: "Failed", weights: "False", server: "False", ready: "False"},
		{stage: "starting", resources: allKinds(), phase: "Starting", weights: "True", server: "False", ready: "False", url: true},
		{stage: "serving", resources: allKinds(), phase: "Serving", weights: "True", server: "True", ready: "True", url: true},
		{stage: "degraded", resources: allKinds(), phase: "Degraded", weights: "True", server: "False", ready: "False", url: true},
	}
	for _, tc := range cases {
		t.Run(tc.stage, func(t *testing.T) {
			a := Args{
				CLI:         cli,
				XR:          filepath.Join(root, "examples", "namespaced", "xr.yaml"),
				Composition: filepath.Join(root, "apis", "namespaced", "composition.yaml"),
				Functions:   filepath.Join(root, "examples", "functions.yaml"),
				XRD:         filepath.Join(root, "apis", "namespaced", "xrd.yaml"),
			}
			if tc.stage != "fresh" {
				a.Observed = filepath.Join(root, "examples", "namespaced", "observed", tc.stage+".yaml")
			}
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			out, err := f.Render(ctx, a)
			if err != nil {
				t.Fatalf("%v\nfunction logs:\n%s", err, f.Logs())
			}
			docs, err := Documents(out)
			if err != nil {
				t.Fatal(err)
			}

			var xr map[string]any
			type placement struct{ Kind, Namespace, NamedAfter string }
			got, want := map[string]placement{}, map[string]placement{}
			for _, d := range docs {
				kind, _ := d["kind"].(string)
				apiVersion, _ := d["apiVersion"].(string)
				switch {
				case kind == "InferenceService" && apiVersion == "inference.inferno.dev/v1alpha1":
					xr = d
					continue
				case kind == "Result":
					continue
				}
				meta, _ := d["metadata"].(map[string]any)
				ann, _ := meta["annotations"].(map[string]any)
				rn, _ := ann["crossplane.io/composition-resource-name"].(string)
				if strings.HasPrefix(rn, "pull-job-") {
					rn = "pull-job-*"
				}
				objName, _ := meta["name"].(string)
				after := objName
				if strings.HasPrefix(objName, name+"-") {
					after = name
				}
				ns, _ := meta["namespace"].(string)
				got[rn] = placement{Kind: kind, Namespace: ns, NamedAfter: after}
			}
			for rn, kind := range tc.resources {
				want[rn] = placement{Kind: kind, Namespace: namespace, NamedAfter: name}
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("composed resources: kind, namespace and the name they are named after (-want +got):\n%s", diff)
			}
			if xr == nil {
				t.Fatal("the output has no inference.inferno.dev/v1alpha1 InferenceService")
			}
			meta, _ := xr["metadata"].(map[string]any)
			if meta["namespace"] != namespace {
				t.Errorf("the XR is in namespace %v, want %s", meta["namespace"], namespace)
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
			wantURL := ""
			if tc.url {
				wantURL = "http://" + name + "." + namespace + ".svc.cluster.local:80"
			}
			if url, _ := status["url"].(string); url != wantURL {
				t.Errorf("status.url = %q, want %q", url, wantURL)
			}
		})
	}
}
