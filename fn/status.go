package fn

import (
	"fmt"
	"strings"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	inferencev1 "sigs.k8s.io/gateway-api-inference-extension/api/v1"

	"github.com/inferno-ai/function-inferno/apis/inference/v1alpha1"
)

// Condition types the function sets on the composite and the claim, beside
// Crossplane's own Ready and Synced.
const (
	conditionWeightsReady = "WeightsReady"
	conditionServerReady  = "ServerReady"
	// conditionTrafficSplit reports, in a split only, whether every
	// version serves its share.
	conditionTrafficSplit = "TrafficSplit"
	// conditionAdaptersReady reports, with spec.adapters only, whether
	// every server serves every adapter.
	conditionAdaptersReady = "AdaptersReady"
	// conditionInferencePool reports, with the Input's inference
	// extension, whether requests through the Gateway reach the claim's
	// InferencePool and its endpoint picker.
	conditionInferencePool = "InferencePoolReady"
)

// condition is one status condition the function reports. Build it with
// reason.condition, which gives it the reason's type and status.
type condition struct {
	Type    string
	Status  bool
	Reason  reason
	Message string
}

// report is the status the function writes, and its warnings.
type report struct {
	Status     v1alpha1.InferenceServiceStatus
	Conditions []condition
	Warnings   []string
}

// versionReport is where one version stands.
type versionReport struct {
	Weights, Server condition
	Phase           v1alpha1.Phase
	Message         string
}

// report explains where the service is, in a phase, a message and one
// condition each for the weights and the servers of the primary version;
// in a split also each version's state and a condition for the split.
func (p *plan) report() report {
	s := p.spec
	var r report
	versions := make([]versionReport, len(p.versions))
	for i := range p.versions {
		versions[i] = versionStatus(s, &p.versions[i])
	}
	primary := versions[0]
	r.Conditions = []condition{primary.Weights, primary.Server}
	r.Status.Phase, r.Status.Message = primary.Phase, primary.Message
	for _, vp := range p.versions {
		switch {
		case vp.lws != nil && vp.serving != nil:
			r.Status.ReadyReplicas += vp.lws.Status.ReadyReplicas
		case vp.deployment != nil && vp.serving != nil:
			r.Status.ReadyReplicas += vp.deployment.Status.ReadyReplicas
		}
	}
	if p.mainService {
		r.Status.ServiceName = s.Name
		r.Status.URL = serviceURL(s)
	}
	for _, vp := range p.versions {
		if vp.hpa == nil || !vp.autoscaled(s) {
			continue
		}
		if c := hpaCondition(vp.hpa, autoscalingv2.ScalingActive); c != nil && c.Status == corev1.ConditionFalse {
			r.Warnings = append(r.Warnings, fmt.Sprintf("spec.autoscaling: the autoscaler %s cannot scale yet (%s: %s); the servers stay at their current count until the cluster's metrics pipeline serves %s", vp.serverName(s), c.Reason, c.Message, autoscalerMetrics(s)))
		}
	}
	for _, vp := range p.versions {
		if vp.scaled == nil || !vp.scalesToZero(s) || scaledObjectReady(vp.scaled) {
			continue
		}
		r.Warnings = append(r.Warnings, fmt.Sprintf("spec.autoscaling: KEDA has not made the ScaledObject %s ready (%s); the servers stay at their current count until it can read %s from input.keda.prometheusAddress", vp.serverName(s), kedaReadyMessage(vp.scaled), s.Autoscaling.Metric))
	}
	for _, d := range p.departing {
		if d.renderDeployment {
			r.Status.ReadyReplicas += d.deployment.Status.ReadyReplicas
		}
	}
	switch {
	case s.Split:
		p.splitStatus(versions, &r)
	case p.route != nil && !p.route.pool || p.keepsDepartingServers():
		c := p.trafficCondition(nil, nil, &r)
		r.Conditions = append(r.Conditions, c)
		if r.Status.Phase == v1alpha1.PhaseServing {
			r.Status.Message += "; " + c.Message
		}
	}
	if s.Pool != nil {
		c := p.poolCondition(&r)
		r.Conditions = append(r.Conditions, c)
		if r.Status.Phase == v1alpha1.PhaseServing {
			r.Status.Message += "; " + c.Message
		}
	}
	if p.route != nil {
		r.Status.RouteURL = routeURL(s)
	}
	r.Status.Pulls = p.pullStatuses()
	p.reportAdapters(&r)
	return r
}

