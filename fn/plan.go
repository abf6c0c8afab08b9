package fn

import (
	"sort"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// plan is everything one call decides for an InferenceService before
// anything is built: for each version, where its weights come from, what
// is observed of it, which weights its servers mount, how many servers it
// runs and which of its objects are returned; and the parts the versions
// share (the cache volume, the Service <name>, the route, the
// NetworkPolicies).
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
	// departing are the versions the spec no longer names whose objects
	// are still returned (see newPlan), by version.
	departing []departingVersion
	// settled says every version has the servers it wants ready on the
	// weights it wants: no version is held above its share, and no
	// departing version keeps its servers.
	settled bool
	// volume says the cache volume is composed: a version pulls into it.
	volume bool
	// mainService says the Service <name> is composed. It comes with the
	// first servers of any version, and stays.
	mainService bool
	// route is the HTTPRoute, nil when none is composed.
	route *routePlan
	// adapters are spec.adapters' pulls (adapters.go), served by the
	// primary's servers.
	adapters []adapterPlan
	// pool is the InferencePool and its endpoint picker, nil when none is
	// composed.
	pool *poolPlan
}

// versionPlan is one version's part of the plan.
type versionPlan struct {
	*modelVersion
	// source is where the version's weights come from.
	source weightsSource
	// The version's observed objects; nil when not observed.
	deployment *observedDeployment
	hpa        *autoscalingv2.HorizontalPodAutoscaler
	scaled     *scaledObject // its KEDA ScaledObject, scaling to zero
	httpScaled *httpScaledObject
	service    *corev1.Service // its own Service, in a split
	// lws replaces deployment when the servers are groups (s.groups()).
	lws *leaderWorkerSet
	// serving is what its servers mount; nil renders no Deployment (the
	// first servers wait for the weights).
	serving *weights
	// target is the servers its weight asks for (apportioned): its
	// Deployment's replicas, or its autoscaler's floor.
	target int32
	// servers is what it runs this call: target, or more while it is held
	// (make before break, see newPlan).
	servers int32
	// held says servers is above target; growing that the version waits
	// for servers that another version's held (or departing) servers
	// stand in for.
	held, growing bool
	// ready is how many of its servers are ready on the weights it wants.
	ready int32
	// renderHPA, renderScaledObject and renderService say its
	// autoscaler (an HPA, or a ScaledObject when it scales to zero) and
	// its own Service are returned.
	renderHPA, renderScaledObject, renderService bool
	// renderHTTPScaledObject says its HTTP add-on object is returned.
	renderHTTPScaledObject bool
}

// departingVersion is a version the spec no longer names (a canary
// removed or promoted, the old primary's version after a promotion) whose
// objects are still observed.
type departingVersion struct {
	modelVersion
	deployment *observedDeployment
	service    *corev1.Service
	// serving are the weights its Deployment's template records.
	serving weights
	// renderDeployment says its servers are kept, at their observed count
	// (departing versions keep their servers until the plan is settled);
	// renderService that its Service is kept (with its servers, or while
	// the observed route still names it).
	renderDeployment, renderService bool
}

// routePlan is the HTTPRoute: its weighted backends and what the gateway
// controller said of it.
type routePlan struct {
	// pool says its backend is the claim's InferencePool, not Services.
	pool     bool
	backends []routeBackend
	// held says no backend had a ready server: the route keeps the
	// weights it was observed with.
	held  bool
	ready bool
	state routeState
}

