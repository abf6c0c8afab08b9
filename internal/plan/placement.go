package plan

import (
	"fmt"
	"hash/fnv"
	"sort"
	"strings"

	"github.com/inferno-ai/function-inferno/internal/observe"
	"github.com/inferno-ai/function-inferno/internal/render"
	"github.com/inferno-ai/function-inferno/internal/resolve"
)

// Placement is what one call decides for a claim with spec.placement:
// which workload clusters serve it, and which that no longer should are
// kept until their replacements serve.
type Placement struct {
	Spec *resolve.Spec
	// Serving are the chosen clusters, the sticky ones first.
	Serving []Placed
	// Leaving are clusters that serve the claim and should not any more
	// (draining, no longer offered or matching, or over the count), kept
	// because not every chosen cluster serves yet: make before break
	// across clusters.
	Leaving []Placed
	// Skipped says, for each candidate that could not take the claim, why
	// (draining, no capacity), in the Input's order.
	Skipped []string
}

// Placed is one workload cluster the claim is composed for.
type Placed struct {
	Cluster, ProviderConfigName string
	// Observed is its Object as observed; nil before it exists.
	Observed *observe.Remote
}

// Ready says the cluster serves the claim (render.ObjectReady).
func (p Placed) Ready() bool { return p.Observed != nil && p.Observed.Ready }

// Place decides where a placed claim is served. It is a pure function of
// the resolved placement and the observed Objects:
//
//  1. A cluster that serves the claim stays chosen while it is still a
//     candidate and not draining, whatever the other clusters look like,
//     up to the count (clusters that are ready first). Lack of free
//     capacity does not move it: its own share is already counted.
//  2. The rest of the count is filled from candidates that take new
//     placements, spreading over the values of spec.placement.spreadBy,
//     then in an order of this claim's own (rendezvous hashing of the
//     claim and the cluster), so that claims spread over the fleet and
//     the order never changes with other claims.
//  3. A cluster that served and is not chosen is kept, composed as it
//     was, until every chosen cluster serves: its replacement serves
//     before it is removed. A claim with nowhere else to go therefore
//     keeps serving where it is.
func Place(s *resolve.Spec, observed map[string]*observe.Remote) *Placement {
	pl := s.Placement
	out := &Placement{Spec: s}
	cands := make(map[string]resolve.Candidate, len(pl.Candidates))
	for _, c := range pl.Candidates {
		cands[c.Name] = c
	}
	rank := func(cluster string) uint64 {
		h := fnv.New64a()
		h.Write([]byte(pl.Key + "\x00" + cluster))
		return h.Sum64()
	}

	current := make([]string, 0, len(observed))
	for c := range observed {
		current = append(current, c)
	}
	sort.Slice(current, func(i, j int) bool {
		a, b := observed[current[i]], observed[current[j]]
		if a.Ready != b.Ready {
			return a.Ready
		}
		return rank(current[i]) < rank(current[j])
	})
	chosen := map[string]bool{}
	for _, c := range current {
		cand, ok := cands[c]
		if !ok || cand.Draining || len(out.Serving) == pl.Count {
			continue
		}
		out.Serving = append(out.Serving, Placed{Cluster: c, ProviderConfigName: cand.ProviderConfigName, Observed: observed[c]})
		chosen[c] = true
	}

	var free []resolve.Candidate
	for _, c := range pl.Candidates {
		switch {
		case chosen[c.Name]:
		case c.Full != "":
			out.Skipped = append(out.Skipped, c.Name+": "+c.Full)
		default:
			free = append(free, c)
		}
	}
	spread := map[string]int{}
	for _, p := range out.Serving {
		spread[cands[p.Cluster].Labels[pl.SpreadBy]]++
	}
	for len(out.Serving) < pl.Count && len(free) > 0 {
		best := 0
		for i := 1; i < len(free); i++ {
			bi, ci := spread[free[best].Labels[pl.SpreadBy]], spread[free[i].Labels[pl.SpreadBy]]
			if ci < bi || (ci == bi && rank(free[i].Name) < rank(free[best].Name)) {
				best = i
			}
		}
		c := free[best]
		free = append(free[:best], free[best+1:]...)
		spread[c.Labels[pl.SpreadBy]]++
		out.Serving = append(out.Serving, Placed{Cluster: c.Name, ProviderConfigName: c.ProviderConfigName, Observed: observed[c.Name]})
		chosen[c.Name] = true
	}

	if out.allReady() {
		return out
	}
	sort.Strings(current)
	for _, c := range current {
		if chosen[c] {
			continue
		}
		// The platform's configuration while it still offers the
		// cluster; else the one the Object was rendered with.
		pc := observed[c].ProviderConfigName
		if o, ok := pl.Offered[c]; ok {
			pc = o.ProviderConfigName
		}
		if pc == "" {
			continue
		}
		out.Leaving = append(out.Leaving, Placed{Cluster: c, ProviderConfigName: pc, Observed: observed[c]})
	}
	return out
}

// allReady says the count is met and every chosen cluster serves.
func (p *Placement) allReady() bool {
	if len(p.Serving) < p.Spec.Placement.Count {
		return false
	}
	for _, c := range p.Serving {
		if !c.Ready() {
			return false
		}
	}
	return true
}

// Changing says the placement is not settled: a chosen cluster does not
// serve yet, or a leaving one is still kept.
func (p *Placement) Changing() bool { return !p.allReady() || len(p.Leaving) > 0 }

// Short says why fewer clusters than asked serve the claim, empty when
// the count is met.
func (p *Placement) Short() string {
	pl := p.Spec.Placement
	if len(p.Serving) >= pl.Count {
		return ""
	}
	why := "no other offered cluster matches"
	switch {
	case len(pl.Candidates) == 0:
		why = "no offered cluster matches spec.placement (offered: " + pl.Fleet + ")"
	case len(p.Skipped) > 0:
		why = "skipped " + strings.Join(p.Skipped, "; ")
	}
	return fmt.Sprintf("%d of %d clusters: %s", len(p.Serving), pl.Count, why)
}

// Resources builds an Object per chosen and leaving cluster, judged by
// render.ObjectReady.
func (p *Placement) Resources() ([]render.Resource, error) {
	out := make([]render.Resource, 0, len(p.Serving)+len(p.Leaving))
	for _, c := range append(append([]Placed(nil), p.Serving...), p.Leaving...) {
		o, err := render.ClusterObject(p.Spec, c.Cluster, c.ProviderConfigName)
		if err != nil {
			return nil, err
		}
		out = append(out, render.Resource{Name: render.ClusterResource(c.Cluster), Object: o, Ready: c.Ready()})
	}
	return out, nil
}