// reportAdapters adds status.adapters and the AdaptersReady condition. The
// first servers wait for the adapters as for the weights: until they start,
// the phase is the adapters' (Pulling, or Failed). A failed adapter makes a
// serving service Degraded: the rest still answers.
func (p *plan) reportAdapters(r *report) {
	list, c := p.adapterReport()
	if c == nil {
		return
	}
	r.Status.Adapters = list
	r.Conditions = append(r.Conditions, *c)
	vp := p.versions[0]
	waiting := vp.serving == nil && vp.source.state() == jobComplete
	switch {
	case waiting && c.Reason == reasonAdapterPullFailed:
		r.Status.Phase, r.Status.Message = v1alpha1.PhaseFailed, c.Message
		r.Conditions[1] = reasonWaitingForWeights.condition("the servers start once the weights and every adapter are pulled; " + c.Message)
	case waiting:
		r.Status.Phase, r.Status.Message = v1alpha1.PhasePulling, c.Message
		r.Conditions[1] = reasonWaitingForWeights.condition("the servers start once the weights and every adapter are pulled")
	case r.Status.Phase == v1alpha1.PhaseServing && c.Reason == reasonAdapterPullFailed:
		r.Status.Phase, r.Status.Message = v1alpha1.PhaseDegraded, "the base model serves; "+c.Message
	}
}

// versionStatus judges one version from its own objects.
func versionStatus(s *resolvedSpec, vp *versionPlan) versionReport {
	w := vp.source.condition()
	srv := serverCondition(s, vp)
	phase, msg := phaseFor(s, vp, w, srv)
	return versionReport{Weights: w, Server: srv, Phase: phase, Message: msg}
}

// serverCondition is a version's ServerReady condition.
func serverCondition(s *resolvedSpec, vp *versionPlan) condition {
	if s.groups() {
		return groupsCondition(s, vp)
	}
	d, v, name := vp.deployment.object(), vp.modelVersion, vp.serverName(s)
	switch {
	case vp.serving == nil:
		return reasonWaitingForWeights.condition("the servers start once the weights are pulled")
	case d == nil:
		return reasonCreating.condition(fmt.Sprintf("creating Deployment %s", name))
	}
	want, ready := desiredReplicas(d), d.Status.ReadyReplicas
	if stalled, msg := deploymentStalled(d); stalled && ready < want {
		return reasonProgressDeadlineExceeded.condition(fmt.Sprintf("%d of %d servers ready and the rollout gave up: %s; see: kubectl describe -n %s deployment/%s", ready, want, msg, s.Namespace, name))
	}
	switch {
	case want == 0 && s.Split && v.Weight == 0 && deploymentReady(d):
		return reasonNoTraffic.condition(fmt.Sprintf("spec.traffic gives version %s weight 0: no server runs; its weights stay cached", v.Model.Version))
	case want == 0 && v.scalesToZero(s):
		return idleCondition(s, vp)
	case want == 0:
		return reasonScaledToZero.condition("spec.replicas.min is 0: no server runs; the weights stay cached")
	case deploymentReady(d):
		return reasonAvailable.condition(fmt.Sprintf("%d of %d servers ready", ready, want))
	case ready == 0:
		return reasonStarting.condition(fmt.Sprintf("0 of %d servers ready; loading a model can take up to %ds", want, *s.Runtime.StartupSeconds))
	case ready < want && vp.growing:
		return reasonScalingUp.condition(fmt.Sprintf("%d of %d servers ready; make before break keeps the servers of the versions it takes them from until the others are ready", ready, want))
	case ready < want:
		return reasonDegraded.condition(fmt.Sprintf("%d of %d servers ready", ready, want))
	default:
		return reasonRollingOut.condition(fmt.Sprintf("%d of %d servers ready; rolling out %d updated servers", ready, want, d.Status.UpdatedReplicas))
	}
}

