package invariants

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// The invariants every composition holds, whatever the claim and whatever
// the Input turns on. Each check returns what breaks it; a violation's
// Rule is stable across claims (failures are grouped by it), its Detail
// names the objects.

// violation is one way a composition breaks an invariant.
type violation struct {
	Rule   string
	Detail string
}

func (v violation) String() string { return v.Rule + ": " + v.Detail }

// check is one named invariant.
type check struct {
	Name string
	Run  func(*composition) ([]violation, error)
}

// checks are every invariant, in the order they are reported.
var checks = []check{
	{"referencesResolve", referencesResolve},
	{"jobsCanStart", jobsCanStart},
	{"flowsAdmitted", flowsAdmitted},
	{"podsRestricted", podsRestricted},
	{"sourcesAllowed", sourcesAllowed},
	{"routesOwnHost", routesOwnHost},
}

// reference is an object a pod or another object names.
type reference struct {
	Kind, Name string
	Where      string // what names it, for the message
}

// podReferences are the objects a pod template needs to start: its
// ServiceAccount, the PVCs, ConfigMaps and Secrets of its volumes, the
// Secrets and ConfigMaps its environment reads (unless optional), its
// image pull Secrets.
func podReferences(t corev1.PodTemplateSpec) []reference {
	var out []reference
	sa := t.Spec.ServiceAccountName
	if sa == "" {
		sa = "default"
	}
	out = append(out, reference{"ServiceAccount", sa, "serviceAccountName"})
	for _, v := range t.Spec.Volumes {
		where := "volume " + v.Name
		switch {
		case v.PersistentVolumeClaim != nil:
			out = append(out, reference{"PersistentVolumeClaim", v.PersistentVolumeClaim.ClaimName, where})
		case v.ConfigMap != nil && !isTrue(v.ConfigMap.Optional):
			out = append(out, reference{"ConfigMap", v.ConfigMap.Name, where})
		case v.Secret != nil && !isTrue(v.Secret.Optional):
			out = append(out, reference{"Secret", v.Secret.SecretName, where})
		case v.Projected != nil:
			for _, s := range v.Projected.Sources {
				if s.ConfigMap != nil && !isTrue(s.ConfigMap.Optional) {
					out = append(out, reference{"ConfigMap", s.ConfigMap.Name, where})
				}
				if s.Secret != nil && !isTrue(s.Secret.Optional) {
					out = append(out, reference{"Secret", s.Secret.Name, where})
				}
			}
		}
	}
	for _, c := range slices.Concat(t.Spec.InitContainers, t.Spec.Containers) {
		for _, e := range c.Env {
			if f := e.ValueFrom; f != nil {
				if r := f.SecretKeyRef; r != nil && !isTrue(r.Optional) {
					out = append(out, reference{"Secret", r.Name, "container " + c.Name + " env " + e.Name})
				}
				if r := f.ConfigMapKeyRef; r != nil && !isTrue(r.Optional) {
					out = append(out, reference{"ConfigMap", r.Name, "container " + c.Name + " env " + e.Name})
				}
			}
		}
		for _, e := range c.EnvFrom {
			if r := e.SecretRef; r != nil && !isTrue(r.Optional) {
				out = append(out, reference{"Secret", r.Name, "container " + c.Name + " envFrom"})
			}
			if r := e.ConfigMapRef; r != nil && !isTrue(r.Optional) {
				out = append(out, reference{"ConfigMap", r.Name, "container " + c.Name + " envFrom"})
			}
		}
	}
	for _, s := range t.Spec.ImagePullSecrets {
		out = append(out, reference{"Secret", s.Name, "imagePullSecrets"})
	}
	for _, c := range t.Spec.ResourceClaims {
		if c.ResourceClaimTemplateName != nil {
			out = append(out, reference{"ResourceClaimTemplate", *c.ResourceClaimTemplateName, "resourceClaims " + c.Name})
		}
	}
	// A container's claim must be one of the pod's (the API server
	// refuses the pod otherwise): PodResourceClaim stands for the pod's
	// own list, which resolves names the pod declares.
	for _, c := range slices.Concat(t.Spec.InitContainers, t.Spec.Containers) {
		for _, rc := range c.Resources.Claims {
			if !slices.ContainsFunc(t.Spec.ResourceClaims, func(p corev1.PodResourceClaim) bool { return p.Name == rc.Name }) {
				out = append(out, reference{"PodResourceClaim", rc.Name, "container " + c.Name + " resources.claims"})
			}
		}
	}
	return out
}

func isTrue(b *bool) bool { return b != nil && *b }

