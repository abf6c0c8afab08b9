package plan

import (
	"github.com/inferno-ai/function-inferno/internal/render"
)

// pool is the claim's InferencePool and its endpoint picker, and what
// the Gateway's implementation and the Deployment controller said of them.
type pool struct {
	// ready says the Gateway accepted the pool and resolved its picker.
	ready bool
	State render.RouteState
	// PickerReady says the picker's Deployment is available; PickerStalled
	// that its rollout gave up, with the controller's message.
	PickerReady        bool
	PickerStalled      bool
	PickerStallMessage string
}

// planPool decides the InferencePool and its picker. They come with the
// Service <name>, with the first servers, and stay while the Input's
// inference extension is on.
func (p *Plan) planPool() *pool {
	if p.Spec.Pool == nil || !p.MainService {
		return nil
	}
	pp := &pool{PickerReady: render.DeploymentReady(p.Observed.Picker)}
	if d := p.Observed.Picker; d != nil {
		pp.PickerStalled, pp.PickerStallMessage = render.DeploymentStalled(d)
	}
	pp.ready, pp.State = render.PoolReady(p.Spec, p.Observed.Pool)
	return pp
}
