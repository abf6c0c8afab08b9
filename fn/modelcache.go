package fn

import (
	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"github.com/inferno-ai/function-inferno/apis/inference/v1alpha1"
	"github.com/inferno-ai/function-inferno/internal/observe"
	"github.com/inferno-ai/function-inferno/internal/plan"
	"github.com/inferno-ai/function-inferno/internal/reason"
	"github.com/inferno-ai/function-inferno/internal/render"
	"github.com/inferno-ai/function-inferno/internal/resolve"
	"github.com/inferno-ai/function-inferno/internal/status"
	"google.golang.org/protobuf/types/known/structpb"
)

// A ModelCache composes what an InferenceService composes for its weights,
// and nothing else: the volume (<name>-cache) and one pull Job per
// revision, built by the same builders. InferenceServices mount it through
// spec.model.cacheRef, so the weights outlive each of them.

// isModelCache reports whether the observed composite is a ModelCache.
func isModelCache(xr *structpb.Struct) bool {
	kind := xr.GetFields()["kind"].GetStringValue()
	return kind == v1alpha1.CacheCompositeKind || kind == v1alpha1.CacheClaimKind
}

// composeCache decides what a ModelCache returns: its volume and a pull Job
// per revision, each ready as for an InferenceService, and its status.
// Each revision's weights are pulled as an InferenceService's are
// (pulledWeights), by the same builders.
func composeCache(s *resolve.Spec, ocds map[string]*fnv1.Resource) (composition, error) {
	var c composition
	o, err := observe.Decode(ocds)
	if err != nil {
		return c, err
	}
	pulls := make([]*plan.PulledWeights, len(s.Versions))
	for i := range s.Versions {
		if pulls[i], err = plan.NewPulledWeights(s, &s.Versions[i], o); err != nil {
			return c, err
		}
	}
	pvc, warnings := render.PVC(s, o.PVC)
	c.Resources = append(c.Resources, render.Resource{Name: render.ResourcePVC, Object: pvc, Ready: render.PVCBound(o.PVC)})
	for _, p := range pulls {
		c.Resources = append(c.Resources, p.Resources()...)
	}
	if s.NetworkPolicy != nil {
		c.Resources = append(c.Resources, render.Resource{Name: render.ResourceNetworkPolicyPull, Object: render.PullPolicy(s), Ready: render.NetworkPolicyReady(o.Has(render.ResourceNetworkPolicyPull))})
	}
	st, cond := status.CacheStatusFor(s, pulls)
	c.CacheStatus = &st
	c.Report.Conditions = []reason.Condition{cond}
	c.Report.Warnings = warnings
	return c, nil
}
