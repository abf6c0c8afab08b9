package render

import (
	"slices"
	"strconv"

	"github.com/inferno-ai/function-inferno/internal/kinds/lws"
	"github.com/inferno-ai/function-inferno/internal/resolve"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
)

// Composition resource names of the NetworkPolicies.
const (
	ResourceNetworkPolicy     = "network-policy"
	ResourceNetworkPolicyPull = "network-policy-pull"
	// ResourceNetworkPolicyPicker is the endpoint picker's.
	ResourceNetworkPolicyPicker = "network-policy-picker"
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
// version (a group's leader and workers too). Each rule names its port:
//  1. the claim's namespace (its clients and the endpoint picker), the
//     Gateway's data plane and, for a claim that scales to zero through
//     KEDA's HTTP add-on, its interceptor reach the serving port only;
//  2. the metrics namespace reaches the metrics port (the serving port
//     when the runtime serves its metrics there), when the runtime has
//     metrics;
//  3. nothing else reaches any port: a group's Ray ports are its own
//     (GroupPolicy).
//
// Kubelet probes come from the node, which NetworkPolicy implementations
// let through. The servers reach out (Egress) only to:
//  1. the DNS namespace's pods on port 53, UDP and TCP (a query to the
//     DNS Service's ClusterIP meets the policy with the DNS pod's address,
//     once the service proxy has translated it);
//  2. each entry of input.networkPolicy.egress, on its ports;
//  3. nothing else: a group's own pods are GroupPolicy's. Replies to the
//     connections admitted above are not egress to a policy, whose
//     implementations track connections.
//
// A server needs no more: its weights and adapters are on its volume,
// pulled by Jobs; what calls it (clients, the picker, the interceptor,
// Prometheus) connects to it. Closed, code that runs in a server (from a
// tenant's weights or template, or a flaw of the runtime) reaches no
// service of the cluster, no origin and no cloud metadata endpoint.
func ServerPolicy(s *resolve.Spec) *networkingv1.NetworkPolicy {
	namespaces := s.NetworkPolicy.From
	// KEDA's HTTP interceptor forwards the requests of a claim that scales
	// to zero through it.
	if ic := s.NetworkPolicy.Interceptor; ic != "" && s.Autoscaling != nil && s.Autoscaling.ScaleToZero != nil &&
		s.Autoscaling.ScaleToZero.HTTPScaler != "" && !slices.Contains(namespaces, ic) {
		namespaces = append(namespaces[:len(namespaces):len(namespaces)], ic)
	}
	from := make([]networkingv1.NetworkPolicyPeer, len(namespaces))
	for i, ns := range namespaces {
		// A namespace selector even for the claim's own: an empty pod
		// selector would be an empty object, which server-side apply drops.
		from[i] = namespacePeer(ns)[0]
	}
	rules := []networkingv1.NetworkPolicyIngressRule{{From: from, Ports: tcpPort(servingPort(s))}}
	if m, port := s.NetworkPolicy.Metrics, metricsPort(s); m != "" && port != 0 {
		rules = append(rules, networkingv1.NetworkPolicyIngressRule{From: namespacePeer(m), Ports: tcpPort(port)})
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
			PolicyTypes: []networkingv1.PolicyType{networkingv1.PolicyTypeIngress, networkingv1.PolicyTypeEgress},
			Ingress:     rules,
			Egress:      serverEgress(s),
		},
	}
}

// dnsPort is the port DNS answers on, over UDP and (for long answers) TCP.
const dnsPort = 53

// serverEgress are the servers' egress rules: DNS, then the Input's
// entries in their order.
func serverEgress(s *resolve.Spec) []networkingv1.NetworkPolicyEgressRule {
	dns := intstr.FromInt32(dnsPort)
	rules := []networkingv1.NetworkPolicyEgressRule{{
		To: namespacePeer(s.NetworkPolicy.DNS),
		Ports: []networkingv1.NetworkPolicyPort{
			{Protocol: ptr.To(corev1.ProtocolUDP), Port: &dns},
			{Protocol: ptr.To(corev1.ProtocolTCP), Port: &dns},
		},
	}}
	for _, e := range s.NetworkPolicy.Egress {
		var to []networkingv1.NetworkPolicyPeer
		if e.CIDR != "" {
			to = []networkingv1.NetworkPolicyPeer{{IPBlock: &networkingv1.IPBlock{CIDR: e.CIDR, Except: e.Except}}}
		} else {
			to = namespacePeer(e.Namespace)
		}
		var ports []networkingv1.NetworkPolicyPort
		for _, p := range e.Ports {
			proto := p.Protocol
			if proto == "" {
				proto = corev1.ProtocolTCP
			}
			n := intstr.FromInt32(p.Port)
			ports = append(ports, networkingv1.NetworkPolicyPort{Protocol: ptr.To(proto), Port: &n})
		}
		rules = append(rules, networkingv1.NetworkPolicyEgressRule{To: to, Ports: ports})
	}
	return rules
}

// servingPort is the port the servers listen on (the container port
// PortName).
func servingPort(s *resolve.Spec) int32 { return *s.Runtime.Port }

// metricsPort is the port the runtime serves its metrics on: its
// metricsPort, else its serving port; 0 when it has no metrics
// (no metricsPath).
func metricsPort(s *resolve.Spec) int32 {
	switch {
	case s.Runtime.MetricsPath == "":
		return 0
	case s.Runtime.MetricsPort != nil:
		return *s.Runtime.MetricsPort
	}
	return servingPort(s)
}

