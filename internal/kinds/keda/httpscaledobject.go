package keda

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// +kubebuilder:object:root=true
type HTTPScaledObject struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              HTTPScaledObjectSpec `json:"spec"`
	Status            ScaledObjectStatus   `json:"status,omitempty"`
}

type HTTPScaledObjectSpec struct {
	Hosts           []string          `json:"hosts,omitempty"`
	ScaleTargetRef  HTTPScaleTarget   `json:"scaleTargetRef"`
	Replicas        *HTTPReplicas     `json:"replicas,omitempty"`
	ScaledownPeriod *int32            `json:"scaledownPeriod,omitempty"`
	ScalingMetric   *HTTPScaledMetric `json:"scalingMetric,omitempty"`
}

type HTTPScaleTarget struct {
	Name       string `json:"name"`
	APIVersion string `json:"apiVersion,omitempty"`
	Kind       string `json:"kind,omitempty"`
	Service    string `json:"service"`
	Port       int32  `json:"port"`
}

type HTTPReplicas struct {
	Min *int32 `json:"min,omitempty"`
	Max *int32 `json:"max,omitempty"`
}

type HTTPScaledMetric struct {
	Concurrency *HTTPTarget `json:"concurrency,omitempty"`
}

type HTTPTarget struct {
	TargetValue int32 `json:"targetValue"`
}
