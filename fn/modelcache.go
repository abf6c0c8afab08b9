package fn

import (
	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"github.com/inferno-ai/function-inferno/apis/inference/v1alpha1"
	"github.com/inferno-ai/function-inferno/internal/observe"
	"github.com/inferno-ai/function-inferno/internal/plan"
	"github.com/inferno-ai/function-inferno/internal/reason"
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

// composeCache composes a resolved ModelCache, in the same direction as
// compose: observe, plan, build the plan's objects, report.
func composeCache(s *resolve.Spec, secrets observe.Secrets, ocds map[string]*fnv1.Resource) (composition, error) {
	o, err := observe.Decode(ocds)
	if err != nil {
		return composition{}, err
	}
	o.Secrets = secrets
	p, err := plan.NewCache(s, o)
	if err != nil {
		return composition{}, err
	}
	resources, warnings := p.Resources()
	st, cond := status.OfCache(p)
	return composition{
		Resources:   resources,
		CacheStatus: &st,
		Report:      status.Report{Conditions: []reason.Condition{cond}, Warnings: warnings},
	}, nil
}
