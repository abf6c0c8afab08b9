package fn

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// renderProgressServiceAccount builds the ServiceAccount a reporting pull
// pod runs under. It mounts no token by itself
// (automountServiceAccountToken false): the pull pod projects one, and no
// other pod that might name this account gets one. Ready once observed.
func renderProgressServiceAccount(s *resolvedSpec, v *modelVersion) *corev1.ServiceAccount {
	return &corev1.ServiceAccount{
		TypeMeta:                     metav1.TypeMeta{APIVersion: "v1", Kind: "ServiceAccount"},
		ObjectMeta:                   progressMeta(s, v),
		AutomountServiceAccountToken: ptrTo(false),
	}
}
