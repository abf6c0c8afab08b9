package fn

import (
	"fmt"
	"sort"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	inferencev1 "sigs.k8s.io/gateway-api-inference-extension/api/v1"
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

// routeCandidate is a Service the route may send requests to, and how
// ready it is.
type routeCandidate struct {
	Service string
	// Weight is the percent spec.traffic asks for it.
	Weight int32
	// Wanted is the servers it should have for that weight; Ready the
	// servers ready behind it.
	Wanted, Ready int32
}

// percent is one percent of a route's weight in the units routeWeights
// computes in: integers, so that the same request always gives the same
// weights.
const percent = int64(1_000_000)

// routeWeights weighs the route's candidates by their readiness: a Gateway
// sends a backend its share whether or not anything answers there, so a
// version still loading its model would fail its share of requests.
//  1. Each candidate gets its weight scaled by the share of its wanted
//     servers that are ready.
//  2. The rest goes to the candidates with more ready servers than they
//     want (a version losing weight, kept until the others are ready), in
//     proportion to those spare servers;
//  3. else to fallback (the Service <name>, whose servers include the
//     primary's old ones during its rollout), when it has ready servers;
//  4. else to the candidates with a ready server, in proportion to them.
//  5. The weights are whole percents summing to 100, rounded by largest
//     remainder; a candidate with no ready server gets none.
//
// The fallback is a backend only when it gets a weight. ok is false when
// nothing has a ready server: the caller then keeps the route's last
// weights.
func routeWeights(cands []routeCandidate, fallback routeCandidate) (backends []routeBackend, ok bool) {
	all := append(append([]routeCandidate(nil), cands...), fallback)
	exact := make([]int64, len(all))
	rest := 100 * percent
	for i, c := range cands {
		if c.Wanted > 0 && c.Ready > 0 {
			exact[i] = int64(c.Weight) * percent * int64(min(c.Ready, c.Wanted)) / int64(c.Wanted)
			rest -= exact[i]
		}
	}
	spread := func(by func(i int, c routeCandidate) int64) bool {
		total := int64(0)
		for i, c := range all {
			total += by(i, c)
		}
		if total == 0 {
			return false
		}
		first, given := -1, int64(0)
		for i, c := range all {
			if x := by(i, c); x > 0 {
				share := rest * x / total
				exact[i] += share
				given += share
				if first < 0 {
					first = i
				}
			}
		}
		exact[first] += rest - given
		return true
	}
	last := len(all) - 1
	switch {
	case rest == 0:
	case spread(func(i int, c routeCandidate) int64 {
		if i == last {
			return 0
		}
		return int64(max(0, c.Ready-c.Wanted))
	}):
	case spread(func(i int, c routeCandidate) int64 {
		if i != last {
			return 0
		}
		return int64(c.Ready)
	}):
	case spread(func(i int, c routeCandidate) int64 {
		if i == last {
			return 0
		}
		return int64(c.Ready)
	}):
	default:
		return nil, false
	}

	weights := make([]int32, len(all))
	order := make([]int, 0, len(all))
	left := int32(100)
	for i, e := range exact {
		weights[i] = int32(e / percent)
		left -= weights[i]
		if all[i].Ready > 0 {
			order = append(order, i)
		}
	}
	sort.SliceStable(order, func(a, b int) bool { return exact[order[a]]%percent > exact[order[b]]%percent })
	for _, i := range order {
		if left <= 0 {
			break
		}
		weights[i]++
		left--
	}
	for i, c := range cands {
		backends = append(backends, routeBackend{Service: c.Service, Weight: weights[i]})
	}
	if weights[last] > 0 {
		backends = append(backends, routeBackend{Service: fallback.Service, Weight: weights[last]})
	}
	return backends, true
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
	return httpRoute(s, refs)
}

// renderPoolRoute builds the HTTPRoute of a claim on an InferencePool: its
// one backend is the pool (no port: the pool's targetPorts say where its
// servers listen), whose endpoint picker chooses a server for each
// request.
func renderPoolRoute(s *resolvedSpec) *gatewayv1.HTTPRoute {
	return httpRoute(s, []gatewayv1.HTTPBackendRef{{BackendRef: gatewayv1.BackendRef{
		BackendObjectReference: gatewayv1.BackendObjectReference{
			Group: ptrTo(gatewayv1.Group(inferencev1.GroupVersion.Group)),
			Kind:  ptrTo(gatewayv1.Kind("InferencePool")),
			Name:  gatewayv1.ObjectName(s.Name),
		},
	}}})
}

// httpRoute is the claim's HTTPRoute to refs, attached to the platform's
// Gateway.
func httpRoute(s *resolvedSpec, refs []gatewayv1.HTTPBackendRef) *gatewayv1.HTTPRoute {
	gw := s.Gateway
	parent := gatewayv1.ParentReference{Name: gatewayv1.ObjectName(gw.Name)}
	if gw.Namespace != s.Namespace {
		parent.Namespace = ptrTo(gatewayv1.Namespace(gw.Namespace))
	}
	if gw.SectionName != "" {
		parent.SectionName = ptrTo(gatewayv1.SectionName(gw.SectionName))
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
