package v1beta1

// OptionsPreset translates a claim's typed server options
// (spec.serve.options) into the runtime's own flags or environment
// variables. An option without an entry here is refused when a claim sets
// it, naming the framework. Each entry replaces the built-in one as a
// whole; an empty entry ({}) takes a built-in option away.
//
// A flag is passed as two arguments, the flag and its value ("--ctx-size",
// "4096"), after the preset's (or spec.serve.args') arguments: every
// runtime's parser reads that spelling, llama-server's included, which
// does not read --flag=value. The options come in the order of the fields
// here.
type OptionsPreset struct {
	// ContextLength translates spec.serve.options.contextLength, the most
	// tokens of one sequence.
	// +optional
	ContextLength *ContextFlag `json:"contextLength,omitempty"`

	// DType translates spec.serve.options.dtype.
	// +optional
	DType *ChoiceFlag `json:"dtype,omitempty"`

	// Quantization translates spec.serve.options.quantization.
	// +optional
	Quantization *ChoiceFlag `json:"quantization,omitempty"`

	// MaxParallel translates spec.serve.options.maxParallel, the
	// sequences one server works on at once.
	// +optional
	MaxParallel *OptionFlag `json:"maxParallel,omitempty"`

	// GPUMemoryPercent translates spec.serve.options.gpuMemoryPercent. The
	// value is passed as a fraction of 1 with two decimals (90 is "0.90"),
	// as vLLM and TGI take it.
	// +optional
	GPUMemoryPercent *OptionFlag `json:"gpuMemoryPercent,omitempty"`

	// ChatTemplate translates spec.serve.options.chatTemplate, the name of
	// a built-in chat template.
	// +optional
	ChatTemplate *OptionFlag `json:"chatTemplate,omitempty"`
}

// OptionFlag is where a runtime takes one option: a flag or an
// environment variable, one of them.
type OptionFlag struct {
	// Flag is the server flag that takes the option's value, e.g.
	// --max-model-len.
	// +optional
	// +kubebuilder:validation:Pattern=`^--?[A-Za-z0-9][-A-Za-z0-9_.]*$`
	// +kubebuilder:validation:MaxLength=128
	Flag string `json:"flag,omitempty"`

	// Env is the environment variable that takes the option's value, e.g.
	// OLLAMA_CONTEXT_LENGTH.
	// +optional
	// +kubebuilder:validation:MaxLength=128
	Env string `json:"env,omitempty"`

	// Aliases are other spellings of Flag the runtime reads (llama-server's
	// -c for --ctx-size). A claim passing Flag or one of them in
	// spec.serve.args as well as setting the option is refused: set it
	// once.
	// +optional
	// +kubebuilder:validation:MaxItems=8
	// +kubebuilder:validation:items:MaxLength=128
	Aliases []string `json:"aliases,omitempty"`
}

// ChoiceFlag is where a runtime takes an option of named values (dtype,
// quantization), and which of them it takes.
type ChoiceFlag struct {
	OptionFlag `json:",inline"`

	// Values maps each value of the claim's field that the runtime takes
	// to the runtime's spelling of it; an empty spelling passes nothing,
	// leaving the runtime its default (TGI's dtype auto). A value not
	// listed is refused. Left out, every value of the field is passed as
	// written.
	// +optional
	Values map[string]string `json:"values,omitempty"`
}

// ContextFlag is where a runtime takes the context length.
type ContextFlag struct {
	OptionFlag `json:",inline"`

	// PromptFlag, with Flag, also passes the most prompt tokens, one below
	// the context length, for a runtime that bounds prompts by a flag of
	// their own which must stay below it (TGI --max-input-tokens, whose
	// default follows the model rather than --max-total-tokens).
	// +optional
	// +kubebuilder:validation:Pattern=`^--?[A-Za-z0-9][-A-Za-z0-9_.]*$`
	// +kubebuilder:validation:MaxLength=128
	PromptFlag string `json:"promptFlag,omitempty"`
}

// mergeOptions lays the Input's option table over the built-in one, entry
// by entry.
func mergeOptions(o, p *OptionsPreset) *OptionsPreset {
	if o == nil {
		return p
	}
	if p == nil {
		p = &OptionsPreset{}
	}
	m := *p
	m.ContextLength = orPtr(o.ContextLength, m.ContextLength)
	m.DType = orPtr(o.DType, m.DType)
	m.Quantization = orPtr(o.Quantization, m.Quantization)
	m.MaxParallel = orPtr(o.MaxParallel, m.MaxParallel)
	m.GPUMemoryPercent = orPtr(o.GPUMemoryPercent, m.GPUMemoryPercent)
	m.ChatTemplate = orPtr(o.ChatTemplate, m.ChatTemplate)
	return &m
}

