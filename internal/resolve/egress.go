package resolve

import (
	"fmt"
	"net/netip"

	"github.com/inferno-ai/function-inferno/input/v1beta1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation"
)

// maxEgressRules is the most entries input.networkPolicy.egress may have
// (the schema's maxItems), so that a policy stays one a CNI applies
// quickly.
const maxEgressRules = 32

// resolveEgress checks input.networkPolicy.egress: each entry names one
// destination, an address range (cidr, with except inside it) or a
// namespace, and ports that exist. A Composition's input is not checked
// against the Input's schema by the API server, so the schema's markers
// alone would let a typo through to a NetworkPolicy the API server
// refuses, or worse, to one that admits more than the platform meant.
func resolveEgress(rules []v1beta1.EgressRule, errs *FieldErrors) []v1beta1.EgressRule {
	if len(rules) > maxEgressRules {
		errs.Add("input.networkPolicy.egress", "has %d entries, more than %d: merge ranges into wider cidrs or namespaces", len(rules), maxEgressRules)
		return nil
	}
	for i, r := range rules {
		path := fmt.Sprintf("input.networkPolicy.egress[%d]", i)
		switch {
		case r.CIDR == "" && r.Namespace == "":
			errs.Add(path, "names no destination: set cidr (an address range, such as 10.20.0.0/16) or namespace (whose pods the servers may reach); an entry without one would open every destination")
		case r.CIDR != "" && r.Namespace != "":
			errs.Add(path, "sets both cidr %q and namespace %q: an entry reaches one or the other; split it into two entries", r.CIDR, r.Namespace)
		}
		if r.CIDR != "" {
			checkEgressCIDR(path, r, errs)
		} else if len(r.Except) > 0 {
			errs.Add(path+".except", "is only for a cidr: it names ranges inside cidr that stay closed; remove it, or set cidr")
		}
		if r.Namespace != "" {
			for _, m := range validation.IsDNS1123Label(r.Namespace) {
				errs.Add(path+".namespace", "%q is not a namespace name: %s", r.Namespace, m)
			}
		}
		if len(r.Ports) > 16 {
			errs.Add(path+".ports", "has %d ports, more than 16: split the entry", len(r.Ports))
		}
		for j, p := range r.Ports {
			pp := fmt.Sprintf("%s.ports[%d]", path, j)
			if p.Port < 1 || p.Port > 65535 {
				errs.Add(pp+".port", "%d is not a port number: use 1 to 65535, or leave ports out for every port", p.Port)
			}
			if p.Protocol != "" && p.Protocol != corev1.ProtocolTCP && p.Protocol != corev1.ProtocolUDP {
				errs.Add(pp+".protocol", "%q is not TCP or UDP", p.Protocol)
			}
		}
	}
	return rules
}

// checkEgressCIDR checks an entry's cidr and except: each a range written
// with its host bits zero (the API server takes 10.0.0.1/8 but means
// 10.0.0.0/8, and a reader of the Input may not), each except inside cidr
// and narrower, as the API server requires.
func checkEgressCIDR(path string, r v1beta1.EgressRule, errs *FieldErrors) {
	cidr, ok := parseRange(path+".cidr", r.CIDR, errs)
	if len(r.Except) > 16 {
		errs.Add(path+".except", "has %d ranges, more than 16: split the entry's cidr instead", len(r.Except))
	}
	for j, e := range r.Except {
		ep := fmt.Sprintf("%s.except[%d]", path, j)
		ex, eok := parseRange(ep, e, errs)
		if ok && eok && (ex.Addr().Is4() != cidr.Addr().Is4() || ex.Bits() <= cidr.Bits() || !cidr.Contains(ex.Addr())) {
			errs.Add(ep, "%q is not a range inside cidr %s: except names narrower ranges of cidr that stay closed", e, r.CIDR)
		}
	}
}

// parseRange reads an address range written with its host bits zero.
func parseRange(path, s string, errs *FieldErrors) (netip.Prefix, bool) {
	p, err := netip.ParsePrefix(s)
	if err != nil {
		errs.Add(path, "%q is not an address range: write an address and a prefix length, such as 10.20.0.0/16 or 192.0.2.10/32", s)
		return netip.Prefix{}, false
	}
	if p.Masked() != p {
		errs.Add(path, "%q has host bits set: write the range as %s", s, p.Masked())
		return netip.Prefix{}, false
	}
	return p, true
}
