package fn

import (
	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"github.com/inferno-ai/function-inferno/internal/observe"
	"github.com/inferno-ai/function-inferno/internal/resolve"
	"google.golang.org/protobuf/proto"
)

// requireCache asks Crossplane for the service's ModelCache. It asks
// through both the current and the deprecated field: Crossplane v2 reads
// either, Crossplane v1 only the deprecated one.
func requireCache(rsp *fnv1.RunFunctionResponse, s *resolve.Spec) {
	sel := observe.CacheRequirement(s)
	if sel == nil {
		return
	}
	if rsp.Requirements == nil {
		rsp.Requirements = &fnv1.Requirements{}
	}
	if rsp.Requirements.Resources == nil {
		rsp.Requirements.Resources = map[string]*fnv1.ResourceSelector{}
	}
	rsp.Requirements.Resources[observe.RequirementCache] = sel
	if rsp.Requirements.ExtraResources == nil { //nolint:staticcheck // Crossplane v1 reads only this field.
		rsp.Requirements.ExtraResources = map[string]*fnv1.ResourceSelector{} //nolint:staticcheck // See above.
	}
	rsp.Requirements.ExtraResources[observe.RequirementCache] = proto.Clone(sel).(*fnv1.ResourceSelector) //nolint:staticcheck // See above.
}

// requireSecrets asks Crossplane for every Secret the claim names as
// credentials, as requireCache asks for a ModelCache, through both
// requirement fields.
func requireSecrets(rsp *fnv1.RunFunctionResponse, s *resolve.Spec) {
	sels := observe.SecretRequirements(s)
	if len(sels) == 0 {
		return
	}
	if rsp.Requirements == nil {
		rsp.Requirements = &fnv1.Requirements{}
	}
	if rsp.Requirements.Resources == nil {
		rsp.Requirements.Resources = map[string]*fnv1.ResourceSelector{}
	}
	if rsp.Requirements.ExtraResources == nil { //nolint:staticcheck // Crossplane v1 reads only this field.
		rsp.Requirements.ExtraResources = map[string]*fnv1.ResourceSelector{} //nolint:staticcheck // See above.
	}
	for key, sel := range sels {
		rsp.Requirements.Resources[key] = sel
		rsp.Requirements.ExtraResources[key] = proto.Clone(sel).(*fnv1.ResourceSelector) //nolint:staticcheck // See above.
	}
}

// requireServices asks Crossplane for the Services of names, as
// requireCache asks for a ModelCache, through both requirement fields.
func requireServices(rsp *fnv1.RunFunctionResponse, s *resolve.Spec, names []observe.ClaimedService) {
	if len(names) == 0 {
		return
	}
	if rsp.Requirements == nil {
		rsp.Requirements = &fnv1.Requirements{}
	}
	if rsp.Requirements.Resources == nil {
		rsp.Requirements.Resources = map[string]*fnv1.ResourceSelector{}
	}
	if rsp.Requirements.ExtraResources == nil { //nolint:staticcheck // Crossplane v1 reads only this field.
		rsp.Requirements.ExtraResources = map[string]*fnv1.ResourceSelector{} //nolint:staticcheck // See above.
	}
	for _, n := range names {
		sel := &fnv1.ResourceSelector{
			ApiVersion: "v1",
			Kind:       "Service",
			Match:      &fnv1.ResourceSelector_MatchName{MatchName: n.Name},
			Namespace:  proto.String(s.Namespace),
		}
		rsp.Requirements.Resources[observe.RequirementServicePrefix+n.Name] = sel
		rsp.Requirements.ExtraResources[observe.RequirementServicePrefix+n.Name] = proto.Clone(sel).(*fnv1.ResourceSelector) //nolint:staticcheck // See above.
	}
}
