package fn

import (
	"testing"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"github.com/google/go-cmp/cmp"
	"github.com/inferno-ai/function-inferno/internal/kinds/monitoring"
	"github.com/inferno-ai/function-inferno/internal/render"
	"github.com/inferno-ai/function-inferno/internal/resolve"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
)

// TestPodMonitor: with input.monitoring.podMonitor on, a claim gets one
// PodMonitor in its namespace that selects its servers of every version
// (not its pull pods) on the preset's metrics port and path, with the
// Input's labels and interval; a runtime without metrics gets none, and
// so does every claim with it off. Ready once observed.
func TestPodMonitor(t *testing.T) {
	on := map[string]any{"monitoring": map[string]any{"podMonitor": map[string]any{"enabled": true, "interval": "30s", "labels": map[string]any{"release": "prometheus"}}}}
	framework := func(fw string) func(testing.TB) map[string]any {
		return func(testing.TB) map[string]any {
			xr := testXR()
			setPath(xr, fw, "spec", "model", "framework")
			if fw != "vllm" {
				setPath(xr, int64(0), "spec", "resources", "gpu")
			}
			return xr
		}
	}
	type endpoint struct {
		Port                 int32
		Path, Interval       string
		Namespace, Release   string
		Server, Canary, Pull bool
	}
	cases := map[string]struct {
		xr   func(testing.TB) map[string]any
		in   map[string]any
		want *endpoint
	}{
		"Off":                {xr: framework("vllm")},
		"VLLM":               {xr: framework("vllm"), in: on, want: &endpoint{Port: 8000, Path: "/metrics", Interval: "30s", Namespace: "team-a", Release: "prometheus", Server: true, Canary: true}},
		"Triton":             {xr: framework("triton"), in: on, want: &endpoint{Port: 8002, Path: "/metrics", Interval: "30s", Namespace: "team-a", Release: "prometheus", Server: true, Canary: true}},
		"Fake":               {xr: framework("fake"), in: on, want: &endpoint{Port: 8080, Path: "/metrics", Interval: "30s", Namespace: "team-a", Release: "prometheus", Server: true, Canary: true}},
		"OllamaHasNoMetrics": {xr: framework("ollama"), in: on},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			rsp := run(t, newRequest(t, tc.xr(t), tc.in))
			if msg := fatalMessage(rsp); msg != "" {
				t.Fatal(msg)
			}
			_, has := rsp.GetDesired().GetResources()[render.ResourcePodMonitor]
			if tc.want == nil {
				if has {
					t.Errorf("a PodMonitor rendered: %v", desiredMap(t, rsp, render.ResourcePodMonitor))
				}
				return
			}
			pm := desiredObject[monitoring.PodMonitor](t, rsp, render.ResourcePodMonitor)
			sel, err := metav1.LabelSelectorAsSelector(&pm.Spec.Selector)
			if err != nil {
				t.Fatal(err)
			}
			pod := func(component string) bool {
				return sel.Matches(labels.Set{resolve.LabelInstance: "llama", resolve.LabelComponent: component})
			}
			ep := pm.Spec.PodMetricsEndpoints[0]
			got := &endpoint{Port: *ep.PortNumber, Path: ep.Path, Interval: ep.Interval, Namespace: pm.Namespace, Release: pm.Labels["release"],
				Server: pod(resolve.ComponentServer), Canary: pod(resolve.ComponentCanary), Pull: pod(resolve.ComponentPuller)}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("PodMonitor (-want +got):\n%s", diff)
			}
			if sel.Matches(labels.Set{resolve.LabelInstance: "llama-2", resolve.LabelComponent: resolve.ComponentServer}) {
				t.Error("the PodMonitor selects another claim's servers")
			}
			if pm.APIVersion != "monitoring.coreos.com/v1" || pm.Kind != "PodMonitor" || readiness(rsp, render.ResourcePodMonitor) != fnv1.Ready_READY_FALSE {
				t.Errorf("%s %s, ready %v before it is observed", pm.APIVersion, pm.Kind, readiness(rsp, render.ResourcePodMonitor))
			}
			again := run(t, newRequest(t, tc.xr(t), tc.in, observedFrom(t, rsp, render.ResourcePodMonitor, nil)))
			if readiness(again, render.ResourcePodMonitor) != fnv1.Ready_READY_TRUE {
				t.Error("the PodMonitor is not ready once observed")
			}
		})
	}
}
