package plan

import (
	"github.com/inferno-ai/function-inferno/internal/kinds/keda"
	"github.com/inferno-ai/function-inferno/internal/kinds/lws"
	"github.com/inferno-ai/function-inferno/internal/observe"
	"github.com/inferno-ai/function-inferno/internal/render"
	"github.com/inferno-ai/function-inferno/internal/resolve"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
)

// Plan is everything one call decides for an InferenceService before
// anything is built: for each version, where its weights come from, what
// is observed of it, which weights its servers mount, how many servers it
// runs and which of its objects are returned; and the parts the versions
// share (the cache volume, the Service <name>, the route, the
// NetworkPolicies).
//
// New makes it from the resolved spec and the observed objects, once;
// resources builds the objects from it and report the status, and neither
// changes it.
type Plan struct {
	Spec *resolve.Spec
	// cache is the observed ModelCache of spec.model.cacheRef, nil without
	// one.
	cache    *observe.CachedWeights
	Observed observe.Objects
	// Versions are the spec's versions, the primary first.
	Versions []Version
	// Departing are the versions the spec no longer names whose objects
	// are still returned (see New), by version.
	Departing []departing
	// settled says every version has the servers it wants ready on the
	// weights it wants: no version is held above its share, and no
	// departing version keeps its servers.
	settled bool
	// volume says the cache volume is composed: a version pulls into it.
	volume bool
	// MainService says the Service <name> is composed. It comes with the
	// first servers of any version, and stays.
	MainService bool
	// Route is the HTTPRoute, nil when none is composed.
	Route *route
	// Adapters are spec.adapters' pulls (adapters.go), served by the
	// primary's servers.
	Adapters []Adapter
	// Pool is the InferencePool and its endpoint picker, nil when none is
	// composed.
	Pool *pool
}

// Version is one version's part of the plan.
type Version struct {
	*resolve.Version
	// Source is where the version's weights come from.
	Source weightsSource
	// The version's observed objects; nil when not observed.
	Deployment *observe.Deployment
	HPA        *autoscalingv2.HorizontalPodAutoscaler
	Scaled     *keda.ScaledObject // its KEDA ScaledObject, scaling to zero
	HTTPScaled *keda.HTTPScaledObject
	service    *corev1.Service // its own Service, in a split
	// LWS replaces deployment when the servers are groups (s.groups()).
	LWS *lws.LeaderWorkerSet
	// Serving is what its servers mount; nil renders no Deployment (the
	// first servers wait for the weights).
	Serving *render.Weights
	// Target is the servers its weight asks for (apportioned): its
	// Deployment's replicas, or its autoscaler's floor.
	Target int32
	// Servers is what it runs this call: target, or more while it is held
	// (make before break, see New).
	Servers int32
	// Held says servers is above target; growing that the version waits
	// for servers that another version's held (or departing) servers
	// stand in for.
	Held, Growing bool
	// Ready is how many of its servers are ready on the weights it wants.
	Ready int32
	// renderHPA, renderScaledObject and renderService say its
	// autoscaler (an HPA, or a ScaledObject when it scales to zero) and
	// its own Service are returned.
	renderHPA, renderScaledObject, RenderService bool
	// renderHTTPScaledObject says its HTTP add-on object is returned.
	renderHTTPScaledObject bool
	// Judged is what its observed servers and scaler are, by their kinds'
	// rules in render, judged here once: the report reads it, and judges
	// nothing again.
	Judged Judgment
}

// Judgment is what a version's observed objects are.
type Judgment struct {
	// ServersReady: its Deployment (render.DeploymentReady) or, for
	// groups, its LeaderWorkerSet (render.LWSReady) is ready.
	ServersReady bool
	// Stalled says its Deployment's rollout gave up
	// (render.DeploymentStalled), with the controller's message.
	Stalled      bool
	StallMessage string
	// ScalerReady: its KEDA ScaledObject is ready (render.ScaledObjectReady).
	ScalerReady bool
}

