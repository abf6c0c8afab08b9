package render

import (
	"strconv"
	"strings"

	"github.com/inferno-ai/function-inferno/input/v1beta1"
	"github.com/inferno-ai/function-inferno/internal/resolve"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/utils/ptr"
)

// AnnotationAdapters on the server's pod template records the adapters it
// serves, as name=hash pairs in the servers' order, so that a later call keeps
// serving an adapter's current weights while a new revision is pulled.
const AnnotationAdapters = "inference.inferno.io/adapters"

// LabelAdapter on an adapter's pull Job names the adapter.
const LabelAdapter = "inference.inferno.io/adapter"

// ServedAdapter is one adapter a server's pod template serves.
type ServedAdapter struct {
	Name, Hash string
}

// path is where the server reads the adapter.
func (a ServedAdapter) path() string { return resolve.MountAdapters + "/" + a.Hash }

// AdaptersAnnotation is the pod template's record of the served adapters.
func AdaptersAnnotation(list []ServedAdapter) string {
	parts := make([]string, len(list))
	for i, a := range list {
		parts[i] = a.Name + "=" + a.Hash
	}
	return strings.Join(parts, ",")
}

// ParseAdaptersAnnotation reads adaptersAnnotation back; entries that are
// not name=hash are skipped.
func ParseAdaptersAnnotation(v string) []ServedAdapter {
	var out []ServedAdapter
	for _, p := range strings.Split(v, ",") {
		name, hash, ok := strings.Cut(p, "=")
		if ok && name != "" && hash != "" {
			out = append(out, ServedAdapter{Name: name, Hash: hash})
		}
	}
	return out
}

// AdapterArgs are the server's arguments for its adapters: the preset's
// Args, then the modules flag and one <name>=<path> per adapter (or the
// path alone, for a runtime that numbers adapters by their order).
func AdapterArgs(p *v1beta1.AdapterPreset, list []ServedAdapter) []string {
	if p == nil || len(list) == 0 {
		return nil
	}
	args := append([]string(nil), p.Args...)
	each := p.ModulesFlagEach != nil && *p.ModulesFlagEach
	pathOnly := p.PathOnly != nil && *p.PathOnly
	if p.ModulesFlag != "" && !each {
		args = append(args, p.ModulesFlag)
	}
	for _, a := range list {
		if p.ModulesFlag != "" && each {
			args = append(args, p.ModulesFlag)
		}
		if pathOnly {
			args = append(args, a.path())
		} else {
			args = append(args, a.Name+"="+a.path())
		}
	}
	return args
}

// withAdapters adds a server pod's adapters: their arguments, the
// $(MAX_LORAS) and $(MAX_LORA_RANK) variables, the cache volume's adapters
// directory mounted read-only, and the annotation that records them.
func withAdapters(s *resolve.Spec, pod *corev1.PodTemplateSpec, list []ServedAdapter) {
	if len(list) == 0 {
		return
	}
	c := &pod.Spec.Containers[0]
	c.Args = append(append([]string(nil), c.Args...), AdapterArgs(s.Adapters.Preset, list)...)
	c.Env = resolve.MergeEnv(c.Env, []corev1.EnvVar{
		{Name: v1beta1.EnvMaxLoras, Value: strconv.Itoa(int(s.Adapters.MaxLoras))},
		{Name: v1beta1.EnvMaxLoraRank, Value: strconv.Itoa(int(s.Adapters.MaxLoraRank))},
	})
	c.VolumeMounts = append(c.VolumeMounts, corev1.VolumeMount{Name: resolve.VolumeAdapters, MountPath: resolve.MountAdapters, SubPath: resolve.AdaptersDir, ReadOnly: true})
	pod.Spec.Volumes = append(pod.Spec.Volumes, corev1.Volume{Name: resolve.VolumeAdapters, VolumeSource: corev1.VolumeSource{
		PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: PVCName(s), ReadOnly: true},
	}})
	pod.Annotations[AnnotationAdapters] = AdaptersAnnotation(list)
}

// weightsVolume is the servers' weights volume: the image of oci://
// weights, else the claim that holds them.
func weightsVolume(w Weights) corev1.Volume {
	if w.Image != "" {
		return corev1.Volume{Name: VolumeWeights, VolumeSource: corev1.VolumeSource{
			Image: &corev1.ImageVolumeSource{Reference: w.Image, PullPolicy: w.PullPolicy},
		}}
	}
	return corev1.Volume{Name: VolumeWeights, VolumeSource: corev1.VolumeSource{
		PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: w.Claim, ReadOnly: true},
	}}
}

// Pieces shared by the pods of the pull Job and of the Deployment. Both meet
// the Kubernetes "restricted" Pod Security Standard: the images of most
// runtimes run as root by default, so the pods name a non-root user rather
// than trust the image, and give it writable scratch space for HOME and
// caches.

// NonRootUID is the user every container runs as (distroless "nonroot").
const NonRootUID = int64(65532)

// Volume names and mount points.
const (
	VolumeWeights = "weights"
	VolumeTmp     = "tmp"
	volumeShm     = "dshm"

	mountTmp   = resolve.MountScratch
	mountShm   = "/dev/shm"
	MountCache = "/cache"           // the cache volume, in the pull Job
	MountModel = resolve.MountModel // the weights, read-only, in the servers
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

// PodSecurityContext is the pod-level half of the restricted Pod Security
// Standard, for every pod the function composes (pull Jobs, servers, the
// endpoint picker): non-root as NonRootUID, whatever user the image names,
// with the volumes group-owned by it so the cache is writable, and the
// runtime's default seccomp profile.
func PodSecurityContext() *corev1.PodSecurityContext {
	return &corev1.PodSecurityContext{
		RunAsNonRoot:   ptr.To(true),
		RunAsUser:      ptr.To(NonRootUID),
		RunAsGroup:     ptr.To(NonRootUID),
		FSGroup:        ptr.To(NonRootUID),
		SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
	}
}

// ContainerSecurityContext is the container-level half of the restricted
// Pod Security Standard, for every container of those pods: no privilege
// escalation, every capability dropped, and non-root.
func ContainerSecurityContext() *corev1.SecurityContext {
	return &corev1.SecurityContext{
		AllowPrivilegeEscalation: ptr.To(false),
		Capabilities:             &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
		RunAsNonRoot:             ptr.To(true),
	}
}

func tmpVolume() corev1.Volume {
	return corev1.Volume{Name: VolumeTmp, VolumeSource: corev1.VolumeSource{
		EmptyDir: &corev1.EmptyDirVolumeSource{SizeLimit: ptr.To(tmpSize)},
	}}
}

// placement is where a pod runs: the Input's node pool, and for servers
// that request GPUs the GPU nodes' selector and tolerations on top (the
// GPU selector wins a key both name).
func placement(s *resolve.Spec, gpus bool) (map[string]string, []corev1.Toleration) {
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

// Weights is what a server mounts as its model: a directory of the cache
// volume, of a ModelCache's volume, or of the user's own claim for pvc://
// models; or an image, for oci:// models.
type Weights struct {
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
