package render

import (
	"fmt"

	"github.com/inferno-ai/function-inferno/internal/resolve"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// ResourcePVC is the composition resource name of the weights cache volume.
const ResourcePVC = "weights-pvc"

// PVCName names the cache volume: <name>-weights for an InferenceService,
// <name>-cache for a ModelCache, so a cache and a service of one name in
// one namespace never share a volume.
func PVCName(s *resolve.Spec) string { return s.Volume }

// PVC builds the PersistentVolumeClaim that caches the weights.
//
// A claim's storage class and access modes are immutable and its size can
// only grow, so for an existing volume those fields keep their observed
// values, and each change the user asked for but cannot have is reported
// as a warning instead of a failed apply on every reconcile.
func PVC(s *resolve.Spec, observed *corev1.PersistentVolumeClaim) (*corev1.PersistentVolumeClaim, []string) {
	pvc := &corev1.PersistentVolumeClaim{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "PersistentVolumeClaim"},
		ObjectMeta: metav1.ObjectMeta{Name: PVCName(s), Namespace: s.Namespace, Labels: s.Labels(s.Primary(), resolve.ComponentCache)},
		Spec: corev1.PersistentVolumeClaimSpec{
			AccessModes: []corev1.PersistentVolumeAccessMode{s.Storage.AccessMode},
			Resources: corev1.VolumeResourceRequirements{
				Requests: corev1.ResourceList{corev1.ResourceStorage: s.Storage.Size},
			},
		},
	}
	if s.Storage.Class != "" {
		pvc.Spec.StorageClassName = ptr.To(s.Storage.Class)
	}
	if observed == nil {
		return pvc, nil
	}

	var warnings []string
	if want, have := pvc.Spec.StorageClassName, observed.Spec.StorageClassName; want != nil && have != nil && *want != *have {
		warnings = append(warnings, fmt.Sprintf("spec.storage.storageClassName: the volume %s already uses class %q, which cannot change; delete and recreate the InferenceService to move it to %q", pvc.Name, *have, *want))
		pvc.Spec.StorageClassName = have
	}
	if len(observed.Spec.AccessModes) > 0 && (len(observed.Spec.AccessModes) != 1 || observed.Spec.AccessModes[0] != s.Storage.AccessMode) {
		warnings = append(warnings, fmt.Sprintf("spec.storage.accessMode: the volume %s already has access modes %v, which cannot change; delete and recreate the InferenceService to use %s", pvc.Name, observed.Spec.AccessModes, s.Storage.AccessMode))
		pvc.Spec.AccessModes = observed.Spec.AccessModes
	}
	if have, ok := observed.Spec.Resources.Requests[corev1.ResourceStorage]; ok && have.Cmp(s.Storage.Size) > 0 {
		warnings = append(warnings, fmt.Sprintf("spec.storage.size: the volume %s already requests %s and cannot shrink to %s; keeping %s", pvc.Name, have.String(), s.Storage.Size.String(), have.String()))
		pvc.Spec.Resources.Requests[corev1.ResourceStorage] = have
	}
	return pvc, warnings
}

// Readiness of each composed kind. Crossplane treats a composed resource of
// unspecified readiness as not ready, so the function decides for every
// object it returns; an object not observed yet is never ready.

// PVCBound reports whether the cache volume is ready:
//  1. status.phase is Bound.
//
// A volume of a WaitForFirstConsumer class stays Pending until the pull
// Job's pod mounts it, so nothing waits for this before creating the Job.
func PVCBound(pvc *corev1.PersistentVolumeClaim) bool {
	return pvc != nil && pvc.Status.Phase == corev1.ClaimBound
}
