package render

import (
	"strconv"
	"strings"

	"github.com/inferno-ai/function-inferno/input/v1beta1"
	"github.com/inferno-ai/function-inferno/internal/resolve"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// ResourceJobPrefix starts the composition resource name of a pull Job.
//
// The weights hash is part of the resource name, not only of the object's
// name: Crossplane keeps the observed object's name for a resource name it
// already knows, so a new model under an unchanged resource name would be
// applied onto the old, immutable Job. With the hash in the resource name a
// new model is a new resource, and Crossplane deletes the old Job once the
// function stops returning it.
const ResourceJobPrefix = "pull-job-"

// Environment of the puller (see v1beta1.PullerPreset).
const (
	envModelURI      = "MODEL_URI"
	envModelSource   = "MODEL_SOURCE"
	envModelRevision = "MODEL_REVISION"
	EnvTargetDir     = "TARGET_DIR"
)

// pullContainer names the puller's container.
const pullContainer = "pull"

// pullFailurePolicy fails the Job at once when the puller says its
// download stalled (it retried already; another pod would stall again),
// which the Job's Failed condition then reports as reason PodFailurePolicy;
// and does not count pods that a node drain or preemption stopped against
// the backoff limit.
func pullFailurePolicy() *batchv1.PodFailurePolicy {
	return &batchv1.PodFailurePolicy{Rules: []batchv1.PodFailurePolicyRule{
		{
			Action: batchv1.PodFailurePolicyActionFailJob,
			OnExitCodes: &batchv1.PodFailurePolicyOnExitCodesRequirement{
				ContainerName: ptr.To(pullContainer),
				Operator:      batchv1.PodFailurePolicyOnExitCodesOpIn,
				Values:        []int32{v1beta1.PullStalledExitCode},
			},
		},
		{
			Action:          batchv1.PodFailurePolicyActionIgnore,
			OnPodConditions: []batchv1.PodFailurePolicyOnPodConditionsPattern{{Type: corev1.DisruptionTarget, Status: corev1.ConditionTrue}},
		},
	}}
}

// NamedJob is a rendered pull Job and its composition resource name.
type NamedJob struct {
	Resource string
	Job      *batchv1.Job
}

// CacheDir is where one model's weights live on the cache volume: one
// directory per (uri, revision), so revisions and versions never overwrite
// each other and a server keeps reading its weights while a new revision
// is pulled.
func CacheDir(m resolve.Model) string {
	if m.Dir != "" {
		return m.Dir
	}
	return m.Hash
}

// PullJob builds the Job that downloads the weights into the cache
// volume. It sets no TTL: the function keeps returning the Job, and a
// TTL-deleted Job would be created again, pulling again.
//
// A Job's pod template is immutable, so the Job is named after a hash of
// the template itself: any change to it (a new model, a new puller image,
// another Secret) makes a new Job instead of a failed update. The cache
// directory is keyed by the model alone, so a new Job for the same model
// finds the marker and exits at once.
//
// Each version of a split has its own Job. The template names only the
// weights, not the version, so a canary promoted to primary finds its Job
// under the same name and is not pulled again.
func PullJob(s *resolve.Spec, v *resolve.Version) NamedJob {
	m := v.Model
	labels := s.Labels(v, resolve.ComponentPuller)
	// The template's labels leave out the version and the framework: they
	// may change without the weights changing, and must not cost a new Job.
	// Without the name label the Job's pods are never endpoints of a
	// split's Service either (see splitSelector).
	podLabels := s.Labels(v, resolve.ComponentPuller)
	delete(podLabels, resolve.LabelVersion)
	delete(podLabels, resolve.LabelName)
	env := []corev1.EnvVar{
		{Name: envModelURI, Value: m.URI},
		{Name: envModelSource, Value: m.Source},
		{Name: envModelRevision, Value: m.Revision},
		{Name: EnvTargetDir, Value: MountCache + "/" + CacheDir(m)},
	}
	env = append(env, corev1.EnvVar{Name: v1beta1.EnvPullStallSeconds, Value: strconv.Itoa(int(s.PullStall))})
	env = append(env, resolve.ScratchEnv()...)
	// Credentials only ever by reference, and only the variables the
	// puller reads for them (resolve.CredentialVars): never the whole
	// Secret, whose other keys would set the puller's endpoint or proxy.
	// The Secret's values never enter the Job's spec.
	for _, c := range resolve.CredentialVars(m, v.Puller) {
		sel := &corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: m.Secret.Name}, Key: c.Key}
		if c.Optional {
			sel.Optional = ptr.To(true)
		}
		env = append(env, corev1.EnvVar{Name: c.Env, ValueFrom: &corev1.EnvVarSource{SecretKeyRef: sel}})
	}

	nodeSelector, tolerations := placement(s, false)
	template := corev1.PodTemplateSpec{
		ObjectMeta: metav1.ObjectMeta{Labels: podLabels},
		Spec: corev1.PodSpec{
			// Never, not OnFailure: each retry is a new pod, so the
			// logs of a failed attempt stay readable.
			RestartPolicy:   corev1.RestartPolicyNever,
			SecurityContext: PodSecurityContext(),
			// A download needs no Kubernetes API token.
			AutomountServiceAccountToken: ptr.To(false),
			NodeSelector:                 nodeSelector,
			Tolerations:                  tolerations,
			Containers: []corev1.Container{{
				Name: pullContainer,
				// kubectl describe shows the puller's last words (a
				// stall says so) as the container's termination message.
				TerminationMessagePolicy: corev1.TerminationMessageFallbackToLogsOnError,
				Image:                    v.Puller.Image,
				Command:                  v.Puller.Command,
				Env:                      env,
				SecurityContext:          ContainerSecurityContext(),
				Resources: corev1.ResourceRequirements{
					Requests: corev1.ResourceList{
						corev1.ResourceCPU:    resource.MustParse("500m"),
						corev1.ResourceMemory: resource.MustParse("1Gi"),
					},
					Limits: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("4Gi")},
				},
				VolumeMounts: []corev1.VolumeMount{
					{Name: VolumeWeights, MountPath: MountCache},
					{Name: VolumeTmp, MountPath: mountTmp},
				},
			}},
			Volumes: []corev1.Volume{
				{Name: VolumeWeights, VolumeSource: corev1.VolumeSource{
					PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: PVCName(s)},
				}},
				tmpVolume(),
			},
		},
	}
	if s.Progress != nil {
		progressPod(s, m, &template.Spec)
	}
	hash := resolve.ShortHash(template)
	return NamedJob{
		Resource: ResourceJobPrefix + hash,
		Job: &batchv1.Job{
			TypeMeta: metav1.TypeMeta{APIVersion: "batch/v1", Kind: "Job"},
			ObjectMeta: metav1.ObjectMeta{
				Name:        s.Name + "-pull-" + hash,
				Namespace:   s.Namespace,
				Labels:      labels,
				Annotations: map[string]string{resolve.AnnotationModelURI: m.URI},
			},
			Spec: batchv1.JobSpec{
				BackoffLimit: ptr.To(s.Backoff),
				// Every pull ends: within the deadline, retries included.
				ActiveDeadlineSeconds: ptr.To(s.PullDeadline),
				PodFailurePolicy:      pullFailurePolicy(),
				Template:              template,
			},
		},
	}
}

