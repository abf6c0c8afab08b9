package status

import (
	"fmt"
	"strings"

	"github.com/inferno-ai/function-inferno/apis/inference/v1alpha1"
	"github.com/inferno-ai/function-inferno/internal/plan"
	"github.com/inferno-ai/function-inferno/internal/reason"
	"github.com/inferno-ai/function-inferno/internal/render"
	"github.com/inferno-ai/function-inferno/internal/resolve"
)

// splitStatus reports a split: each version in status.traffic, the
// TrafficSplit condition, and the overall phase. The phase is the
// primary's (or, when the primary has weight 0, that of the version with
// the most traffic); a canary that failed makes a serving service Degraded
// with the canary's reason, never Failed, since the primary still answers.
func splitStatus(p *plan.Plan, versions []versionReport, r *Report) {
	s := p.Spec
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

	// failed and waiting go into the TrafficSplit condition, failedText
	// and waitingText (with the phases and figures of the moment) into
	// status.message.
	var waiting, waitingText, failed, failedText []string
	for i := range p.Versions {
		vp, vr := &p.Versions[i], versions[i]
		v := vp.Version
		ts := v1alpha1.TrafficStatus{
			Version: v.Model.Version, Weight: v.Weight, URI: vp.Source.URI(),
			Replicas: v.Replicas, Phase: vr.Phase, Message: vr.Message,
		}
		if v.Autoscaled(s) {
			ts.Replicas = v.MinReplicas
		}
		if vp.Deployment != nil && vp.Serving != nil {
			ts.ReadyReplicas = vp.Deployment.Status.ReadyReplicas
		}
		if vp.RenderService {
			ts.ServiceName = v.VersionServiceName(s)
		}
		r.Status.Traffic = append(r.Status.Traffic, ts)
		switch vr.Phase {
		case v1alpha1.PhaseServing, v1alpha1.PhaseStandby:
		case v1alpha1.PhaseFailed, v1alpha1.PhaseDegraded:
			failed = append(failed, fmt.Sprintf("version %s is %s: %s", v.Model.Version, vr.Phase, vr.Stable))
			failedText = append(failedText, fmt.Sprintf("version %s is %s: %s", v.Model.Version, vr.Phase, vr.Message))
		default:
			waiting = append(waiting, fmt.Sprintf("version %s does not serve yet", v.Model.Version))
			waitingText = append(waitingText, fmt.Sprintf("version %s is %s", v.Model.Version, vr.Phase))
		}
	}
	if r.Status.Phase == v1alpha1.PhaseServing && len(failed) > 0 {
		r.Status.Phase = v1alpha1.PhaseDegraded
		r.Status.Message = strings.Join(failedText, "; ")
	}

	split := trafficCondition(p, failed, waiting, waitingText, r)
	r.Conditions = append(r.Conditions, split)
	if r.Status.Phase == v1alpha1.PhaseServing {
		r.Status.Message += "; " + split.Text()
	}
}

// trafficCondition is the TrafficSplit condition: of a split, or of a
// claim whose route or departing versions' servers remain. failed and
// waiting describe the versions that failed and those not serving yet.
func trafficCondition(p *plan.Plan, failed, waiting, waitingText []string, r *Report) reason.Condition {
	s := p.Spec
	var rt *render.RouteState
	if p.Route != nil && !p.Route.Pool {
		rt = &p.Route.State
	}
	hold, holdDetail := holdMessage(p)
	switch {
	case p.Route != nil && p.Route.Held:
		return reason.RouteHeld.Condition(fmt.Sprintf("no version has a ready server; HTTPRoute %s keeps its last weights (%s) until one has", s.Name, render.DescribeBackends(p.Route.Backends)))
	case len(failed) > 0:
		return reason.VersionFailed.Condition(strings.Join(failed, "; "))
	case len(waiting) > 0:
		const rest = "; requests go to the versions that serve"
		msg, detail := strings.Join(waiting, "; ")+rest, strings.Join(waitingText, "; ")+rest
		if hold != "" {
			msg, detail = msg+"; "+hold, detail+"; "+holdDetail
		}
		return reason.VersionsNotReady.Condition(msg).WithDetail(detail)
	case hold != "":
		return reason.Shifting.Condition(hold).WithDetail(holdDetail)
	case rt != nil && rt.Rejected:
		return reason.RouteNotAccepted.Condition(rt.Message)
	case rt != nil && !rt.Reported:
		r.Warnings = append(r.Warnings, "input.traffic.gateway: "+rt.Message)
		return reason.RoutePending.Condition(rt.Message)
	case rt != nil:
		return reason.Routed.Condition(rt.Message)
	case s.Pool != nil:
		return reason.PoolSplit.Condition("the InferencePool's endpoint picker spreads requests over the servers of every version by their load, so the split follows the servers per version: " + strings.Join(splitShares(s), ", "))
	default:
		return reason.Approximate.Condition(approximateSplit(s))
	}
}

// holdMessage says which Deployments make before break holds and what
// for, without the server counts (msg) and with them (detail); empty when
// none.
func holdMessage(p *plan.Plan) (msg, detail string) {
	s := p.Spec
	var holds, holdCounts, waits, waitCounts []string
	for _, vp := range p.Versions {
		switch {
		case vp.Held:
			holds = append(holds, fmt.Sprintf("Deployment %s (version %s) keeps its servers beyond its share", vp.ServerName(s), vp.Model.Version))
			holdCounts = append(holdCounts, fmt.Sprintf("Deployment %s (version %s) keeps %d servers, its share being %d", vp.ServerName(s), vp.Model.Version, vp.Servers, vp.Target))
		case vp.Target > 0 && vp.Ready < vp.Target:
			waits = append(waits, fmt.Sprintf("Deployment %s has its share of servers ready on version %s's weights", vp.ServerName(s), vp.Model.Version))
			waitCounts = append(waitCounts, fmt.Sprintf("Deployment %s has %d of %d servers ready on version %s's weights", vp.ServerName(s), vp.Ready, vp.Target, vp.Model.Version))
		}
	}
	for _, d := range p.Departing {
		if d.RenderDeployment {
			h := fmt.Sprintf("Deployment %s, of version %s as it was before spec.traffic changed, keeps its %d servers", d.ServerName(s), d.Model.Version, render.DesiredReplicas(d.Deployment.Deployment))
			holds, holdCounts = append(holds, h), append(holdCounts, h)
		}
	}
	if len(holds) == 0 {
		return "", ""
	}
	msg = "make before break: " + strings.Join(holds, "; ")
	detail = "make before break: " + strings.Join(holdCounts, "; ")
	if len(waits) > 0 {
		msg += " until " + strings.Join(waits, ", ")
		detail += " until " + strings.Join(waitCounts, ", ")
	}
	return msg, detail
}

// approximateSplit says how the Service <name> splits requests: evenly
// over the servers, so by each version's share of them.
func approximateSplit(s *resolve.Spec) string {
	parts := splitShares(s)
	msg := "the split is approximate, by servers: " + strings.Join(parts, ", ")
	if s.Autoscaling != nil {
		msg = "the split is approximate, by servers, and each version's autoscaler moves it: " + strings.Join(parts, ", ")
	}
	return msg + "; name a Gateway in the Composition's Input (input.traffic.gateway) for an exact split"
}

// splitShares gives each version's share of the servers, which is its
// share of requests when something spreads them over all servers.
func splitShares(s *resolve.Spec) []string {
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