// groupsCondition is the ServerReady condition of servers that are
// LeaderWorkerSet groups, from the LWS status (lwsReady): groups, not pods.
func groupsCondition(s *resolvedSpec, vp *versionPlan) condition {
	l, name := vp.lws, vp.serverName(s)
	group := gpusPerGroup(s)
	switch {
	case vp.serving == nil:
		return reasonWaitingForWeights.condition("the servers start once the weights are pulled")
	case l == nil:
		return reasonGroupsStarting.condition(fmt.Sprintf("creating LeaderWorkerSet %s (groups of %s)", name, group))
	}
	want, ready := desiredGroups(l), l.Status.ReadyReplicas
	switch {
	case want == 0:
		return reasonScaledToZero.condition("spec.replicas.min is 0: no group runs; the weights stay cached")
	case lwsReady(l):
		return reasonGroupsAvailable.condition(fmt.Sprintf("%d of %d groups ready (each %s, tensor %d × pipeline %d)", ready, want, group, s.MultiNode.Tensor, s.MultiNode.Pipeline))
	case ready == 0:
		return reasonGroupsStarting.condition(fmt.Sprintf("0 of %d groups ready (each %s); a group is ready once its leader and every worker are, and the leader serves once its workers joined and the model loaded, which can take up to %ds", want, group, *s.Runtime.StartupSeconds))
	case ready < want:
		return reasonGroupsDegraded.condition(fmt.Sprintf("%d of %d groups ready (each %s); see: kubectl get -n %s lws/%s", ready, want, group, s.Namespace, name))
	default:
		return reasonGroupsRollingOut.condition(fmt.Sprintf("%d of %d groups ready; rolling out %d updated groups", ready, want, l.Status.UpdatedReplicas))
	}
}

// phaseFor reduces a version's two conditions to one phase and its message.
func phaseFor(s *resolvedSpec, vp *versionPlan, weights, server condition) (v1alpha1.Phase, string) {
	if vp.serving == nil {
		switch vp.source.state() {
		case jobFailed:
			return v1alpha1.PhaseFailed, weights.Message
		case jobRunning:
			return v1alpha1.PhasePulling, weights.Message
		default:
			return v1alpha1.PhasePending, weights.Message
		}
	}
	older := vp.serving.ID != vp.source.wanted().ID
	switch server.Reason {
	case reasonProgressDeadlineExceeded:
		if vp.deployment.Status.ReadyReplicas == 0 {
			return v1alpha1.PhaseFailed, server.Message
		}
		return v1alpha1.PhaseDegraded, server.Message
	case reasonCreating, reasonStarting, reasonGroupsStarting:
		return v1alpha1.PhaseStarting, server.Message
	case reasonDegraded, reasonScaledToZero, reasonGroupsDegraded:
		return v1alpha1.PhaseDegraded, server.Message
	case reasonNoTraffic:
		return v1alpha1.PhaseStandby, server.Message
	case reasonIdle:
		return v1alpha1.PhaseIdle, fmt.Sprintf("idle at %s: %s", versionURL(s, vp.modelVersion), server.Message)
	case reasonWaking:
		return v1alpha1.PhaseStarting, server.Message
	case reasonScalerNotReady:
		return v1alpha1.PhaseDegraded, server.Message
	}
	// The servers answer. Say so, unless a newer model failed to pull.
	url := versionURL(s, vp.modelVersion)
	switch {
	case older && vp.source.state() == jobFailed:
		return v1alpha1.PhaseDegraded, fmt.Sprintf("still serving the previous weights: %s", weights.Message)
	case older:
		return v1alpha1.PhaseServing, fmt.Sprintf("serving the previous weights at %s while %s", url, weights.Message)
	default:
		return v1alpha1.PhaseServing, fmt.Sprintf("serving %s at %s (%s)", vp.source.uri(), url, server.Message)
	}
}

