package render

import (
	"github.com/inferno-ai/function-inferno/internal/resolve"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// Composition resource names of the NetworkPolicies.
const (
	ResourceNetworkPolicy     = "network-policy"
	ResourceNetworkPolicyPull = "network-policy-pull"
)

// LabelNamespaceName is the label Kubernetes puts on every namespace with
// its own name, which namespace selectors match.
const LabelNamespaceName = "kubernetes.io/metadata.name"

// serverPolicyName names the servers' NetworkPolicy: the claim's name,
// like its Service.
func serverPolicyName(s *resolve.Spec) string { return s.Name }

// pullPolicyName names the pull pods' NetworkPolicy. Claim names have no
// dots (they are DNS-1035 labels), so "<name>.pull" and a ModelCache's
// "<name>.cache-pull" are never another claim's, nor each other's.
func pullPolicyName(s *resolve.Spec) string {
	if s.Model.Framework == "" {
		return s.Name + ".cache-pull"
	}
	return s.Name + ".pull"
}

// ServerPolicy builds the NetworkPolicy of the servers of every
// version: ingress only from pods of the claim's namespace, the Gateway's
// and the metrics namespace. Egress is left alone. Kubelet probes come
// from the node, which NetworkPolicy implementations let through.
func ServerPolicy(s *resolve.Spec) *networkingv1.NetworkPolicy {
	from := make([]networkingv1.NetworkPolicyPeer, len(s.NetworkPolicy.From))
	for i, ns := range s.NetworkPolicy.From {
		// A namespace selector even for the claim's own: an empty pod
		// selector would be an empty object, which server-side apply drops.
		from[i] = networkingv1.NetworkPolicyPeer{NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{LabelNamespaceName: ns}}}
	}
	return &networkingv1.NetworkPolicy{
		TypeMeta:   metav1.TypeMeta{APIVersion: "networking.k8s.io/v1", Kind: "NetworkPolicy"},
		ObjectMeta: metav1.ObjectMeta{Name: serverPolicyName(s), Namespace: s.Namespace, Labels: s.Labels(s.Primary(), resolve.ComponentServer)},
		Spec: networkingv1.NetworkPolicySpec{
			// Every version's servers, by component; never the pull pods.
			PodSelector: metav1.LabelSelector{
				MatchLabels: map[string]string{resolve.LabelInstance: s.Name},
				MatchExpressions: []metav1.LabelSelectorRequirement{{
					Key: resolve.LabelComponent, Operator: metav1.LabelSelectorOpIn, Values: []string{resolve.ComponentServer, resolve.ComponentCanary},
				}},
			},
			PolicyTypes: []networkingv1.PolicyType{networkingv1.PolicyTypeIngress},
			Ingress:     []networkingv1.NetworkPolicyIngressRule{{From: from}},
		},
	}
}

// PullPolicy builds the NetworkPolicy of the pull pods: they accept
// no traffic at all (Ingress, no rule). Their egress, the download, is
// left alone.
func PullPolicy(s *resolve.Spec) *networkingv1.NetworkPolicy {
	return &networkingv1.NetworkPolicy{
		TypeMeta:   metav1.TypeMeta{APIVersion: "networking.k8s.io/v1", Kind: "NetworkPolicy"},
		ObjectMeta: metav1.ObjectMeta{Name: pullPolicyName(s), Namespace: s.Namespace, Labels: s.Labels(s.Primary(), resolve.ComponentPuller)},
		Spec: networkingv1.NetworkPolicySpec{
			PodSelector: metav1.LabelSelector{MatchLabels: map[string]string{resolve.LabelInstance: s.Name, resolve.LabelComponent: resolve.ComponentPuller}},
			PolicyTypes: []networkingv1.PolicyType{networkingv1.PolicyTypeIngress},
		},
	}
}

// NetworkPolicyReady reports whether a NetworkPolicy is ready:
//  1. it exists (the API server accepted it; whether it is enforced is
//     the CNI's, which reports nothing).
func NetworkPolicyReady(observed runtime.Object) bool { return Exists(observed) }
