package fn

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// resourcePVC is the composition resource name of the weights cache volume.
const resourcePVC = "weights-pvc"

// pvcName names the cache volume: <name>-weights for an InferenceService,
// <name>-cache for a ModelCache, so a cache and a service of one name in
// one namespace never share a volume.
func pvcName(s *resolvedSpec) string { return s.Volume }

// renderPVC builds the PersistentVolumeClaim that caches the weights.
//
// A claim's storage class and access modes are immutable and its size can
// only grow, so for an existing volume those fields keep their observed
// values, and each change the user asked for but cannot have is reported
// as a warning instead of a failed apply on every reconcile.
func renderPVC(s *resolvedSpec, observed *corev1.PersistentVolumeClaim) (*corev1.PersistentVolumeClaim, []string) {
	pvc := &corev1.PersistentVolumeClaim{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "PersistentVolumeClaim"},
		ObjectMeta: metav1.ObjectMeta{Name: pvcName(s), Namespace: s.Namespace, Labels: s.labels(s.primary(), componentCache)},
		Spec: corev1.PersistentVolumeClaimSpec{
			AccessModes: []corev1.PersistentVolumeAccessMode{s.Storage.AccessMode},
			Resources: corev1.VolumeResourceRequirements{
				Requests: corev1.ResourceList{corev1.ResourceStorage: s.Storage.Size},
			},
		},
	}
	if s.Storage.Class != "" {
		pvc.Spec.StorageClassName = ptrTo(s.Storage.Class)
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
