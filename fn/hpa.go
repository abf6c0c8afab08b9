package fn

import (
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// resourceHPA is the composition resource name of the autoscaler.
const resourceHPA = "hpa"

// renderHPA builds the HorizontalPodAutoscaler of the servers: CPU
// utilisation against the request, and the runtime's in-flight request
// gauge as a Pods metric. The autoscaler takes the larger of the two
// recommendations.
//
// In a split each version has its own autoscaler, bounded by its share of
// spec.replicas (or more while the plan holds its servers): min to max.
func renderHPA(s *resolvedSpec, v *modelVersion, minReplicas, maxReplicas int32) *autoscalingv2.HorizontalPodAutoscaler {
	a := s.Autoscaling
	var metrics []autoscalingv2.MetricSpec
	if a.CPUUtilization != nil {
		metrics = append(metrics, autoscalingv2.MetricSpec{
			Type: autoscalingv2.ResourceMetricSourceType,
			Resource: &autoscalingv2.ResourceMetricSource{
				Name: corev1.ResourceCPU,
				Target: autoscalingv2.MetricTarget{
					Type:               autoscalingv2.UtilizationMetricType,
					AverageUtilization: ptrTo(*a.CPUUtilization),
				},
			},
		})
	}
	if a.Concurrency != nil {
		metrics = append(metrics, autoscalingv2.MetricSpec{
			Type: autoscalingv2.PodsMetricSourceType,
			Pods: &autoscalingv2.PodsMetricSource{
				Metric: autoscalingv2.MetricIdentifier{Name: a.Metric},
				Target: autoscalingv2.MetricTarget{
					Type:         autoscalingv2.AverageValueMetricType,
					AverageValue: resource.NewQuantity(int64(*a.Concurrency), resource.DecimalSI),
				},
			},
		})
	}
	return &autoscalingv2.HorizontalPodAutoscaler{
		TypeMeta:   metav1.TypeMeta{APIVersion: "autoscaling/v2", Kind: "HorizontalPodAutoscaler"},
		ObjectMeta: metav1.ObjectMeta{Name: v.serverName(s), Namespace: s.Namespace, Labels: s.labels(v, v.component())},
		Spec: autoscalingv2.HorizontalPodAutoscalerSpec{
			ScaleTargetRef: autoscalingv2.CrossVersionObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Name: v.serverName(s)},
			MinReplicas:    ptrTo(minReplicas),
			MaxReplicas:    maxReplicas,
			Metrics:        metrics,
		},
	}
}
