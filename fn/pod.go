package fn

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// Pieces shared by the pods of the pull Job and of the Deployment. Both meet
// the Kubernetes "restricted" Pod Security Standard: the images of most
// runtimes run as root by default, so the pods name a non-root user rather
// than trust the image, and give it writable scratch space for HOME and
// caches.

// nonRootUID is the user every container runs as (distroless "nonroot").
const nonRootUID = int64(65532)

// Volume names and mount points.
const (
	volumeWeights = "weights"
	volumeTmp     = "tmp"
	volumeShm     = "dshm"

	mountTmp   = "/tmp"
	mountShm   = "/dev/shm"
	mountCache = "/cache" // the cache volume, in the pull Job
	mountModel = "/model" // the weights, read-only, in the servers
)

// Sizes of the scratch volumes. Each emptyDir has a size limit so that a
// runaway cache cannot fill the node's disk (and, for the memory-backed
// /dev/shm, the pod's memory). An emptyDir without one would encode as
// `emptyDir: {}` and keep its source: the standard encoding keeps empty
// objects.
var (
	tmpSize = resource.MustParse("10Gi")
	shmSize = resource.MustParse("16Gi")
)

func podSecurityContext() *corev1.PodSecurityContext {
	return &corev1.PodSecurityContext{
		RunAsNonRoot:   ptrTo(true),
		RunAsUser:      ptrTo(nonRootUID),
		RunAsGroup:     ptrTo(nonRootUID),
		FSGroup:        ptrTo(nonRootUID),
		SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
	}
}

func containerSecurityContext() *corev1.SecurityContext {
	return &corev1.SecurityContext{
		AllowPrivilegeEscalation: ptrTo(false),
		Capabilities:             &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
		RunAsNonRoot:             ptrTo(true),
	}
}

func tmpVolume() corev1.Volume {
	return corev1.Volume{Name: volumeTmp, VolumeSource: corev1.VolumeSource{
		EmptyDir: &corev1.EmptyDirVolumeSource{SizeLimit: ptrTo(tmpSize)},
	}}
}

// scratchEnv points HOME and the usual caches at the writable /tmp.
func scratchEnv() []corev1.EnvVar {
	return []corev1.EnvVar{
		{Name: "HOME", Value: mountTmp},
		{Name: "XDG_CACHE_HOME", Value: mountTmp + "/.cache"},
		{Name: "HF_HOME", Value: mountTmp + "/hf"},
	}
}

// placement is where a pod runs: the Input's node pool, and for servers
// that request GPUs the GPU nodes' selector and tolerations on top (the
// GPU selector wins a key both name).
func placement(s *resolvedSpec, gpus bool) (map[string]string, []corev1.Toleration) {
	sel := s.Scheduling.NodeSelector
	tol := s.Scheduling.Tolerations
	if !gpus {
		return sel, tol
	}
	if len(sel) == 0 {
		sel = s.GPUSettings.NodeSelector
	} else if len(s.GPUSettings.NodeSelector) > 0 {
		merged := make(map[string]string, len(sel)+len(s.GPUSettings.NodeSelector))
		for k, v := range sel {
			merged[k] = v
		}
		for k, v := range s.GPUSettings.NodeSelector {
			merged[k] = v
		}
		sel = merged
	}
	if len(tol) == 0 {
		tol = s.GPUSettings.Tolerations
	} else {
		tol = append(append([]corev1.Toleration(nil), tol...), s.GPUSettings.Tolerations...)
	}
	return sel, tol
}
