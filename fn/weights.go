package fn

import (
	"fmt"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
)

// weights is what a server mounts as its model: a directory of the cache
// volume, of a ModelCache's volume, or of the user's own claim for pvc://
// models; or an image, for oci:// models.
type weights struct {
	// ID identifies the weights (the model hash, or a ModelCache's
	// directory), recorded on the pod template so that a later call knows
	// what the servers mount.
	ID      string
	Claim   string
	SubPath string
	// Image is the reference of an image volume, with its pull policy and
	// the image pull Secret the pod lists (empty for none); Claim is then
	// empty.
	Image      string
	PullPolicy corev1.PullPolicy
	PullSecret string
	// Adapters are the LoRA adapters the servers serve beside the model,
	// as their pod template's annotation records them (name=hash pairs
	// sorted by name, adapters.go); a string, so that weights compare.
	Adapters string
}

// weightsSource is where one version's weights come from: pulled by a Job
// of the claim's own into its cache volume (pulledWeights), the app team's
// own volume (userVolume), a ModelCache (cacheSource), or an image the
// kubelet mounts (imageVolume, oci.go). It is the one
// place that knows the difference: the plan, the builders and the status
// ask it, and branch on nothing else.
type weightsSource interface {
	// wanted is what the version's servers mount once the weights are
	// there. Its ID is empty while the source cannot say (a ModelCache
	// that has not pulled them).
	wanted() weights
	// state says whether the wanted weights are there (jobComplete), on
	// their way, failed, or not started, as a pull Job would.
	state() jobState
	// ownVolume says whether the weights live on the claim's own cache
	// volume, which must then be composed.
	ownVolume() bool
	// resources are the objects the source composes: its pull Job, or
	// nothing.
	resources() []composedResource
	// condition is the version's WeightsReady condition.
	condition() condition
	// uri is the weights' URI as the status reports it.
	uri() string
}

// newWeightsSource finds where version v's weights come from, given what
// is observed: its pull Job, the ModelCache cache of spec.model.cacheRef
// (nil without one), and whether the version's servers already exist.
func newWeightsSource(s *resolvedSpec, v *modelVersion, cache *cachedWeights, o observed, serversExist bool) (weightsSource, error) {
	switch {
	case v.Model.Cache != "":
		return cacheSource{model: v.Model, cache: cache, serversExist: serversExist}, nil
	case v.Model.Scheme == schemePVC:
		return userVolume{model: v.Model}, nil
	case v.Model.Scheme == schemeOCI:
		return newImageVolume(v, o), nil
	}
	return newPulledWeights(s, v, o)
}

// pulledWeights are downloaded by the version's pull Job into a directory
// of the claim's cache volume.
type pulledWeights struct {
	s     *resolvedSpec
	model model
	job   pullJob
	// observed is the observed Job of the current spec, nil before it is.
	observed *batchv1.Job
	pvc      *corev1.PersistentVolumeClaim
	pull     jobState
	// detail is the Failed condition's reason and message; failure says
	// why a failed pull failed.
	detail  string
	failure pullFailure
	// progress are the pull's progress objects, report what its pod last
	// reported (nil before it did, or without input.pullProgress).
	progress []composedResource
	report   *progressReport
}

func newPulledWeights(s *resolvedSpec, v *modelVersion, o observed) (*pulledWeights, error) {
	job := renderPullJob(s, v)
	observedJob, err := o.job(job.Resource)
	if err != nil {
		return nil, err
	}
	p := &pulledWeights{s: s, model: v.Model, job: job, observed: observedJob, pvc: o.PVC}
	p.pull, p.detail = pullState(observedJob)
	p.failure = pullFailureOf(observedJob)
	if s.Progress != nil {
		p.progress = progressResources(s, v, o)
		p.report = readProgress(o.progress[resourceProgressPrefix+v.Model.Hash])
	}
	return p, nil
}

