package fn

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/inferno-ai/function-inferno/internal/render"
	"github.com/inferno-ai/function-inferno/internal/resolve"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

func TestRenderService(t *testing.T) {
	cases := map[string]struct {
		framework string
		port      int
	}{
		"VLLM":         {framework: "vllm"},
		"Ollama":       {framework: "ollama"},
		"PortOverride": {framework: "fake", port: 9999},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			xr := testXR()
			setPath(xr, tc.framework, "spec", "model", "framework")
			if tc.port != 0 {
				setPath(xr, tc.port, "spec", "serve", "port")
			}
			servers, _ := pulled(t, xr, nil)
			got := desiredObject[corev1.Service](t, servers, render.ResourceService)
			s := mustResolve(t, xr, nil)
			want := &corev1.Service{
				TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Service"},
				ObjectMeta: metav1.ObjectMeta{Name: "llama", Namespace: "team-a", Labels: s.Labels(s.Primary(), resolve.ComponentServer)},
				Spec: corev1.ServiceSpec{
					Type:     corev1.ServiceTypeClusterIP,
					Selector: map[string]string{resolve.LabelInstance: "llama", resolve.LabelComponent: resolve.ComponentServer},
					// The Service always listens on 80 and targets the
					// container port by name, whatever the runtime's port.
					Ports: []corev1.ServicePort{{Name: "http", Port: 80, TargetPort: intstr.FromString("http"), Protocol: corev1.ProtocolTCP}},
				},
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("Service (-want +got):\n%s", diff)
			}
		})
	}
}

// TestServiceSelectsServers: the Service's selector matches the server
// pods' labels and not the puller's.
func TestServiceSelectsServers(t *testing.T) {
	servers, obs := pulled(t, testXR(), nil)
	svc := desiredObject[corev1.Service](t, servers, render.ResourceService)
	matches := func(labels map[string]any) bool {
		for k, v := range svc.Spec.Selector {
			if labels[k] != v {
				return false
			}
		}
		return true
	}
	podLabels := func(name string) map[string]any {
		v, _ := nested(desiredMap(t, servers, name), "spec", "template", "metadata", "labels")
		m, _ := v.(map[string]any)
		return m
	}
	got := map[string]bool{"server": matches(podLabels(render.ResourceDeployment)), "puller": matches(podLabels(obs[1].Name))}
	if diff := cmp.Diff(map[string]bool{"server": true, "puller": false}, got); diff != "" {
		t.Errorf("selector matches (-want +got):\n%s", diff)
	}
}

func TestServiceURL(t *testing.T) {
	cases := map[string]struct {
		name, namespace, want string
	}{
		"Llama":   {name: "llama", namespace: "team-a", want: "http://llama.team-a.svc.cluster.local:80"},
		"Mistral": {name: "mistral-7b", namespace: "ml", want: "http://mistral-7b.ml.svc.cluster.local:80"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, render.ServiceURL(&resolve.Spec{Name: tc.name, Namespace: tc.namespace})); diff != "" {
				t.Errorf("URL (-want +got):\n%s", diff)
			}
		})
	}
}
