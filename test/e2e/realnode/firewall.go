package realnode

import (
	"errors"
	"fmt"
	"sort"
)

// Firewall is the host's packet filter at one moment: the chains of the
// filter table (IPv4 and IPv6) and the ipsets. A scenario that runs a
// firewall of its own for the node (a NetworkPolicy engine, which filters
// and so keeps its chains in the filter table) records it before the
// engine starts and puts it back once the engine has stopped. The node's
// own record (hostState) would remove the engine's rules too, but only
// when the node stops: until then a later scenario's pod that gets a pod
// IP the engine had rules for would meet them.
//
// The nat and mangle tables are left out on purpose: kube-proxy keeps a
// chain per Service and endpoint there, which come and go with the
// scenario's Services and are kube-proxy's to remove.
type Firewall struct {
	// Chains maps "iptables" and "ip6tables" to the filter table's chains.
	Chains map[string][]string
	Ipsets []string
}

// RecordFirewall records the host's filter chains and ipsets.
func RecordFirewall() *Firewall {
	f := &Firewall{Chains: map[string][]string{}, Ipsets: ipsets()}
	for _, bin := range []string{"iptables", "ip6tables"} {
		f.Chains[bin] = chains(bin, "filter")
	}
	return f
}

// Restore removes what is new since the record: every rule that jumps to
// a new chain (from the built-in INPUT, FORWARD and OUTPUT, say), the new
// chains, then the new ipsets, which those rules matched on. It keeps going
// past errors and returns them all.
func (f *Firewall) Restore() error {
	var errs []error
	for bin, before := range f.Chains {
		errs = append(errs, dropChains(bin, "filter", newOnly(chains(bin, "filter"), before))...)
	}
	errs = append(errs, destroyIpsets(newOnly(ipsets(), f.Ipsets))...)
	return errors.Join(errs...)
}

// Leftovers lists the chains and ipsets that are new since the record:
// after Restore, what it could not remove.
func (f *Firewall) Leftovers() []string {
	var out []string
	for bin, before := range f.Chains {
		for _, c := range newOnly(chains(bin, "filter"), before) {
			out = append(out, fmt.Sprintf("%s -t filter chain %s", bin, c))
		}
	}
	for _, s := range newOnly(ipsets(), f.Ipsets) {
		out = append(out, "ipset "+s)
	}
	sort.Strings(out)
	return out
}