// newPlan decides, for each version of s and from the observed objects o
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
func newPlan(s *resolvedSpec, cache *cachedWeights, o observed) (*plan, error) {
	p := &plan{spec: s, cache: cache, observed: o, settled: true}
	var err error
	if p.adapters, err = planAdapters(s, o); err != nil {
		return nil, err
	}
	p.volume = len(p.adapters) > 0
	for i := range s.Versions {
		v := &s.Versions[i]
		vp := versionPlan{
			modelVersion: v,
			deployment:   o.Deployments[v.deploymentResource()],
			hpa:          o.HPAs[v.hpaResource()],
			scaled:       o.ScaledObjects[v.scaledObjectResource()],
			httpScaled:   o.HTTPScaledObjects[v.httpScaledObjectResource()],
			target:       v.Replicas,
		}
		if v.autoscaled(s) {
			vp.target = v.MinReplicas
		}
		if s.Split {
			vp.service = o.VersionServices[v.serviceResource()]
		}
		if s.groups() {
			// A Deployment of the servers before spec.nodes grew is not
			// returned: Crossplane deletes it (docs/multi-node.md).
			vp.deployment, vp.lws = nil, o.LeaderWorkerSet
		}
		src, err := newWeightsSource(s, v, cache, o, vp.observedServers() != nil)
		if err != nil {
			return nil, err
		}
		vp.source = src
		if vp.serving, err = servingWeights(src, vp.observedServers()); err != nil {
			return nil, decodeError(vp.serversResource(s), err)
		}
		if v.Primary && len(p.adapters) > 0 {
			vp.serving = p.withServedAdapters(vp.serving, vp.deployment)
		}
		if src.state() == jobComplete {
			if vp.lws != nil {
				vp.ready = vp.lws.readyOn(src.wanted())
			} else {
				vp.ready = vp.deployment.readyOn(src.wanted())
			}
		}
		// A version that loses servers waits for nothing of its own.
		if vp.target > 0 && vp.ready < vp.target && vp.observedCount() <= vp.target {
			p.settled = false
		}
		// One autoscaler at a time: moving between a floor of 0 and one
		// above swaps the HPA and the ScaledObject in one call.
		vp.renderHPA = v.autoscaled(s) && !v.scalesToZero(s) && (vp.serving != nil || vp.hpa != nil)
		vp.renderScaledObject = v.scalesToZero(s) && (vp.serving != nil || vp.scaled != nil)
		vp.renderHTTPScaledObject = vp.renderScaledObject && s.Autoscaling.ScaleToZero.HTTPScaler != ""
		vp.renderService = s.Split && (vp.serving != nil || vp.service != nil)
		p.volume = p.volume || src.ownVolume()
		p.mainService = p.mainService || vp.serving != nil
		p.versions = append(p.versions, vp)
	}
	for i := range p.versions {
		vp := &p.versions[i]
		vp.servers = vp.target
		if have := vp.observedCount(); !p.settled && have > vp.target {
			vp.servers, vp.held = have, true
		}
	}
	p.departing = departingVersions(s, o, p.settled)
	holding := p.keepsDepartingServers()
	for _, vp := range p.versions {
		holding = holding || vp.held
	}
	for i := range p.versions {
		vp := &p.versions[i]
		vp.growing = holding && !vp.held && vp.target > 0 && vp.ready < vp.target
	}
	p.mainService = p.mainService || o.Service != nil
	p.route = p.planRoute()
	p.pool = p.planPool()
	return p, nil
}

// withServedAdapters adds the adapters to the primary's serving weights w:
// the first servers wait for every adapter as for the weights (nil), later
// ones serve what servedAdapters decides.
func (p *plan) withServedAdapters(w *weights, d *observedDeployment) *weights {
	if w == nil || d == nil && !adaptersPulled(p.adapters) {
		return nil
	}
	out := *w
	var was []servedAdapter
	if d != nil {
		was = parseAdaptersAnnotation(d.templateMeta("annotations", annotationAdapters))
	}
	out.Adapters = adaptersAnnotation(servedAdapters(p.adapters, was))
	return &out
}

// poolPlan is the claim's InferencePool and its endpoint picker, and what
// the Gateway's implementation and the Deployment controller said of them.
type poolPlan struct {
	// ready says the Gateway accepted the pool and resolved its picker.
	ready bool
	state routeState
	// pickerReady says the picker's Deployment is available.
	pickerReady bool
}

