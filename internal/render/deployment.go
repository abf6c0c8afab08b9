package render

import (
	"strconv"

	"github.com/inferno-ai/function-inferno/internal/resolve"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
)

// ResourceDeployment is the composition resource name of the model servers.
const ResourceDeployment = "deployment"

// ServerContainer names the model server container.
const ServerContainer = "server"

// PortName names the server's container port; the Service targets it by name.
const PortName = "http"

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

// ServedWeights reads the weights an observed Deployment's pod template
// mounts. ok is false when the template does not say (it was not made by us).
func ServedWeights(t *corev1.PodTemplateSpec) (w Weights, ok bool) {
	w.ID = t.Annotations[resolve.AnnotationWeights]
	w.Adapters = t.Annotations[AnnotationAdapters]
	for _, v := range t.Spec.Volumes {
		switch {
		case v.Name != VolumeWeights:
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
			if c.Name == ServerContainer && m.Name == VolumeWeights {
				w.SubPath = m.SubPath
			}
		}
	}
	return w, w.ID != "" && (w.Claim != "" || w.Image != "")
}

// Deployment builds the model servers of version v, mounting w
// read-only, replicas of them; nil replicas leaves the count to the
// version's autoscaler. Every version serves under the claim's name
// (MODEL_NAME), so a client's requests read the same whichever version
// answers them.
func Deployment(s *resolve.Spec, v *resolve.Version, w Weights, replicas *int32) *appsv1.Deployment {
	labels := s.Labels(v, v.Component())
	startup := *s.Runtime.StartupSeconds
	d := &appsv1.Deployment{
		TypeMeta:   metav1.TypeMeta{APIVersion: "apps/v1", Kind: "Deployment"},
		ObjectMeta: metav1.ObjectMeta{Name: v.ServerName(s), Namespace: s.Namespace, Labels: labels},
		Spec: appsv1.DeploymentSpec{
			Selector: &metav1.LabelSelector{MatchLabels: v.Selector(s)},
			Template: serverPodTemplate(s, v, w),
			// A rollout starts a new server before it stops an old one
			// (by default): it never has fewer ready servers than it asks
			// for (input.rollout).
			Strategy: appsv1.DeploymentStrategy{
				Type: appsv1.RollingUpdateDeploymentStrategyType,
				RollingUpdate: &appsv1.RollingUpdateDeployment{
					MaxUnavailable: ptr.To(s.Rollout.MaxUnavailable),
					MaxSurge:       ptr.To(s.Rollout.MaxSurge),
				},
			},
			// The deadline must outlast a slow model load, or every
			// rollout of a large model would be reported as failed.
			ProgressDeadlineSeconds: ptr.To(startup + 600),
			RevisionHistoryLimit:    ptr.To(int32(3)),
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
func serverPodTemplate(s *resolve.Spec, v *resolve.Version, w Weights) corev1.PodTemplateSpec {
	rt := s.Runtime
	port := *rt.Port
	startup := *rt.StartupSeconds
	labels := s.Labels(v, v.Component())

	env := s.ServerEnv(v)

	res := corev1.ResourceRequirements{
		Requests: corev1.ResourceList{corev1.ResourceCPU: s.CPU, corev1.ResourceMemory: s.Memory},
		// Memory is limited to the request so a server is never OOM-killed
		// for memory the node promised to someone else; CPU is not limited,
		// so model loading may burst.
		Limits: corev1.ResourceList{corev1.ResourceMemory: s.Memory},
	}
	pod := corev1.PodSpec{
		SecurityContext: PodSecurityContext(),
		// The servers run images the claim may choose: no Kubernetes API
		// token unless the platform's Input grants one.
		ServiceAccountName:           s.ServiceAccount,
		AutomountServiceAccountToken: ptr.To(s.ServerToken),
		// Let in-flight generations finish when a server is replaced: the
		// drain pause, then up to a minute for the last answers.
		TerminationGracePeriodSeconds: ptr.To(int64(60 + drainSeconds)),
		Containers: []corev1.Container{{
			Name:    ServerContainer,
			Image:   rt.Image,
			Command: rt.Command,
			Args:    rt.Args,
			Ports:   []corev1.ContainerPort{{Name: PortName, ContainerPort: port, Protocol: corev1.ProtocolTCP}},
			Env:     env,
			StartupProbe: httpProbe(rt.HealthPath, startupPeriodSeconds,
				max(1, (startup+startupPeriodSeconds-1)/startupPeriodSeconds)),
			ReadinessProbe: httpProbe(rt.HealthPath, 10, 3),
			LivenessProbe:  httpProbe(rt.HealthPath, 20, 3),
			Lifecycle: &corev1.Lifecycle{PreStop: &corev1.LifecycleHandler{
				Sleep: &corev1.SleepAction{Seconds: drainSeconds},
			}},
			Resources:       res,
			SecurityContext: ContainerSecurityContext(),
			VolumeMounts: []corev1.VolumeMount{
				{Name: VolumeWeights, MountPath: MountModel, SubPath: w.SubPath, ReadOnly: true},
				{Name: VolumeTmp, MountPath: mountTmp},
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
			EmptyDir: &corev1.EmptyDirVolumeSource{Medium: corev1.StorageMediumMemory, SizeLimit: ptr.To(shmSize)},
		}})
	}
	switch {
	case s.Devices != nil:
		withDevices(s, v, &pod)
	case s.GPU > 0:
		gpu := corev1.ResourceName(s.GPUSettings.ResourceName)
		q := *resource.NewQuantity(int64(s.GPU), resource.DecimalSI)
		res.Requests[gpu] = q
		res.Limits[gpu] = q
	}
	pod.NodeSelector, pod.Tolerations = placement(s, s.GPU > 0)
	t := corev1.PodTemplateSpec{
		ObjectMeta: metav1.ObjectMeta{Labels: labels, Annotations: map[string]string{resolve.AnnotationWeights: w.ID}},
		Spec:       pod,
	}
	withAdapters(s, &t, ParseAdaptersAnnotation(w.Adapters))
	return t
}

func httpProbe(path string, period, failures int32) *corev1.Probe {
	return &corev1.Probe{
		ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{
			Path: path, Port: intstr.FromString(PortName), Scheme: corev1.URISchemeHTTP,
		}},
		PeriodSeconds:    period,
		TimeoutSeconds:   probeTimeoutSeconds,
		FailureThreshold: failures,
	}
}

// PickerDeployment builds the picker: one replica (upstream's
// recommendation: its prefix-cache scorer keeps state), replaced with
// Recreate, under its own ServiceAccount with an API token (it watches its
// pool and the pods), meeting the restricted Pod Security Standard like
// every pod the function renders. The image and extra flags are the
// platform's (input), never the claim's.
func PickerDeployment(s *resolve.Spec) *appsv1.Deployment {
	pk := s.Pool.Picker
	args := []string{
		"--pool-name", s.Name,
		"--pool-namespace", s.Namespace,
		"--config-file", pickerConfigDir + "/" + PickerConfigKey,
		"--grpc-port", strconv.Itoa(int(pickerGRPCPort)),
		"--grpc-health-port", strconv.Itoa(int(pickerHealthPort)),
		"--metrics-port", strconv.Itoa(int(pickerMetrics)),
		"--zap-encoder", "json",
		"--tracing=false",
		// Authenticating metrics scrapes needs tokenreviews and
		// subjectaccessreviews, cluster-wide: the picker's Role stays in
		// the claim's namespace instead.
		"--metrics-endpoint-auth=false",
	}
	args = append(args, pk.Args...)
	probe := func(period int32) *corev1.Probe {
		return &corev1.Probe{
			ProbeHandler:  corev1.ProbeHandler{GRPC: &corev1.GRPCAction{Port: pickerHealthPort, Service: ptr.To(pickerHealthService)}},
			PeriodSeconds: period,
		}
	}
	liveness := probe(10)
	liveness.InitialDelaySeconds = 5
	field := func(path string) *corev1.EnvVarSource {
		return &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: path}}
	}
	labels := pickerLabels(s)
	return &appsv1.Deployment{
		TypeMeta:   metav1.TypeMeta{APIVersion: "apps/v1", Kind: "Deployment"},
		ObjectMeta: pickerMeta(s),
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To(int32(1)),
			Strategy: appsv1.DeploymentStrategy{Type: appsv1.RecreateDeploymentStrategyType},
			Selector: &metav1.LabelSelector{MatchLabels: pickerSelector(s)},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels, Annotations: map[string]string{AnnotationPickerConfig: s.Pool.ConfigHash}},
				Spec: corev1.PodSpec{
					SecurityContext:              PodSecurityContext(),
					ServiceAccountName:           resolve.PickerName(s),
					AutomountServiceAccountToken: ptr.To(true),
					// Upstream: as long as the longest grace period of
					// the pool's servers.
					TerminationGracePeriodSeconds: ptr.To(int64(130)),
					NodeSelector:                  pk.NodeSelector,
					Tolerations:                   pk.Tolerations,
					Containers: []corev1.Container{{
						Name:            pickerContainer,
						Image:           pk.Image,
						ImagePullPolicy: corev1.PullIfNotPresent,
						Args:            args,
						Ports: []corev1.ContainerPort{
							{Name: "grpc", ContainerPort: int32(pickerGRPCPort), Protocol: corev1.ProtocolTCP},
							{Name: "grpc-health", ContainerPort: pickerHealthPort, Protocol: corev1.ProtocolTCP},
							{Name: "metrics", ContainerPort: pickerMetrics, Protocol: corev1.ProtocolTCP},
						},
						Env: []corev1.EnvVar{
							{Name: "NAMESPACE", ValueFrom: field("metadata.namespace")},
							{Name: "POD_NAME", ValueFrom: field("metadata.name")},
							{Name: "HOME", Value: mountTmp},
						},
						LivenessProbe:  liveness,
						ReadinessProbe: probe(2),
						Resources: corev1.ResourceRequirements{
							Requests: corev1.ResourceList{corev1.ResourceCPU: *pk.CPU, corev1.ResourceMemory: *pk.Memory},
							Limits:   corev1.ResourceList{corev1.ResourceMemory: *pk.Memory},
						},
						SecurityContext: ContainerSecurityContext(),
						VolumeMounts: []corev1.VolumeMount{
							{Name: "config", MountPath: pickerConfigDir, ReadOnly: true},
							{Name: VolumeTmp, MountPath: mountTmp},
						},
					}},
					Volumes: []corev1.Volume{
						{Name: "config", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
							LocalObjectReference: corev1.LocalObjectReference{Name: resolve.PickerName(s)},
						}}},
						tmpVolume(),
					},
				},
			},
		},
	}
}

