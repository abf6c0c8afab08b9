package resolve

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/inferno-ai/function-inferno/apis/inference/v1alpha1"
	"github.com/inferno-ai/function-inferno/input/v1beta1"
	"k8s.io/apimachinery/pkg/util/validation"
)

// Placement is spec.placement judged against input.fleet: the clusters the
// claim may be served on, how many, and what each receives. Which of them
// serve is decided with what is observed (plan.Place).
type Placement struct {
	// Candidates are the offered clusters the claim's names and selector
	// allow, in the Input's order, each with whether it takes a new
	// placement.
	Candidates []Candidate
	// Offered are every cluster of input.fleet by name: a cluster that
	// serves the claim and is no longer a candidate is still reached
	// through its own configuration until its replacement serves.
	Offered map[string]v1beta1.WorkloadCluster
	// Count is how many clusters serve the claim.
	Count int
	// SpreadBy is the cluster label whose values the chosen clusters
	// spread over; empty for none.
	SpreadBy string
	// Key orders the candidates for this claim alone (plan.Place): the
	// hub namespace and name, so that claims spread over the fleet rather
	// than all taking its first cluster.
	Key string
	// Namespace is where the claim lands on every workload cluster.
	Namespace string
	// Namespaced says the hub composite is namespaced: its Objects are then
	// namespaced too, and reference ClusterProviderConfigs.
	Namespaced bool
	// Remote is what each workload cluster receives as the spec of its
	// InferenceService: the claim's spec without placement. The cluster's
	// own function judges it again under its own Input.
	Remote v1alpha1.InferenceServiceSpec
	// DeletionPolicy is the Objects' deletionPolicy (Delete or Orphan).
	DeletionPolicy string
	// GPUs is the most GPUs the claim holds on one cluster, which its
	// capacity is judged by.
	GPUs int32
	// Fleet describes the offered clusters and their labels, for a
	// status that says why too few clusters match.
	Fleet string
}

// Candidate is an offered cluster that the claim allows.
type Candidate struct {
	v1beta1.WorkloadCluster
	// Full says why the cluster takes no new placement (draining, no
	// capacity); empty when it takes one.
	Full string
}

// DefaultPlacementCount is how many clusters serve a claim that does not
// say.
const DefaultPlacementCount = 1

// resolvePlacement judges spec.placement against input.fleet. Every name
// the claim gives must be one the platform offers and every namespace one
// it maps: the claim can never reach a ProviderConfig, a cluster or a
// namespace the platform did not give it.
func resolvePlacement(s *Spec, xr *v1alpha1.XInferenceService, in *v1beta1.Input, errs *FieldErrors) *Placement {
	p := xr.Spec.Placement
	if p == nil {
		return nil
	}
	f := in.Fleet
	if f == nil || len(f.Clusters) == 0 {
		errs.Add("spec.placement", "this platform offers no workload clusters (input.fleet.clusters is empty); remove spec.placement to serve on this cluster, or ask the platform team to offer clusters")
		return nil
	}
	checkFleet(f, errs)
	out := &Placement{
		Offered:    make(map[string]v1beta1.WorkloadCluster, len(f.Clusters)),
		Count:      DefaultPlacementCount,
		SpreadBy:   p.SpreadBy,
		Key:        s.Namespace + "/" + s.Name,
		Namespaced: xr.GetNamespace() != "",
		GPUs:       s.MostGPUs(),
	}
	if p.Count != nil {
		out.Count = int(*p.Count)
	}
	out.DeletionPolicy = f.ObjectDeletionPolicy
	if out.DeletionPolicy == "" {
		out.DeletionPolicy = "Delete"
	}
	names := make([]string, 0, len(f.Clusters))
	for _, c := range f.Clusters {
		out.Offered[c.Name] = c
		names = append(names, c.Name)
	}
	offered := strings.Join(names, ", ")

	for i, m := range f.Namespaces {
		if m.ClaimNamespace == s.Namespace {
			out.Namespace = f.Namespaces[i].Namespace
		}
	}
	if out.Namespace == "" {
		errs.Add("spec.placement", "namespace %q may not place services on workload clusters: input.fleet.namespaces does not map it; remove spec.placement, or ask the platform team to map the namespace", s.Namespace)
	}
	if out.Count < 1 {
		errs.Add("spec.placement.count", "%d clusters: use 1 or more", out.Count)
	}
	for i, n := range p.Clusters {
		if _, ok := out.Offered[n]; !ok {
			errs.Add(fmt.Sprintf("spec.placement.clusters[%d]", i), "%q is not a cluster this platform offers (input.fleet.clusters: %s); name one of them, or leave spec.placement.clusters out", n, offered)
		}
	}
	if p.SpreadBy != "" {
		for _, m := range validation.IsQualifiedName(p.SpreadBy) {
			errs.Add("spec.placement.spreadBy", "%q is not a label key: %s", p.SpreadBy, m)
		}
	}
	for _, c := range f.Clusters {
		if len(p.Clusters) > 0 && !slices.Contains(p.Clusters, c.Name) {
			continue
		}
		if p.Selector != nil && !labelsMatch(c.Labels, p.Selector.MatchLabels) {
			continue
		}
		cand := Candidate{WorkloadCluster: c}
		switch {
		case c.Draining:
			cand.Full = "draining"
		case c.Capacity != nil && c.Capacity.GPUs != nil && out.GPUs > *c.Capacity.GPUs:
			cand.Full = fmt.Sprintf("needs %d GPUs, %d free", out.GPUs, *c.Capacity.GPUs)
		}
		out.Candidates = append(out.Candidates, cand)
	}
	// Too few candidates is not refused: a cluster the platform drains or
	// removes must not stop a claim that serves elsewhere. The plan places
	// on what there is and the status says what is missing (plan.Place).
	out.Fleet = describeClusters(f.Clusters)
	out.Remote = *xr.Spec.DeepCopy()
	out.Remote.Placement = nil
	return out
}