// Pull progress (input.pullProgress). No controller of ours watches a
// download, and the function keeps no state and reads no clock, so the
// pull pod itself reports: every interval it patches a ConfigMap of its
// own with what it has (bytes, the total when the source said it, its
// rate over the interval, when it started and when it wrote), and the
// function, which observes that ConfigMap like any composed object, only
// reads and formats it. Four small objects per pull, named after the
// weights (<name>-progress-<weights hash>), so the pull Job's template
// can name them before its own hash is known:
//   - the ConfigMap, rendered without data: Crossplane applies it with
//     server-side apply, so the data the pod writes is another field
//     manager's and survives every apply (test/e2e: 31-pull-progress);
//   - a ServiceAccount the pull pod runs under, with a token projected
//     into the pull pod only (automountServiceAccountToken stays false);
//   - a Role that allows get and patch of that one ConfigMap
//     (resourceNames) and nothing else, and its RoleBinding.

// Composition resource names of a pull's progress objects, each followed
// by the weights hash.
const (
	ResourceProgressPrefix        = "pull-progress-"
	ResourceProgressSAPrefix      = "pull-progress-sa-"
	ResourceProgressRolePrefix    = "pull-progress-role-"
	ResourceProgressBindingPrefix = "pull-progress-rolebinding-"
)

// VolumeProgressToken is the pull pod's projected token volume.
const VolumeProgressToken = "progress-token"

// progressTokenSeconds is the projected token's lifetime; the kubelet
// renews it at 80%, and the reporter reads it afresh for every report.
const progressTokenSeconds = int64(3600)

// progressName names a pull's progress objects, after its weights.
func progressName(s *resolve.Spec, m resolve.Model) string { return s.Name + "-progress-" + m.Hash }

// progressPath is the API path of a pull's ConfigMap, which the pull pod
// patches.
func progressPath(s *resolve.Spec, m resolve.Model) string {
	return "/api/v1/namespaces/" + s.Namespace + "/configmaps/" + progressName(s, m)
}

