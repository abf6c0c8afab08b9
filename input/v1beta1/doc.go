// Package v1beta1 holds the function's Input (group fn.inferno.io, version
// v1beta1): the platform team's defaults and presets, set once in the
// Composition and applied to every InferenceService.
//
// +kubebuilder:object:generate=true
// +groupName=fn.inferno.io
// +versionName=v1beta1
package v1beta1
