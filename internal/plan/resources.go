package plan

import (
	"github.com/inferno-ai/function-inferno/internal/render"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
)

// Resources builds the plan's objects, each with its readiness, and the
// warnings building them raised.
func (p *Plan) Resources() ([]render.Resource, []string) {
	s, o := p.Spec, p.Observed
	var out []render.Resource
	var warnings []string
	add := func(name string, obj runtime.Object, ready bool) {
		out = append(out, render.Resource{Name: name, Object: obj, Ready: ready})
	}
	if p.volume {
		pvc, w := render.PVC(s, o.PVC)
		warnings = append(warnings, w...)
		add(render.ResourcePVC, pvc, render.PVCBound(o.PVC))
	}
	for _, a := range p.Adapters {
		add(a.Job.Resource, a.Job.Job, a.Pull == render.JobComplete)
	}
	for _, vp := range p.Versions {
		out = append(out, vp.Source.Resources()...)
		autoscaled := vp.Autoscaled(s)
		if vp.Serving != nil && s.Groups() {
			add(render.ResourceLeaderWorkerSet, render.LeaderWorkerSet(s, vp.Version, *vp.Serving, vp.Servers), render.LWSReady(vp.LWS))
		} else if vp.Serving != nil {
			var replicas *int32
			if !autoscaled || vp.liftFromZero(s) {
				replicas = ptr.To(vp.Servers)
			}
			add(render.DeploymentResource(vp.Version), render.Deployment(s, vp.Version, *vp.Serving, replicas), render.DeploymentReady(vp.Deployment.Object()))
		}
		if vp.renderHPA {
			add(render.HPAResource(vp.Version), render.HPA(s, vp.Version, vp.Servers, max(vp.MaxReplicas, vp.Servers)), render.HPAReady(vp.HPA))
		}
		if vp.renderScaledObject {
			add(render.ScaledObjectResource(vp.Version), render.ScaledObject(s, vp.Version, vp.MaxReplicas), render.ScaledObjectReady(vp.Scaled))
		}
		if vp.renderHTTPScaledObject {
			add(render.HTTPScaledObjectResource(vp.Version), render.HTTPScaledObject(s, vp.Version, vp.MaxReplicas), render.HTTPScaledObjectReady(vp.HTTPScaled))
		}
		if vp.RenderService {
			add(render.ServiceResource(vp.Version), render.VersionService(s, vp.Version), render.ServiceReady(vp.service))
		}
	}
	for _, d := range p.Departing {
		if d.RenderDeployment {
			// Its count as observed, and no autoscaler: nothing scales a
			// version that is leaving.
			count := render.DesiredReplicas(d.Deployment.Deployment)
			add(render.DeploymentResource(&d.Version), render.Deployment(s, &d.Version, d.serving, ptr.To(count)), render.DeploymentReady(d.Deployment.Object()))
		}
		if d.renderService {
			add(render.ServiceResource(&d.Version), render.VersionService(s, &d.Version), render.ServiceReady(d.service))
		}
	}
	if p.MainService {
		add(render.ResourceService, render.Service(s, p.KeepsDepartingServers()), render.ServiceReady(o.Service))
	}
	switch {
	case p.Route != nil && p.Route.Pool:
		add(render.ResourceRoute, render.PoolRoute(s), p.Route.ready)
	case p.Route != nil:
		add(render.ResourceRoute, render.HTTPRoute(s, p.Route.Backends), p.Route.ready)
	}
	if p.Pool != nil {
		add(render.ResourcePool, render.InferencePool(s), p.Pool.ready)
		add(render.ResourcePickerConfig, render.PickerConfig(s), o.Has(render.ResourcePickerConfig))
		add(render.ResourcePickerServiceAccount, render.PickerServiceAccount(s), o.Has(render.ResourcePickerServiceAccount))
		add(render.ResourcePickerRole, render.PickerRole(s), o.Has(render.ResourcePickerRole))
		add(render.ResourcePickerRoleBinding, render.PickerRoleBinding(s), o.Has(render.ResourcePickerRoleBinding))
		add(render.ResourcePicker, render.PickerDeployment(s), p.Pool.PickerReady)
		add(render.ResourcePickerService, render.PickerService(s), o.Has(render.ResourcePickerService))
	}
	if s.NetworkPolicy != nil {
		// From the first call, so the pull pods are covered from their
		// start and the servers from theirs.
		if p.volume {
			add(render.ResourceNetworkPolicyPull, render.PullPolicy(s), render.NetworkPolicyReady(o.Has(render.ResourceNetworkPolicyPull)))
		}
		add(render.ResourceNetworkPolicy, render.ServerPolicy(s), render.NetworkPolicyReady(o.Has(render.ResourceNetworkPolicy)))
	}
	if s.PodMonitor != nil {
		add(render.ResourcePodMonitor, render.PodMonitor(s), o.Has(render.ResourcePodMonitor))
	}
	return out, warnings
}
