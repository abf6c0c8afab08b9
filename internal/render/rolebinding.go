package render

import (
	"github.com/inferno-ai/function-inferno/internal/resolve"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// PickerRoleBinding grants the picker's Role to its ServiceAccount,
// both in the claim's namespace.
func PickerRoleBinding(s *resolve.Spec) *rbacv1.RoleBinding {
	return &rbacv1.RoleBinding{
		TypeMeta:   metav1.TypeMeta{APIVersion: rbacv1.SchemeGroupVersion.String(), Kind: "RoleBinding"},
		ObjectMeta: pickerMeta(s),
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: resolve.PickerName(s), Namespace: s.Namespace}},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: resolve.PickerName(s)},
	}
}

// ProgressRoleBinding binds a reporting pull's Role to its
// ServiceAccount, in the claim's namespace only. Ready once observed.
func ProgressRoleBinding(s *resolve.Spec, v *resolve.Version) *rbacv1.RoleBinding {
	name := progressName(s, v.Model)
	return &rbacv1.RoleBinding{
		TypeMeta:   metav1.TypeMeta{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "RoleBinding"},
		ObjectMeta: progressMeta(s, v),
		RoleRef:    rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "Role", Name: name},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: name, Namespace: s.Namespace}},
	}
}
