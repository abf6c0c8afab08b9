package keda

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// HTTPScaledObject is the KEDA HTTP add-on's HTTPScaledObject
// (http.keda.sh/v1alpha1, checked against v0.12.0): the fields we write,
// and the status we read (since v0.12.0 its conditions are
// metav1.Conditions; Condition reads the fields they share with KEDA's).
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
// scaling down, the in-flight requests per replica to aim for, and how
// long the interceptor holds and forwards a request.
type HTTPScaledObjectSpec struct {
	Hosts           []string          `json:"hosts,omitempty"`
	ScaleTargetRef  HTTPScaleTarget   `json:"scaleTargetRef"`
	Replicas        *HTTPReplicas     `json:"replicas,omitempty"`
	ScaledownPeriod *int32            `json:"scaledownPeriod,omitempty"`
	ScalingMetric   *HTTPScaledMetric `json:"scalingMetric,omitempty"`
	Timeouts        *HTTPTimeouts     `json:"timeouts,omitempty"`
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

// HTTPTimeouts mirrors the add-on's HTTPScaledObjectTimeoutsSpec
// (spec.timeouts, http.keda.sh/v1alpha1, since v0.11): Go durations
// ("90s") that replace the interceptor's global ones for this object's
// requests. ConditionWait is how long the interceptor holds a request
// until the Service has a ready endpoint (KEDA_CONDITION_WAIT_TIMEOUT,
// 20 s in the add-on's release); ResponseHeader how long it then waits
// for the server's response headers (KEDA_RESPONSE_HEADER_TIMEOUT,
// 500 ms in the release).
type HTTPTimeouts struct {
	ConditionWait  string `json:"conditionWait,omitempty"`
	ResponseHeader string `json:"responseHeader,omitempty"`
}
