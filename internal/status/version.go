package status

import (
	"fmt"

	"github.com/inferno-ai/function-inferno/apis/inference/v1alpha1"
	"github.com/inferno-ai/function-inferno/internal/kinds/keda"
	"github.com/inferno-ai/function-inferno/internal/plan"
	"github.com/inferno-ai/function-inferno/internal/reason"
	"github.com/inferno-ai/function-inferno/internal/render"
	"github.com/inferno-ai/function-inferno/internal/resolve"
)

// versionStatus judges one version from its own objects.
func versionStatus(s *resolve.Spec, vp *plan.Version) versionReport {
	w := vp.Source.Condition()
	srv := serverCondition(s, vp)
	phase, msg := phaseFor(s, vp, w, srv, reason.Condition.Text)
	_, stable := phaseFor(s, vp, w, srv, func(c reason.Condition) string { return c.Message })
	return versionReport{Weights: w, Server: srv, Phase: phase, Message: msg, Stable: stable}
}

// serverCondition is a version's ServerReady condition.
func serverCondition(s *resolve.Spec, vp *plan.Version) reason.Condition {
	if s.Groups() {
		return groupsCondition(s, vp)
	}
	d, v, name := vp.Deployment.Object(), vp.Version, vp.ServerName(s)
	switch {
	case vp.Serving == nil:
		return reason.WaitingForWeights.Condition("the servers start once the weights are pulled")
	case d == nil && vp.Servers > 0:
		// The call that creates the Deployment says what the call that
		// first sees it will: one status change fewer, each of which
		// costs Crossplane writes of the composite and the claim and a
		// reconcile (docs/performance.md).
		return startingCondition(s, vp.Servers)
	case d == nil:
		return reason.Creating.Condition(fmt.Sprintf("creating Deployment %s", name))
	}
	want, ready := render.DesiredReplicas(d), d.Status.ReadyReplicas
	if j := vp.Judged; j.Stalled && ready < want {
		see := fmt.Sprintf("the rollout gave up: %s; see: kubectl describe -n %s deployment/%s", j.StallMessage, s.Namespace, name)
		return reason.ProgressDeadlineExceeded.Condition(see).WithDetail(fmt.Sprintf("%d of %d servers ready and %s", ready, want, see))
	}
	switch {
	case want == 0 && s.Split && v.Weight == 0 && vp.Judged.ServersReady:
		return reason.NoTraffic.Condition(fmt.Sprintf("spec.traffic gives version %s weight 0: no server runs; its weights stay cached", v.Model.Version))
	case want == 0 && v.ScalesToZero(s):
		return idleCondition(s, vp)
	case want == 0:
		return reason.ScaledToZero.Condition("spec.replicas.min is 0: no server runs; the weights stay cached")
	case vp.Judged.ServersReady:
		return reason.Available.Condition(fmt.Sprintf("the servers of Deployment %s are ready", name)).WithDetail(fmt.Sprintf("%d of %d servers ready", ready, want))
	case ready == 0:
		return startingCondition(s, want)
	case ready < want && vp.Growing:
		const mbb = "make before break keeps the servers of the versions it takes them from until the others are ready"
		return reason.ScalingUp.Condition(mbb).WithDetail(fmt.Sprintf("%d of %d servers ready; %s", ready, want, mbb))
	case ready < want:
		return reason.Degraded.Condition(fmt.Sprintf("fewer servers are ready than Deployment %s wants; see: kubectl describe -n %s deployment/%s", name, s.Namespace, name)).WithDetail(fmt.Sprintf("%d of %d servers ready", ready, want))
	default:
		return reason.RollingOut.Condition("rolling out updated servers").WithDetail(fmt.Sprintf("%d of %d servers ready; rolling out %d updated servers", ready, want, d.Status.UpdatedReplicas))
	}
}

// startingCondition is ServerReady while none of want servers is ready.
func startingCondition(s *resolve.Spec, want int32) reason.Condition {
	load := fmt.Sprintf("loading a model can take up to %ds", *s.Runtime.StartupSeconds)
	if s.Devices != nil {
		load = devicesWait(s) + "; " + load
	}
	return reason.Starting.Condition("no server is ready yet; " + load).WithDetail(fmt.Sprintf("0 of %d servers ready; %s", want, load))
}

