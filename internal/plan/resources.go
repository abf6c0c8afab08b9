package plan

import (
	"github.com/inferno-ai/function-inferno/internal/render"
	"github.com/inferno-ai/function-inferno/internal/resolve"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
)

// Resources builds the plan's objects, each with its readiness, and the
// warnings building them raised.
func (p *Plan) Resources() ([]render.Resource, []string) {
	s, o := p.Spec, p.Observed
	var out []render.Resource
	var warnings []string
	// add returns an object, judged by its kind's rule on what is
	// observed of it.
	add := func(name string, desired, observed runtime.Object) {
		out = append(out, render.Judged(name, desired, observed))
	}
	// addDevices returns a version's ResourceClaimTemplate with GPUs
	// through DRA, beside the servers that name it: a pod whose template
	// is not there yet waits, and gets its claim once it is.
	addDevices := func(v *resolve.Version) {
		if s.Devices == nil {
			return
		}
		t := render.ResourceClaimTemplate(s, v)
		add(t.Resource, t.Template, o.Observed(t.Resource))
	}
	if p.volume {
		pvc, w := render.PVC(s, o.PVC)
		warnings = append(warnings, w...)
		add(render.ResourcePVC, pvc, o.PVC)
	}
	for _, a := range p.Adapters {
		if !a.Held {
			add(a.Job.Resource, a.Job.Job, a.observed)
		}
		if s.Progress != nil {
			// The adapter's pull Job runs under its own progress
			// ServiceAccount (render.PullJob), as the model's does.
			out = append(out, progressResources(s, &resolve.Version{Model: a.Model, Puller: a.Puller}, o)...)
		}
	}
	for _, vp := range p.Versions {
		out = append(out, vp.Source.Resources()...)
		autoscaled := vp.Autoscaled(s)
		if vp.Serving != nil {
			addDevices(vp.Version)
		}
		if vp.Serving != nil && s.Groups() {
			add(render.ResourceLeaderWorkerSet, render.LeaderWorkerSet(s, vp.Version, *vp.Serving, vp.Servers), vp.LWS)
		} else if vp.Serving != nil {
			var replicas *int32
			if !autoscaled || vp.liftFromZero(s) {
				replicas = ptr.To(vp.Servers)
			}
			add(render.DeploymentResource(vp.Version), render.Deployment(s, vp.Version, *vp.Serving, replicas), vp.Deployment.Object())
		}
		if vp.renderHPA {
			add(render.HPAResource(vp.Version), render.HPA(s, vp.Version, vp.Servers, max(vp.MaxReplicas, vp.Servers)), vp.HPA)
		}
		if vp.renderScaledObject {
			add(render.ScaledObjectResource(vp.Version), render.ScaledObject(s, vp.Version, vp.MaxReplicas), vp.Scaled)
		}
		if vp.renderHTTPScaledObject {
			add(render.HTTPScaledObjectResource(vp.Version), render.HTTPScaledObject(s, vp.Version, vp.MaxReplicas), vp.HTTPScaled)
		}
		if vp.RenderService {
			add(render.ServiceResource(vp.Version), render.VersionService(s, vp.Version), vp.service)
		}
	}
	for _, d := range p.Departing {
		if d.RenderDeployment {
			addDevices(&d.Version)
		}
		if d.RenderDeployment {
			// Its count as observed, and no autoscaler: nothing scales a
			// version that is leaving.
			count := render.DesiredReplicas(d.Deployment.Deployment)
			add(render.DeploymentResource(&d.Version), render.Deployment(s, &d.Version, d.serving, ptr.To(count)), d.Deployment.Object())
		}
		if d.renderService {
			add(render.ServiceResource(&d.Version), render.VersionService(s, &d.Version), d.service)
		}
	}
	if p.MainService {
		add(render.ResourceService, render.Service(s, p.KeepsDepartingServers()), o.Service)
	}
	switch {
	case p.Route != nil && p.Route.Pool:
		out = append(out, render.Resource{Name: render.ResourceRoute, Object: render.PoolRoute(s), Ready: p.Route.ready})
	case p.Route != nil:
		out = append(out, render.Resource{Name: render.ResourceRoute, Object: render.HTTPRoute(s, p.Route.Backends), Ready: p.Route.ready})
	}
	if p.Pool != nil {
		out = append(out, render.Resource{Name: render.ResourcePool, Object: render.InferencePool(s), Ready: p.Pool.ready})
		add(render.ResourcePickerConfig, render.PickerConfig(s), o.Observed(render.ResourcePickerConfig))
		add(render.ResourcePickerServiceAccount, render.PickerServiceAccount(s), o.Observed(render.ResourcePickerServiceAccount))
		add(render.ResourcePickerRole, render.PickerRole(s), o.Observed(render.ResourcePickerRole))
		add(render.ResourcePickerRoleBinding, render.PickerRoleBinding(s), o.Observed(render.ResourcePickerRoleBinding))
		add(render.ResourcePicker, render.PickerDeployment(s), o.Picker)
		add(render.ResourcePickerService, render.PickerService(s), o.PickerService)
	}
	if s.NetworkPolicy != nil {
		// From the first call, so the pull pods are covered from their
		// start and the servers from theirs.
		if p.volume {
			add(render.ResourceNetworkPolicyPull, render.PullPolicy(s), o.Observed(render.ResourceNetworkPolicyPull))
		}
		add(render.ResourceNetworkPolicy, render.ServerPolicy(s), o.Observed(render.ResourceNetworkPolicy))
		if s.Groups() {
			// One per group the LeaderWorkerSet may run, surge groups
			// included; a group without its policy cannot form.
			vp := p.Versions[0]
			groups := vp.Servers
			if vp.LWS != nil {
				groups = max(groups, render.DesiredGroups(vp.LWS))
			}
			for i := range render.GroupCount(s, groups) {
				add(render.GroupPolicyResource(i), render.GroupPolicy(s, i), o.Observed(render.GroupPolicyResource(i)))
			}
		}
		if p.Pool != nil {
			add(render.ResourceNetworkPolicyPicker, render.PickerPolicy(s), o.Observed(render.ResourceNetworkPolicyPicker))
		}
	}
	if s.PodMonitor != nil {
		add(render.ResourcePodMonitor, render.PodMonitor(s), o.Observed(render.ResourcePodMonitor))
	}
	return out, warnings
}
