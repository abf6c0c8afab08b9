package providerkubernetes

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// The Object's API versions and kind.
const (
	// ClusterAPIVersion is the cluster-scoped Object, for claims and
	// cluster-scoped composites; its providerConfigRef names a
	// cluster-scoped ProviderConfig.
	ClusterAPIVersion = "kubernetes.crossplane.io/v1alpha2"
	// NamespacedAPIVersion is the namespaced Object, for namespaced
	// composites; its providerConfigRef names a ProviderConfig of its own
	// namespace or a ClusterProviderConfig.
	NamespacedAPIVersion = "kubernetes.m.crossplane.io/v1alpha1"
	// Kind is the Object's kind in both groups.
	Kind = "Object"
	// KindClusterProviderConfig is the namespaced Object's reference to a
	// cluster-wide configuration, which only the platform can write.
	KindClusterProviderConfig = "ClusterProviderConfig"
)

// ReadinessDeriveFromObject makes the Object ready exactly when the
// object it manages has a Ready condition of status True.
const ReadinessDeriveFromObject = "DeriveFromObject"

// Object is provider-kubernetes' Object: a manifest the provider applies
// on the cluster its ProviderConfig reaches, and the object it observes
// there.
// +kubebuilder:object:root=true
type Object struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              ObjectSpec `json:"spec"`
	// Status is a pointer so that a desired Object has none.
	Status *ObjectStatus `json:"status,omitempty"`
}

// ObjectSpec mirrors the provider's ObjectSpec: the manifest, how to judge
// readiness, which configuration reaches the cluster, and what deleting
// the Object does there.
type ObjectSpec struct {
	ForProvider       ObjectParameters   `json:"forProvider"`
	Readiness         *Readiness         `json:"readiness,omitempty"`
	ProviderConfigRef *ProviderConfigRef `json:"providerConfigRef,omitempty"`
	DeletionPolicy    string             `json:"deletionPolicy,omitempty"`
}

// ObjectParameters mirrors the provider's ObjectParameters
// (spec.forProvider): the object to apply.
type ObjectParameters struct {
	Manifest runtime.RawExtension `json:"manifest"`
}

// Readiness mirrors the provider's Readiness (spec.readiness).
type Readiness struct {
	Policy string `json:"policy,omitempty"`
}

// ProviderConfigRef mirrors crossplane-runtime's ProviderConfigReference:
// a name and, for the namespaced Object, a kind.
type ProviderConfigRef struct {
	Kind string `json:"kind,omitempty"`
	Name string `json:"name"`
}

// ObjectStatus mirrors the provider's ObjectStatus: Crossplane's managed
// resource conditions (Synced says whether the provider could reach the
// cluster and apply; Ready follows spec.readiness) and the object as last
// observed on the cluster.
type ObjectStatus struct {
	Conditions []Condition       `json:"conditions,omitempty"`
	AtProvider ObjectObservation `json:"atProvider,omitempty"`
}

// ObjectObservation mirrors the provider's ObjectObservation
// (status.atProvider).
type ObjectObservation struct {
	Manifest runtime.RawExtension `json:"manifest,omitempty"`
}

// Condition is a crossplane-runtime condition: the fields the function
// reads.
type Condition struct {
	Type    string `json:"type"`
	Status  string `json:"status"`
	Reason  string `json:"reason,omitempty"`
	Message string `json:"message,omitempty"`
}

// Condition is the Object's condition of type t, nil when it has none.
func (o *Object) Condition(t string) *Condition {
	if o.Status == nil {
		return nil
	}
	for i := range o.Status.Conditions {
		if o.Status.Conditions[i].Type == t {
			return &o.Status.Conditions[i]
		}
	}
	return nil
}
