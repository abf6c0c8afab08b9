package plan

import (
	"fmt"

	"github.com/inferno-ai/function-inferno/internal/observe"
	"github.com/inferno-ai/function-inferno/internal/reason"
	"github.com/inferno-ai/function-inferno/internal/render"
	"github.com/inferno-ai/function-inferno/internal/resolve"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
)

// cacheCondition is the WeightsReady condition of a service on a
// ModelCache.
func cacheCondition(c *observe.CachedWeights, serversExist bool) reason.Condition {
	msg := c.Message
	switch c.State {
	case observe.CacheReady:
		return reason.Cached.Condition(msg)
	case observe.CacheMissing:
		if serversExist {
			msg += "; the running servers keep its volume until they stop (Kubernetes holds a mounted claim), but no new server can start"
		}
		return reason.CacheMissing.Condition(msg)
	case observe.CachePulling:
		return reason.CachePulling.Condition(msg)
	case observe.CacheFailed:
		return reason.CacheFailed.Condition(msg)
	case observe.CacheMismatch:
		return reason.CacheMismatch.Condition(msg)
	case observe.CacheRevisionMissing:
		return reason.CacheRevisionMissing.Condition(msg)
	default:
		return reason.CacheUnresolved.Condition(msg)
	}
}

// servingWeights decides which weights a version's servers mount: the
// wanted ones once its source has them; until then, whatever its existing
// workload d (nil without one) already serves. Nil means no servers yet: only their first
// creation waits for the weights.
func servingWeights(src weightsSource, d servedTemplater) (*render.Weights, error) {
	want := src.Wanted()
	switch {
	case src.State() == render.JobComplete:
		return &want, nil
	case d != nil:
		t, err := d.ServedTemplate()
		if err != nil {
			return nil, err
		}
		if w, ok := render.ServedWeights(t); ok {
			return &w, nil
		}
		return &want, nil
	}
	return nil, nil
}

// servedTemplater is an observed workload of servers (a Deployment or a
// LeaderWorkerSet), whose pod template records the weights it serves.
type servedTemplater interface {
	ServedTemplate() (*corev1.PodTemplateSpec, error)
}

// weightsSource is where one version's weights come from: pulled by a Job
// of the claim's own into its cache volume (PulledWeights), the app team's
// own volume (userVolume), a ModelCache (cacheSource), or an image the
// kubelet mounts (imageVolume, oci.go). It is the one
// place that knows the difference: the plan, the builders and the status
// ask it, and branch on nothing else.
type weightsSource interface {
	// Wanted is what the version's servers mount once the weights are
	// there. Its ID is empty while the source cannot say (a ModelCache
	// that has not pulled them).
	Wanted() render.Weights
	// State says whether the wanted weights are there (JobComplete), on
	// their way, failed, or not started, as a pull Job would.
	State() render.JobState
	// ownVolume says whether the weights live on the claim's own cache
	// volume, which must then be composed.
	ownVolume() bool
	// Resources are the objects the source composes: its pull Job, or
	// nothing.
	Resources() []render.Resource
	// Condition is the version's WeightsReady condition.
	Condition() reason.Condition
	// URI is the weights' URI as the status reports it.
	URI() string
}

// NewWeightsSource finds where version v's weights come from, given what
// is observed: its pull Job, the ModelCache cache of spec.model.cacheRef
// (nil without one), and whether the version's servers already exist.
func NewWeightsSource(s *resolve.Spec, v *resolve.Version, cache *observe.CachedWeights, o observe.Objects, serversExist bool) (weightsSource, error) {
	switch {
	case v.Model.Cache != "":
		return cacheSource{model: v.Model, cache: cache, serversExist: serversExist}, nil
	case v.Model.Scheme == resolve.SchemePVC:
		return userVolume{model: v.Model}, nil
	case v.Model.Scheme == resolve.SchemeOCI:
		return newImageVolume(s, v, o), nil
	}
	return NewPulledWeights(s, v, o)
}

// PulledWeights are downloaded by the version's pull Job into a directory
// of the claim's cache volume.
type PulledWeights struct {
	s     *resolve.Spec
	Model resolve.Model
	Job   render.NamedJob
	// observed is the observed Job of the current spec, nil before it is.
	observed *batchv1.Job
	pvc      *corev1.PersistentVolumeClaim
	Pull     render.JobState
	// detail is the Failed condition's reason and message; failure says
	// why a failed pull failed.
	detail  string
	Failure render.PullFailure
	// progress are the pull's progress objects, report what its pod last
	// reported (nil before it did, or without input.pullProgress).
	progress []render.Resource
	Report   *observe.ProgressReport
	// Creds is the pull's Secret, judged; held says the Job is not
	// created yet for want of it (heldForCredentials).
	Creds observe.Credentials
	held  bool
}

