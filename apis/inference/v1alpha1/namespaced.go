package v1alpha1

import "k8s.io/apimachinery/pkg/runtime/schema"

// The namespaced variant of the API, for Crossplane v2: the same Go types
// served as a namespaced composite resource (apiextensions.crossplane.io/v2,
// scope Namespaced) that app teams create directly, without a claim.
//
// It lives in a group of its own because its kind, InferenceService, is the
// claim's kind too: in the claim's group the two CRDs would both be named
// inferenceservices.inference.inferno.io.
const (
	// NamespacedGroup is the API group of the namespaced composite resource.
	NamespacedGroup = "inference.inferno.dev"
	// NamespacedKind is the kind of the namespaced composite resource.
	NamespacedKind = "InferenceService"
)

// NamespacedGroupVersion is the group and version of the namespaced
// composite resource.
var NamespacedGroupVersion = schema.GroupVersion{Group: NamespacedGroup, Version: Version}
