package fn

import (
	"strconv"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/inferno-ai/function-inferno/input/v1beta1"
)

// resourceJobPrefix starts the composition resource name of a pull Job.
//
// The weights hash is part of the resource name, not only of the object's
// name: Crossplane keeps the observed object's name for a resource name it
// already knows, so a new model under an unchanged resource name would be
// applied onto the old, immutable Job. With the hash in the resource name a
// new model is a new resource, and Crossplane deletes the old Job once the
// function stops returning it.
const resourceJobPrefix = "pull-job-"

// Environment of the puller (see v1beta1.PullerPreset).
const (
	envModelURI      = "MODEL_URI"
	envModelSource   = "MODEL_SOURCE"
	envModelRevision = "MODEL_REVISION"
	envTargetDir     = "TARGET_DIR"
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
				ContainerName: ptrTo(pullContainer),
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

// pullJob is a rendered pull Job and its composition resource name.
type pullJob struct {
	Resource string
	Job      *batchv1.Job
}

// cacheDir is where one model's weights live on the cache volume: one
// directory per (uri, revision), so revisions and versions never overwrite
// each other and a server keeps reading its weights while a new revision
// is pulled.
func cacheDir(m model) string {
	if m.Dir != "" {
		return m.Dir
	}
	return m.Hash
}

// renderPullJob builds the Job that downloads the weights into the cache
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
func renderPullJob(s *resolvedSpec, v *modelVersion) pullJob {
	m := v.Model
	labels := s.labels(v, componentPuller)
	// The template's labels leave out the version and the framework: they
	// may change without the weights changing, and must not cost a new Job.
	// Without the name label the Job's pods are never endpoints of a
	// split's Service either (see splitSelector).
	podLabels := s.labels(v, componentPuller)
	delete(podLabels, labelVersion)
	delete(podLabels, labelName)
	env := []corev1.EnvVar{
		{Name: envModelURI, Value: m.URI},
		{Name: envModelSource, Value: m.Source},
		{Name: envModelRevision, Value: m.Revision},
		{Name: envTargetDir, Value: mountCache + "/" + cacheDir(m)},
	}
	env = append(env, corev1.EnvVar{Name: v1beta1.EnvPullStallSeconds, Value: strconv.Itoa(int(s.PullStall))})
	env = append(env, scratchEnv()...)
	var envFrom []corev1.EnvFromSource
	if ref := m.Secret; ref != nil {
		// Credentials only ever by reference: the Secret's value never
		// enters the Job's spec.
		if ref.Key != "" {
			name := v.Puller.TokenEnv
			if name == "" {
				name = ref.Key
			}
			env = append(env, corev1.EnvVar{Name: name, ValueFrom: &corev1.EnvVarSource{
				SecretKeyRef: &corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: ref.Name}, Key: ref.Key},
			}})
		} else {
			envFrom = []corev1.EnvFromSource{{SecretRef: &corev1.SecretEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: ref.Name}}}}
		}
	}

	nodeSelector, tolerations := placement(s, false)
	template := corev1.PodTemplateSpec{
		ObjectMeta: metav1.ObjectMeta{Labels: podLabels},
		Spec: corev1.PodSpec{
			// Never, not OnFailure: each retry is a new pod, so the
			// logs of a failed attempt stay readable.
			RestartPolicy:   corev1.RestartPolicyNever,
			SecurityContext: podSecurityContext(),
			// A download needs no Kubernetes API token.
			AutomountServiceAccountToken: ptrTo(false),
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
				EnvFrom:                  envFrom,
				SecurityContext:          containerSecurityContext(),
				Resources: corev1.ResourceRequirements{
					Requests: corev1.ResourceList{
						corev1.ResourceCPU:    resource.MustParse("500m"),
						corev1.ResourceMemory: resource.MustParse("1Gi"),
					},
					Limits: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("4Gi")},
				},
				VolumeMounts: []corev1.VolumeMount{
					{Name: volumeWeights, MountPath: mountCache},
					{Name: volumeTmp, MountPath: mountTmp},
				},
			}},
			Volumes: []corev1.Volume{
				{Name: volumeWeights, VolumeSource: corev1.VolumeSource{
					PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: pvcName(s)},
				}},
				tmpVolume(),
			},
		},
	}
	if s.Progress != nil {
		progressPod(s, m, &template.Spec)
	}
	hash := shortHash(template)
	return pullJob{
		Resource: resourceJobPrefix + hash,
		Job: &batchv1.Job{
			TypeMeta: metav1.TypeMeta{APIVersion: "batch/v1", Kind: "Job"},
			ObjectMeta: metav1.ObjectMeta{
				Name:        s.Name + "-pull-" + hash,
				Namespace:   s.Namespace,
				Labels:      labels,
				Annotations: map[string]string{annotationModelURI: m.URI},
			},
			Spec: batchv1.JobSpec{
				BackoffLimit: ptrTo(s.Backoff),
				// Every pull ends: within the deadline, retries included.
				ActiveDeadlineSeconds: ptrTo(s.PullDeadline),
				PodFailurePolicy:      pullFailurePolicy(),
				Template:              template,
			},
		},
	}
}
