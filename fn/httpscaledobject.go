package fn

import (
	"encoding/json"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// KEDA's HTTP add-on wakes a service at zero: its interceptor takes the
// requests for the service's hosts, holds them while KEDA starts a server,
// and its external scaler reports them to the ScaledObject's external-push
// trigger. The function renders the add-on's HTTPScaledObject when
// input.keda.httpAddOn is enabled, annotated so that the add-on does not
// create a ScaledObject of its own (the function's would then fight it for
// the Deployment): the function's ScaledObject carries the add-on's
// trigger beside the Prometheus one.
//
// The types are ours, checked against the CRD of
// github.com/kedacore/http-add-on v0.8.0
// (config/crd/bases/http.keda.sh_httpscaledobjects.yaml, which the e2e
// installs; later versions are not served by the module proxy here).

// resourceHTTPScaledObject is the composition resource name of the
// HTTPScaledObject.
const resourceHTTPScaledObject = "httpscaledobject"

// skipScaledObjectCreation tells the add-on not to create its own
// ScaledObject (operator/controllers/http/app.go).
const skipScaledObjectCreation = "httpscaledobject.keda.sh/skip-scaledobject-creation"

type httpScaledObject struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              httpScaledObjectSpec `json:"spec"`
	Status            scaledObjectStatus   `json:"status,omitempty"`
}

type httpScaledObjectSpec struct {
	Hosts           []string          `json:"hosts,omitempty"`
	ScaleTargetRef  httpScaleTarget   `json:"scaleTargetRef"`
	Replicas        *httpReplicas     `json:"replicas,omitempty"`
	ScaledownPeriod *int32            `json:"scaledownPeriod,omitempty"`
	ScalingMetric   *httpScaledMetric `json:"scalingMetric,omitempty"`
}

type httpScaleTarget struct {
	Name       string `json:"name"`
	APIVersion string `json:"apiVersion,omitempty"`
	Kind       string `json:"kind,omitempty"`
	Service    string `json:"service"`
	Port       int32  `json:"port"`
}

type httpReplicas struct {
	Min *int32 `json:"min,omitempty"`
	Max *int32 `json:"max,omitempty"`
}

type httpScaledMetric struct {
	Concurrency *httpTarget `json:"concurrency,omitempty"`
}

type httpTarget struct {
	TargetValue int32 `json:"targetValue"`
}

// DeepCopyObject makes httpScaledObject a runtime.Object.
func (o *httpScaledObject) DeepCopyObject() runtime.Object {
	b, err := json.Marshal(o)
	if err != nil {
		panic(fmt.Sprintf("cannot copy an HTTPScaledObject: %v", err))
	}
	out := &httpScaledObject{}
	if err := json.Unmarshal(b, out); err != nil {
		panic(fmt.Sprintf("cannot copy an HTTPScaledObject: %v", err))
	}
	return out
}

// renderHTTPScaledObject builds the HTTPScaledObject of the version's
// servers: the Service's in-cluster hosts, the Deployment and the
// Service's port 80, 0 to maxReplicas servers at targetConcurrency
// in-flight requests each, the Input's cooldown.
func renderHTTPScaledObject(s *resolvedSpec, v *modelVersion, maxReplicas int32) *httpScaledObject {
	svc := s.Name
	return &httpScaledObject{
		TypeMeta: metav1.TypeMeta{APIVersion: "http.keda.sh/v1alpha1", Kind: "HTTPScaledObject"},
		ObjectMeta: metav1.ObjectMeta{
			Name: v.serverName(s), Namespace: s.Namespace, Labels: s.labels(v, v.component()),
			Annotations: map[string]string{skipScaledObjectCreation: "true"},
		},
		Spec: httpScaledObjectSpec{
			Hosts:           []string{svc + "." + s.Namespace + ".svc.cluster.local", svc + "." + s.Namespace + ".svc"},
			ScaleTargetRef:  httpScaleTarget{Name: v.serverName(s), APIVersion: "apps/v1", Kind: "Deployment", Service: svc, Port: servicePort},
			Replicas:        &httpReplicas{Min: ptrTo(int32(0)), Max: ptrTo(maxReplicas)},
			ScaledownPeriod: ptrTo(s.Autoscaling.ScaleToZero.Cooldown),
			ScalingMetric:   &httpScaledMetric{Concurrency: &httpTarget{TargetValue: *s.Autoscaling.Concurrency}},
		},
	}
}

// httpScaledObjectReady reports whether the HTTPScaledObject is ready:
//  1. it exists;
//  2. condition Ready=True, which the add-on's operator writes once it
//     has registered the hosts with its interceptor (reason
//     HTTPScaledObjectIsReady).
func httpScaledObjectReady(o *httpScaledObject) bool {
	if o == nil {
		return false
	}
	for _, c := range o.Status.Conditions {
		if c.Type == "Ready" {
			return c.Status == "True"
		}
	}
	return false
}

func (v *modelVersion) httpScaledObjectResource() string {
	if v.Primary {
		return resourceHTTPScaledObject
	}
	return resourceHTTPScaledObject + "-" + v.Model.Version
}
