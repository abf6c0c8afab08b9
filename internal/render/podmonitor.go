package render

import (
	"github.com/inferno-ai/function-inferno/internal/kinds/monitoring"
	"github.com/inferno-ai/function-inferno/internal/resolve"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// ResourcePodMonitor is the composition resource name of the PodMonitor.
const ResourcePodMonitor = "pod-monitor"

// PodMonitor builds the claim's PodMonitor: the Prometheus
// Operator scrapes every server of every version of the claim (not its
// pull pods), in the claim's namespace only, on the runtime's metrics
// port and path, and labels the series with the server's version.
// A PodMonitor has no status worth waiting for (the operator writes none
// unless a feature gate asks it to): ready once observed.
func PodMonitor(s *resolve.Spec) *monitoring.PodMonitor {
	pm := s.PodMonitor
	labels := s.Labels(&s.Versions[0], resolve.ComponentServer)
	delete(labels, resolve.LabelVersion)
	for k, v := range pm.Labels {
		labels[k] = v
	}
	return &monitoring.PodMonitor{
		TypeMeta:   metav1.TypeMeta{APIVersion: monitoring.APIVersion, Kind: monitoring.Kind},
		ObjectMeta: metav1.ObjectMeta{Name: s.Name, Namespace: s.Namespace, Labels: labels},
		Spec: monitoring.PodMonitorSpec{
			Selector: metav1.LabelSelector{
				MatchLabels: map[string]string{resolve.LabelInstance: s.Name},
				MatchExpressions: []metav1.LabelSelectorRequirement{{
					Key: resolve.LabelComponent, Operator: metav1.LabelSelectorOpIn, Values: []string{resolve.ComponentServer, resolve.ComponentCanary},
				}},
			},
			PodTargetLabels:     []string{resolve.LabelVersion},
			PodMetricsEndpoints: []monitoring.PodMetricsEndpoint{{PortNumber: ptr.To(pm.Port), Path: pm.Path, Interval: pm.Interval}},
		},
	}
}