// referencesResolve: every object a rendered server or picker pod, a
// RoleBinding, a route, a pool or an autoscaler names is in the same
// composition, or named by the claim or the Input as existing. (Pull
// Jobs are jobsCanStart's.)
func referencesResolve(c *composition) ([]violation, error) {
	var out []violation
	missing := func(from string, r reference) {
		out = append(out, violation{"unresolved " + r.Kind, fmt.Sprintf("%s names %s %s (%s), which is neither composed nor named as existing", from, r.Kind, r.Name, r.Where)})
	}
	pods, err := c.pods()
	if err != nil {
		return nil, err
	}
	for _, p := range pods {
		if p.Role == rolePuller {
			continue
		}
		for _, r := range podReferences(p.PodTemplateSpec) {
			if !c.resolves(r.Kind, r.Name) {
				missing(p.Owner, r)
			}
		}
	}
	for _, o := range c.ofKind("RoleBinding") {
		rb, err := decode[rbacv1.RoleBinding](o.U)
		if err != nil {
			return nil, err
		}
		for _, s := range rb.Subjects {
			if s.Kind == rbacv1.ServiceAccountKind && (s.Namespace == "" || s.Namespace == c.Namespace) && !c.resolves("ServiceAccount", s.Name) {
				missing(key(o.Kind, o.Name), reference{"ServiceAccount", s.Name, "subjects"})
			}
		}
		if rb.RoleRef.Kind == "Role" && !c.has("Role", rb.RoleRef.Name) {
			missing(key(o.Kind, o.Name), reference{"Role", rb.RoleRef.Name, "roleRef"})
		}
	}
	for _, o := range c.ofKind("HTTPRoute") {
		rules, _ := nested(o.U, "spec", "rules").([]any)
		for _, r := range rules {
			refs, _ := nested(r, "backendRefs").([]any)
			for _, b := range refs {
				kind := nestedString(b, "kind")
				if kind == "" {
					kind = "Service"
				}
				if ns := nestedString(b, "namespace"); ns == "" || ns == c.Namespace {
					if name := nestedString(b, "name"); !c.has(kind, name) {
						missing(key(o.Kind, o.Name), reference{kind, name, "backendRefs"})
					}
				}
			}
		}
	}
	for _, o := range c.ofKind("InferencePool") {
		if name := nestedString(o.U, "spec", "endpointPickerRef", "name"); !c.has("Service", name) {
			missing(key(o.Kind, o.Name), reference{"Service", name, "endpointPickerRef"})
		}
	}
	for _, kind := range []string{"HorizontalPodAutoscaler", "ScaledObject", "HTTPScaledObject"} {
		for _, o := range c.ofKind(kind) {
			target := nestedString(o.U, "spec", "scaleTargetRef", "kind")
			if target == "" {
				target = "Deployment"
			}
			if name := nestedString(o.U, "spec", "scaleTargetRef", "name"); !c.has(target, name) {
				missing(key(o.Kind, o.Name), reference{target, name, "scaleTargetRef"})
			}
			if svc := nestedString(o.U, "spec", "scaleTargetRef", "service"); svc != "" && !c.has("Service", svc) {
				missing(key(o.Kind, o.Name), reference{"Service", svc, "scaleTargetRef.service"})
			}
		}
	}
	return out, nil
}

// jobsCanStart: every pull Job the servers wait for can start: its
// ServiceAccount is composed, default, or named by the Input, and its
// volumes and Secrets resolve; when one does not, a condition of the
// claim names it.
func jobsCanStart(c *composition) ([]violation, error) {
	var out []violation
	for _, o := range c.ofKind("Job") {
		job, err := decode[batchv1.Job](o.U)
		if err != nil {
			return nil, err
		}
		for _, r := range podReferences(job.Spec.Template) {
			if c.resolves(r.Kind, r.Name) || c.reported(r.Name) {
				continue
			}
			out = append(out, violation{"Job cannot start: unresolved " + r.Kind, fmt.Sprintf("Job %s names %s %s (%s), which is neither composed nor named as existing, and no condition says so", job.Name, r.Kind, r.Name, r.Where)})
		}
	}
	return out, nil
}

// scraped says whether Prometheus reads the servers' metrics: for a
// PodMonitor, for a ScaledObject's Prometheus query, or for an autoscaler
// on a Pods metric (the runtime's concurrency gauge, which a
// custom-metrics adapter answers from Prometheus).
func (c *composition) scraped() (bool, error) {
	if len(c.ofKind("PodMonitor")) > 0 || len(c.ofKind("ScaledObject")) > 0 {
		return true, nil
	}
	for _, o := range c.ofKind("HorizontalPodAutoscaler") {
		h, err := decode[autoscalingv2.HorizontalPodAutoscaler](o.U)
		if err != nil {
			return false, err
		}
		for _, m := range h.Spec.Metrics {
			if m.Type == autoscalingv2.PodsMetricSourceType {
				return true, nil
			}
		}
	}
	return false, nil
}