// heldForCredentials says a pull (or an image volume) whose Secret is c
// must not start yet: the Secret is missing or lacks a key, or the
// platform restricts Secrets by label (input.policy.credentialSecretSelector)
// and Crossplane has not fetched it, so its labels are unknown. Only the
// first creation waits: an existing Job is kept (Crossplane would delete
// it otherwise), and its pod waits for the Secret.
func heldForCredentials(s *resolve.Spec, c observe.Credentials) bool {
	return c.State == observe.CredentialsMissing || c.State == observe.CredentialsUnresolved && s.Credentials.Selector != nil
}

// NewPulledWeights renders version v's pull Job and reads what is
// observed of it: the Job's state and why it failed, and, with
// input.pullProgress, the progress objects and the pod's last report.
// It fails only when the observed Job cannot be decoded.
func NewPulledWeights(s *resolve.Spec, v *resolve.Version, o observe.Objects) (*PulledWeights, error) {
	job := render.PullJob(s, v)
	observedJob, err := o.Job(job.Resource)
	if err != nil {
		return nil, err
	}
	p := &PulledWeights{s: s, Model: v.Model, Job: job, observed: observedJob, pvc: o.PVC}
	p.Pull, p.detail = render.PullState(observedJob)
	p.Failure = render.PullFailureOf(observedJob)
	p.Creds = o.Secrets.Judge(s, v)
	p.held = observedJob == nil && heldForCredentials(s, p.Creds)
	if p.Creds.State == observe.CredentialsMissing && p.Pull == render.JobRunning {
		// Its pod cannot start without the Secret: not a pull under way.
		p.Pull = render.JobAbsent
	}
	if s.Progress != nil {
		p.progress = progressResources(s, v, o)
		p.Report = observe.ReadProgress(o.Progress[render.ResourceProgressPrefix+v.Model.Hash])
	}
	return p, nil
}

// Wanted is the weights' directory on the claim's cache volume, named by
// the hash of their uri and revision, so a new model lands beside the old
// one, which the servers keep serving until it is pulled.
func (p *PulledWeights) Wanted() render.Weights {
	return render.Weights{ID: p.Model.Hash, Claim: render.PVCName(p.s), SubPath: render.CacheDir(p.Model)}
}

// State is the observed pull Job's state (PullState).
func (p *PulledWeights) State() render.JobState { return p.Pull }

func (p *PulledWeights) ownVolume() bool { return true }

// URI is the uri the Job downloads.
func (p *PulledWeights) URI() string { return p.Model.URI }

// Resources are the pull Job, ready once complete, and its progress
// objects when input.pullProgress asks for them.
func (p *PulledWeights) Resources() []render.Resource {
	if p.held {
		return p.progress
	}
	return append([]render.Resource{render.Judged(p.Job.Resource, p.Job.Job, p.observed)}, p.progress...)
}

