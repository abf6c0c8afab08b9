package render

import (
	"github.com/inferno-ai/function-inferno/internal/resolve"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	inferencev1 "sigs.k8s.io/gateway-api-inference-extension/api/v1"
)

// PickerRules are what the picker reads, upstream's Role for a v1 pool:
// its pool, the InferenceObjectives of the namespace, and the pods it
// picks from. Read-only, and only in the claim's namespace (a Role, never
// a ClusterRole). Crossplane must hold these permissions itself to grant
// them (apis/rbac.yaml).
func PickerRules() []rbacv1.PolicyRule {
	read := []string{"get", "watch", "list"}
	return []rbacv1.PolicyRule{
		{APIGroups: []string{"inference.networking.x-k8s.io"}, Resources: []string{"inferenceobjectives"}, Verbs: read},
		{APIGroups: []string{inferencev1.GroupVersion.Group}, Resources: []string{"inferencepools"}, Verbs: read},
		{APIGroups: []string{""}, Resources: []string{"pods"}, Verbs: read},
	}
}

// PickerRole builds the picker's Role in the claim's namespace.
func PickerRole(s *resolve.Spec) *rbacv1.Role {
	return &rbacv1.Role{
		TypeMeta:   metav1.TypeMeta{APIVersion: rbacv1.SchemeGroupVersion.String(), Kind: "Role"},
		ObjectMeta: pickerMeta(s),
		Rules:      PickerRules(),
	}
}

// ProgressRole builds the Role of a reporting pull pod: get and
// patch of its own progress ConfigMap, by name, and nothing else (no
// list, no watch, no other object). Ready once observed.
func ProgressRole(s *resolve.Spec, v *resolve.Version) *rbacv1.Role {
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
