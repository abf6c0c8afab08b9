package v1beta1

// AdapterPreset says how a runtime serves LoRA adapters (spec.adapters). A
// runtime without one refuses spec.adapters.
//
// With adapters, the server's arguments are the runtime's Args, then Args
// here, then the adapters: ModulesFlag once followed by one <name>=<path>
// per adapter, or (ModulesFlagEach) ModulesFlag before each of them. The
// adapters are sorted by name, so reordering spec.adapters changes nothing.
// $(MAX_LORAS) and $(MAX_LORA_RANK) expand to the claim's spec.lora or the
// defaults here.
type AdapterPreset struct {
	// Args are added when the claim lists adapters, e.g. vLLM's
	// --enable-lora and --max-loras=$(MAX_LORAS).
	// +optional
	Args []string `json:"args,omitempty"`

	// ModulesFlag introduces the adapters, e.g. vLLM's --lora-modules.
	// +optional
	ModulesFlag string `json:"modulesFlag,omitempty"`

	// ModulesFlagEach repeats ModulesFlag before every adapter (for
	// command lines that take one value per flag); otherwise it comes once,
	// followed by every adapter (vLLM).
	// +optional
	ModulesFlagEach *bool `json:"modulesFlagEach,omitempty"`

	// PathOnly gives each adapter as its path alone, for a runtime that
	// numbers its adapters by their order on the command line instead of
	// naming them (llama.cpp's --lora); otherwise each is <name>=<path>.
	// +optional
	PathOnly *bool `json:"pathOnly,omitempty"`

	// MaxLoras is the default of spec.lora.maxLoras.
	// +optional
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=64
	MaxLoras *int32 `json:"maxLoras,omitempty"`

	// MaxLoraRank is the default of spec.lora.maxLoraRank.
	// +optional
	MaxLoraRank *int32 `json:"maxLoraRank,omitempty"`
}

// Environment of a server with adapters: the values behind $(MAX_LORAS)
// and $(MAX_LORA_RANK).
const (
	EnvMaxLoras    = "MAX_LORAS"
	EnvMaxLoraRank = "MAX_LORA_RANK"
)

// Built-in adapter defaults: vLLM's own rank default, and four adapters per
// batch rather than vLLM's one, so that a few adapters in use at once do
// not take turns.
const (
	DefaultMaxLoras    = int32(4)
	DefaultMaxLoraRank = int32(16)
)

// mergeAdapters lays the Input's adapter preset over the built-in one.
func mergeAdapters(o, p *AdapterPreset) *AdapterPreset {
	if o == nil {
		return p
	}
	if p == nil {
		p = &AdapterPreset{}
	}
	m := *p
	m.Args = orSlice(o.Args, m.Args)
	m.ModulesFlag = orString(o.ModulesFlag, m.ModulesFlag)
	m.ModulesFlagEach = orPtr(o.ModulesFlagEach, m.ModulesFlagEach)
	m.PathOnly = orPtr(o.PathOnly, m.PathOnly)
	m.MaxLoras = orPtr(o.MaxLoras, m.MaxLoras)
	m.MaxLoraRank = orPtr(o.MaxLoraRank, m.MaxLoraRank)
	return &m
}
