package v1alpha1

import (
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// CachePhase summarises where a ModelCache is in its life.
// +kubebuilder:validation:Enum=Pending;Pulling;Ready;Failed
type CachePhase string

// Phases of a ModelCache and of each of its revisions.
const (
	// CachePending: the volume and pull Jobs are being created.
	CachePending CachePhase = "Pending"
	// CachePulling: a pull Job is downloading weights.
	CachePulling CachePhase = "Pulling"
	// CacheReady: every revision is pulled.
	CacheReady CachePhase = "Ready"
	// CacheFailed: a pull failed; the message says which and why.
	CacheFailed CachePhase = "Failed"
)

// XModelCache is the composite resource behind a ModelCache claim: a model's
// weights, pulled once into a volume of their own that outlives the
// InferenceServices serving them (spec.model.cacheRef).
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:scope=Cluster,categories=inference
// +kubebuilder:printcolumn:name="Phase",type=string,JSONPath=".status.phase"
// +kubebuilder:printcolumn:name="Model",type=string,JSONPath=".spec.uri"
// +kubebuilder:printcolumn:name="Volume",type=string,JSONPath=".status.pvcName"
type XModelCache struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec is the weights to pull and where to keep them.
	Spec ModelCacheSpec `json:"spec"`
	// Status is what the function observed and reports back.
	Status ModelCacheStatus `json:"status,omitempty"`
}

// ModelCacheSpec names the weights a ModelCache pulls and sizes its volume.
type ModelCacheSpec struct {
	// URI of the weights: hf://org/model, s3://bucket/prefix,
	// gs://bucket/prefix or http(s)://host/path. Credentials never go in
	// the URI: use credentialsSecretRef.
	// +kubebuilder:validation:MinLength=6
	// +kubebuilder:validation:MaxLength=2048
	// +kubebuilder:validation:XValidation:rule="self.matches('^(hf|s3|gs|https?)://.+')",message="must start with hf://, s3://, gs://, http:// or https:// and name a model"
	// +kubebuilder:validation:XValidation:rule="!self.matches('^[a-z0-9]+://[^/]*@')",message="must not carry credentials (user:password@); put them in a Secret and set spec.credentialsSecretRef"
	URI string `json:"uri"`

	// Revisions to pull, each into a directory of its own (a Hugging Face
	// branch, tag or commit, or an object version). Leave it out to pull
	// the source's default revision. InferenceServices choose one with
	// spec.model.revision; the first is their default.
	// +optional
	// +kubebuilder:validation:MaxItems=16
	// +listType=set
	// +kubebuilder:validation:items:MaxLength=128
	// +kubebuilder:validation:items:Pattern=`^[A-Za-z0-9][-A-Za-z0-9_./]*$`
	Revisions []string `json:"revisions,omitempty"`

	// CredentialsSecretRef names a Secret in the ModelCache's namespace that
	// the pull Jobs read the source's credentials from, as an
	// InferenceService's spec.model.credentialsSecretRef does.
	// +optional
	CredentialsSecretRef *SecretKeyReference `json:"credentialsSecretRef,omitempty"`

	// Storage sizes the volume. Use ReadWriteMany when the services that
	// mount it run on more than one node.
	// +optional
	Storage *CacheStorageSpec `json:"storage,omitempty"`
}

// CacheStorageSpec sizes a ModelCache's volume.
type CacheStorageSpec struct {
	// Size of the volume, e.g. "200Gi". It can grow later (if the storage
	// class allows expansion) but never shrink.
	// +optional
	Size *resource.Quantity `json:"size,omitempty"`

	// StorageClassName of the volume. Empty uses the platform default, then
	// the cluster default. Fixed once the volume exists.
	// +optional
	// +kubebuilder:validation:MaxLength=253
	StorageClassName *string `json:"storageClassName,omitempty"`

	// AccessMode of the volume. Fixed once the volume exists.
	// +optional
	AccessMode AccessMode `json:"accessMode,omitempty"`
}

// ModelCacheStatus is what the function reports about a ModelCache.
type ModelCacheStatus struct {
	// Phase summarises where the cache is in its life.
	// +optional
	Phase CachePhase `json:"phase,omitempty"`

	// Message explains the phase in words a user can act on.
	// +optional
	Message string `json:"message,omitempty"`

	// PVCName is the PersistentVolumeClaim that holds the weights, in the
	// ModelCache's namespace.
	// +optional
	PVCName string `json:"pvcName,omitempty"`

	// URI of the cached weights.
	// +optional
	URI string `json:"uri,omitempty"`

	// Revisions reports each revision of spec.revisions (one entry with an
	// empty revision when spec.revisions is left out).
	// +optional
	Revisions []CachedRevision `json:"revisions,omitempty"`
}

// CachedRevision is one revision of a ModelCache.
type CachedRevision struct {
	// Revision as spec.revisions names it; empty for the default.
	Revision string `json:"revision"`

	// Path of the revision's directory, relative to the volume's root.
	Path string `json:"path"`

	// Phase of the revision's pull.
	Phase CachePhase `json:"phase"`

	// Message explains the phase.
	// +optional
	Message string `json:"message,omitempty"`
}
