package fn

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/inferno-ai/function-inferno/internal/render"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

func TestRenderHPA(t *testing.T) {
	cpu := func(p int32) autoscalingv2.MetricSpec {
		return autoscalingv2.MetricSpec{Type: autoscalingv2.ResourceMetricSourceType, Resource: &autoscalingv2.ResourceMetricSource{
			Name: corev1.ResourceCPU, Target: autoscalingv2.MetricTarget{Type: autoscalingv2.UtilizationMetricType, AverageUtilization: ptr.To(p)},
		}}
	}
	pods := func(metric string, v int64) autoscalingv2.MetricSpec {
		return autoscalingv2.MetricSpec{Type: autoscalingv2.PodsMetricSourceType, Pods: &autoscalingv2.PodsMetricSource{
			Metric: autoscalingv2.MetricIdentifier{Name: metric},
			Target: autoscalingv2.MetricTarget{Type: autoscalingv2.AverageValueMetricType, AverageValue: resource.NewQuantity(v, resource.DecimalSI)},
		}}
	}
	cases := map[string]struct {
		framework   string
		replicas    map[string]any
		autoscaling map[string]any
		in          map[string]any
		wantMin     int32
		wantMax     int32
		wantMetrics []autoscalingv2.MetricSpec
	}{
		"DefaultCPUTarget": {
			replicas: map[string]any{"min": 1, "max": 4}, autoscaling: map[string]any{"enabled": true},
			wantMin: 1, wantMax: 4, wantMetrics: []autoscalingv2.MetricSpec{cpu(80)},
		},
		"CPUTarget": {
			replicas: map[string]any{"min": 2, "max": 8}, autoscaling: map[string]any{"enabled": true, "targetCPUUtilization": 65},
			wantMin: 2, wantMax: 8, wantMetrics: []autoscalingv2.MetricSpec{cpu(65)},
		},
		"ConcurrencyOnVLLM": {
			replicas: map[string]any{"min": 1, "max": 5}, autoscaling: map[string]any{"enabled": true, "targetConcurrency": 10},
			wantMin: 1, wantMax: 5, wantMetrics: []autoscalingv2.MetricSpec{pods("vllm_num_requests_running", 10)},
		},
		"BothOnTriton": {
			framework: "triton",
			replicas:  map[string]any{"min": 1, "max": 5}, autoscaling: map[string]any{"enabled": true, "targetConcurrency": 2, "targetCPUUtilization": 90},
			wantMin: 1, wantMax: 5, wantMetrics: []autoscalingv2.MetricSpec{cpu(90), pods("nv_inference_pending_request_count", 2)},
		},
		"InputMetric": {
			framework: "ollama", in: map[string]any{"runtimes": map[string]any{"ollama": map[string]any{"concurrencyMetric": "ollama_requests_active"}}},
			replicas: map[string]any{"min": 1, "max": 3}, autoscaling: map[string]any{"enabled": true, "targetConcurrency": 1},
			wantMin: 1, wantMax: 3, wantMetrics: []autoscalingv2.MetricSpec{pods("ollama_requests_active", 1)},
		},
		"MaxDefaultsToMin": {
			replicas: map[string]any{"min": 2}, autoscaling: map[string]any{"enabled": true},
			wantMin: 2, wantMax: 2, wantMetrics: []autoscalingv2.MetricSpec{cpu(80)},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			xr := testXR()
			setPath(xr, "ReadWriteMany", "spec", "storage", "accessMode")
			if tc.framework != "" {
				setPath(xr, tc.framework, "spec", "model", "framework")
			}
			setPath(xr, tc.replicas, "spec", "replicas")
			setPath(xr, tc.autoscaling, "spec", "autoscaling")
			servers, _ := pulled(t, xr, tc.in)
			got := desiredObject[autoscalingv2.HorizontalPodAutoscaler](t, servers, render.ResourceHPA)
			framework := tc.framework
			if framework == "" {
				framework = "vllm"
			}
			// Written out whole: nothing of it comes from the code under test.
			want := &autoscalingv2.HorizontalPodAutoscaler{
				TypeMeta: metav1.TypeMeta{APIVersion: "autoscaling/v2", Kind: "HorizontalPodAutoscaler"},
				ObjectMeta: metav1.ObjectMeta{Name: "llama", Namespace: "team-a", Labels: map[string]string{
					"app.kubernetes.io/component":  "model-server",
					"app.kubernetes.io/instance":   "llama",
					"app.kubernetes.io/managed-by": "function-inferno",
					"app.kubernetes.io/name":       framework,
					"app.kubernetes.io/part-of":    "inferno",
				}},
				Spec: autoscalingv2.HorizontalPodAutoscalerSpec{
					ScaleTargetRef: autoscalingv2.CrossVersionObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Name: "llama"},
					MinReplicas:    ptr.To(tc.wantMin), MaxReplicas: tc.wantMax, Metrics: tc.wantMetrics,
				},
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("HPA (-want +got):\n%s", diff)
			}
		})
	}
}

// TestNoHPAWithoutAutoscaling: no autoscaler unless enabled.
func TestNoHPAWithoutAutoscaling(t *testing.T) {
	cases := map[string]map[string]any{
		"Absent":   nil,
		"Disabled": {"enabled": false, "targetCPUUtilization": 50},
	}
	for name, a := range cases {
		t.Run(name, func(t *testing.T) {
			xr := testXR()
			if a != nil {
				setPath(xr, a, "spec", "autoscaling")
			}
			servers, _ := pulled(t, xr, nil)
			if diff := cmp.Diff([]string{render.ResourceDeployment, pullJobResource(t, servers), render.ResourceService, render.ResourcePVC}, desiredNames(servers)); diff != "" {
				t.Errorf("desired (-want +got):\n%s", diff)
			}
		})
	}
}
