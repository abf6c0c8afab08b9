package status

import (
	"github.com/inferno-ai/function-inferno/apis/inference/v1alpha1"
	"github.com/inferno-ai/function-inferno/internal/plan"
	"github.com/inferno-ai/function-inferno/internal/render"
)

// pullStatus is the pull as status.pulls reports it.
func pullStatus(p *plan.PulledWeights, version string) v1alpha1.PullStatus {
	st := v1alpha1.PullStatus{Version: version, URI: p.Model.URI, Job: p.Job.Job.Name, State: pullStateName(p.Pull)}
	if r := p.Report; r != nil {
		st.BytesDone, st.BytesTotal, st.BytesPerSecond = r.Bytes, r.Total, r.Rate
		st.StartedAt, st.UpdatedAt = r.StartedAt, r.UpdatedAt
		if p.Pull == render.JobRunning {
			st.ETASeconds = r.Eta()
		}
		st.Progress = r.Words()
	}
	return st
}

// pullStateName is a pull's state as status.pulls says it.
func pullStateName(s render.JobState) string {
	switch s {
	case render.JobRunning:
		return "Pulling"
	case render.JobComplete:
		return "Pulled"
	case render.JobFailed:
		return "Failed"
	default:
		return "Pending"
	}
}

// pullStatuses are status.pulls: one per version whose weights the
// claim pulls itself, when pulls report their progress.
func pullStatuses(p *plan.Plan) []v1alpha1.PullStatus {
	if p.Spec.Progress == nil {
		return nil
	}
	var out []v1alpha1.PullStatus
	for _, vp := range p.Versions {
		if pw, ok := vp.Source.(*plan.PulledWeights); ok {
			out = append(out, pullStatus(pw, vp.Model.Version))
		}
	}
	return out
}
