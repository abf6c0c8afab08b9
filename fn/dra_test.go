package fn

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/inferno-ai/function-inferno/internal/kinds/lws"
	"github.com/inferno-ai/function-inferno/internal/render"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	"k8s.io/utils/ptr"
)

const (
	draXR       = "../examples/dra/xr.yaml"
	draObserved = "../examples/dra/observed"
)

// draStages are the lifecycle stages of examples/dra, each an observed
// state examples/dra/observed/<stage>.yaml holds.
var draStages = []string{"starting", "serving"}

// draInput is the Input of examples/dra/composition.yaml: GPUs through
// DRA, two GPU types.
func draInput(t testing.TB) map[string]any {
	t.Helper()
	comp := readYAML(t, "../examples/dra/composition.yaml")
	steps, _ := nested(comp, "spec", "pipeline")
	in, _ := steps.([]any)[0].(map[string]any)["input"].(map[string]any)
	return in
}

// TestGoldenDRA renders examples/dra/xr.yaml fresh and at every stage and
// compares the responses with fn/testdata/golden/dra-*. With -update it
// rewrites the golden files and the observed fixtures, which the render
// tests read.
func TestGoldenDRA(t *testing.T) {
	input := draInput(t)
	xr := readYAML(t, draXR)
	t.Run("fresh", func(t *testing.T) {
		compareGolden(t, "dra-fresh", run(t, newRequest(t, xr, input)))
	})
	for _, stage := range draStages {
		t.Run(stage, func(t *testing.T) {
			fixture := filepath.Join(draObserved, stage+".yaml")
			if *update {
				observed, _ := stageObserved(t, xr, input, stage)
				// The templates, as Crossplane observes them: they have no
				// status.
				rsp := run(t, newRequest(t, xr, input, observed...))
				for _, n := range desiredNames(rsp) {
					if strings.HasPrefix(n, render.ResourceClaimTemplatePrefix) {
						observed = append(observed, observedFrom(t, rsp, n, nil))
					}
				}
				writeObserved(t, fixture, "examples/dra/xr.yaml", stage, observed)
			}
			compareGolden(t, "dra-"+stage, run(t, newRequest(t, xr, input, readObserved(t, fixture)...)))
		})
	}
}

