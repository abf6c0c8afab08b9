package resolve

import (
	"fmt"
	"slices"
	"strings"

	"github.com/inferno-ai/function-inferno/input/v1beta1"
	"k8s.io/apimachinery/pkg/util/validation"
)

// networkPolicy is the Input's NetworkPolicy settings, checked: the
// namespaces besides the claim's own whose pods may reach the servers.
type networkPolicy struct {
	// From are the namespaces the servers accept requests from on their
	// serving port, the claim's own first, then the Gateway's, without
	// repeats. The metrics namespace is Metrics, on the metrics port.
	From []string
	// Interceptor is the namespace of KEDA's HTTP add-on, whose
	// interceptor the servers of a claim that scales to zero through it
	// also accept; empty without the add-on.
	Interceptor string
	// Gateway and Metrics are the Gateway's data plane's namespace and
	// the metrics namespace as the Input names them (empty for none): the
	// endpoint picker accepts the one on its ext-proc port, the other on
	// its metrics port.
	Gateway, Metrics string
	// DNS is the namespace of the cluster's DNS server, which the servers
	// reach on port 53.
	DNS string
	// Egress is input.networkPolicy.egress, checked: what else the
	// servers reach.
	Egress []v1beta1.EgressRule
}

// resolveNetworkPolicy reads input.networkPolicy; nil when it is off.
// The Gateway's namespace defaults to input.traffic.gateway.namespace,
// the DNS namespace to kube-system.
func resolveNetworkPolicy(namespace string, in *v1beta1.Input, errs *FieldErrors) *networkPolicy {
	np := in.NetworkPolicy
	if np == nil || !np.Enabled {
		return nil
	}
	gw := np.GatewayNamespace
	if gw == "" && in.Traffic != nil && in.Traffic.Gateway != nil {
		gw = in.Traffic.Gateway.Namespace
	}
	for _, m := range validation.IsDNS1123Label(gw) {
		if gw != "" {
			errs.Add("input.networkPolicy.gatewayNamespace", "%q is not a namespace name: %s", gw, m)
		}
	}
	if np.MetricsNamespace != "" {
		for _, m := range validation.IsDNS1123Label(np.MetricsNamespace) {
			errs.Add("input.networkPolicy.metricsNamespace", "%q is not a namespace name: %s", np.MetricsNamespace, m)
		}
	}
	dns := np.DNSNamespace
	if dns == "" {
		dns = v1beta1.DefaultDNSNamespace
	}
	for _, m := range validation.IsDNS1123Label(dns) {
		errs.Add("input.networkPolicy.dnsNamespace", "%q is not a namespace name: %s", dns, m)
	}
	out := &networkPolicy{From: []string{namespace}, Gateway: gw, Metrics: np.MetricsNamespace, DNS: dns, Egress: resolveEgress(np.Egress, errs)}
	if gw != "" && !slices.Contains(out.From, gw) {
		out.From = append(out.From, gw)
	}
	if k, ok := in.ScaleToZero(); ok && k.HTTPAddOn != nil {
		out.Interceptor = interceptorNamespace(np.KEDANamespace, k.HTTPAddOn.ScalerAddress, errs)
	}
	return out
}

// interceptorNamespace is the namespace the servers admit KEDA's HTTP
// interceptor from. The add-on runs its interceptor and its external
// scaler in one namespace (the chart's release namespace), and
// input.keda.httpAddOn.scalerAddress names the scaler as a Service, so the
// namespace is read from there: a policy admitting another namespace than
// the interceptor's would leave a claim at zero unanswered while it reads
// ready. input.networkPolicy.kedaNamespace, when set, must agree; it is
// required when the address names no namespace (a bare Service name, which
// resolves in KEDA's own namespace, unknown here, or a name outside the
// cluster's Service DNS).
func interceptorNamespace(set, scaler string, errs *FieldErrors) string {
	from := scalerNamespace(scaler)
	switch {
	case set != "":
		for _, m := range validation.IsDNS1123Label(set) {
			errs.Add("input.networkPolicy.kedaNamespace", "%q is not a namespace name: %s", set, m)
			return ""
		}
		if from != "" && from != set {
			errs.Add("input.networkPolicy.kedaNamespace", "%q disagrees with the add-on's scaler, %s (input.keda.httpAddOn.scalerAddress), which runs in namespace %q beside the interceptor; the servers would admit the wrong namespace and a claim at zero would never be answered: set it to %q, or leave it out", set, scaler, from, from)
		}
		return set
	case from == "":
		errs.Add("input.networkPolicy.kedaNamespace", "is required: the add-on's scaler, %s (input.keda.httpAddOn.scalerAddress), names no namespace, so the function cannot tell where the interceptor runs; set it to the add-on's namespace, or name the scaler as <service>.<namespace>:<port>", scaler)
	}
	return from
}

// scalerNamespace is the namespace of a Service address in the cluster's
// DNS (<service>.<namespace>[.svc[.<cluster domain>]]:<port>); "" when the
// address names none.
func scalerNamespace(addr string) string {
	host, _, ok := strings.Cut(addr, ":")
	if !ok {
		return ""
	}
	labels := strings.Split(host, ".")
	switch {
	case len(labels) == 2:
	case len(labels) >= 3 && labels[2] == "svc":
	default:
		return ""
	}
	if len(validation.IsDNS1123Label(labels[1])) > 0 {
		return ""
	}
	return labels[1]
}

// checkMetricsNamespace refuses a claim whose servers Prometheus reads
// under a NetworkPolicy that admits no metrics namespace: the servers'
// policy admits Prometheus only from input.networkPolicy.metricsNamespace,
// so without one the metrics would never arrive, and the claim would be
// neither refused nor served as it asked. Prometheus reads the servers for
// a PodMonitor (pm), for KEDA's query to scale to zero, and for an
// autoscaler on the runtime's concurrency metric, a Pods metric that a
// custom-metrics adapter (prometheus-adapter, say) answers from
// Prometheus. Refused rather than guessed: a namespace admitted by its
// name alone is open to whoever can create it.
func checkMetricsNamespace(np *networkPolicy, in *v1beta1.Input, pm *podMonitor, a *Autoscaling, errs *FieldErrors) {
	if np == nil || in.NetworkPolicy.MetricsNamespace != "" {
		return
	}
	scaleToZero := a != nil && a.ScaleToZero != nil
	concurrency := a != nil && a.ScaleToZero == nil && a.Concurrency != nil
	var readers []string
	if pm != nil {
		readers = append(readers, "scraped for input.monitoring.podMonitor")
	}
	if scaleToZero && a.Metric != "" {
		readers = append(readers, "queried by KEDA to scale to zero")
	}
	if concurrency {
		readers = append(readers, fmt.Sprintf("read for the autoscaler's concurrency metric %s (spec.autoscaling.targetConcurrency; a custom-metrics adapter answers it from Prometheus)", a.Metric))
	}
	if len(readers) == 0 {
		return
	}
	fix := "name the namespace Prometheus runs in"
	if concurrency && pm == nil {
		// Only the claim's autoscaling target needs Prometheus: its
		// author can do without.
		fix += "; or, in the claim, scale on CPU alone (spec.autoscaling.targetCPUUtilization without targetConcurrency)"
	}
	errs.Add("input.networkPolicy.metricsNamespace", "is required for this claim: its servers' metrics are %s, and the servers' NetworkPolicy admits Prometheus only from this namespace; %s", strings.Join(readers, " and "), fix)
}
