package fn

import (
	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// plan is everything one call decides for an InferenceService before
// anything is built: for each version, where its weights come from, what
// is observed of it, which weights its servers mount and which of its
// objects are returned; and the parts the versions share (the cache
// volume, the Service <name>, the route, the NetworkPolicies).
//
// newPlan makes it from the resolved spec and the observed objects, once;
// resources builds the objects from it and report the status, and neither
// changes it.
type plan struct {
	spec *resolvedSpec
	// cache is the observed ModelCache of spec.model.cacheRef, nil without
	// one.
	cache    *cachedWeights
	observed observed
	// versions are the spec's versions, the primary first.
	versions []versionPlan
	// volume says the cache volume is composed: a version pulls into it.
	volume bool
	// mainService says the Service <name> is composed. It comes with the
	// first servers of any version, and stays.
	mainService bool
	// route is the split's HTTPRoute, nil when none is composed.
	route *routePlan
}

// versionPlan is one version's part of the plan.
type versionPlan struct {
	*modelVersion
	// source is where the version's weights come from.
	source weightsSource
	// The version's observed objects; nil when not observed.
	deployment *observedDeployment
	hpa        *autoscalingv2.HorizontalPodAutoscaler
	service    *corev1.Service // its own Service, in a split
	// serving is what its servers mount; nil renders no Deployment (the
	// first servers wait for the weights).
	serving *weights
	// renderHPA and renderService say its autoscaler and its own Service
	// are returned.
	renderHPA, renderService bool
}

// routePlan is the HTTPRoute of a split: its weighted backends and what
// the gateway controller said of it.
type routePlan struct {
	backends []routeBackend
	ready    bool
	state    routeState
}

// newPlan decides, for each version of s and from the observed objects o
// and the ModelCache cache (nil without one), what the call returns.
//
// Only the first creation of the servers waits for the weights. Crossplane
// deletes whatever the function stops returning, so once a Deployment,
// Service or autoscaler exists it is returned on every later call. Each
// version of a split goes through the same steps with its own objects.
func newPlan(s *resolvedSpec, cache *cachedWeights, o observed) (*plan, error) {
	p := &plan{spec: s, cache: cache, observed: o}
	for i := range s.Versions {
		v := &s.Versions[i]
		vp := versionPlan{
			modelVersion: v,
			deployment:   o.Deployments[v.deploymentResource()],
			hpa:          o.HPAs[v.hpaResource()],
		}
		if s.Split {
			vp.service = o.VersionServices[v.serviceResource()]
		}
		src, err := newWeightsSource(s, v, cache, o, vp.deployment != nil)
		if err != nil {
			return nil, err
		}
		vp.source = src
		if vp.serving, err = servingWeights(src, vp.deployment); err != nil {
			return nil, decodeError(v.deploymentResource(), err)
		}
		vp.renderHPA = v.autoscaled(s) && (vp.serving != nil || vp.hpa != nil)
		vp.renderService = s.Split && (vp.serving != nil || vp.service != nil)
		p.volume = p.volume || src.ownVolume()
		p.mainService = p.mainService || vp.serving != nil
		p.versions = append(p.versions, vp)
	}
	p.mainService = p.mainService || o.Service != nil

	// The route comes with the primary's Service, and stays.
	if s.Gateway != nil && (p.versions[0].renderService || o.Route != nil) {
		ready := make([]bool, len(p.versions))
		for i, vp := range p.versions {
			ready[i] = vp.renderService && vp.deployment != nil && vp.deployment.Status.ReadyReplicas > 0
		}
		backends := routeBackends(s, ready)
		ok, st := routeReady(s, o.Route, backends)
		p.route = &routePlan{backends: backends, ready: ok, state: st}
	}
	return p, nil
}

// resources builds the plan's objects, each with its readiness, and the
// warnings building them raised.
func (p *plan) resources() ([]composedResource, []string) {
	s, o := p.spec, p.observed
	var out []composedResource
	var warnings []string
	add := func(name string, obj runtime.Object, ready bool) {
		out = append(out, composedResource{Name: name, Object: obj, Ready: ready})
	}
	if p.volume {
		pvc, w := renderPVC(s, o.PVC)
		warnings = append(warnings, w...)
		add(resourcePVC, pvc, pvcBound(o.PVC))
	}
	for _, vp := range p.versions {
		out = append(out, vp.source.resources()...)
		if vp.serving != nil {
			add(vp.deploymentResource(), renderDeployment(s, vp.modelVersion, *vp.serving), deploymentReady(vp.deployment.object()))
		}
		if vp.renderHPA {
			add(vp.hpaResource(), renderHPA(s, vp.modelVersion), hpaReady(vp.hpa))
		}
		if vp.renderService {
			add(vp.serviceResource(), renderVersionService(s, vp.modelVersion), serviceReady(vp.service))
		}
	}
	if p.mainService {
		add(resourceService, renderService(s), serviceReady(o.Service))
	}
	if p.route != nil {
		add(resourceRoute, renderHTTPRoute(s, p.route.backends), p.route.ready)
	}
	if s.NetworkPolicy != nil {
		// From the first call, so the pull pods are covered from their
		// start and the servers from theirs.
		if p.volume {
			add(resourceNetworkPolicyPull, renderPullPolicy(s), networkPolicyReady(o.has(resourceNetworkPolicyPull)))
		}
		add(resourceNetworkPolicy, renderServerPolicy(s), networkPolicyReady(o.has(resourceNetworkPolicy)))
	}
	return out, warnings
}

// waitingForCache says a service on a ModelCache must not be ready whatever
// its composed resources say: until the cache has the weights it may have
// none, and Crossplane calls a composite of no composed resources ready.
func (p *plan) waitingForCache() bool {
	return p.cache != nil && p.cache.State != cacheReady
}

// object is the observed Deployment, nil when there is none.
func (d *observedDeployment) object() *appsv1.Deployment {
	if d == nil {
		return nil
	}
	return d.Deployment
}
