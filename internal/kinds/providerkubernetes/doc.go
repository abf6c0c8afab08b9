// Package providerkubernetes holds the Object kind of Crossplane's
// provider-kubernetes (checked against v1.2.1): the cluster-scoped
// kubernetes.crossplane.io/v1alpha2 Object a claim composes, and the
// namespaced kubernetes.m.crossplane.io/v1alpha1 Object a namespaced
// composite composes. Both share one shape, so one Go type serves both.
// They are our own types, with only the fields the function sets and
// reads: the provider's API module brings its controllers' dependencies
// with it. The e2e applies what they render to the upstream CRDs.
//
// +kubebuilder:object:generate=true
package providerkubernetes
