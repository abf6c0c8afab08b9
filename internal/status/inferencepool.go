package status

import (
	"fmt"

	"github.com/inferno-ai/function-inferno/internal/plan"
	"github.com/inferno-ai/function-inferno/internal/reason"
	"github.com/inferno-ai/function-inferno/internal/resolve"
	inferencev1 "sigs.k8s.io/gateway-api-inference-extension/api/v1"
)

// poolCondition is the InferencePoolReady condition: whether requests
// through the Gateway reach the claim's InferencePool and its picker.
func poolCondition(p *plan.Plan, r *Report) reason.Condition {
	s := p.Spec
	pp := p.Pool
	if pp == nil {
		return reason.PoolWaiting.Condition(fmt.Sprintf("InferencePool %s, its endpoint picker %s and HTTPRoute %s come with the first servers", s.Name, resolve.PickerName(s), s.Name))
	}
	rt := p.Route.State
	d := p.Observed.Picker
	switch {
	case pp.State.Rejected:
		return reason.PoolNotAccepted.Condition(pp.State.Message)
	case rt.Rejected:
		return reason.PoolNotAccepted.Condition(rt.Message)
	}
	if pp.PickerStalled && !pp.PickerReady {
		return reason.PickerFailed.Condition(fmt.Sprintf("the endpoint picker's rollout gave up: %s; see: kubectl describe -n %s deployment/%s", pp.PickerStallMessage, s.Namespace, resolve.PickerName(s)))
	}
	switch {
	case !pp.PickerReady:
		ready := int32(0)
		if d != nil {
			ready = d.Status.AvailableReplicas
		}
		return reason.PickerStarting.Condition(fmt.Sprintf("the endpoint picker %s is not available yet (%d of 1 ready); until it is, the Gateway %s the pool's requests; see: kubectl describe -n %s deployment/%s", resolve.PickerName(s), ready, failureEffect(s.Pool.FailureMode), s.Namespace, resolve.PickerName(s)))
	case !pp.State.Reported:
		r.Warnings = append(r.Warnings, "input.traffic.gateway.inferenceExtension: "+pp.State.Message)
		return reason.PoolPending.Condition(pp.State.Message)
	case !rt.Reported:
		r.Warnings = append(r.Warnings, "input.traffic.gateway: "+rt.Message)
		return reason.PoolPending.Condition(rt.Message)
	}
	return reason.PoolRouted.Condition(fmt.Sprintf("%s; its endpoint picker %s chooses a server for each request", rt.Message, resolve.PickerName(s)))
}

// failureEffect says what the Gateway does with a pool's requests while
// its picker does not answer.
func failureEffect(m inferencev1.EndpointPickerFailureMode) string {
	if m == inferencev1.EndpointPickerFailOpen {
		return "sends to a server of its own choice"
	}
	return "refuses"
}