// groupsCondition is the ServerReady condition of servers that are
// LeaderWorkerSet groups, from the LWS status (lwsReady): groups, not pods.
func groupsCondition(s *resolve.Spec, vp *plan.Version) reason.Condition {
	l, name := vp.LWS, vp.ServerName(s)
	group := render.GPUsPerGroup(s)
	switch {
	case vp.Serving == nil:
		return reason.WaitingForWeights.Condition("the servers start once the weights are pulled")
	case l == nil:
		return reason.GroupsStarting.Condition(fmt.Sprintf("creating LeaderWorkerSet %s (groups of %s)", name, group))
	}
	want, ready := render.DesiredGroups(l), l.Status.ReadyReplicas
	switch {
	case want == 0:
		return reason.ScaledToZero.Condition("spec.replicas.min is 0: no group runs; the weights stay cached")
	case vp.Judged.ServersReady:
		shape := fmt.Sprintf("each %s, tensor %d × pipeline %d", group, s.MultiNode.Tensor, s.MultiNode.Pipeline)
		return reason.GroupsAvailable.Condition(fmt.Sprintf("the groups of LeaderWorkerSet %s are ready (%s)", name, shape)).WithDetail(fmt.Sprintf("%d of %d groups ready (%s)", ready, want, shape))
	case ready == 0:
		how := fmt.Sprintf("a group is ready once its leader and every worker are, and the leader serves once its workers joined and the model loaded, which can take up to %ds", *s.Runtime.StartupSeconds)
		return reason.GroupsStarting.Condition(fmt.Sprintf("no group is ready yet (each %s); %s", group, how)).WithDetail(fmt.Sprintf("0 of %d groups ready (each %s); %s", want, group, how))
	case ready < want:
		see := fmt.Sprintf("see: kubectl get -n %s lws/%s", s.Namespace, name)
		return reason.GroupsDegraded.Condition(fmt.Sprintf("fewer groups are ready than wanted (each %s); %s", group, see)).WithDetail(fmt.Sprintf("%d of %d groups ready (each %s); %s", ready, want, group, see))
	default:
		return reason.GroupsRollingOut.Condition("rolling out updated groups").WithDetail(fmt.Sprintf("%d of %d groups ready; rolling out %d updated groups", ready, want, l.Status.UpdatedReplicas))
	}
}

// phaseFor reduces a version's two conditions to one phase and its
// message, in which each condition says what say makes of it (its text
// with the figures of the moment, or its message without).
func phaseFor(s *resolve.Spec, vp *plan.Version, weights, server reason.Condition, say func(reason.Condition) string) (v1alpha1.Phase, string) {
	if vp.Serving == nil {
		switch {
		case vp.Source.State() == render.JobFailed:
			return v1alpha1.PhaseFailed, say(weights)
		case vp.Source.State() == render.JobRunning, weights.Reason == reason.Pulling:
			// Pulling from the call that creates the Job on (see
			// PulledWeights.Condition).
			return v1alpha1.PhasePulling, say(weights)
		default:
			return v1alpha1.PhasePending, say(weights)
		}
	}
	older := vp.Serving.ID != vp.Source.Wanted().ID
	switch server.Reason {
	case reason.ProgressDeadlineExceeded:
		if vp.Deployment.Status.ReadyReplicas == 0 {
			return v1alpha1.PhaseFailed, say(server)
		}
		return v1alpha1.PhaseDegraded, say(server)
	case reason.Creating, reason.Starting, reason.GroupsStarting:
		return v1alpha1.PhaseStarting, say(server)
	case reason.Degraded, reason.ScaledToZero, reason.GroupsDegraded:
		return v1alpha1.PhaseDegraded, say(server)
	case reason.NoTraffic:
		return v1alpha1.PhaseStandby, say(server)
	case reason.Idle:
		return v1alpha1.PhaseIdle, fmt.Sprintf("idle at %s: %s", versionURL(s, vp.Version), say(server))
	case reason.Waking:
		return v1alpha1.PhaseStarting, say(server)
	case reason.ScalerNotReady:
		return v1alpha1.PhaseDegraded, say(server)
	}
	// The servers answer. Say so, unless a newer model failed to pull.
	url := versionURL(s, vp.Version)
	switch {
	case older && vp.Source.State() == render.JobFailed:
		return v1alpha1.PhaseDegraded, fmt.Sprintf("still serving the previous weights: %s", say(weights))
	case older:
		return v1alpha1.PhaseServing, fmt.Sprintf("serving the previous weights at %s while %s", url, say(weights))
	default:
		return v1alpha1.PhaseServing, fmt.Sprintf("serving %s at %s (%s)", vp.Source.URI(), url, say(server))
	}
}

