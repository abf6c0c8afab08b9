package v1beta1

// Fleet is the workload clusters a platform offers claims through
// spec.placement, when Crossplane runs on a hub (management) cluster and
// the GPUs are elsewhere (docs/fleet.md). Without it, a claim that asks
// for placement is refused by name.
//
// The hub reaches each cluster with Crossplane's provider-kubernetes: one
// Object per placed cluster, whose manifest is the claim as Inferno's own
// namespaced InferenceService (inference.inferno.dev), composed there by
// that cluster's Crossplane and function-inferno under its own Input.
type Fleet struct {
	// Clusters are the workload clusters claims may be placed on.
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MaxItems=64
	Clusters []WorkloadCluster `json:"clusters"`

	// Namespaces maps each claim namespace that may place to the namespace
	// its services land in on every workload cluster. A claim namespace
	// not listed cannot place; no two claim namespaces may map to the same
	// namespace, so that two teams never share a remote name.
	// +listType=map
	// +listMapKey=claimNamespace
	// +kubebuilder:validation:MaxItems=1024
	Namespaces []NamespaceMapping `json:"namespaces,omitempty"`

	// ObjectDeletionPolicy is the Objects' deletionPolicy: Delete (the
	// default) removes the remote InferenceService, and with it the
	// servers and, as its spec.storage.purgeOnDelete says, the weights,
	// when the claim or its placement on that cluster goes; Orphan leaves
	// it serving on the workload cluster.
	// +optional
	// +kubebuilder:validation:Enum=Delete;Orphan
	ObjectDeletionPolicy string `json:"objectDeletionPolicy,omitempty"`
}

// WorkloadCluster is one cluster the platform offers.
type WorkloadCluster struct {
	// Name is the cluster's name, as claims ask for it
	// (spec.placement.clusters) and status.clusters reports it.
	// +kubebuilder:validation:MaxLength=40
	// +kubebuilder:validation:Pattern=`^[a-z]([-a-z0-9]*[a-z0-9])?$`
	Name string `json:"name"`

	// ProviderConfigName is provider-kubernetes' configuration that
	// reaches the cluster: a cluster-scoped ProviderConfig
	// (kubernetes.crossplane.io) for claims and cluster-scoped
	// composites, a ClusterProviderConfig (kubernetes.m.crossplane.io)
	// for namespaced composites. Never one of a tenant's namespace.
	// +kubebuilder:validation:MaxLength=253
	ProviderConfigName string `json:"providerConfigName"`

	// Labels describe the cluster (GPU type, region, cloud, …) for
	// spec.placement.selector and spec.placement.spreadBy.
	// +optional
	// +kubebuilder:validation:MaxProperties=32
	Labels map[string]string `json:"labels,omitempty"`

	// Capacity is what the cluster can still take. A claim that needs more
	// is not placed there (and status says why); a claim the cluster
	// already serves stays, since its share is already counted.
	// +optional
	Capacity *ClusterCapacity `json:"capacity,omitempty"`

	// Draining stops new placements on the cluster and moves the claims it
	// serves: each one's replacement serves elsewhere before the Object on
	// this cluster is removed. A claim with nowhere else to go keeps
	// serving here.
	// +optional
	Draining bool `json:"draining,omitempty"`
}

// ClusterCapacity is what a workload cluster can still take.
type ClusterCapacity struct {
	// GPUs is the number of GPUs free for new services: a claim needing
	// more (its GPUs per server × nodes × most servers) is not placed. Left
	// out, GPUs do not limit placement.
	// +optional
	// +kubebuilder:validation:Minimum=0
	GPUs *int32 `json:"gpus,omitempty"`
}

// NamespaceMapping maps a claim namespace on the hub to a namespace on the
// workload clusters.
type NamespaceMapping struct {
	// ClaimNamespace is the claim's (or namespaced composite's) namespace
	// on the hub.
	// +kubebuilder:validation:MaxLength=63
	ClaimNamespace string `json:"claimNamespace"`
	// Namespace is where its services land on every workload cluster.
	// +kubebuilder:validation:MaxLength=63
	Namespace string `json:"namespace"`
}