// judge judges a version's observed servers and scaler.
func judge(vp *Version) Judgment {
	j := Judgment{ScalerReady: render.ScaledObjectReady(vp.Scaled)}
	if vp.LWS != nil {
		j.ServersReady = render.LWSReady(vp.LWS)
		return j
	}
	if d := vp.Deployment.Object(); d != nil {
		j.ServersReady = render.DeploymentReady(d)
		j.Stalled, j.StallMessage = render.DeploymentStalled(d)
	}
	return j
}

// New decides, for each version of s and from the observed objects o
// and the ModelCache cache (nil without one), what the call returns.
//
// Only the first creation of the servers waits for the weights. Crossplane
// deletes whatever the function stops returning, so once a Deployment,
// Service or autoscaler exists it is returned on every later call. Each
// version of a split goes through the same steps with its own objects.
//
// Make before break. The function keeps no state, so it decides from the
// observed Deployments (their replicas, ready and updated servers, and the
// weights their pod templates record) alone:
//  1. the plan is settled when every version that does not lose servers
//     and has a target above 0 has that target of servers ready on the
//     weights it wants;
//  2. until then a version whose observed count is above its target (it
//     loses weight, or its servers went to other versions) keeps that
//     count; once settled it steps down to its target;
//  3. a version the spec no longer names keeps its Deployment at its
//     observed count, and its Service, until settled (a promoted canary's
//     warm servers until the primary serves the new weights on its full
//     count; a removed canary's until the primary has taken its share);
//     its Service stays while the observed route still names it;
//  4. the servers roll with maxUnavailable 0 (input.rollout), so a
//     version's ready servers never fall below its count during the
//     rollout either.
func New(s *resolve.Spec, cache *observe.CachedWeights, o observe.Objects) (*Plan, error) {
	p := &Plan{Spec: s, cache: cache, Observed: o, settled: true}
	var err error
	if p.Adapters, err = planAdapters(s, o); err != nil {
		return nil, err
	}
	p.volume = len(p.Adapters) > 0
	for i := range s.Versions {
		v := &s.Versions[i]
		vp := Version{
			Version:    v,
			Deployment: o.Deployments[render.DeploymentResource(v)],
			HPA:        o.HPAs[render.HPAResource(v)],
			Scaled:     o.ScaledObjects[render.ScaledObjectResource(v)],
			HTTPScaled: o.HTTPScaledObjects[render.HTTPScaledObjectResource(v)],
			Target:     v.Replicas,
		}
		if v.Autoscaled(s) {
			vp.Target = v.MinReplicas
		}
		if s.Split {
			vp.service = o.VersionServices[render.ServiceResource(v)]
		}
		if s.Groups() {
			// A Deployment of the servers before spec.nodes grew is not
			// returned: Crossplane deletes it (docs/multi-node.md).
			vp.Deployment, vp.LWS = nil, o.LeaderWorkerSet
		}
		vp.Judged = judge(&vp)
		src, err := NewWeightsSource(s, v, cache, o, vp.observedServers() != nil)
		if err != nil {
			return nil, err
		}
		vp.Source = src
		if vp.Serving, err = servingWeights(src, vp.observedServers()); err != nil {
			return nil, observe.DecodeError(vp.serversResource(s), err)
		}
		if v.Primary && len(p.Adapters) > 0 {
			vp.Serving = p.withServedAdapters(vp.Serving, vp.Deployment)
		}
		if src.State() == render.JobComplete {
			if vp.LWS != nil {
				vp.Ready = render.GroupsReadyOn(vp.LWS, src.Wanted())
			} else {
				vp.Ready = vp.Deployment.ReadyOn(src.Wanted())
			}
		}
		// A version that loses servers waits for nothing of its own.
		if vp.Target > 0 && vp.Ready < vp.Target && vp.observedCount() <= vp.Target {
			p.settled = false
		}
		// One autoscaler at a time: moving between a floor of 0 and one
		// above swaps the HPA and the ScaledObject in one call.
		vp.renderHPA = v.Autoscaled(s) && !v.ScalesToZero(s) && (vp.Serving != nil || vp.HPA != nil)
		vp.renderScaledObject = v.ScalesToZero(s) && (vp.Serving != nil || vp.Scaled != nil)
		vp.renderHTTPScaledObject = vp.renderScaledObject && s.Autoscaling.ScaleToZero.HTTPScaler != ""
		vp.RenderService = s.Split && (vp.Serving != nil || vp.service != nil)
		p.volume = p.volume || src.ownVolume()
		p.MainService = p.MainService || vp.Serving != nil
		p.Versions = append(p.Versions, vp)
	}
	for i := range p.Versions {
		vp := &p.Versions[i]
		vp.Servers = vp.Target
		if have := vp.observedCount(); !p.settled && have > vp.Target {
			vp.Servers, vp.Held = have, true
		}
	}
	p.Departing = departingVersions(s, o, p.settled)
	holding := p.KeepsDepartingServers()
	for _, vp := range p.Versions {
		holding = holding || vp.Held
	}
	for i := range p.Versions {
		vp := &p.Versions[i]
		vp.Growing = holding && !vp.Held && vp.Target > 0 && vp.Ready < vp.Target
	}
	p.MainService = p.MainService || o.Service != nil
	p.Route = p.planRoute()
	p.Pool = p.planPool()
	return p, nil
}