// namespacePeer admits the pods of one namespace.
func namespacePeer(ns string) []networkingv1.NetworkPolicyPeer {
	return []networkingv1.NetworkPolicyPeer{{NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{LabelNamespaceName: ns}}}}
}

// tcpPort is one TCP port of a rule.
func tcpPort(n int32) []networkingv1.NetworkPolicyPort {
	p := intstr.FromInt32(n)
	return []networkingv1.NetworkPolicyPort{{Protocol: ptr.To(corev1.ProtocolTCP), Port: &p}}
}

// GroupPolicyResource is the composition resource name of group i's
// NetworkPolicy.
func GroupPolicyResource(i int32) string {
	return ResourceNetworkPolicy + "-group-" + strconv.Itoa(int(i))
}

// groupPolicyName names group i's NetworkPolicy. Claim names have no dots,
// so "<name>.group-<i>" is never another claim's policy.
func groupPolicyName(s *resolve.Spec, i int32) string {
	return s.Name + ".group-" + strconv.Itoa(int(i))
}

// GroupPolicy builds the NetworkPolicy of group i of the claim's
// LeaderWorkerSet: the pods of the group (the LWS pod webhook labels each
// with the set's name and its group's index) reach each other on every
// port, and no other pod reaches them but as ServerPolicy admits (the
// serving and metrics ports). Its rule names the group, not ports: the
// leader's Ray head, which has no authentication, listens on the preset's
// rayPort, and Ray's raylets, object managers and workers and the
// runtime's collective communication (NCCL, Gloo) on ports they choose at
// random; whoever reaches them runs code in the group. NetworkPolicy
// cannot say "the target's own group" in one rule, so each group has its
// own policy (GroupCount). Its egress rule is the same group: ServerPolicy
// closes the servers' egress, and the workers join the leader's Ray head
// and the runtime's collectives connect every pod of the group to every
// other, on those same random ports.
func GroupPolicy(s *resolve.Spec, i int32) *networkingv1.NetworkPolicy {
	group := map[string]string{lws.SetNameLabel: s.Primary().ServerName(s), lws.GroupIndexLabel: strconv.Itoa(int(i))}
	peers := func() []networkingv1.NetworkPolicyPeer {
		return []networkingv1.NetworkPolicyPeer{{PodSelector: &metav1.LabelSelector{MatchLabels: group}}}
	}
	return &networkingv1.NetworkPolicy{
		TypeMeta:   metav1.TypeMeta{APIVersion: "networking.k8s.io/v1", Kind: "NetworkPolicy"},
		ObjectMeta: metav1.ObjectMeta{Name: groupPolicyName(s, i), Namespace: s.Namespace, Labels: s.Labels(s.Primary(), resolve.ComponentServer)},
		Spec: networkingv1.NetworkPolicySpec{
			PodSelector: metav1.LabelSelector{MatchLabels: group},
			PolicyTypes: []networkingv1.PolicyType{networkingv1.PolicyTypeIngress, networkingv1.PolicyTypeEgress},
			Ingress:     []networkingv1.NetworkPolicyIngressRule{{From: peers()}},
			Egress:      []networkingv1.NetworkPolicyEgressRule{{To: peers()}},
		},
	}
}

// PullPolicy builds the NetworkPolicy of the pull pods: they accept
// no traffic at all (Ingress, no rule). Their egress, the download, is
// left alone: the origins are whatever the pullers' URIs name
// (input.policy.allowedURIHosts judges them by name, and a name's
// addresses change and are not a NetworkPolicy's to know), and a pull
// pod runs the preset's script, not the tenant's code; the weights it
// writes are run only by the servers, whose egress is closed.
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

// PickerPolicy builds the NetworkPolicy of the claim's endpoint picker: the
// Gateway's data plane calls its ext-proc port, the metrics namespace
// scrapes its metrics port, and nothing else reaches it (its health port
// is the kubelet's, from the node). It calls the servers, whose policy
// admits the claim's own namespace. Its egress is left alone: it must
// reach the servers and the API server (it watches the pool's pods), whose
// address is the cluster's to know, and it runs the platform's image
// (input.inferenceExtension), never a tenant's code or weights.
func PickerPolicy(s *resolve.Spec) *networkingv1.NetworkPolicy {
	gw := s.NetworkPolicy.Gateway
	if gw == "" {
		gw = s.Gateway.Namespace
	}
	rules := []networkingv1.NetworkPolicyIngressRule{{From: namespacePeer(gw), Ports: tcpPort(int32(pickerGRPCPort))}}
	if m := s.NetworkPolicy.Metrics; m != "" {
		rules = append(rules, networkingv1.NetworkPolicyIngressRule{From: namespacePeer(m), Ports: tcpPort(pickerMetrics)})
	}
	return &networkingv1.NetworkPolicy{
		TypeMeta:   metav1.TypeMeta{APIVersion: "networking.k8s.io/v1", Kind: "NetworkPolicy"},
		ObjectMeta: pickerMeta(s),
		Spec: networkingv1.NetworkPolicySpec{
			PodSelector: metav1.LabelSelector{MatchLabels: pickerSelector(s)},
			PolicyTypes: []networkingv1.PolicyType{networkingv1.PolicyTypeIngress},
			Ingress:     rules,
		},
	}
}
