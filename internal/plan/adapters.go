package plan

import (
	"sort"

	"github.com/inferno-ai/function-inferno/internal/observe"
	"github.com/inferno-ai/function-inferno/internal/render"
	"github.com/inferno-ai/function-inferno/internal/resolve"
	batchv1 "k8s.io/api/batch/v1"
)

// Adapter is one adapter's part of the plan: its pull Job and what is
// observed of it.
type Adapter struct {
	resolve.Adapter
	Job      render.NamedJob
	observed *batchv1.Job
	Pull     render.JobState
	Detail   string
	Failure  render.PullFailure
	// Creds is the adapter's Secret, judged; Held says its Job waits for
	// it (heldForCredentials) and is not returned yet.
	Creds observe.Credentials
	Held  bool
	// Report is the pull pod's last progress report, with
	// input.pullProgress; nil without one.
	Report *observe.ProgressReport
}

// planAdapters renders each adapter's pull Job and reads its observed one.
func planAdapters(s *resolve.Spec, o observe.Objects) ([]Adapter, error) {
	out := make([]Adapter, 0, len(s.Adapters.List))
	for _, a := range s.Adapters.List {
		v := &resolve.Version{Model: a.Model, Puller: a.Puller}
		job := render.PullJob(s, v)
		job.Job.Labels[render.LabelAdapter] = a.Name
		observedJob, err := o.Job(job.Resource)
		if err != nil {
			return nil, err
		}
		ap := Adapter{Adapter: a, Job: job, observed: observedJob}
		ap.Pull, ap.Detail = render.PullState(observedJob)
		ap.Failure = render.PullFailureOf(observedJob)
		ap.Creds = o.Secrets.Judge(s, v)
		ap.Held = observedJob == nil && heldForCredentials(s, ap.Creds)
		if ap.Creds.State == observe.CredentialsMissing && ap.Pull == render.JobRunning {
			ap.Pull = render.JobAbsent
		}
		if s.Progress != nil {
			ap.Report = observe.ReadProgress(o.Progress[render.ResourceProgressPrefix+a.Model.Hash])
		}
		out = append(out, ap)
	}
	return out, nil
}

// adaptersPulled says every adapter's pull is complete: the servers'
// first creation waits for it, as for the base model's weights.
func adaptersPulled(aps []Adapter) bool {
	for _, a := range aps {
		if a.Pull != render.JobComplete {
			return false
		}
	}
	return true
}

// ServedAdapters decides which adapters the servers serve, given the
// adapters the observed pod template serves (nil without servers):
//  1. an adapter whose pull is complete, on its current weights;
//  2. else one the observed servers already serve under that name, on the
//     weights they serve (a new revision is being pulled);
//  3. else none yet: it is added once pulled (a rolling update).
//
// An adapter spec.adapters no longer lists is dropped. The order is the
// observed template's, then the new adapters by name: a runtime that
// numbers adapters by their order (llama.cpp) keeps each one's number as
// others are added, and reordering spec.adapters changes nothing.
func ServedAdapters(aps []Adapter, observedServed []render.ServedAdapter) []render.ServedAdapter {
	old := map[string]string{}
	rank := map[string]int{}
	for i, a := range observedServed {
		old[a.Name] = a.Hash
		rank[a.Name] = i
	}
	var out []render.ServedAdapter
	for _, a := range aps {
		switch {
		case a.Pull == render.JobComplete:
			out = append(out, render.ServedAdapter{Name: a.Name, Hash: a.Model.Hash})
		case old[a.Name] != "":
			out = append(out, render.ServedAdapter{Name: a.Name, Hash: old[a.Name]})
		}
	}
	sort.Slice(out, func(i, j int) bool {
		ri, wasI := rank[out[i].Name]
		rj, wasJ := rank[out[j].Name]
		switch {
		case wasI && wasJ:
			return ri < rj
		case wasI != wasJ:
			return wasI
		}
		return out[i].Name < out[j].Name
	})
	return out
}

// AdapterNames lists the adapters by name, in spec.adapters order, as the
// AdaptersReady condition names them when every server serves them.
func AdapterNames(aps []Adapter) []string {
	out := make([]string, len(aps))
	for i, a := range aps {
		out[i] = a.Name
	}
	return out
}

// ProgressMessage is what an adapter's status.adapters message adds while
// its reporting pull runs, as a model's pull adds to status.message.
func (a Adapter) ProgressMessage(s *resolve.Spec) string {
	return progressMessage(s, a.Report)
}
