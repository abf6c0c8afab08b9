package fn

import (
	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"github.com/inferno-ai/function-inferno/internal/observe"
	"github.com/inferno-ai/function-inferno/internal/resolve"
	"google.golang.org/protobuf/proto"
)

// requireCache asks Crossplane for the service's ModelCache, its
// composite and its volume claim, and says whether it asked.
func requireCache(rsp *fnv1.RunFunctionResponse, s *resolve.Spec) bool {
	reqs := observe.CacheRequirements(s)
	for key, sel := range reqs {
		require(rsp, key, sel)
	}
	return len(reqs) > 0
}

// requireSecrets asks Crossplane for every Secret the claim names as
// credentials.
func requireSecrets(rsp *fnv1.RunFunctionResponse, s *resolve.Spec) {
	for key, sel := range observe.SecretRequirements(s) {
		require(rsp, key, sel)
	}
}

// requireServices asks Crossplane for the Services of names, to see
// whether another owner holds one.
func requireServices(rsp *fnv1.RunFunctionResponse, s *resolve.Spec, names []observe.ClaimedService) {
	for _, n := range names {
		require(rsp, observe.RequirementServicePrefix+n.Name, &fnv1.ResourceSelector{
			ApiVersion: "v1",
			Kind:       "Service",
			Match:      &fnv1.ResourceSelector_MatchName{MatchName: n.Name},
			Namespace:  proto.String(s.Namespace),
		})
	}
}

// require asks Crossplane for one resource under key. It asks through both
// the current and the deprecated field: Crossplane v2 reads either,
// Crossplane v1 only the deprecated one.
func require(rsp *fnv1.RunFunctionResponse, key string, sel *fnv1.ResourceSelector) {
	if rsp.Requirements == nil {
		rsp.Requirements = &fnv1.Requirements{}
	}
	if rsp.Requirements.Resources == nil {
		rsp.Requirements.Resources = map[string]*fnv1.ResourceSelector{}
	}
	if rsp.Requirements.ExtraResources == nil { //nolint:staticcheck // Crossplane v1 reads only this field.
		rsp.Requirements.ExtraResources = map[string]*fnv1.ResourceSelector{} //nolint:staticcheck // See above.
	}
	rsp.Requirements.Resources[key] = sel
	rsp.Requirements.ExtraResources[key] = proto.Clone(sel).(*fnv1.ResourceSelector) //nolint:staticcheck // See above.
}