// TestDRAClaimsDevices checks what a claim asking for GPUs through DRA
// composes: one ResourceClaimTemplate per version for spec.resources.gpu
// devices of the Input's class, with the pool's and the type's selectors;
// the server pods claim it and ask for no extended resource; a pod of a
// multi-node group claims its own; a claim without GPUs claims nothing;
// another count is another template (the spec is immutable).
func TestDRAClaimsDevices(t *testing.T) {
	input := draInput(t)
	serving := readObserved(t, filepath.Join(draObserved, "serving.yaml"))
	templatesOf := func(names []string) []string {
		var out []string
		for _, n := range names {
			if strings.HasPrefix(n, render.ResourceClaimTemplatePrefix) {
				out = append(out, n)
			}
		}
		return out
	}

	rsp := run(t, newRequest(t, readYAML(t, draXR), input, serving...))
	if msg := fatalMessage(rsp); msg != "" {
		t.Fatal(msg)
	}
	templates := templatesOf(desiredNames(rsp))
	if len(templates) != 1 {
		t.Fatalf("ResourceClaimTemplates %v, want one", templates)
	}
	rct := desiredObject[resourcev1.ResourceClaimTemplate](t, rsp, templates[0])
	want := resourcev1.DeviceClaim{Requests: []resourcev1.DeviceRequest{{
		Name: "gpu",
		Exactly: &resourcev1.ExactDeviceRequest{
			DeviceClassName: "gpu.nvidia.com",
			AllocationMode:  resourcev1.DeviceAllocationModeExactCount,
			Count:           1,
			Selectors: []resourcev1.DeviceSelector{
				{CEL: &resourcev1.CELDeviceSelector{Expression: `device.capacity["gpu.nvidia.com"].memory.compareTo(quantity("40Gi")) >= 0`}},
				{CEL: &resourcev1.CELDeviceSelector{Expression: `device.attributes["gpu.nvidia.com"].productName == "NVIDIA H100 80GB HBM3"`}},
			},
		},
	}}}
	if diff := cmp.Diff(want, rct.Spec.Spec.Devices); diff != "" {
		t.Errorf("the template's devices (-want +got):\n%s", diff)
	}
	if rct.Namespace != "team-a" || !strings.HasPrefix(rct.Name, "llama-gpu-") {
		t.Errorf("template %s/%s, want team-a/llama-gpu-<hash>", rct.Namespace, rct.Name)
	}
	if readiness(rsp, templates[0]) != 1 {
		t.Errorf("an observed template is ready once it exists; got %v", readiness(rsp, templates[0]))
	}
	d := desiredObject[appsv1.Deployment](t, rsp, render.ResourceDeployment)
	pod := d.Spec.Template.Spec
	if diff := cmp.Diff([]corev1.PodResourceClaim{{Name: "gpu", ResourceClaimTemplateName: ptr.To(rct.Name)}}, pod.ResourceClaims); diff != "" {
		t.Errorf("the pod's resourceClaims (-want +got):\n%s", diff)
	}
	res := pod.Containers[0].Resources
	if diff := cmp.Diff([]corev1.ResourceClaim{{Name: "gpu"}}, res.Claims); diff != "" {
		t.Errorf("the server's resources.claims (-want +got):\n%s", diff)
	}
	if _, ok := res.Limits["nvidia.com/gpu"]; ok {
		t.Errorf("the server asks for nvidia.com/gpu beside its DRA claim: %v", res.Limits)
	}
	if _, ok := res.Requests["nvidia.com/gpu"]; ok {
		t.Errorf("the server requests nvidia.com/gpu beside its DRA claim: %v", res.Requests)
	}
	// The default toleration of GPU pools stays.
	if !slices.ContainsFunc(pod.Tolerations, func(tl corev1.Toleration) bool { return tl.Key == "nvidia.com/gpu" }) {
		t.Errorf("tolerations %v lack the GPU pool's", pod.Tolerations)
	}

	t.Run("another count is another template", func(t *testing.T) {
		xr := readYAML(t, draXR)
		setPath(xr, int64(2), "spec", "resources", "gpu")
		rsp := run(t, newRequest(t, xr, input, serving...))
		got := templatesOf(desiredNames(rsp))
		if len(got) != 1 || got[0] == templates[0] {
			t.Fatalf("templates %v for 2 GPUs, want one other than %s", got, templates[0])
		}
		rct2 := desiredObject[resourcev1.ResourceClaimTemplate](t, rsp, got[0])
		if rct2.Name == rct.Name || rct2.Spec.Spec.Devices.Requests[0].Exactly.Count != 2 {
			t.Errorf("template %s counting %d, want a new name counting 2", rct2.Name, rct2.Spec.Spec.Devices.Requests[0].Exactly.Count)
		}
		d := desiredObject[appsv1.Deployment](t, rsp, render.ResourceDeployment)
		if n := d.Spec.Template.Spec.ResourceClaims[0].ResourceClaimTemplateName; n == nil || *n != rct2.Name {
			t.Errorf("the pod claims from %v, want %s", n, rct2.Name)
		}
	})

	t.Run("no type, the pool's selectors", func(t *testing.T) {
		xr := readYAML(t, draXR)
		delete(xr["spec"].(map[string]any)["resources"].(map[string]any), "gpuType")
		rsp := run(t, newRequest(t, xr, input, serving...))
		rct := desiredObject[resourcev1.ResourceClaimTemplate](t, rsp, templatesOf(desiredNames(rsp))[0])
		if sel := rct.Spec.Spec.Devices.Requests[0].Exactly.Selectors; len(sel) != 1 {
			t.Errorf("selectors %v, want the pool's one", sel)
		}
	})

	t.Run("no GPU, no claim", func(t *testing.T) {
		xr := readYAML(t, draXR)
		res := xr["spec"].(map[string]any)["resources"].(map[string]any)
		delete(res, "gpuType")
		res["gpu"] = int64(0)
		rsp := run(t, newRequest(t, xr, input, serving...))
		if msg := fatalMessage(rsp); msg != "" {
			t.Fatal(msg)
		}
		if got := templatesOf(desiredNames(rsp)); len(got) != 0 {
			t.Errorf("templates %v for a server without GPUs", got)
		}
		d := desiredObject[appsv1.Deployment](t, rsp, render.ResourceDeployment)
		if c := d.Spec.Template.Spec.ResourceClaims; c != nil {
			t.Errorf("a server without GPUs claims %v", c)
		}
	})

	t.Run("a canary has its own", func(t *testing.T) {
		xr := readYAML(t, draXR)
		setPath(xr, []any{
			map[string]any{"version": "1", "weight": 90},
			map[string]any{"version": "2", "weight": 10, "uri": "hf://meta-llama/Llama-3.1-8B-Instruct", "revision": "other"},
		}, "spec", "traffic")
		observed := append(serving[:len(serving):len(serving)], canaryWeightsObserved(t, xr, input, serving)...)
		rsp := run(t, newRequest(t, xr, input, observed...))
		got := templatesOf(desiredNames(rsp))
		if len(got) != 2 {
			t.Fatalf("templates %v, want the primary's and version 2's", got)
		}
		canary := desiredObject[appsv1.Deployment](t, rsp, render.ResourceDeployment+"-2")
		name := *canary.Spec.Template.Spec.ResourceClaims[0].ResourceClaimTemplateName
		if !strings.HasPrefix(name, "llama-2-gpu-") {
			t.Errorf("the canary claims from %s, want llama-2-gpu-<hash>", name)
		}
	})

	t.Run("every pod of a group claims its own", func(t *testing.T) {
		in := draInput(t)
		setPath(in, map[string]any{"enabled": true, "metricsNamespace": "monitoring"}, "networkPolicy")
		xr := readYAML(t, multiNodeXR)
		setPath(xr, "h100-80gb", "spec", "resources", "gpuType")
		weights := multiNodeStageObserved(t, xr, in, "serving")
		rsp := run(t, newRequest(t, xr, in, weights...))
		if msg := fatalMessage(rsp); msg != "" {
			t.Fatal(msg)
		}
		got := templatesOf(desiredNames(rsp))
		if len(got) != 1 {
			t.Fatalf("templates %v, want one", got)
		}
		rct := desiredObject[resourcev1.ResourceClaimTemplate](t, rsp, got[0])
		if n := rct.Spec.Spec.Devices.Requests[0].Exactly.Count; n != 8 {
			t.Errorf("a group pod's template counts %d devices, want 8", n)
		}
		l := desiredObject[lws.LeaderWorkerSet](t, rsp, render.ResourceLeaderWorkerSet)
		for role, tmpl := range map[string]*corev1.PodTemplateSpec{"leader": l.Spec.LeaderWorkerTemplate.LeaderTemplate, "worker": &l.Spec.LeaderWorkerTemplate.WorkerTemplate} {
			c := tmpl.Spec.ResourceClaims
			if len(c) != 1 || c[0].ResourceClaimTemplateName == nil || *c[0].ResourceClaimTemplateName != rct.Name {
				t.Errorf("the %s claims %v, want its own claim from %s", role, c, rct.Name)
			}
			if _, ok := tmpl.Spec.Containers[0].Resources.Limits["nvidia.com/gpu"]; ok {
				t.Errorf("the %s asks for nvidia.com/gpu beside its claim", role)
			}
		}
	})
}

// canaryWeightsObserved is version 2's pull Job of xr, observed Complete.
func canaryWeightsObserved(t *testing.T, xr, input map[string]any, observed []observedObject) []observedObject {
	t.Helper()
	rsp := run(t, newRequest(t, xr, input, observed...))
	if msg := fatalMessage(rsp); msg != "" {
		t.Fatal(msg)
	}
	var out []observedObject
	for _, n := range desiredNames(rsp) {
		if !strings.HasPrefix(n, render.ResourceJobPrefix) || slices.ContainsFunc(observed, func(o observedObject) bool { return o.Name == n }) {
			continue
		}
		out = append(out, observedFrom(t, rsp, n, map[string]any{"succeeded": 1, "conditions": []any{
			map[string]any{"type": "SuccessCriteriaMet", "status": "True"},
			map[string]any{"type": "Complete", "status": "True"},
		}}))
	}
	return out
}
