package plan

import (
	"github.com/inferno-ai/function-inferno/internal/observe"
	"github.com/inferno-ai/function-inferno/internal/render"
	"github.com/inferno-ai/function-inferno/internal/resolve"
)

// Cache is a ModelCache's plan: what an InferenceService composes for its
// weights and nothing else, the volume and one pull per revision, each
// judged as an InferenceService's are and built by the same builders.
type Cache struct {
	Spec     *resolve.Spec
	Observed observe.Objects
	// Pulls are the revisions' pulls, in the spec's order.
	Pulls []*PulledWeights
}

// NewCache plans a resolved ModelCache from its observed objects.
func NewCache(s *resolve.Spec, o observe.Objects) (*Cache, error) {
	c := &Cache{Spec: s, Observed: o, Pulls: make([]*PulledWeights, len(s.Versions))}
	for i := range s.Versions {
		p, err := NewPulledWeights(s, &s.Versions[i], o)
		if err != nil {
			return nil, err
		}
		c.Pulls[i] = p
	}
	return c, nil
}

// Resources builds the cache's objects, each with its readiness, and the
// warnings building them raised.
func (c *Cache) Resources() ([]render.Resource, []string) {
	s, o := c.Spec, c.Observed
	pvc, warnings := render.PVC(s, o.PVC)
	out := []render.Resource{render.Judged(render.ResourcePVC, pvc, o.PVC)}
	for _, p := range c.Pulls {
		out = append(out, p.Resources()...)
	}
	if s.NetworkPolicy != nil {
		out = append(out, render.Judged(render.ResourceNetworkPolicyPull, render.PullPolicy(s), o.Observed(render.ResourceNetworkPolicyPull)))
	}
	return out, warnings
}
