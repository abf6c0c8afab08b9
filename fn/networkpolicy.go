package fn

import (
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/inferno-ai/function-inferno/input/v1beta1"
)

// Composition resource names of the NetworkPolicies.
const (
	resourceNetworkPolicy     = "network-policy"
	resourceNetworkPolicyPull = "network-policy-pull"
)

// labelNamespaceName is the label Kubernetes puts on every namespace with
// its own name, which namespace selectors match.
const labelNamespaceName = "kubernetes.io/metadata.name"

// networkPolicy is the Input's NetworkPolicy settings, checked: the
// namespaces besides the claim's own whose pods may reach the servers.
type networkPolicy struct {
	// From are the namespaces the servers accept traffic from, the claim's
	// own first, without repeats.
	From []string
}

// resolveNetworkPolicy reads input.networkPolicy; nil when it is off.
// The Gateway's namespace defaults to input.traffic.gateway.namespace.
func resolveNetworkPolicy(namespace string, in *v1beta1.Input, errs *fieldErrors) *networkPolicy {
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
			errs.add("input.networkPolicy.gatewayNamespace", "%q is not a namespace name: %s", gw, m)
		}
	}
	if np.MetricsNamespace != "" {
		for _, m := range validation.IsDNS1123Label(np.MetricsNamespace) {
			errs.add("input.networkPolicy.metricsNamespace", "%q is not a namespace name: %s", np.MetricsNamespace, m)
		}
	}
	out := &networkPolicy{From: []string{namespace}}
	for _, ns := range []string{gw, np.MetricsNamespace} {
		if ns != "" && !contains(out.From, ns) {
			out.From = append(out.From, ns)
		}
	}
	return out
}

// serverPolicyName names the servers' NetworkPolicy: the claim's name,
// like its Service.
func serverPolicyName(s *resolvedSpec) string { return s.Name }

// pullPolicyName names the pull pods' NetworkPolicy. Claim names have no
// dots (they are DNS-1035 labels), so "<name>.pull" and a ModelCache's
// "<name>.cache-pull" are never another claim's, nor each other's.
func pullPolicyName(s *resolvedSpec) string {
	if s.Model.Framework == "" {
		return s.Name + ".cache-pull"
	}
	return s.Name + ".pull"
}

// renderServerPolicy builds the NetworkPolicy of the servers of every
// version: ingress only from pods of the claim's namespace, the Gateway's
// and the metrics namespace. Egress is left alone. Kubelet probes come
// from the node, which NetworkPolicy implementations let through.
func renderServerPolicy(s *resolvedSpec) *networkingv1.NetworkPolicy {
	from := make([]networkingv1.NetworkPolicyPeer, len(s.NetworkPolicy.From))
	for i, ns := range s.NetworkPolicy.From {
		// A namespace selector even for the claim's own: an empty pod
		// selector would be an empty object, which server-side apply drops.
		from[i] = networkingv1.NetworkPolicyPeer{NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{labelNamespaceName: ns}}}
	}
	return &networkingv1.NetworkPolicy{
		TypeMeta:   metav1.TypeMeta{APIVersion: "networking.k8s.io/v1", Kind: "NetworkPolicy"},
		ObjectMeta: metav1.ObjectMeta{Name: serverPolicyName(s), Namespace: s.Namespace, Labels: s.labels(s.primary(), componentServer)},
		Spec: networkingv1.NetworkPolicySpec{
			// Every version's servers, by component; never the pull pods.
			PodSelector: metav1.LabelSelector{
				MatchLabels: map[string]string{labelInstance: s.Name},
				MatchExpressions: []metav1.LabelSelectorRequirement{{
					Key: labelComponent, Operator: metav1.LabelSelectorOpIn, Values: []string{componentServer, componentCanary},
				}},
			},
			PolicyTypes: []networkingv1.PolicyType{networkingv1.PolicyTypeIngress},
			Ingress:     []networkingv1.NetworkPolicyIngressRule{{From: from}},
		},
	}
}

// renderPullPolicy builds the NetworkPolicy of the pull pods: they accept
// no traffic at all (Ingress, no rule). Their egress, the download, is
// left alone.
func renderPullPolicy(s *resolvedSpec) *networkingv1.NetworkPolicy {
	return &networkingv1.NetworkPolicy{
		TypeMeta:   metav1.TypeMeta{APIVersion: "networking.k8s.io/v1", Kind: "NetworkPolicy"},
		ObjectMeta: metav1.ObjectMeta{Name: pullPolicyName(s), Namespace: s.Namespace, Labels: s.labels(s.primary(), componentPuller)},
		Spec: networkingv1.NetworkPolicySpec{
			PodSelector: metav1.LabelSelector{MatchLabels: map[string]string{labelInstance: s.Name, labelComponent: componentPuller}},
			PolicyTypes: []networkingv1.PolicyType{networkingv1.PolicyTypeIngress},
		},
	}
}

// networkPolicyReady reports whether a NetworkPolicy is ready:
//  1. it exists (the API server accepted it; whether it is enforced is
//     the CNI's, which reports nothing).
func networkPolicyReady(observed bool) bool { return observed }
