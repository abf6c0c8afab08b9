package fn

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// renderProgressConfigMap builds the ConfigMap a reporting pull pod
// patches (see progress.go). It has no data: the data is the pod's, and
// Crossplane's server-side apply of an object without it leaves the pod's
// fields alone. Ready once observed.
func renderProgressConfigMap(s *resolvedSpec, v *modelVersion) *corev1.ConfigMap {
	return &corev1.ConfigMap{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
		ObjectMeta: progressMeta(s, v),
	}
}

// progressMeta is the metadata of a pull's progress objects.
func progressMeta(s *resolvedSpec, v *modelVersion) metav1.ObjectMeta {
	return metav1.ObjectMeta{
		Name:        progressName(s, v.Model),
		Namespace:   s.Namespace,
		Labels:      s.labels(v, componentPuller),
		Annotations: map[string]string{annotationModelURI: v.Model.URI},
	}
}
