package fn

import (
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// renderProgressRole builds the Role of a reporting pull pod: get and
// patch of its own progress ConfigMap, by name, and nothing else (no
// list, no watch, no other object). Ready once observed.
func renderProgressRole(s *resolvedSpec, v *modelVersion) *rbacv1.Role {
	return &rbacv1.Role{
		TypeMeta:   metav1.TypeMeta{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "Role"},
		ObjectMeta: progressMeta(s, v),
		Rules: []rbacv1.PolicyRule{{
			APIGroups:     []string{""},
			Resources:     []string{"configmaps"},
			ResourceNames: []string{progressName(s, v.Model)},
			Verbs:         []string{"get", "patch"},
		}},
	}
}
