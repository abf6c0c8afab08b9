package render

import (
	"fmt"

	"github.com/inferno-ai/function-inferno/internal/kinds/keda"
	"github.com/inferno-ai/function-inferno/internal/resolve"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
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
// The types are ours, checked against the CRD and code of
// github.com/kedacore/http-add-on v0.12.0
// (config/crd/bases/http.keda.sh_httpscaledobjects.yaml, which the e2e
// installs, and whose operator, scaler and interceptor scenario 26c runs).

// ResourceHTTPScaledObject is the composition resource name of the
// HTTPScaledObject.
const ResourceHTTPScaledObject = "httpscaledobject"

// SkipScaledObjectCreation tells the add-on not to create its own
// ScaledObject (operator/controllers/http/app.go).
const SkipScaledObjectCreation = "httpscaledobject.keda.sh/skip-scaledobject-creation"

// ColdStartMarginSeconds is how much longer than the runtime's
// startupSeconds the interceptor holds a request for a service at zero:
// KEDA's reaction, scheduling and the container's start come before the
// server's own load, which the startup probe bounds.
const ColdStartMarginSeconds = 60

// HTTPScaledObject builds the HTTPScaledObject of the version's
// servers: the Service's in-cluster hosts, the Deployment and the
// Service's port 80, 0 to maxReplicas servers at targetConcurrency
// in-flight requests each, the Input's cooldown, and the interceptor's
// timeouts (the add-on's defaults are for web services: a 20 s hold and
// 500 ms to the response headers):
//   - conditionWait, how long a request is held until a server is ready:
//     the runtime's startupSeconds plus ColdStartMarginSeconds;
//   - responseHeader, how long a forwarded request may take to its
//     headers: input.keda.httpAddOn.responseTimeoutSeconds.
func HTTPScaledObject(s *resolve.Spec, v *resolve.Version, maxReplicas int32) *keda.HTTPScaledObject {
	svc := s.Name
	return &keda.HTTPScaledObject{
		TypeMeta: metav1.TypeMeta{APIVersion: keda.HTTPAPIVersion, Kind: keda.HTTPKind},
		ObjectMeta: metav1.ObjectMeta{
			Name: v.ServerName(s), Namespace: s.Namespace, Labels: s.Labels(v, v.Component()),
			Annotations: map[string]string{SkipScaledObjectCreation: "true"},
		},
		Spec: keda.HTTPScaledObjectSpec{
			Hosts:           []string{svc + "." + s.Namespace + ".svc.cluster.local", svc + "." + s.Namespace + ".svc"},
			ScaleTargetRef:  keda.HTTPScaleTarget{Name: v.ServerName(s), APIVersion: "apps/v1", Kind: "Deployment", Service: svc, Port: ServicePort},
			Replicas:        &keda.HTTPReplicas{Min: ptr.To(int32(0)), Max: ptr.To(maxReplicas)},
			ScaledownPeriod: ptr.To(s.Autoscaling.ScaleToZero.Cooldown),
			ScalingMetric:   &keda.HTTPScaledMetric{Concurrency: &keda.HTTPTarget{TargetValue: *s.Autoscaling.Concurrency}},
			Timeouts: &keda.HTTPTimeouts{
				ConditionWait:  fmt.Sprintf("%ds", *s.Runtime.StartupSeconds+ColdStartMarginSeconds),
				ResponseHeader: fmt.Sprintf("%ds", s.Autoscaling.ScaleToZero.HTTPResponseTimeout),
			},
		},
	}
}

// HTTPScaledObjectReady reports whether the HTTPScaledObject is ready:
//  1. it exists;
//  2. condition Ready=True, which the add-on's operator writes once it
//     has reconciled it (v0.12.0: reason Reconciled, after it skipped
//     creating its own ScaledObject); its interceptors route the hosts
//     from their own watch of HTTPScaledObjects.
func HTTPScaledObjectReady(o *keda.HTTPScaledObject) bool {
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

// HTTPScaledObjectResource is the composition resource name of version
// v's HTTPScaledObject: ResourceHTTPScaledObject for the primary, suffixed
// with the version for the others (see DeploymentResource).
func HTTPScaledObjectResource(v *resolve.Version) string {
	if v.Primary {
		return ResourceHTTPScaledObject
	}
	return ResourceHTTPScaledObject + "-" + v.Model.Version
}