// planPool decides the InferencePool and its picker. They come with the
// Service <name>, with the first servers, and stay while the Input's
// inference extension is on.
func (p *plan) planPool() *poolPlan {
	if p.spec.Pool == nil || !p.mainService {
		return nil
	}
	pp := &poolPlan{pickerReady: deploymentReady(p.observed.Picker)}
	pp.ready, pp.state = poolReady(p.spec, p.observed.Pool)
	return pp
}

// observedCount is the servers the version was last given: its observed
// autoscaler's floor, or its observed Deployment's replicas; 0 when
// neither is observed.
func (vp *versionPlan) observedCount() int32 {
	if vp.hpa != nil && vp.hpa.Spec.MinReplicas != nil {
		return *vp.hpa.Spec.MinReplicas
	}
	if vp.deployment != nil {
		return desiredReplicas(vp.deployment.Deployment)
	}
	if vp.lws != nil {
		return desiredGroups(vp.lws)
	}
	return 0
}

// liftFromZero says an HPA takes over servers observed at 0, as after
// KEDA scaled them to zero and the claim raised its floor (or a standby
// version got weight): an HPA does not scale a target of 0 replicas
// (ScalingDisabled), so this call sets the Deployment's replicas to the
// floor, and the next, observing them above 0, leaves them to the HPA.
func (vp *versionPlan) liftFromZero(s *resolvedSpec) bool {
	return vp.autoscaled(s) && !vp.scalesToZero(s) && vp.deployment != nil &&
		vp.deployment.Spec.Replicas != nil && *vp.deployment.Spec.Replicas == 0 && vp.servers > 0
}

// observedServers is the version's observed Deployment or LeaderWorkerSet,
// nil when neither is.
func (vp *versionPlan) observedServers() servedTemplater {
	switch {
	case vp.lws != nil:
		return vp.lws
	case vp.deployment != nil:
		return vp.deployment
	}
	return nil
}

// serversResource is the composition resource name of the version's
// servers.
func (vp *versionPlan) serversResource(s *resolvedSpec) string {
	if s.groups() {
		return resourceLeaderWorkerSet
	}
	return vp.deploymentResource()
}

// departingVersions finds the observed objects of versions s no longer
// names: Deployments deployment-<version> of no canary of s, and Services
// service-<version> of no version of a split. A Deployment is kept while
// the plan is not settled, and only when its template records the weights
// it serves (then the builder renders it again as it was); a Service with
// its Deployment, or while the plan is not settled, or while the observed
// route names it.
func departingVersions(s *resolvedSpec, o observed, settled bool) []departingVersion {
	current := map[string]bool{}
	for i := range s.Versions {
		current[s.Versions[i].Model.Version] = true
	}
	byVersion := map[string]*departingVersion{}
	get := func(version string) *departingVersion {
		d := byVersion[version]
		if d == nil {
			d = &departingVersion{modelVersion: modelVersion{Model: model{Version: version}}}
			byVersion[version] = d
		}
		return d
	}
	for name, d := range o.Deployments {
		version, ok := strings.CutPrefix(name, resourceDeployment+"-")
		if !ok || version == "" || current[version] && !s.versionNamed(version).Primary {
			continue
		}
		get(version).deployment = d
	}
	for name, svc := range o.VersionServices {
		version, ok := strings.CutPrefix(name, resourceService+"-")
		if !ok || version == "" || current[version] && s.Split {
			continue
		}
		get(version).service = svc
	}
	named := o.routeServices()
	var out []departingVersion
	for _, d := range byVersion {
		if d.deployment != nil && !settled {
			t, err := d.deployment.servedTemplate()
			if err == nil {
				d.serving, d.renderDeployment = servedWeights(t)
			}
		}
		d.renderService = d.service != nil && (!settled || d.renderDeployment || named[d.versionServiceName(s)])
		out = append(out, *d)
	}
	sort.Slice(out, func(a, b int) bool { return out[a].Model.Version < out[b].Model.Version })
	return out
}

