package render

import (
	"github.com/inferno-ai/function-inferno/internal/resolve"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// ProgressConfigMap builds the ConfigMap a reporting pull pod
// patches (see progress.go). It has no data: the data is the pod's, and
// Crossplane's server-side apply of an object without it leaves the pod's
// fields alone. Ready once observed.
func ProgressConfigMap(s *resolve.Spec, v *resolve.Version) *corev1.ConfigMap {
	return &corev1.ConfigMap{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
		ObjectMeta: progressMeta(s, v),
	}
}

// progressMeta is the metadata of a pull's progress objects.
func progressMeta(s *resolve.Spec, v *resolve.Version) metav1.ObjectMeta {
	return metav1.ObjectMeta{
		Name:        progressName(s, v.Model),
		Namespace:   s.Namespace,
		Labels:      s.Labels(v, resolve.ComponentPuller),
		Annotations: map[string]string{resolve.AnnotationModelURI: v.Model.URI},
	}
}

// PickerConfig builds the ConfigMap of the picker's
// EndpointPickerConfig (input.traffic.gateway.inferenceExtension.picker.config).
func PickerConfig(s *resolve.Spec) *corev1.ConfigMap {
	return &corev1.ConfigMap{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
		ObjectMeta: pickerMeta(s),
		Data:       map[string]string{PickerConfigKey: s.Pool.Picker.Config},
	}
}
