package monitoring

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
)

// PodMonitor is the part of the Prometheus Operator's PodMonitor
// (monitoring.coreos.com/v1) the function writes. Its own Go types
// (github.com/prometheus-operator/prometheus-operator/pkg/apis/monitoring)
// would bring a module and its dependencies into the function for five
// fields; the e2e proves these against the upstream CRD.
type PodMonitor struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              PodMonitorSpec `json:"spec"`
}

type PodMonitorSpec struct {
	Selector            metav1.LabelSelector `json:"selector"`
	PodTargetLabels     []string             `json:"podTargetLabels,omitempty"`
	PodMetricsEndpoints []PodMetricsEndpoint `json:"podMetricsEndpoints"`
}

type PodMetricsEndpoint struct {
	PortNumber *int32 `json:"portNumber,omitempty"`
	Path       string `json:"path,omitempty"`
	Interval   string `json:"interval,omitempty"`
}

// DeepCopyObject makes podMonitorObject a runtime.Object.
func (in *PodMonitor) DeepCopyObject() runtime.Object {
	out := *in
	in.ObjectMeta.DeepCopyInto(&out.ObjectMeta)
	in.Spec.Selector.DeepCopyInto(&out.Spec.Selector)
	out.Spec.PodTargetLabels = append([]string(nil), in.Spec.PodTargetLabels...)
	out.Spec.PodMetricsEndpoints = make([]PodMetricsEndpoint, len(in.Spec.PodMetricsEndpoints))
	for i, e := range in.Spec.PodMetricsEndpoints {
		if e.PortNumber != nil {
			e.PortNumber = ptr.To(*e.PortNumber)
		}
		out.Spec.PodMetricsEndpoints[i] = e
	}
	return &out
}
