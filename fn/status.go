package fn

import (
	"fmt"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"

	"github.com/inferno-ai/function-inferno/apis/inference/v1alpha1"
)

// Condition types the function sets on the composite and the claim, beside
// Crossplane's own Ready and Synced.
const (
	conditionWeightsReady = "WeightsReady"
	conditionServerReady  = "ServerReady"
)

// condition is one status condition the function reports.
type condition struct {
	Type    string
	Status  bool
	Reason  string
	Message string
}

// progress is what the function rendered and observed this call: the
// input of the status.
type progress struct {
	Pull       jobState
	PullDetail string // the Failed condition's reason and message
	JobName    string
	// Serving is set when the Deployment is rendered; Serving.ID differs
	// from the model's hash while the servers keep older weights.
	Serving *weights
	// ServiceRendered says the Service is returned.
	ServiceRendered bool
}

// report is the status the function writes, and its warnings.
type report struct {
	Status     v1alpha1.InferenceServiceStatus
	Conditions []condition
	Warnings   []string
}

// statusFor explains where the service is, in a phase, a message and one
// condition each for the weights and the servers.
func statusFor(s *service, o observed, p progress) report {
	var r report
	weights := weightsCondition(s, o, p)
	server := serverCondition(s, o, p)
	r.Conditions = []condition{weights, server}
	r.Status.Phase, r.Status.Message = phaseFor(s, o, p, weights, server)
	if o.Deployment != nil && p.Serving != nil {
		r.Status.ReadyReplicas = o.Deployment.Status.ReadyReplicas
	}
	if p.ServiceRendered {
		r.Status.ServiceName = s.Name
		r.Status.URL = serviceURL(s)
	}
	if o.HPA != nil && s.Autoscaling != nil {
		if c := hpaCondition(o.HPA, autoscalingv2.ScalingActive); c != nil && c.Status == corev1.ConditionFalse {
			r.Warnings = append(r.Warnings, fmt.Sprintf("spec.autoscaling: the autoscaler %s cannot scale yet (%s: %s); the servers stay at their current count until the cluster's metrics pipeline serves %s", s.Name, c.Reason, c.Message, autoscalerMetrics(s)))
		}
	}
	return r
}

func weightsCondition(s *service, o observed, p progress) condition {
	if !s.Model.pulled() {
		return condition{conditionWeightsReady, true, "UserVolume", fmt.Sprintf("serving %s read-only from the app team's own claim", s.Model.URI)}
	}
	vol := pvcName(s)
	switch p.Pull {
	case jobComplete:
		return condition{conditionWeightsReady, true, "Pulled", fmt.Sprintf("the weights of %s are in volume %s", s.Model.URI, vol)}
	case jobFailed:
		return condition{conditionWeightsReady, false, "PullFailed", fmt.Sprintf("pull Job %s failed (%s); read its logs with: kubectl logs -n %s job/%s", p.JobName, p.PullDetail, s.Namespace, p.JobName)}
	case jobRunning:
		msg := fmt.Sprintf("pull Job %s is downloading %s into volume %s", p.JobName, s.Model.URI, vol)
		if o.PVC != nil && !pvcBound(o.PVC) {
			msg += fmt.Sprintf("; the volume is %s (volumes of WaitForFirstConsumer classes bind when the Job's pod starts)", o.PVC.Status.Phase)
		}
		return condition{conditionWeightsReady, false, "Pulling", msg}
	default:
		return condition{conditionWeightsReady, false, "PullPending", fmt.Sprintf("creating volume %s and pull Job %s for %s", vol, p.JobName, s.Model.URI)}
	}
}

func serverCondition(s *service, o observed, p progress) condition {
	d := o.Deployment
	switch {
	case p.Serving == nil:
		return condition{conditionServerReady, false, "WaitingForWeights", "the servers start once the weights are pulled"}
	case d == nil:
		return condition{conditionServerReady, false, "Creating", fmt.Sprintf("creating Deployment %s", s.Name)}
	}
	want, ready := desiredReplicas(d), d.Status.ReadyReplicas
	if stalled, msg := deploymentStalled(d); stalled && ready < want {
		return condition{conditionServerReady, false, "ProgressDeadlineExceeded", fmt.Sprintf("%d of %d servers ready and the rollout gave up: %s; see: kubectl describe -n %s deployment/%s", ready, want, msg, s.Namespace, s.Name)}
	}
	switch {
	case want == 0:
		return condition{conditionServerReady, false, "ScaledToZero", "spec.replicas.min is 0: no server runs; the weights stay cached"}
	case deploymentReady(d):
		return condition{conditionServerReady, true, "Available", fmt.Sprintf("%d of %d servers ready", ready, want)}
	case ready == 0:
		return condition{conditionServerReady, false, "Starting", fmt.Sprintf("0 of %d servers ready; loading a model can take up to %ds", want, *s.Runtime.StartupSeconds)}
	case ready < want:
		return condition{conditionServerReady, false, "Degraded", fmt.Sprintf("%d of %d servers ready", ready, want)}
	default:
		return condition{conditionServerReady, false, "RollingOut", fmt.Sprintf("%d of %d servers ready; rolling out %d updated servers", ready, want, d.Status.UpdatedReplicas)}
	}
}

// phaseFor reduces the two conditions to one phase and its message.
func phaseFor(s *service, o observed, p progress, weights, server condition) (v1alpha1.Phase, string) {
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
	older := p.Serving.ID != s.Model.Hash
	switch server.Reason {
	case "ProgressDeadlineExceeded":
		if o.Deployment.Status.ReadyReplicas == 0 {
			return v1alpha1.PhaseFailed, server.Message
		}
		return v1alpha1.PhaseDegraded, server.Message
	case "Creating", "Starting":
		return v1alpha1.PhaseStarting, server.Message
	case "Degraded", "ScaledToZero":
		return v1alpha1.PhaseDegraded, server.Message
	}
	// The servers answer. Say so, unless a newer model failed to pull.
	switch {
	case older && p.Pull == jobFailed:
		return v1alpha1.PhaseDegraded, fmt.Sprintf("still serving the previous weights: %s", weights.Message)
	case older:
		return v1alpha1.PhaseServing, fmt.Sprintf("serving the previous weights at %s while %s", serviceURL(s), weights.Message)
	default:
		return v1alpha1.PhaseServing, fmt.Sprintf("serving %s at %s (%s)", s.Model.URI, serviceURL(s), server.Message)
	}
}

func autoscalerMetrics(s *service) string {
	switch {
	case s.Autoscaling.Concurrency != nil && s.Autoscaling.CPUUtilization != nil:
		return "CPU utilisation and " + s.Autoscaling.Metric
	case s.Autoscaling.Concurrency != nil:
		return s.Autoscaling.Metric
	default:
		return "CPU utilisation (metrics-server)"
	}
}