// idleCondition is the ServerReady condition of a version that scales to
// zero and whose Deployment is at zero:
//  1. KEDA's Active=True: a request woke it, a server is on its way
//     (Waking);
//  2. the ScaledObject is not Ready=True: nothing would wake it
//     (ScalerNotReady);
//  3. otherwise Idle: ready, answering again on demand.
func idleCondition(s *resolvedSpec, vp *versionPlan) condition {
	z := s.Autoscaling.ScaleToZero
	switch {
	case vp.scaled.active():
		return reasonWaking.condition(fmt.Sprintf("KEDA reports in-flight requests (%s above 0): starting a server; loading a model can take up to %ds", s.Autoscaling.Metric, *s.Runtime.StartupSeconds))
	case !scaledObjectReady(vp.scaled):
		return reasonScalerNotReady.condition(fmt.Sprintf("no server runs and KEDA has not made the ScaledObject %s ready (%s), so no request can wake the service; see: kubectl describe -n %s scaledobject/%s", vp.serverName(s), kedaReadyMessage(vp.scaled), s.Namespace, vp.serverName(s)))
	case z.HTTPScaler != "":
		return reasonIdle.condition(fmt.Sprintf("scaled to zero after %ds without an in-flight request; a request through KEDA's HTTP add-on (Host %s.%s.svc.cluster.local) starts a server; the weights stay cached", z.Cooldown, s.Name, s.Namespace))
	default:
		return reasonIdle.condition(fmt.Sprintf("scaled to zero after %ds without an in-flight request; KEDA starts a server when %s is above 0 (checked every %ds); the weights stay cached", z.Cooldown, s.Autoscaling.Metric, z.Polling))
	}
}

// kedaReadyMessage describes the ScaledObject's Ready condition.
func kedaReadyMessage(o *scaledObject) string {
	c := o.condition("Ready")
	switch {
	case o == nil:
		return "not observed yet"
	case c == nil:
		return "no Ready condition yet: is KEDA's operator running?"
	case c.Message != "":
		return fmt.Sprintf("Ready=%s: %s: %s", c.Status, c.Reason, c.Message)
	default:
		return fmt.Sprintf("Ready=%s: %s", c.Status, c.Reason)
	}
}

// versionURL is where a version answers: the Service <name> for the
// primary, the version's own Service for the others.
func versionURL(s *resolvedSpec, v *modelVersion) string {
	if v.Primary {
		return serviceURL(s)
	}
	return serviceURLOf(v.versionServiceName(s), s.Namespace)
}

func autoscalerMetrics(s *resolvedSpec) string {
	switch {
	case s.Autoscaling.Concurrency != nil && s.Autoscaling.CPUUtilization != nil:
		return "CPU utilisation and " + s.Autoscaling.Metric
	case s.Autoscaling.Concurrency != nil:
		return s.Autoscaling.Metric
	default:
		return "CPU utilisation (metrics-server)"
	}
}