// withServedAdapters adds the adapters to the primary's serving weights w:
// the first servers wait for every adapter as for the weights (nil), later
// ones serve what servedAdapters decides.
func (p *Plan) withServedAdapters(w *render.Weights, d *observe.Deployment) *render.Weights {
	if w == nil || d == nil && !adaptersPulled(p.Adapters) {
		return nil
	}
	out := *w
	var was []render.ServedAdapter
	if d != nil {
		was = render.ParseAdaptersAnnotation(d.TemplateMeta("annotations", render.AnnotationAdapters))
	}
	out.Adapters = render.AdaptersAnnotation(ServedAdapters(p.Adapters, was))
	return &out
}

// observedCount is the servers the version was last given: its observed
// autoscaler's floor, or its observed Deployment's replicas; 0 when
// neither is observed.
func (vp *Version) observedCount() int32 {
	if vp.HPA != nil && vp.HPA.Spec.MinReplicas != nil {
		return *vp.HPA.Spec.MinReplicas
	}
	if vp.Deployment != nil {
		return render.DesiredReplicas(vp.Deployment.Deployment)
	}
	if vp.LWS != nil {
		return render.DesiredGroups(vp.LWS)
	}
	return 0
}

// liftFromZero says an HPA takes over servers observed at 0, as after
// KEDA scaled them to zero and the claim raised its floor (or a standby
// version got weight): an HPA does not scale a target of 0 replicas
// (ScalingDisabled), so this call sets the Deployment's replicas to the
// floor, and the next, observing them above 0, leaves them to the HPA.
func (vp *Version) liftFromZero(s *resolve.Spec) bool {
	return vp.Autoscaled(s) && !vp.ScalesToZero(s) && vp.Deployment != nil &&
		vp.Deployment.Spec.Replicas != nil && *vp.Deployment.Spec.Replicas == 0 && vp.Servers > 0
}

// observedServers is the version's observed Deployment or LeaderWorkerSet,
// nil when neither is.
func (vp *Version) observedServers() servedTemplater {
	switch {
	case vp.LWS != nil:
		return vp.LWS
	case vp.Deployment != nil:
		return vp.Deployment
	}
	return nil
}

// serversResource is the composition resource name of the version's
// servers.
func (vp *Version) serversResource(s *resolve.Spec) string {
	if s.Groups() {
		return render.ResourceLeaderWorkerSet
	}
	return render.DeploymentResource(vp.Version)
}

// WaitingForCache says a service on a ModelCache must not be ready whatever
// its composed resources say: until the cache has the weights it may have
// none, and Crossplane calls a composite of no composed resources ready.
func (p *Plan) WaitingForCache() bool {
	return p.cache != nil && p.cache.State != observe.CacheReady
}

// CacheWarnings are the observed ModelCache's warnings (a status that names
// another volume or directory than its name and spec give, and is
// ignored); nil without a cache.
func (p *Plan) CacheWarnings() []string {
	if p.cache == nil {
		return nil
	}
	return p.cache.Warnings
}