// Condition is WeightsReady as the pull Job says it: pending before the
// Job is observed, pulling (with the pod's last progress report and an
// unbound volume's phase), pulled, or failed, stalled or timed out, each
// with the command that reads the Job's logs.
func (p *PulledWeights) Condition() reason.Condition {
	s, m, job := p.s, p.Model, p.Job.Job.Name
	vol := render.PVCName(s)
	if p.Pull == render.JobAbsent {
		switch {
		case p.Creds.State == observe.CredentialsMissing && p.observed != nil:
			return reason.CredentialsMissing.Condition(fmt.Sprintf("%s; pull Job %s waits for it: its pod cannot start without it", p.Creds.Message, job))
		case p.Creds.State == observe.CredentialsMissing:
			return reason.CredentialsMissing.Condition(fmt.Sprintf("%s; the pull of %s starts once it is there", p.Creds.Message, m.URI))
		case p.held:
			return reason.PullPending.Condition(fmt.Sprintf("%s, whose labels the platform checks (input.policy.credentialSecretSelector), before creating pull Job %s for %s", p.Creds.Message, job, m.URI))
		}
	}
	switch p.Pull {
	case render.JobComplete:
		return reason.Pulled.Condition(fmt.Sprintf("the weights of %s are in volume %s", m.URI, vol))
	case render.JobFailed:
		switch p.Failure {
		case render.PullStalled:
			return reason.PullStalled.Condition(fmt.Sprintf("pull Job %s stalled: its download of %s made no progress for %ds, retries included (%s); check that the source is reachable and serving, then delete the Job to retry; read its logs with: kubectl logs -n %s job/%s", job, m.URI, s.PullStall, p.detail, s.Namespace, job))
		case render.PullTimedOut:
			return reason.PullTimedOut.Condition(fmt.Sprintf("pull Job %s was stopped after the platform's limit of %ds (input.pullDeadlineSeconds), retries included (%s); if the weights are that large or the link that slow, ask your platform team to raise it; read its logs with: kubectl logs -n %s job/%s", job, s.PullDeadline, p.detail, s.Namespace, job))
		}
		return reason.PullFailed.Condition(fmt.Sprintf("pull Job %s failed (%s); read its logs with: kubectl logs -n %s job/%s", job, p.detail, s.Namespace, job))
	default:
		// Created or running, in the same words: the call that creates
		// the volume and the Job and the one that first sees them say
		// the same, since every change of the status costs Crossplane a
		// write of the composite and of the claim, and a reconcile of
		// every composed object (docs/performance.md).
		msg := fmt.Sprintf("pulling %s into volume %s with Job %s", m.URI, vol, job)
		if !render.PVCBound(p.pvc) {
			pending := "; the volume is not bound yet (volumes of WaitForFirstConsumer classes bind when the Job's pod starts)"
			if p.pvc != nil && p.pvc.Status.Phase != "" && p.pvc.Status.Phase != corev1.ClaimPending {
				pending = fmt.Sprintf("; the volume is %s", p.pvc.Status.Phase)
			}
			msg += pending
		}
		detail := msg
		if p.Pull == render.JobRunning {
			detail += p.progressMessage()
		}
		// The progress goes into status.message and status.pulls, not
		// into the condition: a report is then one write of the composite.
		return reason.Pulling.Condition(msg).WithDetail(detail)
	}
}

// userVolume are pvc:// weights: the app team's own claim, mounted
// read-only, there from the start.
type userVolume struct{ model resolve.Model }

// Wanted is the app team's claim and sub-path from the pvc:// URI.
func (u userVolume) Wanted() render.Weights {
	return render.Weights{ID: u.model.Hash, Claim: u.model.Claim, SubPath: u.model.SubPath}
}

// State is always JobComplete: the claim is the app team's, there before
// the service, and nothing of ours fills it.
func (u userVolume) State() render.JobState { return render.JobComplete }

func (u userVolume) ownVolume() bool { return false }

// Resources is nil: the claim is not ours to compose.
func (u userVolume) Resources() []render.Resource { return nil }

// URI is the claim's pvc:// URI.
func (u userVolume) URI() string { return u.model.URI }

// Condition is always UserVolume: the function cannot see into the app
// team's claim, so it reports what it mounts, not whether it is there.
func (u userVolume) Condition() reason.Condition {
	return reason.UserVolume.Condition(fmt.Sprintf("serving %s read-only from the app team's own claim", u.model.URI))
}

// cacheSource are weights a ModelCache pulled: its volume, mounted
// read-only at the revision's directory (see cacheref.go).
type cacheSource struct {
	model resolve.Model
	cache *observe.CachedWeights
	// serversExist says the version's servers already run: a cache that
	// vanished under them is a failure, not a wait.
	serversExist bool
}

// Wanted is the revision's directory on the cache's volume, which is also
// its identity; unknown until the cache has it.
func (c cacheSource) Wanted() render.Weights {
	if c.cache.State == observe.CacheReady {
		return c.cache.Weights
	}
	return render.Weights{}
}

// State is the cache's verdict read as a pull Job's (CachedWeights.PullState).
func (c cacheSource) State() render.JobState { return c.cache.PullState(c.serversExist) }

func (c cacheSource) ownVolume() bool { return false }

// Resources is nil: the ModelCache composes the pull and the volume, so
// the weights outlive the service.
func (c cacheSource) Resources() []render.Resource { return nil }

// Condition is WeightsReady as the ModelCache says it (cacheCondition).
func (c cacheSource) Condition() reason.Condition { return cacheCondition(c.cache, c.serversExist) }

// URI is spec.model.uri, or the cache's when the claim leaves it out.
func (c cacheSource) URI() string {
	if c.model.URI == "" {
		return c.cache.URI
	}
	return c.model.URI
}
