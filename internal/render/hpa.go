package render

import (
	"github.com/inferno-ai/function-inferno/internal/resolve"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// ResourceHPA is the composition resource name of the autoscaler.
const ResourceHPA = "hpa"

// HPA builds the HorizontalPodAutoscaler of the servers: CPU
// utilisation against the request, and the runtime's in-flight request
// gauge as a Pods metric. The autoscaler takes the larger of the two
// recommendations.
//
// In a split each version has its own autoscaler, bounded by its share of
// spec.replicas (or more while the plan holds its servers): min to max.
func HPA(s *resolve.Spec, v *resolve.Version, minReplicas, maxReplicas int32) *autoscalingv2.HorizontalPodAutoscaler {
	a := s.Autoscaling
	var metrics []autoscalingv2.MetricSpec
	if a.CPUUtilization != nil {
		metrics = append(metrics, autoscalingv2.MetricSpec{
			Type: autoscalingv2.ResourceMetricSourceType,
			Resource: &autoscalingv2.ResourceMetricSource{
				Name: corev1.ResourceCPU,
				Target: autoscalingv2.MetricTarget{
					Type:               autoscalingv2.UtilizationMetricType,
					AverageUtilization: ptr.To(*a.CPUUtilization),
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
		ObjectMeta: metav1.ObjectMeta{Name: v.ServerName(s), Namespace: s.Namespace, Labels: s.Labels(v, v.Component())},
		Spec: autoscalingv2.HorizontalPodAutoscalerSpec{
			ScaleTargetRef: autoscalingv2.CrossVersionObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Name: v.ServerName(s)},
			MinReplicas:    ptr.To(minReplicas),
			MaxReplicas:    maxReplicas,
			Metrics:        metrics,
		},
	}
}

// HPAReady reports whether the autoscaler is ready:
//  1. it exists;
//  2. condition AbleToScale=True.
//
// ScalingActive=False (no metrics yet, or no metrics pipeline) does not
// hold the service back: the servers run at their current count, and the
// function reports it as a warning.
func HPAReady(h *autoscalingv2.HorizontalPodAutoscaler) bool {
	return h != nil && HPACondition(h, autoscalingv2.AbleToScale) != nil &&
		HPACondition(h, autoscalingv2.AbleToScale).Status == corev1.ConditionTrue
}

// HPACondition is the autoscaler's condition of type t, nil when it has
// not reported one: AbleToScale decides readiness (HPAReady),
// ScalingActive=False becomes a warning that the metrics are missing.
func HPACondition(h *autoscalingv2.HorizontalPodAutoscaler, t autoscalingv2.HorizontalPodAutoscalerConditionType) *autoscalingv2.HorizontalPodAutoscalerCondition {
	for i := range h.Status.Conditions {
		if h.Status.Conditions[i].Type == t {
			return &h.Status.Conditions[i]
		}
	}
	return nil
}

// HPAResource is the composition resource name of version v's
// autoscaler: ResourceHPA for the primary, suffixed with the version for
// the others of a split (see DeploymentResource).
func HPAResource(v *resolve.Version) string {
	if v.Primary {
		return ResourceHPA
	}
	return ResourceHPA + "-" + v.Model.Version
}