// flowsAdmitted: with the Input's NetworkPolicy on, every pod the function
// renders is selected by a NetworkPolicy; every flow an enabled feature
// needs is admitted on its port (the claim's namespace and the Gateway's
// to the servers' serving port, the endpoint picker to the servers and the
// Gateway to the picker, the metrics namespace to the metrics ports when
// something scrapes them, KEDA's HTTP add-on's interceptor to the servers,
// a multi-node group's leader and workers to each other); no policy
// admits a source no feature needs; every rule names its ports, but a
// rule whose peers are one LeaderWorkerSet group's pods alone (Ray and
// NCCL listen on ports of their own choosing); and a group's ports other
// than the serving port (the Ray head's) are reached by no namespace as a
// whole and by no other group. A flow between pods of the composition must
// be let out of its source too; and the servers reach out to nothing but
// DNS, their group and the Input's egress entries (serverEgressClosed).
func flowsAdmitted(c *composition) ([]violation, error) {
	np := c.Input.NetworkPolicy
	if np == nil || !np.Enabled {
		return nil, nil
	}
	pods, err := c.pods()
	if err != nil {
		return nil, err
	}
	var policies []*networkingv1.NetworkPolicy
	for _, o := range c.ofKind("NetworkPolicy") {
		p, err := decode[networkingv1.NetworkPolicy](o.U)
		if err != nil {
			return nil, err
		}
		policies = append(policies, p)
	}
	ns := c.flowNamespaces()
	var out []violation
	for _, p := range pods {
		if len(selecting(policies, c.Namespace, p.Labels)) == 0 {
			out = append(out, violation{"pod selected by no NetworkPolicy", fmt.Sprintf("the %s pods of %s are selected by no NetworkPolicy", p.Role, p.Owner)})
		}
	}
	need := func(f flow) {
		if !admitted(policies, c.Namespace, f) {
			out = append(out, violation{"flow not admitted: " + f.Rule, f.String()})
		}
	}
	var picker *podTemplate
	for i := range pods {
		if pods[i].Role == rolePicker {
			picker = &pods[i]
		}
	}
	scraped, err := c.scraped()
	if err != nil {
		return nil, err
	}
	if scraped && ns.Metrics == "" {
		out = append(out, violation{"flow not admitted: Prometheus → servers", "the servers' metrics are scraped (a PodMonitor, a ScaledObject's Prometheus query, or an autoscaler's Pods metric) but no metrics namespace is admitted: input.networkPolicy.metricsNamespace is empty"})
	}
	for i := range pods {
		p := &pods[i]
		switch p.Role {
		case roleServer, roleLeader:
			for _, port := range c.servingPorts(p) {
				need(flow{"claim namespace → servers", ns.Claim, nil, p, port})
				if ns.Gateway != "" {
					need(flow{"gateway → servers", ns.Gateway, nil, p, port})
				}
				if picker != nil {
					need(flow{"picker → servers", ns.Claim, picker.Labels, p, port})
				}
				// Prometheus reads the serving port unless a PodMonitor
				// names the port the metrics are on (Triton's 8002).
				if scraped && ns.Metrics != "" && len(c.metricsPorts(p)) == 0 {
					need(flow{"Prometheus → servers", ns.Metrics, nil, p, port})
				}
			}
			for _, port := range c.metricsPorts(p) {
				if ns.Metrics != "" {
					need(flow{"Prometheus → servers", ns.Metrics, nil, p, port})
				}
			}
			for _, port := range c.interceptorPorts(p) {
				need(flow{"KEDA HTTP interceptor → servers", ns.KEDA, nil, p, port})
			}
		case rolePicker:
			for _, port := range c.pickerPorts(p, "ext-proc") {
				need(flow{"gateway → picker", ns.gatewayOrClaim(), nil, p, port})
			}
			if ns.Metrics != "" {
				for _, port := range c.pickerPorts(p, "metrics") {
					need(flow{"Prometheus → picker", ns.Metrics, nil, p, port})
				}
			}
		}
		if p.Role == roleLeader || p.Role == roleWorker {
			for _, q := range pods {
				if q.Owner == p.Owner || !strings.HasPrefix(q.Owner, strings.SplitN(p.Owner, " ", 2)[0]+" ") {
					continue
				}
				for _, cp := range containerPorts(p.PodTemplateSpec) {
					need(flow{"group ↔ group", ns.Claim, q.Labels, p, intstr.FromInt32(cp.ContainerPort)})
				}
			}
			// The same pod in the next group, and every namespace a
			// feature admits, as a whole.
			other := maps.Clone(p.Labels)
			other[lwsGroupIndexLabel] = "1"
			serving := c.servingPorts(p)
			for _, cp := range containerPorts(p.PodTemplateSpec) {
				port := intstr.FromInt32(cp.ContainerPort)
				if slices.Contains(serving, port) || slices.Contains(serving, intstr.FromString(cp.Name)) {
					continue
				}
				outside := []flow{{"another group → group", ns.Claim, other, p, port}}
				for _, n := range c.allowedSources(*p, ns) {
					outside = append(outside, flow{"namespace → group", n, nil, p, port})
				}
				// The group's ingress alone is judged: its isolation must
				// not rest on what other pods' egress happens to be.
				for _, f := range outside {
					if admittedIn(policies, c.Namespace, f) {
						out = append(out, violation{"group port reachable from outside the group: " + f.Rule, strings.Replace(f.String(), "is not admitted", "is admitted", 1)})
					}
				}
			}
		}
	}
	// Every rule names its ports, but a group's own.
	for _, pol := range policies {
		for _, r := range pol.Spec.Ingress {
			if len(r.Ports) == 0 && len(r.From) > 0 && !groupPeersOnly(r.From) {
				out = append(out, violation{"rule names no ports", fmt.Sprintf("NetworkPolicy %s admits %s on every port", pol.Name, peerString(r.From[0]))})
			}
		}
	}
	// No other: every source a policy admits is one a feature needs.
	for _, p := range pods {
		allowed := c.allowedSources(p, ns)
		for _, pol := range selecting(policies, c.Namespace, p.Labels) {
			for _, r := range pol.Spec.Ingress {
				if len(r.From) == 0 {
					out = append(out, violation{"admits a source no feature needs", fmt.Sprintf("NetworkPolicy %s admits every source to the %s pods of %s", pol.Name, p.Role, p.Owner)})
				}
				for _, peer := range r.From {
					src, ok := peerNamespace(peer, pol.Namespace)
					if !ok || !slices.Contains(allowed, src) {
						out = append(out, violation{"admits a source no feature needs", fmt.Sprintf("NetworkPolicy %s admits %s to the %s pods of %s; the features on need only %v", pol.Name, peerString(peer), p.Role, p.Owner, allowed)})
					}
				}
			}
		}
	}
	out = append(out, serverEgressClosed(c, pods, policies)...)
	return out, nil
}

