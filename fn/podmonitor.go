package fn

import (
	"regexp"
	"sort"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/inferno-ai/function-inferno/input/v1beta1"
)

// resourcePodMonitor is the composition resource name of the PodMonitor.
const resourcePodMonitor = "pod-monitor"

// podMonitor is input.monitoring.podMonitor with the runtime's metrics
// endpoint, resolved.
type podMonitor struct {
	Labels   map[string]string
	Interval string
	Port     int32
	Path     string
}

// promDuration is Prometheus's duration, as the PodMonitor CRD checks it.
var promDuration = regexp.MustCompile(`^(0|(([0-9]+)h)?(([0-9]+)m)?(([0-9]+)s)?(([0-9]+)ms)?)$`)

// resolvePodMonitor reads input.monitoring.podMonitor for a claim of
// runtime rt: nil when it is off, or when the runtime serves no metrics
// (its preset has no metricsPath; Ollama's).
func resolvePodMonitor(rt v1beta1.RuntimePreset, in *v1beta1.Input, errs *fieldErrors) *podMonitor {
	if in.Monitoring == nil || in.Monitoring.PodMonitor == nil || !in.Monitoring.PodMonitor.Enabled {
		return nil
	}
	pm := in.Monitoring.PodMonitor
	const field = "input.monitoring.podMonitor"
	if !promDuration.MatchString(pm.Interval) && pm.Interval != "" {
		errs.add(field+".interval", "%q is not a Prometheus duration; write e.g. 30s or 1m", pm.Interval)
	}
	keys := make([]string, 0, len(pm.Labels))
	for k := range pm.Labels {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		for _, m := range validation.IsQualifiedName(k) {
			errs.add(field+".labels", "%q is not a label key: %s", k, m)
		}
		for _, m := range validation.IsValidLabelValue(pm.Labels[k]) {
			errs.add(field+".labels["+k+"]", "%q is not a label value: %s", pm.Labels[k], m)
		}
	}
	if rt.MetricsPath == "" || rt.Port == nil {
		return nil
	}
	port := *rt.Port
	if rt.MetricsPort != nil {
		port = *rt.MetricsPort
	}
	return &podMonitor{Labels: pm.Labels, Interval: pm.Interval, Port: port, Path: rt.MetricsPath}
}

// renderPodMonitor builds the claim's PodMonitor: the Prometheus
// Operator scrapes every server of every version of the claim (not its
// pull pods), in the claim's namespace only, on the runtime's metrics
// port and path, and labels the series with the server's version.
// A PodMonitor has no status worth waiting for (the operator writes none
// unless a feature gate asks it to): ready once observed.
func renderPodMonitor(s *resolvedSpec) *podMonitorObject {
	pm := s.PodMonitor
	labels := s.labels(&s.Versions[0], componentServer)
	delete(labels, labelVersion)
	for k, v := range pm.Labels {
		labels[k] = v
	}
	return &podMonitorObject{
		TypeMeta:   metav1.TypeMeta{APIVersion: "monitoring.coreos.com/v1", Kind: "PodMonitor"},
		ObjectMeta: metav1.ObjectMeta{Name: s.Name, Namespace: s.Namespace, Labels: labels},
		Spec: podMonitorSpec{
			Selector: metav1.LabelSelector{
				MatchLabels: map[string]string{labelInstance: s.Name},
				MatchExpressions: []metav1.LabelSelectorRequirement{{
					Key: labelComponent, Operator: metav1.LabelSelectorOpIn, Values: []string{componentServer, componentCanary},
				}},
			},
			PodTargetLabels:     []string{labelVersion},
			PodMetricsEndpoints: []podMetricsEndpoint{{PortNumber: ptrTo(pm.Port), Path: pm.Path, Interval: pm.Interval}},
		},
	}
}

// podMonitorObject is the part of the Prometheus Operator's PodMonitor
// (monitoring.coreos.com/v1) the function writes. Its own Go types
// (github.com/prometheus-operator/prometheus-operator/pkg/apis/monitoring)
// would bring a module and its dependencies into the function for five
// fields; the e2e proves these against the upstream CRD.
type podMonitorObject struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              podMonitorSpec `json:"spec"`
}

type podMonitorSpec struct {
	Selector            metav1.LabelSelector `json:"selector"`
	PodTargetLabels     []string             `json:"podTargetLabels,omitempty"`
	PodMetricsEndpoints []podMetricsEndpoint `json:"podMetricsEndpoints"`
}

type podMetricsEndpoint struct {
	PortNumber *int32 `json:"portNumber,omitempty"`
	Path       string `json:"path,omitempty"`
	Interval   string `json:"interval,omitempty"`
}

// DeepCopyObject makes podMonitorObject a runtime.Object.
func (in *podMonitorObject) DeepCopyObject() runtime.Object {
	out := *in
	in.ObjectMeta.DeepCopyInto(&out.ObjectMeta)
	in.Spec.Selector.DeepCopyInto(&out.Spec.Selector)
	out.Spec.PodTargetLabels = append([]string(nil), in.Spec.PodTargetLabels...)
	out.Spec.PodMetricsEndpoints = make([]podMetricsEndpoint, len(in.Spec.PodMetricsEndpoints))
	for i, e := range in.Spec.PodMetricsEndpoints {
		if e.PortNumber != nil {
			e.PortNumber = ptrTo(*e.PortNumber)
		}
		out.Spec.PodMetricsEndpoints[i] = e
	}
	return &out
}