// splitStatus reports a split: each version in status.traffic, the
// TrafficSplit condition, and the overall phase. The phase is the
// primary's (or, when the primary has weight 0, that of the version with
// the most traffic); a canary that failed makes a serving service Degraded
// with the canary's reason, never Failed, since the primary still answers.
func (p *plan) splitStatus(versions []versionReport, r *report) {
	s := p.spec
	lead := 0
	for i := range s.Versions {
		if s.Versions[i].Weight > s.Versions[lead].Weight {
			lead = i
		}
	}
	if s.Versions[0].Weight > 0 {
		lead = 0
	}
	r.Status.Phase, r.Status.Message = versions[lead].Phase, versions[lead].Message

	var waiting, failed []string
	for i := range p.versions {
		vp, vr := &p.versions[i], versions[i]
		v := vp.modelVersion
		ts := v1alpha1.TrafficStatus{
			Version: v.Model.Version, Weight: v.Weight, URI: vp.source.uri(),
			Replicas: v.Replicas, Phase: vr.Phase, Message: vr.Message,
		}
		if v.autoscaled(s) {
			ts.Replicas = v.MinReplicas
		}
		if vp.deployment != nil && vp.serving != nil {
			ts.ReadyReplicas = vp.deployment.Status.ReadyReplicas
		}
		if vp.renderService {
			ts.ServiceName = v.versionServiceName(s)
		}
		r.Status.Traffic = append(r.Status.Traffic, ts)
		switch vr.Phase {
		case v1alpha1.PhaseServing, v1alpha1.PhaseStandby:
		case v1alpha1.PhaseFailed, v1alpha1.PhaseDegraded:
			failed = append(failed, fmt.Sprintf("version %s is %s: %s", v.Model.Version, vr.Phase, vr.Message))
		default:
			waiting = append(waiting, fmt.Sprintf("version %s is %s", v.Model.Version, vr.Phase))
		}
	}
	if r.Status.Phase == v1alpha1.PhaseServing && len(failed) > 0 {
		r.Status.Phase = v1alpha1.PhaseDegraded
		r.Status.Message = strings.Join(failed, "; ")
	}

	split := p.trafficCondition(failed, waiting, r)
	r.Conditions = append(r.Conditions, split)
	if r.Status.Phase == v1alpha1.PhaseServing {
		r.Status.Message += "; " + split.Message
	}
}

// trafficCondition is the TrafficSplit condition: of a split, or of a
// claim whose route or departing versions' servers remain. failed and
// waiting describe the versions that failed and those not serving yet.
func (p *plan) trafficCondition(failed, waiting []string, r *report) condition {
	s := p.spec
	var rt *routeState
	if p.route != nil && !p.route.pool {
		rt = &p.route.state
	}
	hold := p.holdMessage()
	switch {
	case p.route != nil && p.route.held:
		return reasonRouteHeld.condition(fmt.Sprintf("no version has a ready server; HTTPRoute %s keeps its last weights (%s) until one has", s.Name, describeBackends(p.route.backends)))
	case len(failed) > 0:
		return reasonVersionFailed.condition(strings.Join(failed, "; "))
	case len(waiting) > 0:
		msg := strings.Join(waiting, "; ") + "; requests go to the versions that serve"
		if hold != "" {
			msg += "; " + hold
		}
		return reasonVersionsNotReady.condition(msg)
	case hold != "":
		return reasonShifting.condition(hold)
	case rt != nil && rt.Rejected:
		return reasonRouteNotAccepted.condition(rt.Message)
	case rt != nil && !rt.Reported:
		r.Warnings = append(r.Warnings, "input.traffic.gateway: "+rt.Message)
		return reasonRoutePending.condition(rt.Message)
	case rt != nil:
		return reasonRouted.condition(rt.Message)
	case s.Pool != nil:
		return reasonPoolSplit.condition("the InferencePool's endpoint picker spreads requests over the servers of every version by their load, so the split follows the servers per version: " + strings.Join(splitShares(s), ", "))
	default:
		return reasonApproximate.condition(approximateSplit(s))
	}
}

