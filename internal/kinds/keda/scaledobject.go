package keda

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

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

type ScaleTarget struct {
	APIVersion string `json:"apiVersion,omitempty"`
	Kind       string `json:"kind,omitempty"`
	Name       string `json:"name"`
}

type ScaleTrigger struct {
	Type       string            `json:"type"`
	Name       string            `json:"name,omitempty"`
	Metadata   map[string]string `json:"metadata"`
	MetricType string            `json:"metricType,omitempty"`
}

type Fallback struct {
	FailureThreshold int32 `json:"failureThreshold"`
	Replicas         int32 `json:"replicas"`
}

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
