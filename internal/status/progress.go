package status

import (
	"github.com/inferno-ai/function-inferno/apis/inference/v1alpha1"
	"github.com/inferno-ai/function-inferno/internal/observe"
	"github.com/inferno-ai/function-inferno/internal/plan"
	"github.com/inferno-ai/function-inferno/internal/render"
)

// pullStatus is a pull as status.pulls reports it: st, with its state and
// its pod's report r (nil for none).
func pullStatus(st v1alpha1.PullStatus, state render.JobState, r *observe.ProgressReport) v1alpha1.PullStatus {
	st.State = pullStateName(state)
	if r != nil {
		st.BytesDone, st.BytesTotal, st.BytesPerSecond = r.Bytes, r.Total, r.Rate
		st.StartedAt, st.UpdatedAt = r.StartedAt, r.UpdatedAt
		if state == render.JobRunning {
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
// claim pulls itself, then one per adapter, when pulls report their
// progress.
func pullStatuses(p *plan.Plan) []v1alpha1.PullStatus {
	if p.Spec.Progress == nil {
		return nil
	}
	var out []v1alpha1.PullStatus
	for _, vp := range p.Versions {
		if pw, ok := vp.Source.(*plan.PulledWeights); ok {
			out = append(out, pullStatus(v1alpha1.PullStatus{Version: vp.Model.Version, URI: pw.Model.URI, Job: pw.Job.Job.Name}, pw.Pull, pw.Report))
		}
	}
	for _, a := range p.Adapters {
		out = append(out, pullStatus(v1alpha1.PullStatus{Adapter: a.Name, URI: a.Model.URI, Job: a.Job.Job.Name}, a.Pull, a.Report))
	}
	return out
}
