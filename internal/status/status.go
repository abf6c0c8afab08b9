package status

import (
	"fmt"

	"github.com/inferno-ai/function-inferno/apis/inference/v1alpha1"
	"github.com/inferno-ai/function-inferno/internal/plan"
	"github.com/inferno-ai/function-inferno/internal/reason"
	"github.com/inferno-ai/function-inferno/internal/render"
	"github.com/inferno-ai/function-inferno/internal/resolve"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
)

// Report is the status the function writes, and its warnings.
type Report struct {
	Status     v1alpha1.InferenceServiceStatus
	Conditions []reason.Condition
	Warnings   []string
}

// versionReport is where one version stands.
type versionReport struct {
	Weights, Server reason.Condition
	Phase           v1alpha1.Phase
	// Message says why, with the figures of the moment (status.message);
	// Stable says it without them, for a condition's message (see
	// reason.Condition.Detail).
	Message, Stable string
}

// Of explains where the service is, in a phase, a message and one
// condition each for the weights and the servers of the primary version;
// in a split also each version's state and a condition for the split.
func Of(p *plan.Plan) Report {
	s := p.Spec
	var r Report
	versions := make([]versionReport, len(p.Versions))
	for i := range p.Versions {
		versions[i] = versionStatus(s, &p.Versions[i])
	}
	primary := versions[0]
	r.Conditions = []reason.Condition{primary.Weights, primary.Server}
	r.Warnings = append(r.Warnings, p.CacheWarnings()...)
	r.Status.Phase, r.Status.Message = primary.Phase, primary.Message
	for _, vp := range p.Versions {
		switch {
		case vp.LWS != nil && vp.Serving != nil:
			r.Status.ReadyReplicas += vp.LWS.Status.ReadyReplicas
		case vp.Deployment != nil && vp.Serving != nil:
			r.Status.ReadyReplicas += vp.Deployment.Status.ReadyReplicas
		}
	}
	if p.MainService {
		r.Status.ServiceName = s.Name
		r.Status.URL = render.ServiceURL(s)
	}
	for _, vp := range p.Versions {
		if vp.HPA == nil || !vp.Autoscaled(s) {
			continue
		}
		if c := render.HPACondition(vp.HPA, autoscalingv2.ScalingActive); c != nil && c.Status == corev1.ConditionFalse {
			r.Warnings = append(r.Warnings, fmt.Sprintf("spec.autoscaling: the autoscaler %s cannot scale yet (%s: %s); the servers stay at their current count until the cluster's metrics pipeline serves %s", vp.ServerName(s), c.Reason, c.Message, AutoscalerMetrics(s)))
		}
	}
	for _, vp := range p.Versions {
		if vp.Scaled == nil || !vp.ScalesToZero(s) || vp.Judged.ScalerReady {
			continue
		}
		r.Warnings = append(r.Warnings, fmt.Sprintf("spec.autoscaling: KEDA has not made the ScaledObject %s ready (%s); the servers stay at their current count until it can read %s", vp.ServerName(s), kedaReadyMessage(vp.Scaled), kedaSource(s)))
	}
	for _, d := range p.Departing {
		if d.RenderDeployment {
			r.Status.ReadyReplicas += d.Deployment.Status.ReadyReplicas
		}
	}
	switch {
	case s.Split:
		splitStatus(p, versions, &r)
	case p.Route != nil && !p.Route.Pool || p.KeepsDepartingServers():
		c := trafficCondition(p, nil, nil, nil, &r)
		r.Conditions = append(r.Conditions, c)
		if r.Status.Phase == v1alpha1.PhaseServing {
			r.Status.Message += "; " + c.Text()
		}
	}
	if s.Pool != nil {
		c := poolCondition(p, &r)
		r.Conditions = append(r.Conditions, c)
		if r.Status.Phase == v1alpha1.PhaseServing {
			r.Status.Message += "; " + c.Text()
		}
	}
	if p.Route != nil {
		r.Status.RouteURL = render.RouteURL(s)
	}
	r.Status.Pulls = pullStatuses(p)
	reportAdapters(p, &r)
	return r
}

// kedaSource says where KEDA reads a service's in-flight requests from:
// Prometheus, or only the HTTP add-on's scaler for a runtime without a
// concurrency metric.
func kedaSource(s *resolve.Spec) string {
	if s.Autoscaling.Metric == "" {
		return "the in-flight requests from the HTTP add-on's scaler (input.keda.httpAddOn.scalerAddress)"
	}
	return s.Autoscaling.Metric + " from input.keda.prometheusAddress"
}
