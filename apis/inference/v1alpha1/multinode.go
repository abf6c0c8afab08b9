package v1alpha1

// ParallelismSpec says how one model server splits the model over its
// GPUs, for runtimes that can (the vLLM preset). The product tensor ×
// pipeline is the server's world size: it must equal spec.nodes ×
// spec.resources.gpu, every GPU of the server's pods, or the runtime would
// leave GPUs idle or wait for GPUs that do not exist.
//
// vLLM's advice, which the defaults follow: tensor parallelism within a
// node (tensor = GPUs per pod), pipeline parallelism across nodes
// (pipeline = spec.nodes).
type ParallelismSpec struct {
	// Tensor is the tensor-parallel size (vLLM --tensor-parallel-size):
	// how many GPUs each layer is split over. Defaults to
	// spec.resources.gpu, the GPUs of one pod.
	// +optional
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=512
	Tensor *int32 `json:"tensor,omitempty"`

	// Pipeline is the pipeline-parallel size (vLLM
	// --pipeline-parallel-size): how many stages the layers are split
	// into. Defaults to spec.nodes.
	// +optional
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=64
	Pipeline *int32 `json:"pipeline,omitempty"`
}