// serverEgressClosed: the servers (a group's leaders and workers too) are
// selected for egress, and reach out only to the DNS namespace on port 53,
// their own group's pods, and the entries of input.networkPolicy.egress
// as written; a rule with no destination (every one) is a violation.
func serverEgressClosed(c *composition, pods []podTemplate, policies []*networkingv1.NetworkPolicy) []violation {
	np := c.Input.NetworkPolicy
	dns := np.DNSNamespace
	if dns == "" {
		dns = "kube-system"
	}
	listed := func(peer networkingv1.NetworkPolicyPeer, ports []networkingv1.NetworkPolicyPort) bool {
		for _, e := range np.Egress {
			var want []int32
			for _, p := range e.Ports {
				want = append(want, p.Port)
			}
			var got []int32
			for _, p := range ports {
				got = append(got, p.Port.IntVal)
			}
			if !slices.Equal(want, got) {
				continue
			}
			if e.CIDR != "" && peer.IPBlock != nil && peer.IPBlock.CIDR == e.CIDR && slices.Equal(peer.IPBlock.Except, e.Except) {
				return true
			}
			if n, ok := peerNamespace(peer, ""); e.Namespace != "" && peer.PodSelector == nil && ok && n == e.Namespace {
				return true
			}
		}
		return false
	}
	var out []violation
	for _, p := range pods {
		if p.Role != roleServer && p.Role != roleLeader && p.Role != roleWorker {
			continue
		}
		sel := selectingFor(policies, c.Namespace, p.Labels, networkingv1.PolicyTypeEgress)
		if len(sel) == 0 {
			out = append(out, violation{"server egress open", fmt.Sprintf("the %s pods of %s are selected by no NetworkPolicy for egress: they reach whatever the node reaches", p.Role, p.Owner)})
		}
		for _, pol := range sel {
			for _, r := range pol.Spec.Egress {
				if len(r.To) == 0 {
					out = append(out, violation{"server egress open", fmt.Sprintf("NetworkPolicy %s lets the %s pods of %s reach every destination", pol.Name, p.Role, p.Owner)})
				}
				for _, peer := range r.To {
					n, ok := peerNamespace(peer, pol.Namespace)
					onDNS := len(r.Ports) > 0
					for _, port := range r.Ports {
						onDNS = onDNS && port.Port != nil && port.Port.IntVal == 53 && port.EndPort == nil
					}
					switch {
					case ok && n == dns && peer.PodSelector == nil && onDNS:
					case groupPeersOnly([]networkingv1.NetworkPolicyPeer{peer}):
					case listed(peer, r.Ports):
					default:
						out = append(out, violation{"server egress beyond DNS, the group and input.networkPolicy.egress", fmt.Sprintf("NetworkPolicy %s lets the %s pods of %s reach %s on %v", pol.Name, p.Role, p.Owner, peerString(peer), r.Ports)})
					}
				}
			}
		}
	}
	return out
}

// groupPeersOnly says every peer is the pods of one LeaderWorkerSet group
// of the policy's namespace: a pod selector on the set's name and the
// group's index, and nothing else.
func groupPeersOnly(from []networkingv1.NetworkPolicyPeer) bool {
	for _, peer := range from {
		if peer.NamespaceSelector != nil || peer.IPBlock != nil || peer.PodSelector == nil {
			return false
		}
		l := peer.PodSelector.MatchLabels
		if l[lwsSetNameLabel] == "" || l[lwsGroupIndexLabel] == "" {
			return false
		}
	}
	return true
}

// routesOwnHost: every HTTPRoute names hostnames, each
// "<route>.<namespace>.<domain>", the route named after its claim. A
// claim's name and a namespace have no dots, so two claims' hostnames
// differ (equal hostnames have as many labels, hence the same name,
// namespace and domain): no two claims' routes match the same requests,
// whichever Gateway and Input they share. A route without hostnames
// matches every request on its Gateway.
func routesOwnHost(c *composition) ([]violation, error) {
	var out []violation
	for _, o := range c.ofKind("HTTPRoute") {
		hosts, _ := nested(o.U, "spec", "hostnames").([]any)
		if len(hosts) == 0 {
			out = append(out, violation{"route matches every host", fmt.Sprintf("HTTPRoute %s has no hostnames: it matches every request on its Gateway, another claim's too", o.Name)})
		}
		prefix := o.Name + "." + c.Namespace + "."
		for _, h := range hosts {
			s, _ := h.(string)
			if strings.Contains(o.Name, ".") || !strings.HasPrefix(s, prefix) || len(s) == len(prefix) || strings.ContainsAny(s, "*") {
				out = append(out, violation{"route hostname not its own", fmt.Sprintf("HTTPRoute %s has hostname %q, not %s<domain>", o.Name, s, prefix)})
			}
		}
	}
	return out, nil
}

