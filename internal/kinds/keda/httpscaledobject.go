package keda

import (
	"encoding/json"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

type HTTPScaledObject struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              HTTPScaledObjectSpec `json:"spec"`
	Status            scaledObjectStatus   `json:"status,omitempty"`
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

// DeepCopyObject makes httpScaledObject a runtime.Object.
func (o *HTTPScaledObject) DeepCopyObject() runtime.Object {
	b, err := json.Marshal(o)
	if err != nil {
		panic(fmt.Sprintf("cannot copy an HTTPScaledObject: %v", err))
	}
	out := &HTTPScaledObject{}
	if err := json.Unmarshal(b, out); err != nil {
		panic(fmt.Sprintf("cannot copy an HTTPScaledObject: %v", err))
	}
	return out
}
