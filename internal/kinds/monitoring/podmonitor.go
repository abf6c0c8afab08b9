package monitoring

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// PodMonitor is the part of the Prometheus Operator's PodMonitor
// (monitoring.coreos.com/v1) the function writes. Its own Go types
// (github.com/prometheus-operator/prometheus-operator/pkg/apis/monitoring)
// would bring a module and its dependencies into the function for five
// fields; the e2e proves these against the upstream CRD.
// APIVersion and Kind are the Prometheus Operator's PodMonitor.
const (
	APIVersion = "monitoring.coreos.com/v1"
	Kind       = "PodMonitor"
)

// +kubebuilder:object:root=true
type PodMonitor struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              PodMonitorSpec `json:"spec"`
}

// PodMonitorSpec mirrors the PodMonitor's spec (PodMonitorSpec,
// monitoring.coreos.com/v1): which pods Prometheus scrapes, which of their
// labels it copies onto the series, and the endpoints it scrapes.
type PodMonitorSpec struct {
	Selector            metav1.LabelSelector `json:"selector"`
	PodTargetLabels     []string             `json:"podTargetLabels,omitempty"`
	PodMetricsEndpoints []PodMetricsEndpoint `json:"podMetricsEndpoints"`
}

// PodMetricsEndpoint mirrors PodMetricsEndpoint (an entry of
// spec.podMetricsEndpoints, monitoring.coreos.com/v1): the container port,
// by number, the path and the interval of a scrape.
type PodMetricsEndpoint struct {
	PortNumber *int32 `json:"portNumber,omitempty"`
	Path       string `json:"path,omitempty"`
	Interval   string `json:"interval,omitempty"`
}
