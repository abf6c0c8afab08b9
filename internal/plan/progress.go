package plan

import (
	"github.com/inferno-ai/function-inferno/internal/observe"
	"github.com/inferno-ai/function-inferno/internal/render"
	"github.com/inferno-ai/function-inferno/internal/resolve"
)

// progressResources are a reporting pull's ConfigMap, ServiceAccount,
// Role and RoleBinding, each ready once observed: none of them has a
// status to wait for.
func progressResources(s *resolve.Spec, v *resolve.Version, o observe.Objects) []render.Resource {
	h := v.Model.Hash
	return []render.Resource{
		render.Judged(render.ResourceProgressPrefix+h, render.ProgressConfigMap(s, v), o.Observed(render.ResourceProgressPrefix+h)),
		render.Judged(render.ResourceProgressSAPrefix+h, render.ProgressServiceAccount(s, v), o.Observed(render.ResourceProgressSAPrefix+h)),
		render.Judged(render.ResourceProgressRolePrefix+h, render.ProgressRole(s, v), o.Observed(render.ResourceProgressRolePrefix+h)),
		render.Judged(render.ResourceProgressBindingPrefix+h, render.ProgressRoleBinding(s, v), o.Observed(render.ResourceProgressBindingPrefix+h)),
	}
}

// progressMessage is what the WeightsReady message adds while a reporting
// pull runs.
func (p *PulledWeights) progressMessage() string {
	if p.s.Progress == nil {
		return ""
	}
	if p.Report == nil {
		return "; no progress report yet"
	}
	msg := ": " + p.Report.Words()
	if p.Report.UpdatedAt != "" {
		msg += " (reported " + p.Report.UpdatedAt + ")"
	}
	return msg
}