// idleCondition is the ServerReady condition of a version that scales to
// zero and whose Deployment is at zero:
//  1. KEDA's Active=True: a request woke it, a server is on its way
//     (Waking);
//  2. the ScaledObject is not Ready=True: nothing would wake it
//     (ScalerNotReady);
//  3. otherwise Idle: ready, answering again on demand.
func idleCondition(s *resolve.Spec, vp *plan.Version) reason.Condition {
	z := s.Autoscaling.ScaleToZero
	switch {
	case vp.Scaled.Active():
		return reason.Waking.Condition(fmt.Sprintf("KEDA reports in-flight requests (%s above 0): starting a server; loading a model can take up to %ds", s.Autoscaling.InFlight(), *s.Runtime.StartupSeconds))
	case !vp.Judged.ScalerReady:
		return reason.ScalerNotReady.Condition(fmt.Sprintf("no server runs and KEDA has not made the ScaledObject %s ready (%s), so no request can wake the service; see: kubectl describe -n %s scaledobject/%s", vp.ServerName(s), kedaReadyMessage(vp.Scaled), s.Namespace, vp.ServerName(s)))
	case z.HTTPScaler != "":
		return reason.Idle.Condition(fmt.Sprintf("scaled to zero after %ds without an in-flight request; a request through KEDA's HTTP add-on (Host %s.%s.svc.cluster.local) starts a server; the weights stay cached", z.Cooldown, s.Name, s.Namespace))
	default:
		return reason.Idle.Condition(fmt.Sprintf("scaled to zero after %ds without an in-flight request; KEDA starts a server when %s is above 0 (checked every %ds); the weights stay cached", z.Cooldown, s.Autoscaling.Metric, z.Polling))
	}
}

// kedaReadyMessage describes the ScaledObject's Ready condition.
func kedaReadyMessage(o *keda.ScaledObject) string {
	c := o.Condition("Ready")
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
func versionURL(s *resolve.Spec, v *resolve.Version) string {
	if v.Primary {
		return render.ServiceURL(s)
	}
	return render.ServiceURLOf(v.VersionServiceName(s), s.Namespace)
}

// AutoscalerMetrics names the metrics the claim's HPA scales on, for the
// warning that it cannot scale yet (ScalingActive=False): the user then
// knows what the cluster's metrics pipeline must serve (metrics-server for
// CPU, a custom metrics API for the runtime's concurrency metric).
func AutoscalerMetrics(s *resolve.Spec) string {
	switch {
	case s.Autoscaling.Concurrency != nil && s.Autoscaling.CPUUtilization != nil:
		return "CPU utilisation and " + s.Autoscaling.Metric
	case s.Autoscaling.Concurrency != nil:
		return s.Autoscaling.Metric
	default:
		return "CPU utilisation (metrics-server)"
	}
}

// devicesWait says what the servers' pods wait for with GPUs through DRA:
// the scheduler holds a pod Pending until it can allocate its claim, and
// says why on the pod, not on anything the function observes.
func devicesWait(s *resolve.Spec) string {
	return fmt.Sprintf("each server claims %s through DRA and stays Pending until the scheduler can allocate them (see: kubectl get -n %s pods,resourceclaims -l %s=%s)",
		render.GPUsPerPod(s), s.Namespace, resolve.LabelInstance, s.Name)
}
