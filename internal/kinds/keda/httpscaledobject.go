package keda

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// HTTPScaledObject is the KEDA HTTP add-on's HTTPScaledObject
// (http.keda.sh/v1alpha1): the fields we write, and the status we read.
// +kubebuilder:object:root=true
type HTTPScaledObject struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              HTTPScaledObjectSpec `json:"spec"`
	Status            ScaledObjectStatus   `json:"status,omitempty"`
}

// HTTPScaledObjectSpec mirrors the add-on's HTTPScaledObjectSpec
// (http.keda.sh/v1alpha1): the hosts its interceptor routes, the workload
// and Service behind them, the replica bounds, how long to wait before
// scaling down, and the in-flight requests per replica to aim for.
type HTTPScaledObjectSpec struct {
	Hosts           []string          `json:"hosts,omitempty"`
	ScaleTargetRef  HTTPScaleTarget   `json:"scaleTargetRef"`
	Replicas        *HTTPReplicas     `json:"replicas,omitempty"`
	ScaledownPeriod *int32            `json:"scaledownPeriod,omitempty"`
	ScalingMetric   *HTTPScaledMetric `json:"scalingMetric,omitempty"`
}

// HTTPScaleTarget mirrors the add-on's ScaleTargetRef (spec.scaleTargetRef,
// http.keda.sh/v1alpha1): the workload to scale, and the Service and port
// the interceptor forwards the held requests to.
type HTTPScaleTarget struct {
	Name       string `json:"name"`
	APIVersion string `json:"apiVersion,omitempty"`
	Kind       string `json:"kind,omitempty"`
	Service    string `json:"service"`
	Port       int32  `json:"port"`
}

// HTTPReplicas mirrors the add-on's ReplicaStruct (spec.replicas,
// http.keda.sh/v1alpha1): the bounds of the workload's replicas.
type HTTPReplicas struct {
	Min *int32 `json:"min,omitempty"`
	Max *int32 `json:"max,omitempty"`
}

// HTTPScaledMetric mirrors the add-on's ScalingMetricSpec
// (spec.scalingMetric, http.keda.sh/v1alpha1); the function scales on
// concurrency, never on request rate.
type HTTPScaledMetric struct {
	Concurrency *HTTPTarget `json:"concurrency,omitempty"`
}

// HTTPTarget mirrors the add-on's ConcurrencyMetricSpec
// (spec.scalingMetric.concurrency, http.keda.sh/v1alpha1): the in-flight
// requests per replica to aim for.
type HTTPTarget struct {
	TargetValue int32 `json:"targetValue"`
}
