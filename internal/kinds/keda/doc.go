// Package keda holds the KEDA kinds the function composes and reads: the
// ScaledObject (keda.sh/v1alpha1, KEDA v2.17) and the HTTP add-on's
// HTTPScaledObject (http.keda.sh/v1alpha1, v0.12). They are our own types,
// with only the fields the function sets and reads, because KEDA's api
// module brings its operator's dependencies with it; the e2e applies what
// they render to the upstream CRDs with strict field validation.
//
// +kubebuilder:object:generate=true
package keda
