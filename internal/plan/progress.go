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
		{Name: render.ResourceProgressPrefix + h, Object: render.ProgressConfigMap(s, v), Ready: o.Has(render.ResourceProgressPrefix + h)},
		{Name: render.ResourceProgressSAPrefix + h, Object: render.ProgressServiceAccount(s, v), Ready: o.Has(render.ResourceProgressSAPrefix + h)},
		{Name: render.ResourceProgressRolePrefix + h, Object: render.ProgressRole(s, v), Ready: o.Has(render.ResourceProgressRolePrefix + h)},
		{Name: render.ResourceProgressBindingPrefix + h, Object: render.ProgressRoleBinding(s, v), Ready: o.Has(render.ResourceProgressBindingPrefix + h)},
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