// flowNamespaces are the namespaces traffic comes from.
type flowNamespaces struct {
	Claim, Gateway, Metrics, KEDA string
}

func (n flowNamespaces) gatewayOrClaim() string {
	if n.Gateway == "" {
		return n.Claim
	}
	return n.Gateway
}

// defaultKEDANamespace is where KEDA's HTTP add-on runs unless the Input
// says otherwise (the add-on chart's namespace).
const defaultKEDANamespace = "keda"

// flowNamespaces reads them from the Input: the Gateway's (the
// NetworkPolicy's own setting, else the Gateway's namespace, else the
// claim's when a Gateway is named without one), the metrics namespace,
// and KEDA's (input.networkPolicy.kedaNamespace, read untyped so that
// this test builds against Inputs without it).
func (c *composition) flowNamespaces() flowNamespaces {
	n := flowNamespaces{Claim: c.Namespace, KEDA: defaultKEDANamespace}
	np := c.Input.NetworkPolicy
	n.Gateway, n.Metrics = np.GatewayNamespace, np.MetricsNamespace
	if g := c.Input.Traffic; n.Gateway == "" && g != nil && g.Gateway != nil {
		n.Gateway = g.Gateway.Namespace
		if n.Gateway == "" {
			n.Gateway = c.Namespace
		}
	}
	if k := nestedString(c.InputMap, "networkPolicy", "kedaNamespace"); k != "" {
		n.KEDA = k
	}
	return n
}

// allowedSources are the namespaces a pod may be reached from: a server
// from the claim's, the Gateway's, the metrics namespace and, when the
// claim scales to zero through the HTTP add-on, KEDA's; a picker from the
// Gateway's and the metrics namespace; a pull pod from none.
func (c *composition) allowedSources(p podTemplate, ns flowNamespaces) []string {
	var out []string
	add := func(n string) {
		if n != "" && !slices.Contains(out, n) {
			out = append(out, n)
		}
	}
	switch p.Role {
	case roleServer, roleLeader, roleWorker:
		add(ns.Claim)
		add(ns.Gateway)
		add(ns.Metrics)
		if c.usesHTTPAddOn() {
			add(ns.KEDA)
		}
	case rolePicker:
		add(ns.gatewayOrClaim())
		add(ns.Metrics)
	}
	return out
}

// usesHTTPAddOn says the claim's requests may come through KEDA's HTTP
// add-on: it has an HTTPScaledObject, or it scales to zero under an Input
// that turns the add-on on.
func (c *composition) usesHTTPAddOn() bool {
	if len(c.ofKind("HTTPScaledObject")) > 0 {
		return true
	}
	k := c.Input.KEDA
	if k == nil || !k.Enabled || k.HTTPAddOn == nil || !k.HTTPAddOn.Enabled {
		return false
	}
	min := number(nested(c.Spec, "replicas", "min"))
	enabled, _ := nested(c.Spec, "autoscaling", "enabled").(bool)
	return enabled && min == 0 && nested(c.Spec, "replicas", "min") != nil
}

// flow is traffic from pods of a namespace (with labels, or any pod when
// nil) to a pod template's port.
type flow struct {
	Rule     string
	From     string
	FromPods map[string]string
	To       *podTemplate
	Port     intstr.IntOrString
}

func (f flow) String() string {
	from := "namespace " + f.From
	if f.FromPods != nil {
		from = fmt.Sprintf("pods %v of namespace %s", f.FromPods, f.From)
	}
	return fmt.Sprintf("%s → the %s pods of %s on port %s is not admitted", from, f.To.Role, f.To.Owner, f.Port.String())
}

// containerPorts are a pod template's container ports.
func containerPorts(t corev1.PodTemplateSpec) []corev1.ContainerPort {
	var out []corev1.ContainerPort
	for _, c := range t.Spec.Containers {
		out = append(out, c.Ports...)
	}
	return out
}

// servingPorts are the ports of a server pod that the Services selecting
// it target.
func (c *composition) servingPorts(p *podTemplate) []intstr.IntOrString {
	var out []intstr.IntOrString
	for _, svc := range c.serviceList() {
		if !selects(svc.Spec.Selector, p.Labels) {
			continue
		}
		for _, sp := range svc.Spec.Ports {
			t := sp.TargetPort
			if t.Type == intstr.Int && t.IntVal == 0 {
				t = intstr.FromInt32(sp.Port)
			}
			if !slices.Contains(out, t) {
				out = append(out, t)
			}
		}
	}
	return out
}

// metricsPorts are the ports a PodMonitor scrapes on a pod.
func (c *composition) metricsPorts(p *podTemplate) []intstr.IntOrString {
	var out []intstr.IntOrString
	for _, o := range c.ofKind("PodMonitor") {
		sel, err := decode[metav1.LabelSelector](mapOr(nested(o.U, "spec", "selector")))
		if err != nil || !labelSelects(sel, p.Labels) {
			continue
		}
		eps, _ := nested(o.U, "spec", "podMetricsEndpoints").([]any)
		for _, e := range eps {
			switch {
			case nested(e, "portNumber") != nil:
				out = append(out, intstr.FromInt32(int32(number(nested(e, "portNumber")))))
			case nestedString(e, "port") != "":
				out = append(out, intstr.FromString(nestedString(e, "port")))
			}
		}
	}
	return out
}