// progressPod is what a reporting pull pod adds to its spec: its
// ServiceAccount, the environment that says where to report, and the
// projected token and CA at the usual place.
func progressPod(s *resolve.Spec, m resolve.Model, spec *corev1.PodSpec) {
	spec.ServiceAccountName = progressName(s, m)
	c := &spec.Containers[0]
	c.Env = append(c.Env,
		corev1.EnvVar{Name: v1beta1.EnvProgressPath, Value: progressPath(s, m)},
		corev1.EnvVar{Name: v1beta1.EnvProgressInterval, Value: strconv.Itoa(int(s.Progress.Interval))},
	)
	c.VolumeMounts = append(c.VolumeMounts, corev1.VolumeMount{Name: VolumeProgressToken, MountPath: v1beta1.ServiceAccountTokenDir, ReadOnly: true})
	spec.Volumes = append(spec.Volumes, corev1.Volume{Name: VolumeProgressToken, VolumeSource: corev1.VolumeSource{
		Projected: &corev1.ProjectedVolumeSource{Sources: []corev1.VolumeProjection{
			{ServiceAccountToken: &corev1.ServiceAccountTokenProjection{Path: "token", ExpirationSeconds: ptr.To(progressTokenSeconds)}},
			{ConfigMap: &corev1.ConfigMapProjection{
				LocalObjectReference: corev1.LocalObjectReference{Name: "kube-root-ca.crt"},
				Items:                []corev1.KeyToPath{{Key: "ca.crt", Path: "ca.crt"}},
			}},
		}},
	}})
}

// IsProgressConfigMap says a composition resource name is a pull's
// progress ConfigMap, not one of its other progress objects.
func IsProgressConfigMap(name string) bool {
	h, ok := strings.CutPrefix(name, ResourceProgressPrefix)
	return ok && len(h) == resolve.HashLength && !strings.Contains(h, "-")
}

// JobState is what a pull Job's conditions say.
type JobState int

const (
	// JobAbsent: no pull Job is observed yet (or, for another source, the
	// weights are not on their way); the servers' first creation waits.
	JobAbsent JobState = iota
	// JobRunning: the Job is observed and has not finished: the weights
	// are on their way.
	JobRunning
	// JobComplete: the weights are there; servers may mount them.
	JobComplete
	// JobFailed: the weights will not come without the user's help. For a
	// pull Job, it failed for good (PullFailureOf says why): a Job never
	// recovers from Failed, so only deleting it or a new uri or revision
	// (a new Job) retries.
	JobFailed
)

// JobReady reports whether a pull Job is ready:
//  1. PullState says complete (condition Complete=True, and no Failed=True).
func JobReady(job *batchv1.Job) bool {
	s, _ := PullState(job)
	return s == JobComplete
}

// PullState reads a pull Job:
//  1. no Job observed: absent;
//  2. condition Failed=True: failed, whatever else it says (a Job cannot
//     recover from Failed, and Complete beside it would be a lie);
//  3. condition Complete=True: complete, and ready;
//  4. otherwise running.
//
// It also returns the Failed condition's reason and message.
func PullState(job *batchv1.Job) (JobState, string) {
	if job == nil {
		return JobAbsent, ""
	}
	complete := false
	for _, c := range job.Status.Conditions {
		if c.Status != corev1.ConditionTrue {
			continue
		}
		switch c.Type {
		case batchv1.JobFailed:
			msg := c.Reason
			if c.Message != "" {
				msg += ": " + c.Message
			}
			return JobFailed, msg
		case batchv1.JobComplete:
			complete = true
		}
	}
	if complete {
		return JobComplete, ""
	}
	return JobRunning, ""
}

// PullFailure is why a pull Job failed.
type PullFailure int

const (
	// PullFailedOther: the puller failed, backoffLimit times.
	PullFailedOther PullFailure = iota
	// PullStalled: the puller said its download stalled.
	PullStalled
	// PullTimedOut: the Job ran past its activeDeadlineSeconds.
	PullTimedOut
)

// PullFailureOf reads why a failed pull Job failed, from its Failed
// condition's reason:
//  1. DeadlineExceeded: it ran past activeDeadlineSeconds (timed out);
//  2. PodFailurePolicy: the puller exited PullStalledExitCode, the one
//     exit code on which the Job's pod failure policy fails it (stalled);
//  3. anything else (BackoffLimitExceeded, …): failed.
func PullFailureOf(job *batchv1.Job) PullFailure {
	if job == nil {
		return PullFailedOther
	}
	for _, c := range job.Status.Conditions {
		if c.Type != batchv1.JobFailed || c.Status != corev1.ConditionTrue {
			continue
		}
		switch c.Reason {
		case batchv1.JobReasonDeadlineExceeded:
			return PullTimedOut
		case batchv1.JobReasonPodFailurePolicy:
			return PullStalled
		}
	}
	return PullFailedOther
}
