package plan

import (
	"sort"
	"strings"

	"github.com/inferno-ai/function-inferno/internal/observe"
	"github.com/inferno-ai/function-inferno/internal/render"
	"github.com/inferno-ai/function-inferno/internal/resolve"
	corev1 "k8s.io/api/core/v1"
)

// departing is a version the spec no longer names (a canary
// removed or promoted, the old primary's version after a promotion) whose
// objects are still observed.
type departing struct {
	resolve.Version
	Deployment *observe.Deployment
	service    *corev1.Service
	// serving are the weights its Deployment's template records.
	serving render.Weights
	// RenderDeployment says its servers are kept, at their observed count
	// (departing versions keep their servers until the plan is settled);
	// renderService that its Service is kept (with its servers, or while
	// the observed route still names it).
	RenderDeployment, renderService bool
}

// departingVersions finds the observed objects of versions s no longer
// names: Deployments deployment-<version> of no canary of s, and Services
// service-<version> of no version of a split. A Deployment is kept while
// the plan is not settled, and only when its template records the weights
// it serves (then the builder renders it again as it was); a Service with
// its Deployment, or while the plan is not settled, or while the observed
// route names it.
func departingVersions(s *resolve.Spec, o observe.Objects, settled bool) []departing {
	current := map[string]bool{}
	for i := range s.Versions {
		current[s.Versions[i].Model.Version] = true
	}
	byVersion := map[string]*departing{}
	get := func(version string) *departing {
		d := byVersion[version]
		if d == nil {
			d = &departing{Version: resolve.Version{Model: resolve.Model{Version: version}}}
			byVersion[version] = d
		}
		return d
	}
	for name, d := range o.Deployments {
		version, ok := strings.CutPrefix(name, render.ResourceDeployment+"-")
		if !ok || version == "" || current[version] && !s.VersionNamed(version).Primary {
			continue
		}
		get(version).Deployment = d
	}
	for name, svc := range o.VersionServices {
		version, ok := strings.CutPrefix(name, render.ResourceService+"-")
		if !ok || version == "" || current[version] && s.Split {
			continue
		}
		get(version).service = svc
	}
	named := o.RouteServices()
	var out []departing
	for _, d := range byVersion {
		if d.Deployment != nil && !settled {
			t, err := d.Deployment.ServedTemplate()
			if err == nil {
				d.serving, d.RenderDeployment = render.ServedWeights(t)
			}
		}
		d.renderService = d.service != nil && (!settled || d.RenderDeployment || named[d.VersionServiceName(s)])
		out = append(out, *d)
	}
	sort.Slice(out, func(a, b int) bool { return out[a].Model.Version < out[b].Model.Version })
	return out
}

// KeepsDepartingServers says a departing version's servers are kept.
func (p *Plan) KeepsDepartingServers() bool {
	for _, d := range p.Departing {
		if d.RenderDeployment {
			return true
		}
	}
	return false
}

// readyOfVersion counts the servers ready behind a version's Service, which
// selects the servers of that version label (versionSelector) whichever
// Deployment runs them: the Deployments the plan returns, each on its
// current template, at least.
func (p *Plan) readyOfVersion(version string) int32 {
	n := int32(0)
	for _, d := range p.servedDeployments() {
		if d.TemplateMeta("labels", resolve.LabelVersion) == version {
			n += d.ReadyOnTemplate()
		}
	}
	return n
}

// readyOfAll counts every server ready behind the Service <name>.
func (p *Plan) readyOfAll() int32 {
	n := int32(0)
	for _, d := range p.servedDeployments() {
		if d.Current() {
			n += d.Status.ReadyReplicas
		}
	}
	return n
}

// servedDeployments are the observed Deployments the plan returns.
func (p *Plan) servedDeployments() []*observe.Deployment {
	var out []*observe.Deployment
	for _, vp := range p.Versions {
		if vp.Serving != nil && vp.Deployment != nil {
			out = append(out, vp.Deployment)
		}
	}
	for _, d := range p.Departing {
		if d.RenderDeployment {
			out = append(out, d.Deployment)
		}
	}
	return out
}
