package resolve

import (
	"regexp"
	"sort"

	"github.com/inferno-ai/function-inferno/input/v1beta1"
	"k8s.io/apimachinery/pkg/util/validation"
)

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
func resolvePodMonitor(rt v1beta1.RuntimePreset, in *v1beta1.Input, errs *FieldErrors) *podMonitor {
	if in.Monitoring == nil || in.Monitoring.PodMonitor == nil || !in.Monitoring.PodMonitor.Enabled {
		return nil
	}
	pm := in.Monitoring.PodMonitor
	const field = "input.monitoring.podMonitor"
	if !promDuration.MatchString(pm.Interval) && pm.Interval != "" {
		errs.Add(field+".interval", "%q is not a Prometheus duration; write e.g. 30s or 1m", pm.Interval)
	}
	keys := make([]string, 0, len(pm.Labels))
	for k := range pm.Labels {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		for _, m := range validation.IsQualifiedName(k) {
			errs.Add(field+".labels", "%q is not a label key: %s", k, m)
		}
		for _, m := range validation.IsValidLabelValue(pm.Labels[k]) {
			errs.Add(field+".labels["+k+"]", "%q is not a label value: %s", pm.Labels[k], m)
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
