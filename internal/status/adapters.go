package status

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/inferno-ai/function-inferno/apis/inference/v1alpha1"
	"github.com/inferno-ai/function-inferno/internal/observe"
	"github.com/inferno-ai/function-inferno/internal/plan"
	"github.com/inferno-ai/function-inferno/internal/reason"
	"github.com/inferno-ai/function-inferno/internal/render"
	"github.com/inferno-ai/function-inferno/internal/resolve"
)

// adapterPhase judges one adapter: its pull, then whether the servers on
// the observed Deployment's current template serve it (the template lists
// it on these weights and one of its servers is ready).
//
// On a runtime that numbers its adapters (the preset's pathOnly), id is the
// adapter's number on that template; nil otherwise.
func adapterPhase(a plan.Adapter, s *resolve.Spec, d *observe.Deployment) (phase v1alpha1.AdapterPhase, msg string, id *int32) {
	job := a.Job.Job.Name
	switch a.Pull {
	case render.JobAbsent:
		if a.Creds.State == observe.CredentialsMissing {
			return v1alpha1.AdapterPending, a.Creds.Message + "; its pull starts once it is there", nil
		}
		return v1alpha1.AdapterPending, fmt.Sprintf("creating pull Job %s for %s", job, a.Model.URI), nil
	case render.JobRunning:
		return v1alpha1.AdapterPulling, fmt.Sprintf("pull Job %s is downloading %s into volume %s", job, a.Model.URI, render.PVCName(s)) + a.ProgressMessage(s), nil
	case render.JobFailed:
		why := a.Detail
		switch a.Failure {
		case render.PullStalled:
			why = "its download made no progress for " + strconv.Itoa(int(s.PullStall)) + "s: " + why
		case render.PullTimedOut:
			why = "it ran past input.pullDeadlineSeconds: " + why
		}
		return v1alpha1.AdapterFailed, fmt.Sprintf("pull Job %s failed (%s); read its logs with: kubectl logs -n %s job/%s; fix the uri or revision, or delete the Job to retry", job, why, s.Namespace, job), nil
	}
	if d != nil && d.ReadyOnTemplate() > 0 {
		for i, sa := range render.ParseAdaptersAnnotation(d.TemplateMeta("annotations", render.AnnotationAdapters)) {
			if sa.Name != a.Name || sa.Hash != a.Model.Hash {
				continue
			}
			if pr := s.Adapters.Preset; pr != nil && pr.PathOnly != nil && *pr.PathOnly {
				n := int32(i)
				return v1alpha1.AdapterServing, fmt.Sprintf(`served as adapter %d by %d ready servers: a request applies it with "lora": [{"id": %d, "scale": 1}]`, n, d.ReadyOnTemplate(), n), &n
			}
			return v1alpha1.AdapterServing, fmt.Sprintf("served as model %q by %d ready servers", a.Name, d.ReadyOnTemplate()), nil
		}
	}
	if d == nil {
		return v1alpha1.AdapterPulled, "pulled; the servers start once every adapter and the base model are pulled", nil
	}
	return v1alpha1.AdapterPulled, fmt.Sprintf("pulled; Deployment %s rolls out to serve it (one server at a time, none stopped before its replacement is ready)", d.Name), nil
}

// adapterReport is status.adapters and the AdaptersReady condition; nil
// condition without adapters.
func adapterReport(p *plan.Plan) ([]v1alpha1.AdapterStatus, *reason.Condition) {
	if len(p.Adapters) == 0 {
		return nil, nil
	}
	d := p.Versions[0].Deployment
	var out []v1alpha1.AdapterStatus
	var failed, pulling, rolling []string
	for _, a := range p.Adapters {
		phase, msg, id := adapterPhase(a, p.Spec, d)
		out = append(out, v1alpha1.AdapterStatus{Name: a.Name, URI: a.Model.URI, Phase: phase, Message: msg, ID: id})
		switch phase {
		case v1alpha1.AdapterFailed:
			failed = append(failed, fmt.Sprintf("adapter %s: %s", a.Name, msg))
		case v1alpha1.AdapterPending, v1alpha1.AdapterPulling:
			pulling = append(pulling, a.Name)
		case v1alpha1.AdapterPulled:
			rolling = append(rolling, a.Name)
		}
	}
	var c reason.Condition
	switch {
	case len(failed) > 0:
		c = reason.AdapterPullFailed.Condition(strings.Join(failed, "; "))
	case len(pulling) > 0:
		c = reason.AdaptersPulling.Condition(fmt.Sprintf("pulling adapters %s; status.adapters has each one's progress", strings.Join(pulling, ", ")))
	case len(rolling) > 0:
		c = reason.AdaptersRollingOut.Condition(fmt.Sprintf("adapters %s are pulled and not yet served by every server; status.adapters says which", strings.Join(rolling, ", ")))
	default:
		c = reason.AdaptersServed.Condition(fmt.Sprintf("every server serves adapters %s", strings.Join(plan.AdapterNames(p.Adapters), ", ")))
	}
	return out, &c
}

// reportAdapters adds status.adapters and the AdaptersReady condition. The
// first servers wait for the adapters as for the weights: until they start,
// the phase is the adapters' (Pulling, or Failed). A failed adapter makes a
// serving service Degraded: the rest still answers.
func reportAdapters(p *plan.Plan, r *Report) {
	list, c := adapterReport(p)
	if c == nil {
		return
	}
	r.Status.Adapters = list
	r.Conditions = append(r.Conditions, *c)
	vp := p.Versions[0]
	waiting := vp.Serving == nil && vp.Source.State() == render.JobComplete
	switch {
	case waiting && c.Reason == reason.AdapterPullFailed:
		r.Status.Phase, r.Status.Message = v1alpha1.PhaseFailed, c.Message
		r.Conditions[1] = reason.WaitingForWeights.Condition("the servers start once the weights and every adapter are pulled; " + c.Message)
	case waiting:
		r.Status.Phase, r.Status.Message = v1alpha1.PhasePulling, c.Message
		r.Conditions[1] = reason.WaitingForWeights.Condition("the servers start once the weights and every adapter are pulled")
	case r.Status.Phase == v1alpha1.PhaseServing && c.Reason == reason.AdapterPullFailed:
		r.Status.Phase, r.Status.Message = v1alpha1.PhaseDegraded, "the base model serves; "+c.Message
	}
}