// checkFleet checks what the function relies on in input.fleet: unique
// cluster names, each with a configuration, and a namespace mapping that is
// one to one, so that two claim namespaces never land on the same remote
// name.
func checkFleet(f *v1beta1.Fleet, errs *FieldErrors) {
	seen := map[string]bool{}
	for i, c := range f.Clusters {
		for _, m := range validation.IsDNS1123Label(c.Name) {
			errs.Add(fmt.Sprintf("input.fleet.clusters[%d].name", i), "%q is not a cluster name: %s", c.Name, m)
		}
		if seen[c.Name] {
			errs.Add(fmt.Sprintf("input.fleet.clusters[%d].name", i), "%q is listed twice; give each cluster one entry", c.Name)
		}
		seen[c.Name] = true
		for _, m := range validation.IsDNS1123Subdomain(c.ProviderConfigName) {
			errs.Add(fmt.Sprintf("input.fleet.clusters[%d].providerConfigName", i), "%q is not a ProviderConfig name: %s", c.ProviderConfigName, m)
		}
	}
	from, to := map[string]int{}, map[string]int{}
	for i, m := range f.Namespaces {
		for _, msg := range validation.IsDNS1123Label(m.ClaimNamespace) {
			errs.Add(fmt.Sprintf("input.fleet.namespaces[%d].claimNamespace", i), "%q is not a namespace name: %s", m.ClaimNamespace, msg)
		}
		for _, msg := range validation.IsDNS1123Label(m.Namespace) {
			errs.Add(fmt.Sprintf("input.fleet.namespaces[%d].namespace", i), "%q is not a namespace name: %s", m.Namespace, msg)
		}
		if j, ok := from[m.ClaimNamespace]; ok {
			errs.Add(fmt.Sprintf("input.fleet.namespaces[%d].claimNamespace", i), "%q is mapped twice (also input.fleet.namespaces[%d]); map each claim namespace once", m.ClaimNamespace, j)
		}
		if j, ok := to[m.Namespace]; ok {
			errs.Add(fmt.Sprintf("input.fleet.namespaces[%d].namespace", i), "%q is also the target of input.fleet.namespaces[%d]: two claim namespaces would share remote names; give each its own namespace", m.Namespace, j)
		}
		from[m.ClaimNamespace], to[m.Namespace] = i, i
	}
}

// labelsMatch says whether have has every label of want, with its value.
func labelsMatch(have, want map[string]string) bool {
	for k, v := range want {
		if got, ok := have[k]; !ok || got != v {
			return false
		}
	}
	return true
}

// describeClusters lists clusters with their labels, for a claim author
// choosing a selector.
func describeClusters(cs []v1beta1.WorkloadCluster) string {
	parts := make([]string, 0, len(cs))
	for _, c := range cs {
		keys := make([]string, 0, len(c.Labels))
		for k := range c.Labels {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		labels := make([]string, 0, len(keys))
		for _, k := range keys {
			labels = append(labels, k+"="+c.Labels[k])
		}
		parts = append(parts, fmt.Sprintf("%s {%s}", c.Name, strings.Join(labels, ", ")))
	}
	return strings.Join(parts, "; ")
}
