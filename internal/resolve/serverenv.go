package resolve

import (
	"strconv"

	corev1 "k8s.io/api/core/v1"
)

// Mount points of the servers' volumes, which the function's variables
// name.
const (
	// MountModel is where the servers find their weights, read-only
	// ($(MODEL_DIR)).
	MountModel = "/model"
	// MountScratch is the pods' writable scratch volume, HOME and caches.
	MountScratch = "/tmp"
)

// ScratchEnv points HOME and the caches at the pod's scratch volume: the
// image's own may not be writable for a non-root user, and the weights
// are read-only.
func ScratchEnv() []corev1.EnvVar {
	return []corev1.EnvVar{
		{Name: "HOME", Value: MountScratch},
		{Name: "XDG_CACHE_HOME", Value: MountScratch + "/.cache"},
		{Name: "HF_HOME", Value: MountScratch + "/hf"},
	}
}

// ServerEnv is the environment of version v's server container, in the
// order the container lists it (which is the order the kubelet expands
// it in): the function's variables, the scratch variables, then the
// runtime preset's and the claim's (spec.serve.env), a claim's variable
// replacing one of the same name in place.
func (s *Spec) ServerEnv(v *Version) []corev1.EnvVar {
	env := []corev1.EnvVar{
		{Name: EnvModelDir, Value: MountModel},
		{Name: EnvModelName, Value: s.Name},
		{Name: EnvModelVersion, Value: v.Model.Version},
		{Name: EnvPort, Value: strconv.Itoa(int(*s.Runtime.Port))},
		// The weights are local: servers must never reach for a hub.
		{Name: "HF_HUB_OFFLINE", Value: "1"},
	}
	return MergeEnv(append(env, ScratchEnv()...), s.Runtime.Env)
}
