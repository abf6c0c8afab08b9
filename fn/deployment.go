package fn

import (
	"strconv"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// resourceDeployment is the composition resource name of the model servers.
const resourceDeployment = "deployment"

// serverContainer names the model server container.
const serverContainer = "server"

// Environment the function sets in every server. Runtime arguments refer to
// them as $(MODEL_DIR) and so on, which Kubernetes expands.
const (
	envModelDir     = "MODEL_DIR"
	envModelName    = "MODEL_NAME"
	envModelVersion = "MODEL_VERSION"
	envPort         = "PORT"
)

// portName names the server's container port; the Service targets it by name.
const portName = "http"

// drainSeconds is how long a stopping server keeps serving before it is
// told to stop. A pod being deleted leaves its Service's endpoints at once,
// but kube-proxy (or a gateway) on every node learns it a moment later, and
// requests sent meanwhile still reach the pod; most model servers stop
// accepting connections on SIGTERM, so without this pause a rollout or a
// scale-down fails those requests. The sleep is the kubelet's own (a
// preStop sleep action), so it needs nothing in the image.
const drainSeconds = 5

// Probe timing. The start-up probe alone covers model loading, for as long
// as the runtime's start-up budget; only then do readiness and liveness
// begin, so a slow load is never mistaken for a hung server.
//
// The start-up probe's period is short because it is the wait between a
// loaded model and its first request: the kubelet probes first a period
// after the container starts and then once a period, while the readiness
// probe runs at once when the start-up probe passes. Measured on the e2e's
// real node, a period of 10 s put 11 s between a complete pull and the
// first answer of a server that loads in milliseconds. A GET every 2 s to
// a loading server costs it nothing; the budget (period × failures) is
// unchanged.
const (
	startupPeriodSeconds = 2
	probeTimeoutSeconds  = 5
)

// servingWeights decides which weights a version's servers mount: the
// wanted ones once its source has them; until then, whatever its existing
// workload d (nil without one) already serves. Nil means no servers yet: only their first
// creation waits for the weights.
func servingWeights(src weightsSource, d servedTemplater) (*weights, error) {
	want := src.wanted()
	switch {
	case src.state() == jobComplete:
		return &want, nil
	case d != nil:
		t, err := d.servedTemplate()
		if err != nil {
			return nil, err
		}
		if w, ok := servedWeights(t); ok {
			return &w, nil
		}
		return &want, nil
	}
	return nil, nil
}

// servedTemplater is an observed workload of servers (a Deployment or a
// LeaderWorkerSet), whose pod template records the weights it serves.
type servedTemplater interface {
	servedTemplate() (*corev1.PodTemplateSpec, error)
}

// servedWeights reads the weights an observed Deployment's pod template
// mounts. ok is false when the template does not say (it was not made by us).
func servedWeights(t *corev1.PodTemplateSpec) (w weights, ok bool) {
	w.ID = t.Annotations[annotationWeights]
	w.Adapters = t.Annotations[annotationAdapters]
	for _, v := range t.Spec.Volumes {
		switch {
		case v.Name != volumeWeights:
		case v.PersistentVolumeClaim != nil:
			w.Claim = v.PersistentVolumeClaim.ClaimName
		case v.Image != nil:
			w.Image, w.PullPolicy = v.Image.Reference, v.Image.PullPolicy
			if len(t.Spec.ImagePullSecrets) > 0 {
				w.PullSecret = t.Spec.ImagePullSecrets[0].Name
			}
		}
	}
	for _, c := range t.Spec.Containers {
		for _, m := range c.VolumeMounts {
			if c.Name == serverContainer && m.Name == volumeWeights {
				w.SubPath = m.SubPath
			}
		}
	}
	return w, w.ID != "" && (w.Claim != "" || w.Image != "")
}

// renderDeployment builds the model servers of version v, mounting w
// read-only, replicas of them; nil replicas leaves the count to the
// version's autoscaler. Every version serves under the claim's name
// (MODEL_NAME), so a client's requests read the same whichever version
// answers them.
func renderDeployment(s *resolvedSpec, v *modelVersion, w weights, replicas *int32) *appsv1.Deployment {
	labels := s.labels(v, v.component())
	startup := *s.Runtime.StartupSeconds
	d := &appsv1.Deployment{
		TypeMeta:   metav1.TypeMeta{APIVersion: "apps/v1", Kind: "Deployment"},
		ObjectMeta: metav1.ObjectMeta{Name: v.serverName(s), Namespace: s.Namespace, Labels: labels},
		Spec: appsv1.DeploymentSpec{
			Selector: &metav1.LabelSelector{MatchLabels: v.selector(s)},
			Template: serverPodTemplate(s, v, w),
			// A rollout starts a new server before it stops an old one
			// (by default): it never has fewer ready servers than it asks
			// for (input.rollout).
			Strategy: appsv1.DeploymentStrategy{
				Type: appsv1.RollingUpdateDeploymentStrategyType,
				RollingUpdate: &appsv1.RollingUpdateDeployment{
					MaxUnavailable: ptrTo(s.Rollout.MaxUnavailable),
					MaxSurge:       ptrTo(s.Rollout.MaxSurge),
				},
			},
			// The deadline must outlast a slow model load, or every
			// rollout of a large model would be reported as failed.
			ProgressDeadlineSeconds: ptrTo(startup + 600),
			RevisionHistoryLimit:    ptrTo(int32(3)),
		},
	}
	// With an autoscaler, spec.replicas belongs to it: setting it here
	// would make Crossplane and the HPA fight on every reconcile.
	d.Spec.Replicas = replicas
	return d
}

// serverPodTemplate is the pod of one model server of version v, mounting
// w read-only: a Deployment's pods, and a LeaderWorkerSet's leaders and
// (adapted) workers.
func serverPodTemplate(s *resolvedSpec, v *modelVersion, w weights) corev1.PodTemplateSpec {
	rt := s.Runtime
	port := *rt.Port
	startup := *rt.StartupSeconds
	labels := s.labels(v, v.component())

	env := []corev1.EnvVar{
		{Name: envModelDir, Value: mountModel},
		{Name: envModelName, Value: s.Name},
		{Name: envModelVersion, Value: v.Model.Version},
		{Name: envPort, Value: strconv.Itoa(int(port))},
		// The weights are local: servers must never reach for a hub.
		{Name: "HF_HUB_OFFLINE", Value: "1"},
	}
	env = mergeEnv(append(env, scratchEnv()...), rt.Env)

	res := corev1.ResourceRequirements{
		Requests: corev1.ResourceList{corev1.ResourceCPU: s.CPU, corev1.ResourceMemory: s.Memory},
		// Memory is limited to the request so a server is never OOM-killed
		// for memory the node promised to someone else; CPU is not limited,
		// so model loading may burst.
		Limits: corev1.ResourceList{corev1.ResourceMemory: s.Memory},
	}
	pod := corev1.PodSpec{
		SecurityContext: podSecurityContext(),
		// The servers run images the claim may choose: no Kubernetes API
		// token unless the platform's Input grants one.
		ServiceAccountName:           s.ServiceAccount,
		AutomountServiceAccountToken: ptrTo(s.ServerToken),
		// Let in-flight generations finish when a server is replaced: the
		// drain pause, then up to a minute for the last answers.
		TerminationGracePeriodSeconds: ptrTo(int64(60 + drainSeconds)),
		Containers: []corev1.Container{{
			Name:    serverContainer,
			Image:   rt.Image,
			Command: rt.Command,
			Args:    rt.Args,
			Ports:   []corev1.ContainerPort{{Name: portName, ContainerPort: port, Protocol: corev1.ProtocolTCP}},
			Env:     env,
			StartupProbe: httpProbe(rt.HealthPath, startupPeriodSeconds,
				max(1, (startup+startupPeriodSeconds-1)/startupPeriodSeconds)),
			ReadinessProbe: httpProbe(rt.HealthPath, 10, 3),
			LivenessProbe:  httpProbe(rt.HealthPath, 20, 3),
			Lifecycle: &corev1.Lifecycle{PreStop: &corev1.LifecycleHandler{
				Sleep: &corev1.SleepAction{Seconds: drainSeconds},
			}},
			Resources:       res,
			SecurityContext: containerSecurityContext(),
			VolumeMounts: []corev1.VolumeMount{
				{Name: volumeWeights, MountPath: mountModel, SubPath: w.SubPath, ReadOnly: true},
				{Name: volumeTmp, MountPath: mountTmp},
			},
		}},
		Volumes: []corev1.Volume{weightsVolume(w), tmpVolume()},
	}
	if w.PullSecret != "" {
		// The kubelet sends it to the registries it names, for every
		// image of the pod; it is the claim's, for its weights' registry.
		pod.ImagePullSecrets = []corev1.LocalObjectReference{{Name: w.PullSecret}}
	}
	if rt.SharedMemory != nil && *rt.SharedMemory {
		pod.Containers[0].VolumeMounts = append(pod.Containers[0].VolumeMounts, corev1.VolumeMount{Name: volumeShm, MountPath: mountShm})
		pod.Volumes = append(pod.Volumes, corev1.Volume{Name: volumeShm, VolumeSource: corev1.VolumeSource{
			EmptyDir: &corev1.EmptyDirVolumeSource{Medium: corev1.StorageMediumMemory, SizeLimit: ptrTo(shmSize)},
		}})
	}
	if s.GPU > 0 {
		gpu := corev1.ResourceName(s.GPUSettings.ResourceName)
		q := *resource.NewQuantity(int64(s.GPU), resource.DecimalSI)
		res.Requests[gpu] = q
		res.Limits[gpu] = q
	}
	pod.NodeSelector, pod.Tolerations = placement(s, s.GPU > 0)
	t := corev1.PodTemplateSpec{
		ObjectMeta: metav1.ObjectMeta{Labels: labels, Annotations: map[string]string{annotationWeights: w.ID}},
		Spec:       pod,
	}
	withAdapters(s, &t, parseAdaptersAnnotation(w.Adapters))
	return t
}

func httpProbe(path string, period, failures int32) *corev1.Probe {
	return &corev1.Probe{
		ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{
			Path: path, Port: intstr.FromString(portName), Scheme: corev1.URISchemeHTTP,
		}},
		PeriodSeconds:    period,
		TimeoutSeconds:   probeTimeoutSeconds,
		FailureThreshold: failures,
	}
}

// mergeEnv appends extra to base; a variable of extra replaces the one of
// the same name in base in place. Kubernetes would take the last of two
// duplicates, but server-side apply refuses duplicate keys outright.
func mergeEnv(base, extra []corev1.EnvVar) []corev1.EnvVar {
	if len(base)+len(extra) == 0 {
		return nil
	}
	out := make([]corev1.EnvVar, len(base), len(base)+len(extra))
	copy(out, base)
	if len(extra) == 0 {
		return out
	}
	at := make(map[string]int, len(base)+len(extra))
	for i := range out {
		at[out[i].Name] = i
	}
	for _, e := range extra {
		if i, ok := at[e.Name]; ok {
			out[i] = e
			continue
		}
		at[e.Name] = len(out)
		out = append(out, e)
	}
	return out
}
