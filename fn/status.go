package fn

import (
	"fmt"
	"strings"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"

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
)

// condition is one status condition the function reports. Build it with
// reason.condition, which gives it the reason's type and status.
type condition struct {
	Type    string
	Status  bool
	Reason  reason
	Message string
}

// progress is what the function rendered and observed this call for one
// version: the input of its status.
type progress struct {
	Pull       jobState
	PullDetail string // the Failed condition's reason and message
	// PullFailure says why a failed pull failed.
	PullFailure pullFailure
	JobName     string
	// Serving is set when the Deployment is rendered; Serving.ID differs
	// from the model's hash while the servers keep older weights.
	Serving *weights
	// ServiceRendered says the version's Service is returned: its own
	// Service in a split, the Service <name> for the primary otherwise.
	ServiceRendered bool
	// ServersObserved says the version's Deployment exists.
	ServersObserved bool
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

// statusFor explains where the service is, in a phase, a message and one
// condition each for the weights and the servers of the primary version;
// in a split also each version's state and a condition for the split.
func statusFor(s *resolvedSpec, o observed, ps []progress, mainService bool, rt *routeState) report {
	var r report
	versions := make([]versionReport, len(s.Versions))
	for i := range s.Versions {
		versions[i] = versionStatus(s, &s.Versions[i], o.PVC, o.Versions[i], ps[i])
	}
	primary := versions[0]
	r.Conditions = []condition{primary.Weights, primary.Server}
	r.Status.Phase, r.Status.Message = primary.Phase, primary.Message
	for i := range s.Versions {
		if d := o.Versions[i].Deployment; d != nil && ps[i].Serving != nil {
			r.Status.ReadyReplicas += d.Status.ReadyReplicas
		}
	}
	if mainService {
		r.Status.ServiceName = s.Name
		r.Status.URL = serviceURL(s)
	}
	for i := range s.Versions {
		v, h := &s.Versions[i], o.Versions[i].HPA
		if h == nil || !v.autoscaled(s) {
			continue
		}
		if c := hpaCondition(h, autoscalingv2.ScalingActive); c != nil && c.Status == corev1.ConditionFalse {
			r.Warnings = append(r.Warnings, fmt.Sprintf("spec.autoscaling: the autoscaler %s cannot scale yet (%s: %s); the servers stay at their current count until the cluster's metrics pipeline serves %s", v.serverName(s), c.Reason, c.Message, autoscalerMetrics(s)))
		}
	}
	if s.Split {
		splitStatus(s, o, ps, versions, rt, &r)
	}
	return r
}

// versionStatus judges one version from its own objects.
func versionStatus(s *resolvedSpec, v *modelVersion, pvc *corev1.PersistentVolumeClaim, o observedVersion, p progress) versionReport {
	w := weightsCondition(s, v, pvc, p)
	srv := serverCondition(s, v, o, p)
	phase, msg := phaseFor(s, v, o, p, w, srv)
	return versionReport{Weights: w, Server: srv, Phase: phase, Message: msg}
}

func weightsCondition(s *resolvedSpec, v *modelVersion, pvc *corev1.PersistentVolumeClaim, p progress) condition {
	m := v.Model
	if m.Cache != "" {
		return cacheCondition(s.Cached, p.ServersObserved)
	}
	if !m.pulled() {
		return reasonUserVolume.condition(fmt.Sprintf("serving %s read-only from the app team's own claim", m.URI))
	}
	vol := pvcName(s)
	switch p.Pull {
	case jobComplete:
		return reasonPulled.condition(fmt.Sprintf("the weights of %s are in volume %s", m.URI, vol))
	case jobFailed:
		switch p.PullFailure {
		case pullStalled:
			return reasonPullStalled.condition(fmt.Sprintf("pull Job %s stalled: its download of %s made no progress for %ds, retries included (%s); check that the source is reachable and serving, then delete the Job to retry; read its logs with: kubectl logs -n %s job/%s", p.JobName, m.URI, s.PullStall, p.PullDetail, s.Namespace, p.JobName))
		case pullTimedOut:
			return reasonPullTimedOut.condition(fmt.Sprintf("pull Job %s was stopped after the platform's limit of %ds (input.pullDeadlineSeconds), retries included (%s); if the weights are that large or the link that slow, ask your platform team to raise it; read its logs with: kubectl logs -n %s job/%s", p.JobName, s.PullDeadline, p.PullDetail, s.Namespace, p.JobName))
		}
		return reasonPullFailed.condition(fmt.Sprintf("pull Job %s failed (%s); read its logs with: kubectl logs -n %s job/%s", p.JobName, p.PullDetail, s.Namespace, p.JobName))
	case jobRunning:
		msg := fmt.Sprintf("pull Job %s is downloading %s into volume %s", p.JobName, m.URI, vol)
		if pvc != nil && !pvcBound(pvc) {
			msg += fmt.Sprintf("; the volume is %s (volumes of WaitForFirstConsumer classes bind when the Job's pod starts)", pvc.Status.Phase)
		}
		return reasonPulling.condition(msg)
	default:
		return reasonPullPending.condition(fmt.Sprintf("creating volume %s and pull Job %s for %s", vol, p.JobName, m.URI))
	}
}

func serverCondition(s *resolvedSpec, v *modelVersion, o observedVersion, p progress) condition {
	d, name := o.Deployment, v.serverName(s)
	switch {
	case p.Serving == nil:
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
	case want == 0:
		return reasonScaledToZero.condition("spec.replicas.min is 0: no server runs; the weights stay cached")
	case deploymentReady(d):
		return reasonAvailable.condition(fmt.Sprintf("%d of %d servers ready", ready, want))
	case ready == 0:
		return reasonStarting.condition(fmt.Sprintf("0 of %d servers ready; loading a model can take up to %ds", want, *s.Runtime.StartupSeconds))
	case ready < want:
		return reasonDegraded.condition(fmt.Sprintf("%d of %d servers ready", ready, want))
	default:
		return reasonRollingOut.condition(fmt.Sprintf("%d of %d servers ready; rolling out %d updated servers", ready, want, d.Status.UpdatedReplicas))
	}
}

// phaseFor reduces a version's two conditions to one phase and its message.
func phaseFor(s *resolvedSpec, v *modelVersion, o observedVersion, p progress, weights, server condition) (v1alpha1.Phase, string) {
	if p.Serving == nil {
		switch p.Pull {
		case jobFailed:
			return v1alpha1.PhaseFailed, weights.Message
		case jobRunning:
			return v1alpha1.PhasePulling, weights.Message
		default:
			return v1alpha1.PhasePending, weights.Message
		}
	}
	older := p.Serving.ID != v.Model.Hash
	switch server.Reason {
	case reasonProgressDeadlineExceeded:
		if o.Deployment.Status.ReadyReplicas == 0 {
			return v1alpha1.PhaseFailed, server.Message
		}
		return v1alpha1.PhaseDegraded, server.Message
	case reasonCreating, reasonStarting:
		return v1alpha1.PhaseStarting, server.Message
	case reasonDegraded, reasonScaledToZero:
		return v1alpha1.PhaseDegraded, server.Message
	case reasonNoTraffic:
		return v1alpha1.PhaseStandby, server.Message
	}
	// The servers answer. Say so, unless a newer model failed to pull.
	url := versionURL(s, v)
	switch {
	case older && p.Pull == jobFailed:
		return v1alpha1.PhaseDegraded, fmt.Sprintf("still serving the previous weights: %s", weights.Message)
	case older:
		return v1alpha1.PhaseServing, fmt.Sprintf("serving the previous weights at %s while %s", url, weights.Message)
	default:
		return v1alpha1.PhaseServing, fmt.Sprintf("serving %s at %s (%s)", v.Model.URI, url, server.Message)
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
func splitStatus(s *resolvedSpec, o observed, ps []progress, versions []versionReport, rt *routeState, r *report) {
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
	for i := range s.Versions {
		v, vr := &s.Versions[i], versions[i]
		ts := v1alpha1.TrafficStatus{
			Version: v.Model.Version, Weight: v.Weight, URI: v.Model.URI,
			Replicas: v.Replicas, Phase: vr.Phase, Message: vr.Message,
		}
		if v.autoscaled(s) {
			ts.Replicas = v.MinReplicas
		}
		if d := o.Versions[i].Deployment; d != nil && ps[i].Serving != nil {
			ts.ReadyReplicas = d.Status.ReadyReplicas
		}
		if ps[i].ServiceRendered {
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

	var split condition
	switch {
	case len(failed) > 0:
		split = reasonVersionFailed.condition(strings.Join(failed, "; "))
	case len(waiting) > 0:
		split = reasonVersionsNotReady.condition(strings.Join(waiting, "; ") + "; requests go to the versions that serve")
	case rt != nil && rt.Rejected:
		split = reasonRouteNotAccepted.condition(rt.Message)
	case rt != nil && !rt.Reported:
		split = reasonRoutePending.condition(rt.Message)
		r.Warnings = append(r.Warnings, "input.traffic.gateway: "+rt.Message)
	case rt != nil:
		split = reasonRouted.condition(rt.Message)
	default:
		split = reasonApproximate.condition(approximateSplit(s))
	}
	r.Conditions = append(r.Conditions, split)
	if r.Status.Phase == v1alpha1.PhaseServing {
		r.Status.Message += "; " + split.Message
	}
	if rt != nil && rt.Rendered {
		r.Status.RouteURL = routeURL(s)
	}
}

// approximateSplit says how the Service <name> splits requests: evenly
// over the servers, so by each version's share of them.
func approximateSplit(s *resolvedSpec) string {
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
	msg := "the split is approximate, by servers: " + strings.Join(parts, ", ")
	if s.Autoscaling != nil {
		msg = "the split is approximate, by servers, and each version's autoscaler moves it: " + strings.Join(parts, ", ")
	}
	return msg + "; name a Gateway in the Composition's Input (input.traffic.gateway) for an exact split"
}
