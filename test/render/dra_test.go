package render

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestCrossplaneRenderDRA renders examples/dra (GPUs through Dynamic
// Resource Allocation, a GPU type the platform names) through the real
// crossplane CLI, with the XRD (so spec.resources.gpuType goes through its
// schema), fresh and at every stage of examples/dra/observed: the servers
// come with one ResourceClaimTemplate (resource.k8s.io/v1) for 1 device of
// the pool's class under the pool's and the type's selectors, the pods
// claim from it and request no nvidia.com/gpu; the composite is Ready at
// serving, so Crossplane took the observed template as ready (the
// function's Exists rule); the phase follows the Deployment.
func TestCrossplaneRenderDRA(t *testing.T) {
	cli := crossplaneCLI(t)
	f, err := StartFunction(buildFunction(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(f.Stop)

	servers := []string{"deployment", "gpu-claims-*", "pull-job-*", "service", "weights-pvc"}
	cases := []struct {
		stage        string
		resources    []string
		phase, ready string
	}{
		{stage: "fresh", resources: []string{"pull-job-*", "weights-pvc"}, phase: "Pulling", ready: "False"},
		{stage: "starting", resources: servers, phase: "Starting", ready: "False"},
		{stage: "serving", resources: servers, phase: "Serving", ready: "True"},
	}
	dir := filepath.Join(root, "examples", "dra")
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
			if got := conditions(status)["Ready"]; got != tc.ready {
				t.Errorf("Ready=%s, want %s", got, tc.ready)
			}
			var template string
			for _, d := range composed {
				meta, _ := d["metadata"].(map[string]any)
				spec, _ := d["spec"].(map[string]any)
				switch d["kind"] {
				case "ResourceClaimTemplate":
					if d["apiVersion"] != "resource.k8s.io/v1" {
						t.Errorf("ResourceClaimTemplate apiVersion %v", d["apiVersion"])
					}
					template, _ = meta["name"].(string)
					inner, _ := spec["spec"].(map[string]any)
					devices, _ := inner["devices"].(map[string]any)
					requests, _ := devices["requests"].([]any)
					if len(requests) != 1 {
						t.Fatalf("device requests %v, want one", requests)
					}
					exactly, _ := requests[0].(map[string]any)["exactly"].(map[string]any)
					selectors, _ := exactly["selectors"].([]any)
					if exactly["deviceClassName"] != "gpu.nvidia.com" || exactly["allocationMode"] != "ExactCount" || len(selectors) != 2 {
						t.Errorf("device request %v: want 1 device of gpu.nvidia.com, ExactCount, the pool's and h100-80gb's selectors", exactly)
					}
				case "Deployment":
					tmpl, _ := spec["template"].(map[string]any)
					pod, _ := tmpl["spec"].(map[string]any)
					claims, _ := pod["resourceClaims"].([]any)
					if len(claims) != 1 {
						t.Fatalf("pod resourceClaims %v, want one", claims)
					}
					name, _ := claims[0].(map[string]any)["resourceClaimTemplateName"].(string)
					if !strings.HasPrefix(name, "llama-gpu-") {
						t.Errorf("the pod claims from %q", name)
					}
					defer func() {
						if name != template {
							t.Errorf("the pod claims from %q, the template is %q", name, template)
						}
					}()
					c, _ := pod["containers"].([]any)[0].(map[string]any)
					res, _ := c["resources"].(map[string]any)
					if limits, _ := res["limits"].(map[string]any); limits["nvidia.com/gpu"] != nil {
						t.Errorf("the server asks for nvidia.com/gpu beside its claim: %v", limits)
					}
				}
			}
		})
	}
}