// DesiredReplicas is the observed Deployment's spec.replicas, which the API
// server defaults to 1 and an autoscaler sets.
func DesiredReplicas(d *appsv1.Deployment) int32 {
	if d.Spec.Replicas == nil {
		return 1
	}
	return *d.Spec.Replicas
}

// DeploymentReady reports whether the servers are ready:
//  1. status.observedGeneration >= metadata.generation (the status is
//     about the current spec);
//  2. condition Available=True;
//  3. status.updatedReplicas == status.availableReplicas == spec.replicas.
func DeploymentReady(d *appsv1.Deployment) bool {
	if d == nil || d.Status.ObservedGeneration < d.Generation {
		return false
	}
	if !deploymentCondition(d, appsv1.DeploymentAvailable, corev1.ConditionTrue) {
		return false
	}
	want := DesiredReplicas(d)
	return d.Status.UpdatedReplicas == want && d.Status.AvailableReplicas == want
}

// DeploymentStalled reports whether a rollout gave up:
//  1. condition Progressing=False with reason ProgressDeadlineExceeded.
func DeploymentStalled(d *appsv1.Deployment) (bool, string) {
	for _, c := range d.Status.Conditions {
		if c.Type == appsv1.DeploymentProgressing && c.Status == corev1.ConditionFalse && c.Reason == "ProgressDeadlineExceeded" {
			return true, c.Message
		}
	}
	return false, ""
}

func deploymentCondition(d *appsv1.Deployment, t appsv1.DeploymentConditionType, s corev1.ConditionStatus) bool {
	for _, c := range d.Status.Conditions {
		if c.Type == t {
			return c.Status == s
		}
	}
	return false
}

// DeploymentResource is the composition resource name of version v's
// Deployment. As for the version's autoscaler and ScaledObjects (not its
// own Service: see ServiceResource), the primary's name is that of a
// service without a split (ResourceDeployment), so starting or ending a
// split never renames the primary's objects; another version's is
// suffixed with its version.
func DeploymentResource(v *resolve.Version) string {
	if v.Primary {
		return ResourceDeployment
	}
	return ResourceDeployment + "-" + v.Model.Version
}