// versionNamed is s's version of that name, or nil.
func (s *resolvedSpec) versionNamed(version string) *modelVersion {
	for i := range s.Versions {
		if s.Versions[i].Model.Version == version {
			return &s.Versions[i]
		}
	}
	return nil
}

// keepsDepartingServers says a departing version's servers are kept.
func (p *plan) keepsDepartingServers() bool {
	for _, d := range p.departing {
		if d.renderDeployment {
			return true
		}
	}
	return false
}

// planRoute decides the HTTPRoute. It comes with the primary's Service in
// a split, and stays while the Input names a Gateway: a promotion that
// drops spec.traffic keeps it, with all the weight on the Service <name>.
func (p *plan) planRoute() *routePlan {
	s, o := p.spec, p.observed
	if s.Pool != nil {
		// On an InferencePool: with the pool, to the pool.
		if !p.mainService {
			return nil
		}
		rp := &routePlan{pool: true}
		rp.ready, rp.state = routeReady(s, o.Route, nil)
		return rp
	}
	if s.Gateway == nil || !(s.Split && p.versions[0].renderService || o.Route != nil) {
		return nil
	}
	var cands []routeCandidate
	if s.Split {
		// Only Services that exist: a backend of none would have the
		// gateway refuse the route's references.
		for _, vp := range p.versions {
			if !vp.renderService {
				continue
			}
			cands = append(cands, routeCandidate{
				Service: vp.versionServiceName(s), Weight: vp.Weight, Wanted: vp.target,
				Ready: p.readyOfVersion(vp.Model.Version),
			})
		}
		// A departing version with servers kept is spare capacity.
		for _, d := range p.departing {
			if d.renderDeployment && d.renderService {
				cands = append(cands, routeCandidate{Service: d.versionServiceName(s), Ready: p.readyOfVersion(d.Model.Version)})
			}
		}
	} else {
		cands = []routeCandidate{{Service: s.Name, Weight: 100, Wanted: p.versions[0].target, Ready: p.readyOfAll()}}
	}
	fallback := routeCandidate{Service: s.Name}
	if s.Split {
		// The Service <name> selects every server, the primary's old ones
		// during its rollout included, which no version's Service does.
		counted := int32(0)
		for _, c := range cands {
			counted += c.Ready
		}
		fallback.Ready = max(0, p.readyOfAll()-counted)
	}
	rp := &routePlan{}
	backends, ok := routeWeights(cands, fallback)
	if !ok {
		if last := o.routeBackends(); len(last) > 0 {
			backends, rp.held = last, true
		} else {
			// Nothing ever served: the primary's Service takes it all.
			backends = make([]routeBackend, len(cands))
			for i, c := range cands {
				backends[i] = routeBackend{Service: c.Service}
			}
			backends[0].Weight = 100
		}
	}
	rp.backends = backends
	rp.ready, rp.state = routeReady(s, o.Route, backends)
	return rp
}

// readyOfVersion counts the servers ready behind a version's Service, which
// selects the servers of that version label (versionSelector) whichever
// Deployment runs them: the Deployments the plan returns, each on its
// current template, at least.
func (p *plan) readyOfVersion(version string) int32 {
	n := int32(0)
	for _, d := range p.servedDeployments() {
		if d.templateMeta("labels", labelVersion) == version {
			n += d.readyOnTemplate()
		}
	}
	return n
}

// readyOfAll counts every server ready behind the Service <name>.
func (p *plan) readyOfAll() int32 {
	n := int32(0)
	for _, d := range p.servedDeployments() {
		if d.current() {
			n += d.Status.ReadyReplicas
		}
	}
	return n
}

