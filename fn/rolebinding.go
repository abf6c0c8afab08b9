package fn

import (
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// renderProgressRoleBinding binds a reporting pull's Role to its
// ServiceAccount, in the claim's namespace only. Ready once observed.
func renderProgressRoleBinding(s *resolvedSpec, v *modelVersion) *rbacv1.RoleBinding {
	name := progressName(s, v.Model)
	return &rbacv1.RoleBinding{
		TypeMeta:   metav1.TypeMeta{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "RoleBinding"},
		ObjectMeta: progressMeta(s, v),
		RoleRef:    rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "Role", Name: name},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: name, Namespace: s.Namespace}},
	}
}
