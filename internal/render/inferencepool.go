package render

import (
	"fmt"

	"github.com/inferno-ai/function-inferno/internal/resolve"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	inferencev1 "sigs.k8s.io/gateway-api-inference-extension/api/v1"
)

// The InferencePool comes from upstream's own Go types
// (sigs.k8s.io/gateway-api-inference-extension/api/v1): that package
// imports only apimachinery, and requiring the module raised no other
// module's version, so there is nothing to gain from a copy of ours.

// ResourcePool is the composition resource name of the InferencePool.
const ResourcePool = "inference-pool"

// InferencePool builds the claim's InferencePool: it selects the
// servers of every version (splitSelector: the claim's instance and the
// framework's name label, which neither the pull pods nor the picker
// carry) on the port they listen on, and names the claim's picker. It is
// named after the claim, like its Service and route.
func InferencePool(s *resolve.Spec) *inferencev1.InferencePool {
	sel := map[inferencev1.LabelKey]inferencev1.LabelValue{}
	for k, v := range s.SplitSelector() {
		sel[inferencev1.LabelKey(k)] = inferencev1.LabelValue(v)
	}
	return &inferencev1.InferencePool{
		TypeMeta:   metav1.TypeMeta{APIVersion: inferencev1.GroupVersion.String(), Kind: "InferencePool"},
		ObjectMeta: metav1.ObjectMeta{Name: s.Name, Namespace: s.Namespace, Labels: s.Labels(s.Primary(), resolve.ComponentRoute)},
		Spec: inferencev1.InferencePoolSpec{
			Selector:    inferencev1.LabelSelector{MatchLabels: sel},
			TargetPorts: []inferencev1.Port{{Number: inferencev1.PortNumber(*s.Runtime.Port)}},
			EndpointPickerRef: inferencev1.EndpointPickerRef{
				Kind:        "Service",
				Name:        inferencev1.ObjectName(resolve.PickerName(s)),
				Port:        &inferencev1.Port{Number: pickerGRPCPort},
				FailureMode: s.Pool.FailureMode,
			},
		},
	}
}

// PoolReady reads an InferencePool's status.parents for the Input's
// Gateway, as the Gateway's implementation writes it:
//  1. no entry for that Gateway (parentRef kind Gateway or unset, its name,
//     its namespace or unset for the pool's own): no implementation has
//     looked at the pool yet; not ready;
//  2. conditions Accepted=True and ResolvedRefs=True (the picker's
//     Service resolved): ready;
//  3. either False: rejected, with its reason and message;
//  4. otherwise (one missing, or Unknown): not reported yet.
func PoolReady(s *resolve.Spec, pool *inferencev1.InferencePool) (bool, RouteState) {
	gw := s.Gateway
	st := RouteState{Message: fmt.Sprintf("no Gateway implementation has reported on InferencePool %s for Gateway %s/%s yet", s.Name, gw.Namespace, gw.Name)}
	if pool == nil {
		return false, st
	}
	for _, p := range pool.Status.Parents {
		ref := p.ParentRef
		ns := string(ref.Namespace)
		if ns == "" {
			ns = pool.Namespace
		}
		if (ref.Kind != "" && ref.Kind != "Gateway") || string(ref.Name) != gw.Name || ns != gw.Namespace {
			continue
		}
		accepted := meta.FindStatusCondition(p.Conditions, string(inferencev1.InferencePoolConditionAccepted))
		resolved := meta.FindStatusCondition(p.Conditions, string(inferencev1.InferencePoolConditionResolvedRefs))
		for _, c := range []*metav1.Condition{accepted, resolved} {
			if c != nil && c.Status == metav1.ConditionFalse {
				st.Reported, st.Rejected = true, true
				st.Message = fmt.Sprintf("Gateway %s/%s (%s) reports InferencePool %s %s=False: %s: %s", gw.Namespace, gw.Name, p.ControllerName, s.Name, c.Type, c.Reason, c.Message)
				return false, st
			}
		}
		if accepted == nil || resolved == nil || accepted.Status != metav1.ConditionTrue || resolved.Status != metav1.ConditionTrue {
			return false, st
		}
		st.Reported = true
		st.Message = fmt.Sprintf("Gateway %s/%s accepted InferencePool %s and resolved its endpoint picker", gw.Namespace, gw.Name, s.Name)
		return true, st
	}
	return false, st
}

// The endpoint picker (EPP) of a claim's InferencePool: its Deployment,
// Service, ServiceAccount, Role, RoleBinding and ConfigMap. They are six
// kinds in one file, against the rule of one file per kind, because they
// are one thing: each exists only for the others, they share one name
// (<name>-epp), one set of labels and three ports, and reading them side
// by side is how one checks that the Service reaches the ports the
// Deployment opens, that the RoleBinding grants the Role to the
// ServiceAccount the pod runs as, and that the pod mounts the ConfigMap's
// key. The servers' Deployment and Service keep their own files. They
// follow upstream's inferencepool Helm chart of v1.2.0
// (config/charts/inferencepool in the module).

// Composition resource names of the picker's objects. None starts with
// "deployment-", "service-", "hpa-" or "pull-job-", which name the
// servers' objects of a version.
const (
	ResourcePicker               = "picker"
	ResourcePickerService        = "picker-service"
	ResourcePickerServiceAccount = "picker-serviceaccount"
	ResourcePickerRole           = "picker-role"
	ResourcePickerRoleBinding    = "picker-rolebinding"
	ResourcePickerConfig         = "picker-config"
)

// componentPicker is the component label of the picker's objects.
const componentPicker = "endpoint-picker"

// pickerApp is the picker's app.kubernetes.io/name label. It is not the
// framework's, so no selector of the servers (the pool's, the Services')
// ever matches the picker's pod.
const pickerApp = "inference-endpoint-picker"

// The picker's ports (upstream's defaults) and its configuration file.
const (
	pickerGRPCPort   = inferencev1.PortNumber(9002)
	pickerHealthPort = int32(9003)
	pickerMetrics    = int32(9090)
	pickerContainer  = "epp"
	pickerConfigDir  = "/config"
	PickerConfigKey  = "config.yaml"
	// pickerHealthService is the gRPC health service a single picker
	// answers on (upstream's probes without leader election).
	pickerHealthService = "inference-extension"
	// AnnotationPickerConfig on the picker's pod template records its
	// configuration's hash, so a new one restarts it.
	AnnotationPickerConfig = "inference.inferno.io/picker-config"
)

// pickerLabels are the labels of the picker's objects and pod.
func pickerLabels(s *resolve.Spec) map[string]string {
	return map[string]string{
		resolve.LabelName:      pickerApp,
		resolve.LabelInstance:  s.Name,
		resolve.LabelManagedBy: resolve.ManagedBy,
		resolve.LabelComponent: componentPicker,
		resolve.LabelPartOf:    resolve.PartOf,
	}
}

// pickerSelector selects the picker's pod. It never changes.
func pickerSelector(s *resolve.Spec) map[string]string {
	return map[string]string{resolve.LabelInstance: s.Name, resolve.LabelComponent: componentPicker}
}

func pickerMeta(s *resolve.Spec) metav1.ObjectMeta {
	return metav1.ObjectMeta{Name: resolve.PickerName(s), Namespace: s.Namespace, Labels: pickerLabels(s)}
}
