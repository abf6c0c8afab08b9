package fn

import (
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
)

// Readiness of each composed kind. Crossplane treats a composed resource of
// unspecified readiness as not ready, so the function decides for every
// object it returns; an object not observed yet is never ready.

// pvcBound reports whether the cache volume is ready:
//  1. status.phase is Bound.
//
// A volume of a WaitForFirstConsumer class stays Pending until the pull
// Job's pod mounts it, so nothing waits for this before creating the Job.
func pvcBound(pvc *corev1.PersistentVolumeClaim) bool {
	return pvc != nil && pvc.Status.Phase == corev1.ClaimBound
}

// jobState is what a pull Job's conditions say.
type jobState int

const (
	jobAbsent jobState = iota
	jobRunning
	jobComplete
	jobFailed
)

// pullState reads a pull Job:
//  1. no Job observed: absent;
//  2. condition Failed=True: failed, whatever else it says (a Job cannot
//     recover from Failed, and Complete beside it would be a lie);
//  3. condition Complete=True: complete, and ready;
//  4. otherwise running.
//
// It also returns the Failed condition's reason and message.
func pullState(job *batchv1.Job) (jobState, string) {
	if job == nil {
		return jobAbsent, ""
	}
	complete := false
	for _, c := range job.Status.Conditions {
		if c.Status != corev1.ConditionTrue {
			continue
		}
		switch c.Type {
		case batchv1.JobFailed:
			msg := c.Reason
			if c.Message != "" {
				msg += ": " + c.Message
			}
			return jobFailed, msg
		case batchv1.JobComplete:
			complete = true
		}
	}
	if complete {
		return jobComplete, ""
	}
	return jobRunning, ""
}

// pullFailure is why a pull Job failed.
type pullFailure int

const (
	// pullFailedOther: the puller failed, backoffLimit times.
	pullFailedOther pullFailure = iota
	// pullStalled: the puller said its download stalled.
	pullStalled
	// pullTimedOut: the Job ran past its activeDeadlineSeconds.
	pullTimedOut
)

// pullFailureOf reads why a failed pull Job failed, from its Failed
// condition's reason:
//  1. DeadlineExceeded: it ran past activeDeadlineSeconds (timed out);
//  2. PodFailurePolicy: the puller exited PullStalledExitCode, the one
//     exit code on which the Job's pod failure policy fails it (stalled);
//  3. anything else (BackoffLimitExceeded, …): failed.
func pullFailureOf(job *batchv1.Job) pullFailure {
	if job == nil {
		return pullFailedOther
	}
	for _, c := range job.Status.Conditions {
		if c.Type != batchv1.JobFailed || c.Status != corev1.ConditionTrue {
			continue
		}
		switch c.Reason {
		case batchv1.JobReasonDeadlineExceeded:
			return pullTimedOut
		case batchv1.JobReasonPodFailurePolicy:
			return pullStalled
		}
	}
	return pullFailedOther
}

// desiredReplicas is the observed Deployment's spec.replicas, which the API
// server defaults to 1 and an autoscaler sets.
func desiredReplicas(d *appsv1.Deployment) int32 {
	if d.Spec.Replicas == nil {
		return 1
	}
	return *d.Spec.Replicas
}

// deploymentReady reports whether the servers are ready:
//  1. status.observedGeneration >= metadata.generation (the status is
//     about the current spec);
//  2. condition Available=True;
//  3. status.updatedReplicas == status.availableReplicas == spec.replicas.
func deploymentReady(d *appsv1.Deployment) bool {
	if d == nil || d.Status.ObservedGeneration < d.Generation {
		return false
	}
	if !deploymentCondition(d, appsv1.DeploymentAvailable, corev1.ConditionTrue) {
		return false
	}
	want := desiredReplicas(d)
	return d.Status.UpdatedReplicas == want && d.Status.AvailableReplicas == want
}

// deploymentStalled reports whether a rollout gave up:
//  1. condition Progressing=False with reason ProgressDeadlineExceeded.
func deploymentStalled(d *appsv1.Deployment) (bool, string) {
	for _, c := range d.Status.Conditions {
		if c.Type == appsv1.DeploymentProgressing && c.Status == corev1.ConditionFalse && c.Reason == "ProgressDeadlineExceeded" {
			return true, c.Message
		}
	}
	return false, ""
}

func deploymentCondition(d *appsv1.Deployment, t appsv1.DeploymentConditionType, s corev1.ConditionStatus) bool {
	for _, c := range d.Status.Conditions {
		if c.Type == t {
			return c.Status == s
		}
	}
	return false
}

// serviceReady reports whether the Service is ready:
//  1. it exists;
//  2. a LoadBalancer Service also has an ingress address.
func serviceReady(svc *corev1.Service) bool {
	if svc == nil {
		return false
	}
	if svc.Spec.Type == corev1.ServiceTypeLoadBalancer {
		return len(svc.Status.LoadBalancer.Ingress) > 0
	}
	return true
}

