// Package v1alpha1 holds the InferenceService API (group inference.inferno.io,
// version v1alpha1): the spec an app team writes in a claim and the status the
// function reports back.
//
// These Go types are the single source of truth. controller-gen turns their
// markers into a CRD schema, and apis/generate wraps that schema into the
// CompositeResourceDefinition; the function decodes observed XRs into the
// same types.
//
// +kubebuilder:object:generate=true
// +groupName=inference.inferno.io
// +versionName=v1alpha1
package v1alpha1

import (
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Group and version of the InferenceService API.
const (
	Group   = "inference.inferno.io"
	Version = "v1alpha1"
)

// Kinds of the InferenceService API.
const (
	// CompositeKind is the cluster-scoped composite resource (XR) kind.
	CompositeKind = "XInferenceService"
	// ClaimKind is the namespaced claim kind app teams create.
	ClaimKind = "InferenceService"
	// CacheCompositeKind is the cluster-scoped composite kind of a ModelCache.
	CacheCompositeKind = "XModelCache"
	// CacheClaimKind is the namespaced claim kind of a ModelCache, which
	// spec.model.cacheRef names.
	CacheClaimKind = "ModelCache"
)

// SchemeGroupVersion is the group and version of this API.
var SchemeGroupVersion = schema.GroupVersion{Group: Group, Version: Version}
