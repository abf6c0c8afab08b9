package v1beta1

// MultiNodePreset says how a runtime spreads one model server over several
// pods, one per node (InferenceService spec.nodes > 1): the servers then
// run as a LeaderWorkerSet. The one backend is Ray, as vLLM uses it: each
// worker joins the leader's Ray cluster, and once every pod of the group
// has joined, the leader runs serverCommand with the preset's args and
// --tensor-parallel-size, --pipeline-parallel-size and
// --distributed-executor-backend=ray. A runtime without it refuses
// spec.nodes above 1 and spec.parallelism.
type MultiNodePreset struct {
	// ServerCommand is the runtime's server, which the leader runs (with
	// the preset's args) once its group has joined; the image's entrypoint
	// is not used, since the leader starts Ray first. The image must have
	// /bin/sh and Ray's `ray` command.
	// +kubebuilder:validation:MinItems=1
	ServerCommand []string `json:"serverCommand"`

	// RayPort is the port of the leader's Ray head (the workers'
	// --address). Defaults to 6379.
	// +optional
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=65535
	RayPort *int32 `json:"rayPort,omitempty"`

	// MaxNodes is the most pods one server may span (spec.nodes). Defaults
	// to 16; 1 turns multi-node serving off for the runtime.
	// +optional
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=64
	MaxNodes *int32 `json:"maxNodes,omitempty"`

	// IsolatedByCluster is the platform's promise that the cluster itself
	// keeps every pod outside a group from reaching the group's pods on
	// any port but the server's: a CNI policy of the platform's own, a
	// namespace per tenant whose pods nothing else can reach, or nodes and
	// a network that only the groups use. The leader runs a Ray head,
	// which has no authentication: whoever reaches its ports (GCS,
	// dashboard, client server, raylets, workers) runs code in the group
	// and reads the model. Without it, spec.nodes above 1 is refused
	// unless networkPolicy.enabled, which gives each group a NetworkPolicy
	// that admits only the group's own pods. Defaults to false.
	// +optional
	IsolatedByCluster bool `json:"isolatedByCluster,omitempty"`
}

// Defaults of a MultiNodePreset.
const (
	DefaultRayPort  = int32(6379)
	DefaultMaxNodes = int32(16)
)

// RayHeadPort is the preset's Ray port, defaulted.
func (m *MultiNodePreset) RayHeadPort() int32 {
	if m.RayPort == nil {
		return DefaultRayPort
	}
	return *m.RayPort
}

// NodeLimit is the preset's most nodes per server, defaulted.
func (m *MultiNodePreset) NodeLimit() int32 {
	if m.MaxNodes == nil {
		return DefaultMaxNodes
	}
	return *m.MaxNodes
}

// builtinVLLMMultiNode is the vLLM preset's multi-node backend: the
// vllm/vllm-openai image's entrypoint, `vllm serve`, ships with Ray.
func builtinVLLMMultiNode() *MultiNodePreset {
	return &MultiNodePreset{ServerCommand: []string{"vllm", "serve"}}
}