// hpaReady reports whether the autoscaler is ready:
//  1. it exists;
//  2. condition AbleToScale=True.
//
// ScalingActive=False (no metrics yet, or no metrics pipeline) does not
// hold the service back: the servers run at their current count, and the
// function reports it as a warning.
func hpaReady(h *autoscalingv2.HorizontalPodAutoscaler) bool {
	return h != nil && hpaCondition(h, autoscalingv2.AbleToScale) != nil &&
		hpaCondition(h, autoscalingv2.AbleToScale).Status == corev1.ConditionTrue
}

func hpaCondition(h *autoscalingv2.HorizontalPodAutoscaler, t autoscalingv2.HorizontalPodAutoscalerConditionType) *autoscalingv2.HorizontalPodAutoscalerCondition {
	for i := range h.Status.Conditions {
		if h.Status.Conditions[i].Type == t {
			return &h.Status.Conditions[i]
		}
	}
	return nil
}

// routeState is what an HTTPRoute's status says about our Gateway.
type routeState struct {
	// Reported says a gateway controller wrote status for our parent.
	Reported bool
	// Rejected says it did not accept the route or resolve its backends.
	Rejected bool
	Message  string
}

// routeReady reads an HTTPRoute's status.parents for the Input's Gateway:
//  1. no entry for that parent: no gateway controller has looked at the
//     route yet; not ready, and a warning says so (the Service <name> still
//     serves, but the exact split is not in effect);
//  2. conditions Accepted=True and ResolvedRefs=True: ready;
//  3. otherwise rejected, with the False condition's reason and message.
func routeReady(s *resolvedSpec, r *gatewayv1.HTTPRoute, backends []routeBackend) (bool, routeState) {
	gw := s.Gateway
	st := routeState{Message: fmt.Sprintf("no gateway controller has reported on HTTPRoute %s for Gateway %s/%s yet; until one accepts it the Service %s splits requests approximately", s.Name, gw.Namespace, gw.Name, s.Name)}
	if s.Pool != nil {
		st.Message = fmt.Sprintf("no gateway controller has reported on HTTPRoute %s for Gateway %s/%s yet; until one accepts it the Service %s is the only way to the servers", s.Name, gw.Namespace, gw.Name, s.Name)
	}
	if r == nil {
		return false, st
	}
	for _, p := range r.Status.Parents {
		ref := p.ParentRef
		ns := r.Namespace
		if ref.Namespace != nil {
			ns = string(*ref.Namespace)
		}
		section := ""
		if ref.SectionName != nil {
			section = string(*ref.SectionName)
		}
		if string(ref.Name) != gw.Name || ns != gw.Namespace || section != gw.SectionName {
			continue
		}
		st.Reported = true
		accepted := meta.FindStatusCondition(p.Conditions, string(gatewayv1.RouteConditionAccepted))
		resolved := meta.FindStatusCondition(p.Conditions, string(gatewayv1.RouteConditionResolvedRefs))
		for _, c := range []*metav1.Condition{accepted, resolved} {
			if c != nil && c.Status != metav1.ConditionTrue {
				st.Rejected = true
				st.Message = fmt.Sprintf("Gateway %s/%s (%s) reports HTTPRoute %s %s=%s: %s: %s", gw.Namespace, gw.Name, p.ControllerName, s.Name, c.Type, c.Status, c.Reason, c.Message)
				return false, st
			}
		}
		if accepted == nil || resolved == nil {
			st.Reported = false
			return false, st
		}
		st.Message = fmt.Sprintf("HTTPRoute %s on Gateway %s/%s splits requests exactly: %s", s.Name, gw.Namespace, gw.Name, describeBackends(backends))
		if s.Pool != nil {
			st.Message = fmt.Sprintf("HTTPRoute %s on Gateway %s/%s sends requests to InferencePool %s", s.Name, gw.Namespace, gw.Name, s.Name)
		}
		return true, st
	}
	return false, st
}

// lwsReady reports whether the groups of a LeaderWorkerSet are ready:
//  1. condition Available=True (the LWS controller sets it, and
//     Progressing=False, once every group's leader and workers are ready
//     on the current templates);
//  2. status.readyReplicas == status.updatedReplicas == status.replicas ==
//     spec.replicas.
//
// The LWS status has no observedGeneration, so for the moment between a
// new template and the controller's next status it may still describe the
// old one; the weights the servers mount are judged from the template
// (readyOn), not from the status.
func lwsReady(l *leaderWorkerSet) bool {
	if l == nil || !lwsCondition(l, lwsAvailable) {
		return false
	}
	want := desiredGroups(l)
	return l.Status.ReadyReplicas == want && l.Status.UpdatedReplicas == want && l.Status.Replicas == want
}

// lwsCondition says the LeaderWorkerSet's condition of that type is True.
func lwsCondition(l *leaderWorkerSet, t string) bool {
	c := meta.FindStatusCondition(l.Status.Conditions, t)
	return c != nil && c.Status == metav1.ConditionTrue
}
