package render

import (
	"reflect"

	"github.com/inferno-ai/function-inferno/internal/kinds/keda"
	"github.com/inferno-ai/function-inferno/internal/kinds/lws"
	"github.com/inferno-ai/function-inferno/internal/kinds/monitoring"
	"github.com/inferno-ai/function-inferno/internal/kinds/providerkubernetes"
	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	inferencev1 "sigs.k8s.io/gateway-api-inference-extension/api/v1"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
)

// Resource is one desired composed object and its readiness.
type Resource struct {
	Name   string
	Object runtime.Object
	Ready  bool
}

// A Rule judges whether an observed object of its kind is ready. It is
// given what is observed under the desired object's composition resource
// name: the decoded object, Seen for an object observed but not decoded,
// or nil when nothing is observed, which is never ready. Crossplane treats
// an unspecified readiness as not ready, so every kind has one.
type Rule func(observed runtime.Object) bool

// Kinds are the kinds the function composes, keyed by GroupVersionKind,
// each with its readiness rule. The rules live beside their kind's
// builders, one file per kind. HTTPRoute and InferencePool have none here:
// which report to read depends on the Input's Gateway, so the plan judges
// them with RouteReady and PoolReady.
var Kinds = map[schema.GroupVersionKind]Rule{
	corev1.SchemeGroupVersion.WithKind("PersistentVolumeClaim"):                                    typed(PVCBound),
	batchv1.SchemeGroupVersion.WithKind("Job"):                                                     typed(JobReady),
	appsv1.SchemeGroupVersion.WithKind("Deployment"):                                               typed(DeploymentReady),
	corev1.SchemeGroupVersion.WithKind("Service"):                                                  typed(ServiceReady),
	autoscalingv2.SchemeGroupVersion.WithKind("HorizontalPodAutoscaler"):                           typed(HPAReady),
	schema.FromAPIVersionAndKind(lws.APIVersion, lws.Kind):                                         typed(LWSReady),
	schema.FromAPIVersionAndKind(keda.APIVersion, keda.Kind):                                       typed(ScaledObjectReady),
	schema.FromAPIVersionAndKind(keda.HTTPAPIVersion, keda.HTTPKind):                               typed(HTTPScaledObjectReady),
	networkingv1.SchemeGroupVersion.WithKind("NetworkPolicy"):                                      NetworkPolicyReady,
	corev1.SchemeGroupVersion.WithKind("ConfigMap"):                                                Exists,
	corev1.SchemeGroupVersion.WithKind("ServiceAccount"):                                           Exists,
	rbacv1.SchemeGroupVersion.WithKind("Role"):                                                     Exists,
	rbacv1.SchemeGroupVersion.WithKind("RoleBinding"):                                              Exists,
	schema.FromAPIVersionAndKind(monitoring.APIVersion, monitoring.Kind):                           Exists,
	schema.FromAPIVersionAndKind(providerkubernetes.ClusterAPIVersion, providerkubernetes.Kind):    typed(ObjectReady),
	schema.FromAPIVersionAndKind(providerkubernetes.NamespacedAPIVersion, providerkubernetes.Kind): typed(ObjectReady),
	gatewayv1.SchemeGroupVersion.WithKind("HTTPRoute"):                                             nil,
	inferencev1.SchemeGroupVersion.WithKind("InferencePool"):                                       nil,
}

// Judged is a desired object with its readiness by its kind's rule in
// Kinds. A kind without a rule there is not ready: TestKindsJudgeEvery
// ComposedKind holds every kind the function renders to having one.
func Judged(name string, desired, observed runtime.Object) Resource {
	rule := Kinds[desired.GetObjectKind().GroupVersionKind()]
	return Resource{Name: name, Object: desired, Ready: rule != nil && rule(observed)}
}

// Seen stands for an object that is observed but not decoded: enough for
// the kinds that are ready once they exist.
var Seen runtime.Object = &metav1.PartialObjectMetadata{}

// Exists is the readiness rule of the kinds with no status to wait for
// (ConfigMap, ServiceAccount, Role, RoleBinding, PodMonitor):
//  1. it exists.
func Exists(observed runtime.Object) bool {
	return observed != nil && !reflect.ValueOf(observed).IsNil()
}

// typed makes a rule over one Go type a Rule: anything else is not ready.
func typed[T runtime.Object](rule func(T) bool) Rule {
	return func(observed runtime.Object) bool {
		o, ok := observed.(T)
		return ok && rule(o)
	}
}