// interceptorPorts are the server ports KEDA's HTTP add-on forwards to:
// the target ports of the Service each HTTPScaledObject names.
func (c *composition) interceptorPorts(p *podTemplate) []intstr.IntOrString {
	var out []intstr.IntOrString
	for _, o := range c.ofKind("HTTPScaledObject") {
		name := nestedString(o.U, "spec", "scaleTargetRef", "service")
		port := number(nested(o.U, "spec", "scaleTargetRef", "port"))
		for _, svc := range c.serviceList() {
			if svc.Name != name || !selects(svc.Spec.Selector, p.Labels) {
				continue
			}
			for _, sp := range svc.Spec.Ports {
				if sp.Port == int32(port) {
					out = append(out, sp.TargetPort)
				}
			}
		}
	}
	return out
}

// pickerPorts are the picker's Service's target ports whose name says
// what (ext-proc, metrics).
func (c *composition) pickerPorts(p *podTemplate, what string) []intstr.IntOrString {
	var out []intstr.IntOrString
	for _, svc := range c.serviceList() {
		if !selects(svc.Spec.Selector, p.Labels) {
			continue
		}
		for _, sp := range svc.Spec.Ports {
			if strings.Contains(sp.Name, what) {
				out = append(out, sp.TargetPort)
			}
		}
	}
	return out
}

func mapOr(v any) map[string]any {
	m, _ := v.(map[string]any)
	if m == nil {
		return map[string]any{}
	}
	return m
}

// labelSelects says a label selector selects labels (an empty selector
// selects every pod).
func labelSelects(sel *metav1.LabelSelector, l map[string]string) bool {
	s, err := metav1.LabelSelectorAsSelector(sel)
	return err == nil && s.Matches(labels.Set(l))
}

// selecting are the policies of a namespace that select pods with these
// labels for ingress.
func selecting(policies []*networkingv1.NetworkPolicy, namespace string, l map[string]string) []*networkingv1.NetworkPolicy {
	return selectingFor(policies, namespace, l, networkingv1.PolicyTypeIngress)
}

// selectingFor are the policies of a namespace that select pods with
// these labels for ingress or egress (a policy without policyTypes is for
// ingress, and for egress too when it has egress rules).
func selectingFor(policies []*networkingv1.NetworkPolicy, namespace string, l map[string]string, want networkingv1.PolicyType) []*networkingv1.NetworkPolicy {
	var out []*networkingv1.NetworkPolicy
	for _, p := range policies {
		if p.Namespace != namespace || !labelSelects(&p.Spec.PodSelector, l) {
			continue
		}
		is := len(p.Spec.PolicyTypes) == 0 && (want == networkingv1.PolicyTypeIngress || len(p.Spec.Egress) > 0)
		for _, t := range p.Spec.PolicyTypes {
			is = is || t == want
		}
		if is {
			out = append(out, p)
		}
	}
	return out
}

// admitted says the policies let a flow through, as Kubernetes
// NetworkPolicy semantics do, at both ends: a pod no policy selects takes
// everything in; else some ingress rule of a selecting policy must match
// the port and the source. And a flow from pods of the composition (the
// policies' namespace) must be let out: a pod no policy selects for
// egress reaches everything; else some egress rule must match the port
// and the destination.
func admitted(policies []*networkingv1.NetworkPolicy, namespace string, f flow) bool {
	return admittedIn(policies, namespace, f) && admittedOut(policies, namespace, f)
}

func admittedIn(policies []*networkingv1.NetworkPolicy, namespace string, f flow) bool {
	sel := selecting(policies, namespace, f.To.Labels)
	if len(sel) == 0 {
		return true
	}
	for _, p := range sel {
		for _, r := range p.Spec.Ingress {
			if portMatches(r.Ports, f.Port, f.To.PodTemplateSpec) && sourceMatches(r.From, p.Namespace, f.From, f.FromPods) {
				return true
			}
		}
	}
	return false
}

func admittedOut(policies []*networkingv1.NetworkPolicy, namespace string, f flow) bool {
	if f.FromPods == nil || f.From != namespace {
		return true
	}
	sel := selectingFor(policies, namespace, f.FromPods, networkingv1.PolicyTypeEgress)
	if len(sel) == 0 {
		return true
	}
	for _, p := range sel {
		for _, r := range p.Spec.Egress {
			// The destination is a pod of the composition's namespace.
			if portMatches(r.Ports, f.Port, f.To.PodTemplateSpec) && sourceMatches(r.To, p.Namespace, namespace, f.To.Labels) {
				return true
			}
		}
	}
	return false
}

// portMatches says a rule's ports take a port of the pod (a number or a
// container port's name).
func portMatches(ports []networkingv1.NetworkPolicyPort, port intstr.IntOrString, t corev1.PodTemplateSpec) bool {
	if len(ports) == 0 {
		return true
	}
	number := func(v intstr.IntOrString) int32 {
		if v.Type == intstr.Int {
			return v.IntVal
		}
		for _, cp := range containerPorts(t) {
			if cp.Name == v.StrVal {
				return cp.ContainerPort
			}
		}
		return -1
	}
	want := number(port)
	for _, p := range ports {
		if p.Protocol != nil && *p.Protocol != corev1.ProtocolTCP {
			continue
		}
		if p.Port == nil {
			return true
		}
		n := number(*p.Port)
		if n == want || p.EndPort != nil && want >= n && want <= *p.EndPort {
			return true
		}
	}
	return false
}

