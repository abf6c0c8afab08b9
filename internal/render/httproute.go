package render

import (
	"fmt"
	"strings"

	"github.com/inferno-ai/function-inferno/internal/resolve"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	inferencev1 "sigs.k8s.io/gateway-api-inference-extension/api/v1"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
)

// ResourceRoute is the composition resource name of a split's HTTPRoute.
const ResourceRoute = "route"

// RouteBackend is one weighted backend of the HTTPRoute.
type RouteBackend struct {
	Service string
	Weight  int32
}

// routeHostname is the route's hostname, empty without a domain.
func routeHostname(s *resolve.Spec) string {
	if s.Gateway.Domain == "" {
		return ""
	}
	return s.Name + "." + s.Namespace + "." + s.Gateway.Domain
}

// RouteURL is where clients reach the split through the Gateway, empty
// without a domain.
func RouteURL(s *resolve.Spec) string {
	h := routeHostname(s)
	if h == "" {
		return ""
	}
	return s.Gateway.Scheme + "://" + h
}

// HTTPRoute builds the HTTPRoute that splits requests exactly between
// the versions' Services, attached to the platform's Gateway. It is named
// after the claim, like the Service.
func HTTPRoute(s *resolve.Spec, backends []RouteBackend) *gatewayv1.HTTPRoute {
	refs := make([]gatewayv1.HTTPBackendRef, len(backends))
	for i, b := range backends {
		refs[i] = gatewayv1.HTTPBackendRef{BackendRef: gatewayv1.BackendRef{
			BackendObjectReference: gatewayv1.BackendObjectReference{
				Name: gatewayv1.ObjectName(b.Service),
				Port: ptr.To(gatewayv1.PortNumber(ServicePort)),
			},
			Weight: ptr.To(b.Weight),
		}}
	}
	return httpRoute(s, refs)
}

// PoolRoute builds the HTTPRoute of a claim on an InferencePool: its
// one backend is the pool (no port: the pool's targetPorts say where its
// servers listen), whose endpoint picker chooses a server for each
// request.
func PoolRoute(s *resolve.Spec) *gatewayv1.HTTPRoute {
	return httpRoute(s, []gatewayv1.HTTPBackendRef{{BackendRef: gatewayv1.BackendRef{
		BackendObjectReference: gatewayv1.BackendObjectReference{
			Group: ptr.To(gatewayv1.Group(inferencev1.GroupVersion.Group)),
			Kind:  ptr.To(gatewayv1.Kind("InferencePool")),
			Name:  gatewayv1.ObjectName(s.Name),
		},
	}}})
}

// httpRoute is the claim's HTTPRoute to refs, attached to the platform's
// Gateway.
func httpRoute(s *resolve.Spec, refs []gatewayv1.HTTPBackendRef) *gatewayv1.HTTPRoute {
	gw := s.Gateway
	parent := gatewayv1.ParentReference{Name: gatewayv1.ObjectName(gw.Name)}
	if gw.Namespace != s.Namespace {
		parent.Namespace = ptr.To(gatewayv1.Namespace(gw.Namespace))
	}
	if gw.SectionName != "" {
		parent.SectionName = ptr.To(gatewayv1.SectionName(gw.SectionName))
	}
	r := &gatewayv1.HTTPRoute{
		TypeMeta:   metav1.TypeMeta{APIVersion: gatewayv1.GroupVersion.String(), Kind: "HTTPRoute"},
		ObjectMeta: metav1.ObjectMeta{Name: s.Name, Namespace: s.Namespace, Labels: s.Labels(s.Primary(), resolve.ComponentRoute)},
		Spec: gatewayv1.HTTPRouteSpec{
			CommonRouteSpec: gatewayv1.CommonRouteSpec{ParentRefs: []gatewayv1.ParentReference{parent}},
			Rules:           []gatewayv1.HTTPRouteRule{{BackendRefs: refs}},
		},
	}
	if h := routeHostname(s); h != "" {
		r.Spec.Hostnames = []gatewayv1.Hostname{gatewayv1.Hostname(h)}
	}
	return r
}

// DescribeBackends writes the route's split, e.g. "llama-1 90%, llama-2 10%".
func DescribeBackends(backends []RouteBackend) string {
	parts := make([]string, len(backends))
	for i, b := range backends {
		parts[i] = fmt.Sprintf("%s %d%%", b.Service, b.Weight)
	}
	return strings.Join(parts, ", ")
}

// RouteState is what an HTTPRoute's status says about our Gateway.
type RouteState struct {
	// Reported says a gateway controller wrote status for our parent.
	Reported bool
	// Rejected says it did not accept the route or resolve its backends.
	Rejected bool
	Message  string
}

// RouteReady reads an HTTPRoute's status.parents for the Input's Gateway:
//  1. no entry for that parent: no gateway controller has looked at the
//     route yet; not ready, and a warning says so (the Service <name> still
//     serves, but the exact split is not in effect);
//  2. conditions Accepted=True and ResolvedRefs=True: ready;
//  3. otherwise rejected, with the False condition's reason and message.
func RouteReady(s *resolve.Spec, r *gatewayv1.HTTPRoute, backends []RouteBackend) (bool, RouteState) {
	gw := s.Gateway
	st := RouteState{Message: fmt.Sprintf("no gateway controller has reported on HTTPRoute %s for Gateway %s/%s yet; until one accepts it the Service %s splits requests approximately", s.Name, gw.Namespace, gw.Name, s.Name)}
	if s.Pool != nil {
		st.Message = fmt.Sprintf("no gateway controller has reported on HTTPRoute %s for Gateway %s/%s yet; until one accepts it the Service %s is the only way to the servers", s.Name, gw.Namespace, gw.Name, s.Name)
	}
	if r == nil {
		return false, st
	}
	for _, p := range r.Status.Parents {
		ref := p.ParentRef
		ns := r.Namespace
		if ref.Namespace != nil {
			ns = string(*ref.Namespace)
		}
		section := ""
		if ref.SectionName != nil {
			section = string(*ref.SectionName)
		}
		if string(ref.Name) != gw.Name || ns != gw.Namespace || section != gw.SectionName {
			continue
		}
		st.Reported = true
		accepted := meta.FindStatusCondition(p.Conditions, string(gatewayv1.RouteConditionAccepted))
		resolved := meta.FindStatusCondition(p.Conditions, string(gatewayv1.RouteConditionResolvedRefs))
		for _, c := range []*metav1.Condition{accepted, resolved} {
			if c != nil && c.Status != metav1.ConditionTrue {
				st.Rejected = true
				st.Message = fmt.Sprintf("Gateway %s/%s (%s) reports HTTPRoute %s %s=%s: %s: %s", gw.Namespace, gw.Name, p.ControllerName, s.Name, c.Type, c.Status, c.Reason, c.Message)
				return false, st
			}
		}
		if accepted == nil || resolved == nil {
			st.Reported = false
			return false, st
		}
		st.Message = fmt.Sprintf("HTTPRoute %s on Gateway %s/%s splits requests exactly: %s", s.Name, gw.Namespace, gw.Name, DescribeBackends(backends))
		if s.Pool != nil {
			st.Message = fmt.Sprintf("HTTPRoute %s on Gateway %s/%s sends requests to InferencePool %s", s.Name, gw.Namespace, gw.Name, s.Name)
		}
		return true, st
	}
	return false, st
}
