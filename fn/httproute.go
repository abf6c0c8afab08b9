package fn

import (
	"fmt"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
)

// resourceRoute is the composition resource name of a split's HTTPRoute.
const resourceRoute = "route"

// gateway is the Input's Gateway API parent, checked, with its namespace
// defaulted to the claim's.
type gateway struct {
	Name, Namespace, SectionName string
	Domain, Scheme               string
}

// routeBackend is one weighted backend of the HTTPRoute.
type routeBackend struct {
	Service string
	Weight  int32
}

// routeBackends weighs each version's Service as spec.traffic asks, except
// that a version with no ready server yet passes its weight to the
// primary: a Gateway sends a backend its share whether or not anything
// answers there, so a canary still loading its model would fail its share
// of requests.
func routeBackends(s *resolvedSpec, ready []bool) []routeBackend {
	out := make([]routeBackend, 0, len(s.Versions))
	moved := int32(0)
	for i := range s.Versions {
		v := &s.Versions[i]
		w := v.Weight
		if !v.Primary && !ready[i] {
			moved += w
			w = 0
		}
		out = append(out, routeBackend{Service: v.versionServiceName(s), Weight: w})
	}
	out[0].Weight += moved
	return out
}

// routeHostname is the route's hostname, empty without a domain.
func routeHostname(s *resolvedSpec) string {
	if s.Gateway.Domain == "" {
		return ""
	}
	return s.Name + "." + s.Namespace + "." + s.Gateway.Domain
}

// routeURL is where clients reach the split through the Gateway, empty
// without a domain.
func routeURL(s *resolvedSpec) string {
	h := routeHostname(s)
	if h == "" {
		return ""
	}
	return s.Gateway.Scheme + "://" + h
}

// renderHTTPRoute builds the HTTPRoute that splits requests exactly between
// the versions' Services, attached to the platform's Gateway. It is named
// after the claim, like the Service.
func renderHTTPRoute(s *resolvedSpec, backends []routeBackend) *gatewayv1.HTTPRoute {
	gw := s.Gateway
	parent := gatewayv1.ParentReference{Name: gatewayv1.ObjectName(gw.Name)}
	if gw.Namespace != s.Namespace {
		parent.Namespace = ptrTo(gatewayv1.Namespace(gw.Namespace))
	}
	if gw.SectionName != "" {
		parent.SectionName = ptrTo(gatewayv1.SectionName(gw.SectionName))
	}
	refs := make([]gatewayv1.HTTPBackendRef, len(backends))
	for i, b := range backends {
		refs[i] = gatewayv1.HTTPBackendRef{BackendRef: gatewayv1.BackendRef{
			BackendObjectReference: gatewayv1.BackendObjectReference{
				Name: gatewayv1.ObjectName(b.Service),
				Port: ptrTo(gatewayv1.PortNumber(servicePort)),
			},
			Weight: ptrTo(b.Weight),
		}}
	}
	r := &gatewayv1.HTTPRoute{
		TypeMeta:   metav1.TypeMeta{APIVersion: gatewayv1.GroupVersion.String(), Kind: "HTTPRoute"},
		ObjectMeta: metav1.ObjectMeta{Name: s.Name, Namespace: s.Namespace, Labels: s.labels(s.primary(), componentRoute)},
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

// describeBackends writes the route's split, e.g. "llama-1 90%, llama-2 10%".
func describeBackends(backends []routeBackend) string {
	parts := make([]string, len(backends))
	for i, b := range backends {
		parts[i] = fmt.Sprintf("%s %d%%", b.Service, b.Weight)
	}
	return strings.Join(parts, ", ")
}