// sourceMatches says a rule's peers take pods of a namespace (any pod of
// it when pods is nil).
func sourceMatches(from []networkingv1.NetworkPolicyPeer, policyNS, ns string, pods map[string]string) bool {
	if len(from) == 0 {
		return true
	}
	for _, peer := range from {
		if peer.IPBlock != nil {
			continue
		}
		if peer.NamespaceSelector == nil && ns != policyNS {
			continue
		}
		if peer.NamespaceSelector != nil && !labelSelects(peer.NamespaceSelector, map[string]string{"kubernetes.io/metadata.name": ns}) {
			continue
		}
		if peer.PodSelector != nil && len(peer.PodSelector.MatchLabels)+len(peer.PodSelector.MatchExpressions) > 0 {
			if pods == nil || !labelSelects(peer.PodSelector, pods) {
				continue
			}
		}
		return true
	}
	return false
}

// peerNamespace is the one namespace a peer admits pods of, false when it
// admits more than one namespace or addresses.
func peerNamespace(peer networkingv1.NetworkPolicyPeer, policyNS string) (string, bool) {
	switch {
	case peer.IPBlock != nil:
		return "", false
	case peer.NamespaceSelector == nil:
		return policyNS, true
	}
	sel := peer.NamespaceSelector
	if len(sel.MatchExpressions) > 0 || len(sel.MatchLabels) != 1 {
		return "", false
	}
	n, ok := sel.MatchLabels["kubernetes.io/metadata.name"]
	return n, ok
}

func peerString(peer networkingv1.NetworkPolicyPeer) string {
	if n, ok := peerNamespace(peer, "(own)"); ok {
		return "namespace " + n
	}
	return fmt.Sprintf("%+v", peer)
}

// podsRestricted: every pod template meets the Pod Security Standard
// "restricted" (Kubernetes v1.35): no host namespaces, ports or paths, no
// privileged container, only the allowed volume types, runAsNonRoot and
// never UID 0, allowPrivilegeEscalation false, capabilities drop ALL (and
// add at most NET_BIND_SERVICE), seccomp RuntimeDefault or Localhost.
func podsRestricted(c *composition) ([]violation, error) {
	pods, err := c.pods()
	if err != nil {
		return nil, err
	}
	var out []violation
	for _, p := range pods {
		for _, why := range restrictedViolations(p.Spec) {
			out = append(out, violation{"not restricted: " + why.Rule, p.Owner + ": " + why.Detail})
		}
	}
	return out, nil
}

// restrictedViolations lists how a pod spec breaks the restricted profile.
func restrictedViolations(s corev1.PodSpec) []violation {
	var out []violation
	bad := func(rule, format string, a ...any) {
		out = append(out, violation{rule, fmt.Sprintf(format, a...)})
	}
	if s.HostNetwork || s.HostPID || s.HostIPC {
		bad("host namespaces", "hostNetwork %v, hostPID %v, hostIPC %v", s.HostNetwork, s.HostPID, s.HostIPC)
	}
	for _, v := range s.Volumes {
		vs := v.VolumeSource
		if vs.ConfigMap == nil && vs.CSI == nil && vs.DownwardAPI == nil && vs.EmptyDir == nil && vs.Ephemeral == nil &&
			vs.PersistentVolumeClaim == nil && vs.Projected == nil && vs.Secret == nil && vs.Image == nil {
			bad("volume type", "volume %s is of a type the restricted profile refuses", v.Name)
		}
	}
	psc := s.SecurityContext
	if psc == nil {
		psc = &corev1.PodSecurityContext{}
	}
	if psc.RunAsUser != nil && *psc.RunAsUser == 0 {
		bad("runAsUser", "the pod runs as UID 0")
	}
	podSeccomp := psc.SeccompProfile
	for _, c := range slices.Concat(s.InitContainers, s.Containers) {
		sc := c.SecurityContext
		if sc == nil {
			sc = &corev1.SecurityContext{}
		}
		if isTrue(sc.Privileged) {
			bad("privileged", "container %s is privileged", c.Name)
		}
		if sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation {
			bad("allowPrivilegeEscalation", "container %s does not set allowPrivilegeEscalation false", c.Name)
		}
		if !isTrue(sc.RunAsNonRoot) && !isTrue(psc.RunAsNonRoot) || sc.RunAsNonRoot != nil && !*sc.RunAsNonRoot {
			bad("runAsNonRoot", "container %s does not run as non-root", c.Name)
		}
		if sc.RunAsUser != nil && *sc.RunAsUser == 0 {
			bad("runAsUser", "container %s runs as UID 0", c.Name)
		}
		if sc.Capabilities == nil || !slices.Contains(sc.Capabilities.Drop, "ALL") {
			bad("capabilities", "container %s does not drop ALL capabilities", c.Name)
		}
		if sc.Capabilities != nil {
			for _, a := range sc.Capabilities.Add {
				if a != "NET_BIND_SERVICE" {
					bad("capabilities", "container %s adds capability %s", c.Name, a)
				}
			}
		}
		seccomp := sc.SeccompProfile
		if seccomp == nil {
			seccomp = podSeccomp
		}
		if seccomp == nil || seccomp.Type != corev1.SeccompProfileTypeRuntimeDefault && seccomp.Type != corev1.SeccompProfileTypeLocalhost {
			bad("seccomp", "container %s has no RuntimeDefault or Localhost seccomp profile", c.Name)
		}
		for _, port := range c.Ports {
			if port.HostPort != 0 {
				bad("host ports", "container %s opens host port %d", c.Name, port.HostPort)
			}
		}
	}
	return out
}

