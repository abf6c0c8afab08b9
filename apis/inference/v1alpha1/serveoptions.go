package v1alpha1

// ServeOptions are the model server settings app teams change most, as
// typed values rather than flags: the function translates each into its
// runtime's own flag or environment variable, by the runtime preset's
// option table (input.runtimes.<framework>.options). They are the
// function's output, built from these values, so they are kept under a
// policy that denies free arguments (input.policy.deniedServeArgs: ["*"]).
// An option the runtime has no translation for, a value it does not take,
// or an option also passed as a flag or variable in spec.serve.args or
// spec.serve.env, is refused by name. Tensor and pipeline parallelism are
// spec.parallelism, not options.
type ServeOptions struct {
	// ContextLength is the most tokens of one sequence, prompt and answer
	// together (vLLM --max-model-len; TGI --max-total-tokens, with
	// --max-input-tokens one below it; llama-server --ctx-size, the
	// context of all its slots; Ollama OLLAMA_CONTEXT_LENGTH).
	// +optional
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=2097152
	ContextLength *int32 `json:"contextLength,omitempty"`

	// DType is the type of the weights and activations the server
	// computes in (vLLM and TGI --dtype; TGI takes float16 and bfloat16,
	// and auto leaves it its default). auto takes the weights' own.
	// +optional
	DType DType `json:"dtype,omitempty"`

	// Quantization is the quantization method of the weights (vLLM
	// --quantization, TGI --quantize). Each runtime takes its own subset:
	// vLLM awq, gptq, fp8, bitsandbytes, compressed-tensors; TGI every
	// value.
	// +optional
	Quantization Quantization `json:"quantization,omitempty"`

	// MaxParallel is how many sequences one server works on at once
	// (vLLM --max-num-seqs, TGI --max-concurrent-requests, llama-server
	// --parallel slots, Ollama OLLAMA_NUM_PARALLEL).
	// +optional
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=1024
	MaxParallel *int32 `json:"maxParallel,omitempty"`

	// GPUMemoryPercent is the share of each GPU's memory the server may
	// take, in percent (vLLM --gpu-memory-utilization and TGI
	// --cuda-memory-fraction, which take it as a fraction: 90 is 0.90).
	// +optional
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=100
	GPUMemoryPercent *int32 `json:"gpuMemoryPercent,omitempty"`

	// ChatTemplate names one of the runtime's built-in chat templates
	// (llama-server --chat-template, e.g. chatml, llama3). A name only:
	// never a path nor a template's text.
	// +optional
	// +kubebuilder:validation:MaxLength=64
	// +kubebuilder:validation:Pattern=`^[a-z0-9][a-z0-9._-]*$`
	ChatTemplate string `json:"chatTemplate,omitempty"`
}

// DType is a server's compute type (spec.serve.options.dtype).
// +kubebuilder:validation:Enum=auto;float16;bfloat16;float32
type DType string

// The compute types a claim may ask for.
const (
	// DTypeAuto takes the weights' own type.
	DTypeAuto DType = "auto"
	// DTypeFloat16 is IEEE half precision.
	DTypeFloat16 DType = "float16"
	// DTypeBFloat16 is bfloat16.
	DTypeBFloat16 DType = "bfloat16"
	// DTypeFloat32 is single precision.
	DTypeFloat32 DType = "float32"
)

// DTypes lists every DType, in a stable order.
var DTypes = []DType{DTypeAuto, DTypeFloat16, DTypeBFloat16, DTypeFloat32}

// Quantization is a weights' quantization method
// (spec.serve.options.quantization), spelled as vLLM and TGI spell it.
// +kubebuilder:validation:Enum=awq;gptq;fp8;bitsandbytes;compressed-tensors;eetq;exl2;marlin
type Quantization string

// The quantization methods a claim may ask for.
const (
	// QuantizationAWQ is AWQ, of pre-quantized weights.
	QuantizationAWQ Quantization = "awq"
	// QuantizationGPTQ is GPTQ, of pre-quantized weights.
	QuantizationGPTQ Quantization = "gptq"
	// QuantizationFP8 is FP8, of FP8 weights or quantized on loading.
	QuantizationFP8 Quantization = "fp8"
	// QuantizationBitsAndBytes is bitsandbytes, quantized on loading.
	QuantizationBitsAndBytes Quantization = "bitsandbytes"
	// QuantizationCompressedTensors is llm-compressor's
	// compressed-tensors format.
	QuantizationCompressedTensors Quantization = "compressed-tensors"
	// QuantizationEETQ is EETQ, quantized on loading (TGI).
	QuantizationEETQ Quantization = "eetq"
	// QuantizationEXL2 is ExLlamaV2's format (TGI).
	QuantizationEXL2 Quantization = "exl2"
	// QuantizationMarlin is Marlin, of pre-quantized weights (TGI).
	QuantizationMarlin Quantization = "marlin"
)

// Quantizations lists every Quantization, in a stable order.
var Quantizations = []Quantization{
	QuantizationAWQ, QuantizationGPTQ, QuantizationFP8, QuantizationBitsAndBytes,
	QuantizationCompressedTensors, QuantizationEETQ, QuantizationEXL2, QuantizationMarlin,
}
