package v1alpha1

// AdapterSpec is one LoRA adapter the servers serve beside the base model.
// Each adapter is pulled by a Job of its own into its own directory of the
// claim's cache volume, and the runtime serves it under its name: a request
// for model <name> is answered by the base model with this adapter.
type AdapterSpec struct {
	// Name is the model name clients ask for (the "model" of an OpenAI
	// request). A DNS label: at most 63 lower-case letters, digits and
	// '-', starting and ending with a letter or digit; unique within
	// spec.adapters and not the claim's own name, which the base model
	// answers to.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	Name string `json:"name"`

	// URI locates the adapter's weights, with the schemes of spec.model.uri
	// that are pulled (hf://, s3://, gs://, http(s)://) and the same
	// policy (input.policy.allowedURISchemes, allowedURIHosts). pvc:// is
	// not offered: adapters live on the claim's cache volume.
	// +kubebuilder:validation:MinLength=1
	URI string `json:"uri"`

	// Revision pins the adapter's weights (a Hugging Face commit, branch or
	// tag, an object version). Empty takes the source's default.
	// +optional
	Revision string `json:"revision,omitempty"`

	// CredentialsSecretRef names a Secret in the claim's namespace with the
	// credentials of this adapter's source. Without it, the adapter uses
	// spec.model.credentialsSecretRef when it pulls from the same source
	// (scheme and authority) as spec.model, and none otherwise:
	// credentials go only to the source they were given for. Refused over
	// plain http:// unless the platform lists the host in
	// input.policy.plainHTTPCredentialHosts.
	// +optional
	CredentialsSecretRef *SecretKeyReference `json:"credentialsSecretRef,omitempty"`
}

// LoRASpec tunes how the runtime serves spec.adapters. Each field defaults
// to the runtime preset's (input.runtimes.<framework>.adapters).
type LoRASpec struct {
	// MaxLoras is how many adapters one batch may use at once (vLLM's
	// --max-loras); each slot reserves accelerator memory. Adapters beyond
	// it are still served, swapped in as requests need them.
	// +optional
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=64
	MaxLoras *int32 `json:"maxLoras,omitempty"`

	// MaxLoraRank is the highest rank of any adapter (vLLM's
	// --max-lora-rank): an adapter of a higher rank fails to load.
	// +optional
	// +kubebuilder:validation:Enum=1;8;16;32;64;128;256;320;512
	MaxLoraRank *int32 `json:"maxLoraRank,omitempty"`
}

// AdapterPhase is where one adapter is.
// +kubebuilder:validation:Enum=Pending;Pulling;Pulled;Serving;Failed
type AdapterPhase string

// The phases of an adapter.
const (
	// AdapterPending: its pull Job is being created.
	AdapterPending AdapterPhase = "Pending"
	// AdapterPulling: its pull Job runs.
	AdapterPulling AdapterPhase = "Pulling"
	// AdapterPulled: its weights are in the cache volume and the servers
	// are not yet all serving it (they start, or roll out to add it).
	AdapterPulled AdapterPhase = "Pulled"
	// AdapterServing: every server serves it.
	AdapterServing AdapterPhase = "Serving"
	// AdapterFailed: its pull failed; the message says why.
	AdapterFailed AdapterPhase = "Failed"
)

// AdapterStatus reports one adapter of spec.adapters.
type AdapterStatus struct {
	// Name is the adapter's name, the model name clients ask for.
	Name string `json:"name"`

	// URI is the adapter's weights.
	URI string `json:"uri"`

	// Phase is where the adapter is.
	// +optional
	Phase AdapterPhase `json:"phase,omitempty"`

	// Message explains the phase.
	// +optional
	Message string `json:"message,omitempty"`

	// ID is the number that a runtime which numbers its adapters instead
	// of naming them (llama.cpp) gives this one on the ready servers; a
	// request applies it by this number, e.g. llama.cpp's
	// "lora": [{"id": 0, "scale": 1}]. Set while the adapter is Serving on
	// such a runtime. Adapters keep their numbers as others are added;
	// removing one renumbers those after it.
	// +optional
	ID *int32 `json:"id,omitempty"`
}
