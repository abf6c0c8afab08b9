package v1alpha1

// PlacementSpec asks for the service to be served on workload clusters
// the platform offers (input.fleet) rather than on the cluster that runs
// Crossplane. Each placed cluster gets the whole service (spec.replicas
// servers, its own weights cache) as Inferno's own namespaced
// InferenceService, composed there by that cluster's Crossplane under its
// own policy; this cluster holds one provider-kubernetes Object per placed
// cluster and reports each one's status in status.clusters. See
// docs/fleet.md.
//
// A placement is sticky: a cluster that serves the service keeps it while
// it still matches, is offered and is not draining, however the other
// clusters change. When one stops qualifying, its replacement serves
// elsewhere before its Object is removed.
type PlacementSpec struct {
	// Clusters names the workload clusters that may serve the service,
	// from the names the platform offers (input.fleet.clusters). Leave it
	// out to consider every offered cluster that matches selector.
	// +optional
	// +listType=set
	// +kubebuilder:validation:MaxItems=32
	// +kubebuilder:validation:items:MaxLength=63
	Clusters []string `json:"clusters,omitempty"`

	// Selector keeps the clusters whose platform labels (GPU type,
	// region, …) match every one of its labels.
	// +optional
	Selector *ClusterSelector `json:"selector,omitempty"`

	// Count is how many clusters serve the service, each with all of
	// spec.replicas. Defaults to 1.
	// +optional
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=16
	Count *int32 `json:"count,omitempty"`

	// SpreadBy is a cluster label key: the clusters chosen take different
	// values of it where they can (one per region, say), before any value
	// is taken twice.
	// +optional
	// +kubebuilder:validation:MaxLength=63
	SpreadBy string `json:"spreadBy,omitempty"`
}

// ClusterSelector selects workload clusters by their platform labels.
type ClusterSelector struct {
	// MatchLabels are labels a cluster must have, each with this value.
	// +optional
	// +kubebuilder:validation:MaxProperties=16
	MatchLabels map[string]string `json:"matchLabels,omitempty"`
}

// ClusterStatus is the service as one workload cluster serves it, read
// from that cluster's InferenceService through its Object. What the
// workload cluster reports is checked and bounded before it is copied: a
// phase from the known set, a replica count within the claim's bounds, a
// URL of the Service the remote composite is named after, and reasons the
// function documents.
type ClusterStatus struct {
	// Name is the workload cluster's name in input.fleet.clusters.
	Name string `json:"name"`

	// Phase is the remote service's phase; Pending until it reports one,
	// Unreachable while the cluster cannot be reached, Draining while it
	// serves until its replacement does.
	// +optional
	Phase Phase `json:"phase,omitempty"`

	// ReadyReplicas is the number of servers ready on the cluster.
	// +optional
	ReadyReplicas int32 `json:"readyReplicas"`

	// Namespace is where the service lives on the cluster.
	// +optional
	Namespace string `json:"namespace,omitempty"`

	// URL is the service's in-cluster address on that cluster.
	// +optional
	URL string `json:"url,omitempty"`

	// Reasons are the reasons of the remote service's WeightsReady and
	// ServerReady conditions (docs/troubleshooting.md).
	// +optional
	// +kubebuilder:validation:MaxItems=4
	Reasons []string `json:"reasons,omitempty"`

	// Message says why, in words.
	// +optional
	Message string `json:"message,omitempty"`
}

// Placement phases, besides the service phases a cluster reports.
const (
	// PhaseUnreachable is a workload cluster the hub cannot reach: its
	// service is neither changed nor deleted until it can again.
	PhaseUnreachable Phase = "Unreachable"
	// PhaseDraining is a workload cluster that serves until the cluster
	// that replaces it does, then is removed.
	PhaseDraining Phase = "Draining"
)