// sourcesAllowed: when the Input sets a policy, every weights source a
// pull Job downloads (its MODEL_URI) or an image volume mounts is of a
// scheme and a source the policy allows; a claim's own volume is mounted
// only where pvc:// is allowed; every composed volume is of an allowed
// class and within the size limit.
func sourcesAllowed(c *composition) ([]violation, error) {
	p := c.Input.Policy
	if p == nil {
		return nil, nil
	}
	var out []violation
	refused := func(where, uri, why string) {
		out = append(out, violation{"source refused by policy: " + why, fmt.Sprintf("%s uses %s, which input.policy does not allow (%s)", where, uri, why)})
	}
	checkURI := func(where, uri string) {
		scheme, rest, ok := strings.Cut(uri, "://")
		if !ok {
			refused(where, uri, "not a URI")
			return
		}
		if scheme == "pvc" {
			if p.AllowPVCURIs != nil && !*p.AllowPVCURIs {
				refused(where, uri, "allowPVCURIs")
			}
			return
		}
		if len(p.AllowedURISchemes) > 0 && !slices.Contains(p.AllowedURISchemes, scheme) {
			refused(where, uri, "allowedURISchemes")
		}
		authority, _, _ := strings.Cut(rest, "/")
		if len(p.AllowedURIHosts) > 0 && !hostAllowed(scheme, authority, p.AllowedURIHosts) {
			refused(where, uri, "allowedURIHosts")
		}
	}
	pods, err := c.pods()
	if err != nil {
		return nil, err
	}
	for _, pod := range pods {
		for _, ct := range pod.Spec.Containers {
			for _, e := range ct.Env {
				if e.Name == "MODEL_URI" && pod.Role == rolePuller {
					checkURI(pod.Owner, e.Value)
				}
			}
		}
		for _, v := range pod.Spec.Volumes {
			if v.Image != nil {
				checkURI(pod.Owner+" volume "+v.Name, "oci://"+v.Image.Reference)
			}
			if v.PersistentVolumeClaim != nil && c.Existing["pvc-uri/"+v.PersistentVolumeClaim.ClaimName] &&
				!c.has("PersistentVolumeClaim", v.PersistentVolumeClaim.ClaimName) {
				checkURI(pod.Owner+" volume "+v.Name, "pvc://"+v.PersistentVolumeClaim.ClaimName)
			}
		}
	}
	for _, o := range c.ofKind("PersistentVolumeClaim") {
		pvc, err := decode[corev1.PersistentVolumeClaim](o.U)
		if err != nil {
			return nil, err
		}
		if len(p.AllowedStorageClasses) > 0 && (pvc.Spec.StorageClassName == nil || !slices.Contains(p.AllowedStorageClasses, *pvc.Spec.StorageClassName)) {
			out = append(out, violation{"storage refused by policy: allowedStorageClasses", fmt.Sprintf("PersistentVolumeClaim %s has storage class %v, not one of %v", pvc.Name, ptrString(pvc.Spec.StorageClassName), p.AllowedStorageClasses)})
		}
		size := pvc.Spec.Resources.Requests[corev1.ResourceStorage]
		if max := p.MaxStorageSize; max != nil && size.Cmp(*max) > 0 {
			out = append(out, violation{"storage refused by policy: maxStorageSize", fmt.Sprintf("PersistentVolumeClaim %s asks for %s, above %s", pvc.Name, size.String(), max.String())})
		}
	}
	return out, nil
}

func ptrString(s *string) string {
	if s == nil {
		return "(none: the cluster's default)"
	}
	return *s
}

// hostAllowed matches scheme://authority against allowedURIHosts as its
// documentation says: the same scheme, and the same authority ignoring
// case, "*" for any, "*.domain" for a host below domain.
func hostAllowed(scheme, authority string, entries []string) bool {
	authority = strings.ToLower(authority)
	for _, e := range entries {
		s, want, ok := strings.Cut(strings.ToLower(e), "://")
		if !ok || s != scheme {
			continue
		}
		switch {
		case want == "*", want == authority:
			return true
		case strings.HasPrefix(want, "*."):
			wh, wp, _ := strings.Cut(want[1:], ":")
			hh, hp, _ := strings.Cut(authority, ":")
			if wp == hp && strings.HasSuffix(hh, wh) && len(hh) > len(wh) {
				return true
			}
		}
	}
	return false
}

// quantity parses a quantity for the unit tests.
func quantity(s string) *resource.Quantity {
	q := resource.MustParse(s)
	return &q
}

// number reads a JSON number, as structpb (float64) or Go (int64) writes it.
func number(v any) float64 {
	switch n := v.(type) {
	case float64:
		return n
	case int64:
		return float64(n)
	case int:
		return float64(n)
	}
	return 0
}