func (p *pulledWeights) wanted() weights {
	return weights{ID: p.model.Hash, Claim: pvcName(p.s), SubPath: cacheDir(p.model)}
}
func (p *pulledWeights) state() jobState { return p.pull }
func (p *pulledWeights) ownVolume() bool { return true }
func (p *pulledWeights) uri() string     { return p.model.URI }

func (p *pulledWeights) resources() []composedResource {
	return append([]composedResource{{Name: p.job.Resource, Object: p.job.Job, Ready: p.pull == jobComplete}}, p.progress...)
}

func (p *pulledWeights) condition() condition {
	s, m, job := p.s, p.model, p.job.Job.Name
	vol := pvcName(s)
	switch p.pull {
	case jobComplete:
		return reasonPulled.condition(fmt.Sprintf("the weights of %s are in volume %s", m.URI, vol))
	case jobFailed:
		switch p.failure {
		case pullStalled:
			return reasonPullStalled.condition(fmt.Sprintf("pull Job %s stalled: its download of %s made no progress for %ds, retries included (%s); check that the source is reachable and serving, then delete the Job to retry; read its logs with: kubectl logs -n %s job/%s", job, m.URI, s.PullStall, p.detail, s.Namespace, job))
		case pullTimedOut:
			return reasonPullTimedOut.condition(fmt.Sprintf("pull Job %s was stopped after the platform's limit of %ds (input.pullDeadlineSeconds), retries included (%s); if the weights are that large or the link that slow, ask your platform team to raise it; read its logs with: kubectl logs -n %s job/%s", job, s.PullDeadline, p.detail, s.Namespace, job))
		}
		return reasonPullFailed.condition(fmt.Sprintf("pull Job %s failed (%s); read its logs with: kubectl logs -n %s job/%s", job, p.detail, s.Namespace, job))
	case jobRunning:
		msg := fmt.Sprintf("pull Job %s is downloading %s into volume %s", job, m.URI, vol) + p.progressMessage()
		if p.pvc != nil && !pvcBound(p.pvc) {
			msg += fmt.Sprintf("; the volume is %s (volumes of WaitForFirstConsumer classes bind when the Job's pod starts)", p.pvc.Status.Phase)
		}
		return reasonPulling.condition(msg)
	default:
		return reasonPullPending.condition(fmt.Sprintf("creating volume %s and pull Job %s for %s", vol, job, m.URI))
	}
}

// userVolume are pvc:// weights: the app team's own claim, mounted
// read-only, there from the start.
type userVolume struct{ model model }

func (u userVolume) wanted() weights {
	return weights{ID: u.model.Hash, Claim: u.model.Claim, SubPath: u.model.SubPath}
}
func (u userVolume) state() jobState               { return jobComplete }
func (u userVolume) ownVolume() bool               { return false }
func (u userVolume) resources() []composedResource { return nil }
func (u userVolume) uri() string                   { return u.model.URI }

func (u userVolume) condition() condition {
	return reasonUserVolume.condition(fmt.Sprintf("serving %s read-only from the app team's own claim", u.model.URI))
}

// cacheSource are weights a ModelCache pulled: its volume, mounted
// read-only at the revision's directory (see cacheref.go).
type cacheSource struct {
	model model
	cache *cachedWeights
	// serversExist says the version's servers already run: a cache that
	// vanished under them is a failure, not a wait.
	serversExist bool
}

// wanted is the revision's directory on the cache's volume, which is also
// its identity; unknown until the cache has it.
func (c cacheSource) wanted() weights {
	if c.cache.State == cacheReady {
		return c.cache.Weights
	}
	return weights{}
}
func (c cacheSource) state() jobState               { return c.cache.pullState(c.serversExist) }
func (c cacheSource) ownVolume() bool               { return false }
func (c cacheSource) resources() []composedResource { return nil }
func (c cacheSource) condition() condition          { return cacheCondition(c.cache, c.serversExist) }

// uri is spec.model.uri, or the cache's when the claim leaves it out.
func (c cacheSource) uri() string {
	if c.model.URI == "" {
		return c.cache.URI
	}
	return c.model.URI
}
