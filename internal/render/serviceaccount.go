package render

import (
	"github.com/inferno-ai/function-inferno/internal/resolve"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// PickerServiceAccount builds the picker's identity. It holds only
// the picker's Role.
func PickerServiceAccount(s *resolve.Spec) *corev1.ServiceAccount {
	return &corev1.ServiceAccount{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "ServiceAccount"},
		ObjectMeta: pickerMeta(s),
	}
}

// ProgressServiceAccount builds the ServiceAccount a reporting pull
// pod runs under. It mounts no token by itself
// (automountServiceAccountToken false): the pull pod projects one, and no
// other pod that might name this account gets one. Ready once observed.
func ProgressServiceAccount(s *resolve.Spec, v *resolve.Version) *corev1.ServiceAccount {
	return &corev1.ServiceAccount{
		TypeMeta:                     metav1.TypeMeta{APIVersion: "v1", Kind: "ServiceAccount"},
		ObjectMeta:                   progressMeta(s, v),
		AutomountServiceAccountToken: ptr.To(false),
	}
}