// poolCondition is the InferencePoolReady condition: whether requests
// through the Gateway reach the claim's InferencePool and its picker.
func (p *plan) poolCondition(r *report) condition {
	s := p.spec
	pp := p.pool
	if pp == nil {
		return reasonPoolWaiting.condition(fmt.Sprintf("InferencePool %s, its endpoint picker %s and HTTPRoute %s come with the first servers", s.Name, pickerName(s), s.Name))
	}
	rt := p.route.state
	d := p.observed.Picker
	switch {
	case pp.state.Rejected:
		return reasonPoolNotAccepted.condition(pp.state.Message)
	case rt.Rejected:
		return reasonPoolNotAccepted.condition(rt.Message)
	}
	if d != nil {
		if stalled, msg := deploymentStalled(d); stalled && !pp.pickerReady {
			return reasonPickerFailed.condition(fmt.Sprintf("the endpoint picker's rollout gave up: %s; see: kubectl describe -n %s deployment/%s", msg, s.Namespace, pickerName(s)))
		}
	}
	switch {
	case !pp.pickerReady:
		ready := int32(0)
		if d != nil {
			ready = d.Status.AvailableReplicas
		}
		return reasonPickerStarting.condition(fmt.Sprintf("the endpoint picker %s is not available yet (%d of 1 ready); until it is, the Gateway %s the pool's requests; see: kubectl describe -n %s deployment/%s", pickerName(s), ready, failureEffect(s.Pool.FailureMode), s.Namespace, pickerName(s)))
	case !pp.state.Reported:
		r.Warnings = append(r.Warnings, "input.traffic.gateway.inferenceExtension: "+pp.state.Message)
		return reasonPoolPending.condition(pp.state.Message)
	case !rt.Reported:
		r.Warnings = append(r.Warnings, "input.traffic.gateway: "+rt.Message)
		return reasonPoolPending.condition(rt.Message)
	}
	return reasonPoolRouted.condition(fmt.Sprintf("%s; its endpoint picker %s chooses a server for each request", rt.Message, pickerName(s)))
}

// failureEffect says what the Gateway does with a pool's requests while
// its picker does not answer.
func failureEffect(m inferencev1.EndpointPickerFailureMode) string {
	if m == inferencev1.EndpointPickerFailOpen {
		return "sends to a server of its own choice"
	}
	return "refuses"
}

// holdMessage says which Deployments make before break holds and what
// for; empty when none.
func (p *plan) holdMessage() string {
	s := p.spec
	var holds, waits []string
	for _, vp := range p.versions {
		switch {
		case vp.held:
			holds = append(holds, fmt.Sprintf("Deployment %s (version %s) keeps %d servers, its share being %d", vp.serverName(s), vp.Model.Version, vp.servers, vp.target))
		case vp.target > 0 && vp.ready < vp.target:
			waits = append(waits, fmt.Sprintf("Deployment %s has %d of %d servers ready on version %s's weights", vp.serverName(s), vp.ready, vp.target, vp.Model.Version))
		}
	}
	for _, d := range p.departing {
		if d.renderDeployment {
			holds = append(holds, fmt.Sprintf("Deployment %s, of version %s as it was before spec.traffic changed, keeps its %d servers", d.serverName(s), d.Model.Version, desiredReplicas(d.deployment.Deployment)))
		}
	}
	if len(holds) == 0 {
		return ""
	}
	msg := "make before break: " + strings.Join(holds, "; ")
	if len(waits) > 0 {
		msg += " until " + strings.Join(waits, ", ")
	}
	return msg
}

// approximateSplit says how the Service <name> splits requests: evenly
// over the servers, so by each version's share of them.
func approximateSplit(s *resolvedSpec) string {
	parts := splitShares(s)
	msg := "the split is approximate, by servers: " + strings.Join(parts, ", ")
	if s.Autoscaling != nil {
		msg = "the split is approximate, by servers, and each version's autoscaler moves it: " + strings.Join(parts, ", ")
	}
	return msg + "; name a Gateway in the Composition's Input (input.traffic.gateway) for an exact split"
}

// splitShares gives each version's share of the servers, which is its
// share of requests when something spreads them over all servers.
func splitShares(s *resolvedSpec) []string {
	total := int32(0)
	for i := range s.Versions {
		total += s.Versions[i].Replicas
	}
	parts := make([]string, len(s.Versions))
	for i := range s.Versions {
		v := &s.Versions[i]
		got := int32(0)
		if total > 0 {
			got = (v.Replicas*100 + total/2) / total
		}
		parts[i] = fmt.Sprintf("version %s %d%% (%d of %d servers, asked %d%%)", v.Model.Version, got, v.Replicas, total, v.Weight)
	}
	return parts
}