// servedDeployments are the observed Deployments the plan returns.
func (p *plan) servedDeployments() []*observedDeployment {
	var out []*observedDeployment
	for _, vp := range p.versions {
		if vp.serving != nil && vp.deployment != nil {
			out = append(out, vp.deployment)
		}
	}
	for _, d := range p.departing {
		if d.renderDeployment {
			out = append(out, d.deployment)
		}
	}
	return out
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
	for _, a := range p.adapters {
		add(a.job.Resource, a.job.Job, a.pull == jobComplete)
	}
	for _, vp := range p.versions {
		out = append(out, vp.source.resources()...)
		autoscaled := vp.autoscaled(s)
		if vp.serving != nil && s.groups() {
			add(resourceLeaderWorkerSet, renderLeaderWorkerSet(s, vp.modelVersion, *vp.serving, vp.servers), lwsReady(vp.lws))
		} else if vp.serving != nil {
			var replicas *int32
			if !autoscaled || vp.liftFromZero(s) {
				replicas = ptrTo(vp.servers)
			}
			add(vp.deploymentResource(), renderDeployment(s, vp.modelVersion, *vp.serving, replicas), deploymentReady(vp.deployment.object()))
		}
		if vp.renderHPA {
			add(vp.hpaResource(), renderHPA(s, vp.modelVersion, vp.servers, max(vp.MaxReplicas, vp.servers)), hpaReady(vp.hpa))
		}
		if vp.renderScaledObject {
			add(vp.scaledObjectResource(), renderScaledObject(s, vp.modelVersion, vp.MaxReplicas), scaledObjectReady(vp.scaled))
		}
		if vp.renderHTTPScaledObject {
			add(vp.httpScaledObjectResource(), renderHTTPScaledObject(s, vp.modelVersion, vp.MaxReplicas), httpScaledObjectReady(vp.httpScaled))
		}
		if vp.renderService {
			add(vp.serviceResource(), renderVersionService(s, vp.modelVersion), serviceReady(vp.service))
		}
	}
	for _, d := range p.departing {
		if d.renderDeployment {
			// Its count as observed, and no autoscaler: nothing scales a
			// version that is leaving.
			count := desiredReplicas(d.deployment.Deployment)
			add(d.deploymentResource(), renderDeployment(s, &d.modelVersion, d.serving, ptrTo(count)), deploymentReady(d.deployment.object()))
		}
		if d.renderService {
			add(d.serviceResource(), renderVersionService(s, &d.modelVersion), serviceReady(d.service))
		}
	}
	if p.mainService {
		add(resourceService, renderService(s, p.keepsDepartingServers()), serviceReady(o.Service))
	}
	switch {
	case p.route != nil && p.route.pool:
		add(resourceRoute, renderPoolRoute(s), p.route.ready)
	case p.route != nil:
		add(resourceRoute, renderHTTPRoute(s, p.route.backends), p.route.ready)
	}
	if p.pool != nil {
		add(resourcePool, renderInferencePool(s), p.pool.ready)
		add(resourcePickerConfig, renderPickerConfig(s), o.has(resourcePickerConfig))
		add(resourcePickerServiceAccount, renderPickerServiceAccount(s), o.has(resourcePickerServiceAccount))
		add(resourcePickerRole, renderPickerRole(s), o.has(resourcePickerRole))
		add(resourcePickerRoleBinding, renderPickerRoleBinding(s), o.has(resourcePickerRoleBinding))
		add(resourcePicker, renderPickerDeployment(s), p.pool.pickerReady)
		add(resourcePickerService, renderPickerService(s), o.has(resourcePickerService))
	}
	if s.NetworkPolicy != nil {
		// From the first call, so the pull pods are covered from their
		// start and the servers from theirs.
		if p.volume {
			add(resourceNetworkPolicyPull, renderPullPolicy(s), networkPolicyReady(o.has(resourceNetworkPolicyPull)))
		}
		add(resourceNetworkPolicy, renderServerPolicy(s), networkPolicyReady(o.has(resourceNetworkPolicy)))
	}
	if s.PodMonitor != nil {
		add(resourcePodMonitor, renderPodMonitor(s), o.has(resourcePodMonitor))
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
