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

// progressMessage is what status.message adds while a reporting pull
// runs (the WeightsReady condition goes without it).
func (p *PulledWeights) progressMessage() string {
	return progressMessage(p.s, p.Report)
}

// progressMessage is what a running pull's message adds when pulls report
// their progress: report r in words, or that none came yet.
func progressMessage(s *resolve.Spec, r *observe.ProgressReport) string {
	if s.Progress == nil {
		return ""
	}
	if r == nil {
		return "; no progress report yet"
	}
	msg := ": " + r.Words()
	if r.UpdatedAt != "" {
		msg += " (reported " + r.UpdatedAt + ")"
	}
	return msg
}
