package keda

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// APIVersion and Kind are the ScaledObject's type (keda.sh/v1alpha1,
// ScaledObject), which the function writes into every one it renders.
const (
	APIVersion = "keda.sh/v1alpha1"
	Kind       = "ScaledObject"
	// HTTPAPIVersion and HTTPKind are the HTTP add-on's HTTPScaledObject.
	HTTPAPIVersion = "http.keda.sh/v1alpha1"
	HTTPKind       = "HTTPScaledObject"
)

// ScaledObject is a KEDA ScaledObject: the fields we write, and the status
// we read.
// +kubebuilder:object:root=true
type ScaledObject struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              ScaledObjectSpec   `json:"spec"`
	Status            ScaledObjectStatus `json:"status,omitempty"`
}

// ScaledObjectSpec mirrors KEDA's ScaledObjectSpec (the ScaledObject's
// spec, keda.sh/v1alpha1): the Deployment to scale, how often to poll and
// how long to wait before scaling to idleReplicaCount, the bounds, the
// triggers, and the fallback while the triggers fail.
type ScaledObjectSpec struct {
	ScaleTargetRef   ScaleTarget    `json:"scaleTargetRef"`
	PollingInterval  *int32         `json:"pollingInterval,omitempty"`
	CooldownPeriod   *int32         `json:"cooldownPeriod,omitempty"`
	IdleReplicaCount *int32         `json:"idleReplicaCount,omitempty"`
	MinReplicaCount  *int32         `json:"minReplicaCount,omitempty"`
	MaxReplicaCount  *int32         `json:"maxReplicaCount,omitempty"`
	Triggers         []ScaleTrigger `json:"triggers"`
	Fallback         *Fallback      `json:"fallback,omitempty"`
}

// ScaleTarget mirrors KEDA's ScaleTarget (spec.scaleTargetRef,
// keda.sh/v1alpha1): the workload whose replicas KEDA owns, here the
// version's server Deployment.
type ScaleTarget struct {
	APIVersion string `json:"apiVersion,omitempty"`
	Kind       string `json:"kind,omitempty"`
	Name       string `json:"name"`
}

// ScaleTrigger mirrors KEDA's ScaleTriggers (an entry of spec.triggers,
// keda.sh/v1alpha1): a scaler by type (prometheus, cpu, external-push),
// its scaler-specific metadata, and the HPA metric type it feeds.
type ScaleTrigger struct {
	Type       string            `json:"type"`
	Name       string            `json:"name,omitempty"`
	Metadata   map[string]string `json:"metadata"`
	MetricType string            `json:"metricType,omitempty"`
}

// Fallback mirrors KEDA's Fallback (spec.fallback, keda.sh/v1alpha1): the
// replicas KEDA runs once a trigger has failed failureThreshold times in a
// row, so an unreadable metric neither stops nor floods the servers.
type Fallback struct {
	FailureThreshold int32 `json:"failureThreshold"`
	Replicas         int32 `json:"replicas"`
}

// ScaledObjectStatus mirrors the conditions of KEDA's ScaledObjectStatus
// (keda.sh/v1alpha1), the only part the function reads (Ready, Active); the
// HTTPScaledObject's status has the same shape.
type ScaledObjectStatus struct {
	Conditions []Condition `json:"conditions,omitempty"`
}

// Condition is a Condition as KEDA writes it (its own type, not
// metav1.Condition: no observedGeneration, all fields optional).
type Condition struct {
	Type    string `json:"type"`
	Status  string `json:"status"`
	Reason  string `json:"reason,omitempty"`
	Message string `json:"message,omitempty"`
}

// Active reports KEDA's Active=True: a trigger wants servers.
func (o *ScaledObject) Active() bool {
	c := o.Condition("Active")
	return c != nil && c.Status == "True"
}

// Condition is the ScaledObject's Condition of that type, nil when there
// is none (or no ScaledObject).
func (o *ScaledObject) Condition(t string) *Condition {
	if o == nil {
		return nil
	}
	for i := range o.Status.Conditions {
		if o.Status.Conditions[i].Type == t {
			return &o.Status.Conditions[i]
		}
	}
	return nil
}