// same maps each value to itself: a runtime that takes them as the
// claim's field spells them.
func same(values ...string) map[string]string {
	m := make(map[string]string, len(values))
	for _, v := range values {
		m[v] = v
	}
	return m
}

// flag is an OptionFlag of a flag alone.
func flag(name string) *OptionFlag { return &OptionFlag{Flag: name} }

// builtinVLLMOptions are vLLM's own flags (vllm serve --help). vLLM has no
// named chat templates (--chat-template takes a file or a template's
// text), so none.
func builtinVLLMOptions() *OptionsPreset {
	return &OptionsPreset{
		ContextLength:    &ContextFlag{OptionFlag: OptionFlag{Flag: "--max-model-len"}},
		DType:            &ChoiceFlag{OptionFlag: OptionFlag{Flag: "--dtype"}, Values: same("auto", "float16", "bfloat16", "float32")},
		Quantization:     &ChoiceFlag{OptionFlag: OptionFlag{Flag: "--quantization", Aliases: []string{"-q"}}, Values: same("awq", "gptq", "fp8", "bitsandbytes", "compressed-tensors")},
		MaxParallel:      flag("--max-num-seqs"),
		GPUMemoryPercent: flag("--gpu-memory-utilization"),
	}
}

// builtinTGIOptions are text-generation-launcher's flags. Its --dtype
// takes float16 and bfloat16 only, and without it TGI picks the weights'
// own (auto); its --quantize takes every method of the claim's field. No
// chat template by name: TGI reads the model's tokenizer config.
func builtinTGIOptions() *OptionsPreset {
	return &OptionsPreset{
		ContextLength:    &ContextFlag{OptionFlag: OptionFlag{Flag: "--max-total-tokens"}, PromptFlag: "--max-input-tokens"},
		DType:            &ChoiceFlag{OptionFlag: OptionFlag{Flag: "--dtype"}, Values: map[string]string{"auto": "", "float16": "float16", "bfloat16": "bfloat16"}},
		Quantization:     &ChoiceFlag{OptionFlag: OptionFlag{Flag: "--quantize"}, Values: same("awq", "gptq", "fp8", "bitsandbytes", "compressed-tensors", "eetq", "exl2", "marlin")},
		MaxParallel:      flag("--max-concurrent-requests"),
		GPUMemoryPercent: flag("--cuda-memory-fraction"),
	}
}

// builtinLlamaCPPOptions are llama-server's flags. A GGUF file fixes its
// own types and quantization, and llama-server has no GPU memory
// fraction (it offloads layers, -ngl): none of those.
func builtinLlamaCPPOptions() *OptionsPreset {
	return &OptionsPreset{
		ContextLength: &ContextFlag{OptionFlag: OptionFlag{Flag: "--ctx-size", Aliases: []string{"-c"}}},
		MaxParallel:   &OptionFlag{Flag: "--parallel", Aliases: []string{"-np"}},
		ChatTemplate:  flag("--chat-template"),
	}
}

// builtinOllamaOptions are the Ollama server's variables; its model's
// types, quantization and template are the model's own (its Modelfile).
func builtinOllamaOptions() *OptionsPreset {
	return &OptionsPreset{
		ContextLength: &ContextFlag{OptionFlag: OptionFlag{Env: "OLLAMA_CONTEXT_LENGTH"}},
		MaxParallel:   &OptionFlag{Env: "OLLAMA_NUM_PARALLEL"},
	}
}

// builtinSGLangOptions are SGLang's server arguments. Its --chat-template
// takes a built-in template's name (or a file, which a name cannot be);
// --mem-fraction-static is the share of GPU memory for the weights and the
// KV cache.
func builtinSGLangOptions() *OptionsPreset {
	return &OptionsPreset{
		ContextLength:    &ContextFlag{OptionFlag: OptionFlag{Flag: "--context-length"}},
		DType:            &ChoiceFlag{OptionFlag: OptionFlag{Flag: "--dtype"}, Values: same("auto", "float16", "bfloat16", "float32")},
		Quantization:     &ChoiceFlag{OptionFlag: OptionFlag{Flag: "--quantization"}, Values: same("awq", "gptq", "fp8", "bitsandbytes", "compressed-tensors", "marlin")},
		MaxParallel:      flag("--max-running-requests"),
		GPUMemoryPercent: flag("--mem-fraction-static"),
		ChatTemplate:     flag("--chat-template"),
	}
}
