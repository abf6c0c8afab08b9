package v1beta1

// ServerFlags says how a model server reads its options besides its
// command line, and which of its flags a claim may not pass. The function
// judges what the server will receive: spec.serve.args after the kubelet's
// $(VAR) expansion, and spec.serve.env by the names the server reads, so a
// flag refused on the command line is refused in every other spelling the
// server takes it in.
type ServerFlags struct {
	// Variables are the environment variables the server reads its options
	// from, each a name or a prefix ending in '*' (llama-server reads
	// LLAMA_ARG_*, TGI's launcher every flag from a variable of the flag's
	// name). Under a policy that sets no input.policy.allowedServeEnv,
	// spec.serve.env may set none of them.
	// +optional
	// +kubebuilder:validation:MaxItems=256
	// +kubebuilder:validation:items:MaxLength=128
	Variables []string `json:"variables,omitempty"`

	// FlagVariablePrefix, when set, says the server reads each long flag
	// --some-flag also from the variable <prefix>SOME_FLAG (TGI's launcher:
	// "", so --trust-remote-code is TRUST_REMOTE_CODE too). A flag that
	// input.policy.deniedServeArgs denies is then refused in that spelling
	// in spec.serve.env as well. "-" (the default) means the server has no
	// such rule; rules list their variables instead.
	// +optional
	// +kubebuilder:validation:MaxLength=64
	FlagVariablePrefix *string `json:"flagVariablePrefix,omitempty"`

	// Exact are flags of the server that begin a longer flag a rule
	// refuses (vLLM's --model begins --model-loader-extra-config): the
	// server takes them as written, never as an abbreviation, so a claim
	// may pass them. Every other prefix of a refused long flag is refused
	// as argparse and getopt_long would expand it.
	// +optional
	// +kubebuilder:validation:MaxItems=64
	// +kubebuilder:validation:items:MaxLength=128
	Exact []string `json:"exact,omitempty"`

	// Rules are flags of the server with what a claim may do with them.
	// +optional
	// +kubebuilder:validation:MaxItems=256
	Rules []FlagRule `json:"rules,omitempty"`
}

// FlagClass is why a claim may not pass a flag.
// +kubebuilder:validation:Enum=Preset;Fetch;Unsafe;Denied
type FlagClass string

// The classes of a FlagRule.
const (
	// FlagPreset: the preset's command sets the option (the model, the
	// address, offline mode); a claim's would be ignored or would undo it.
	// Refused with or without a policy.
	FlagPreset FlagClass = "Preset"
	// FlagFetch: the option makes the server download weights or connect
	// out by itself, around the pull and input.policy.allowedURIHosts.
	// Refused with or without a policy: servers are offline by
	// construction.
	FlagFetch FlagClass = "Fetch"
	// FlagUnsafe: the option makes the server read its options or code
	// from a file (which may come with the tenant's weights), run tools or
	// commands, or write where it should not. Refused under a policy.
	FlagUnsafe FlagClass = "Unsafe"
	// FlagDenied: no class of its own; the rule lists the other
	// spellings (variables) of a flag, refused where
	// input.policy.deniedServeArgs denies the flag.
	FlagDenied FlagClass = "Denied"
)

// FlagRule is one option of a server, in every spelling the server reads it.
type FlagRule struct {
	// Flags are the option's spellings on the command line, e.g. "-hf",
	// "-hfr", "--hf-repo". Each is refused as written, as --flag=value,
	// with '_' for '-', and abbreviated as argparse expands a long flag.
	// Empty for an option the server reads from a variable only.
	// +optional
	// +kubebuilder:validation:MaxItems=16
	// +kubebuilder:validation:items:Pattern=`^--?[A-Za-z0-9][-_.A-Za-z0-9]*$`
	Flags []string `json:"flags,omitempty"`

	// Env are the environment variables the server reads the same option
	// from, refused in spec.serve.env wherever the flag is refused.
	// +optional
	// +kubebuilder:validation:MaxItems=16
	// +kubebuilder:validation:items:MaxLength=128
	Env []string `json:"env,omitempty"`

	// Class says when the flag is refused.
	Class FlagClass `json:"class"`

	// Why is the reason given in the refusal, e.g. "downloads a model
	// from Hugging Face".
	// +optional
	// +kubebuilder:validation:MaxLength=256
	Why string `json:"why,omitempty"`
}

// DefaultDeniedServeEnv is what spec.serve.env may not set under a policy
// that lists no input.policy.allowedServeEnv, beside the runtime's flag
// variables: names and prefixes ('*') of variables that make a process
// load or run code of the caller's choice, or look for its code, commands
// or configuration elsewhere than the image put them. An allowed server
// image is a promise about the code that runs; these would break it
// without a flag.
var DefaultDeniedServeEnv = []string{
	// The dynamic loader: preload or audit libraries, search paths.
	"LD_*", "GCONV_PATH", "GLIBC_TUNABLES", "LOCPATH", "NLSPATH", "HOSTALIASES", "RESOLV_*", "RES_OPTIONS", "LOCALDOMAIN",
	// Shells (the presets' start scripts are sh -c): commands found
	// through PATH, startup files, traced prompts.
	"PATH", "ENV", "BASH_ENV", "BASHOPTS", "SHELLOPTS", "PS4", "IFS", "CDPATH", "PROMPT_COMMAND",
	// Where a process looks for its per-user code and configuration
	// (Python's user site-packages under $HOME/.local, ~/.config): the
	// function points them at scratch space.
	"HOME", "XDG_*", "PYTHONUSERBASE",
	// Interpreters' hooks and search paths (the Python servers: vLLM,
	// TGI's shards, Triton's Python backend).
	"PYTHON*", "PERL*", "RUBY*", "NODE_OPTIONS", "NODE_PATH", "JAVA_TOOL_OPTIONS", "_JAVA_OPTIONS", "JDK_JAVA_OPTIONS",
	// Code the ML stacks compile or load from a directory they are told.
	"TORCH_*", "TORCHINDUCTOR_*", "TRITON_*", "CUDA_CACHE_PATH", "HF_MODULES_CACHE", "TRANSFORMERS_*",
	// A way out: servers never reach out (the egress policy is the other
	// half).
	"HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "NO_PROXY", "http_proxy", "https_proxy", "all_proxy", "no_proxy",
	"SSL_CERT_FILE", "SSL_CERT_DIR", "REQUESTS_CA_BUNDLE", "CURL_CA_BUNDLE",
}

// NameMatches reports whether the variable name matches one of patterns:
// a name, or a prefix ending in '*'. Names are compared as the kernel
// keeps them: case matters.
func NameMatches(name string, patterns []string) (string, bool) {
	for _, p := range patterns {
		if n := len(p); n > 0 && p[n-1] == '*' {
			if len(name) >= n-1 && name[:n-1] == p[:n-1] {
				return p, true
			}
		} else if name == p {
			return p, true
		}
	}
	return "", false
}

// Why each built-in rule refuses its flag.
const (
	whyModel      = "names the model, which the preset's start script picks from the pulled weights"
	whyListen     = "moves the address the preset listens on, which the probes, the Service and the NetworkPolicy name"
	whyOffline    = "is the preset's: llama-server runs with --offline"
	whyHub        = "downloads a model from a hub or a URL by itself, around the pull and input.policy.allowedURIHosts"
	whyRPC        = "sends the model to remote RPC servers"
	whyTools      = "runs tools (shell commands, file edits) or MCP servers for whoever reaches the server"
	whyRouter     = "serves other models from a directory or a preset file, in router mode"
	whyFileRead   = "makes the server read files of the container (or of the tenant's weights) for its requests or options"
	whyFileWrite  = "makes the server write files"
	whyConfig     = "reads every flag from a file, which may come with the tenant's weights: a denied flag would pass"
	whyPlugin     = "imports Python code by name or from a file, which may come with the tenant's weights"
	whyLoader     = "loads the weights through a loader that can read remote objects (tensorizer, Run:ai's streamer)"
	whyTunnel     = "opens a connection out of the cluster (a tunnel, a trace endpoint)"
	whyTGIAdapter = "loads adapters from the hub at start, around the adapters' pull and policy"
	whyBackend    = "loads shared libraries (backends, repository agents) from a directory of the caller's choice"
	whyRemoteCode = "runs Python code from the model's repository in the server"
	whyClientCode = "lets every client send Python code (a serialized logit processor) that the server runs"
)

// builtinLlamaCppFlags is llama-server's table: its flags and variables
// (common/arg.cpp of llama.cpp as node-llama-cpp 3.21.1 ships it; every
// flag there has a LLAMA_ARG_* variable, which the command line overrides).
func builtinLlamaCppFlags() *ServerFlags {
	return &ServerFlags{
		Variables: []string{"LLAMA_ARG_*", "LLAMA_CACHE", "HF_HUB_CACHE", "HUGGINGFACE_HUB_CACHE", "AIP_*"},
		Rules: []FlagRule{
			{Flags: []string{"-m", "--model"}, Env: []string{"LLAMA_ARG_MODEL"}, Class: FlagPreset, Why: whyModel},
			{Flags: []string{"--host"}, Env: []string{"LLAMA_ARG_HOST"}, Class: FlagPreset, Why: whyListen},
			{Flags: []string{"--port"}, Env: []string{"LLAMA_ARG_PORT", "AIP_MODE", "AIP_HTTP_PORT"}, Class: FlagPreset, Why: whyListen},
			{Flags: []string{"--offline"}, Env: []string{"LLAMA_ARG_OFFLINE"}, Class: FlagPreset, Why: whyOffline},
			{Flags: []string{"-mu", "--model-url"}, Env: []string{"LLAMA_ARG_MODEL_URL"}, Class: FlagFetch, Why: whyHub},
			{Flags: []string{"-dr", "--docker-repo"}, Env: []string{"LLAMA_ARG_DOCKER_REPO"}, Class: FlagFetch, Why: whyHub},
			{Flags: []string{"-hf", "-hfr", "--hf-repo"}, Env: []string{"LLAMA_ARG_HF_REPO"}, Class: FlagFetch, Why: whyHub},
			{Flags: []string{"-hff", "--hf-file"}, Env: []string{"LLAMA_ARG_HF_FILE"}, Class: FlagFetch, Why: whyHub},
			{Flags: []string{"-hft", "--hf-token"}, Env: []string{"HF_TOKEN"}, Class: FlagFetch, Why: whyHub},
			{Flags: []string{"--spec-draft-hf", "-hfd", "-hfrd", "--hf-repo-draft"}, Env: []string{"LLAMA_ARG_SPEC_DRAFT_HF_REPO", "LLAMA_ARG_HFD_REPO"}, Class: FlagFetch, Why: whyHub},
			{Flags: []string{"-hfv", "-hfrv", "--hf-repo-v"}, Env: []string{"LLAMA_ARG_HF_REPO_V"}, Class: FlagFetch, Why: whyHub},
			{Flags: []string{"-hffv", "--hf-file-v"}, Env: []string{"LLAMA_ARG_HF_FILE_V"}, Class: FlagFetch, Why: whyHub},
			{Flags: []string{"-mmu", "--mmproj-url"}, Env: []string{"LLAMA_ARG_MMPROJ_URL"}, Class: FlagFetch, Why: whyHub},
			{Flags: []string{"--rpc"}, Env: []string{"LLAMA_ARG_RPC"}, Class: FlagFetch, Why: whyRPC},
			{Flags: []string{"--tools"}, Env: []string{"LLAMA_ARG_TOOLS"}, Class: FlagUnsafe, Why: whyTools},
			{Flags: []string{"--tools-runtime"}, Env: []string{"LLAMA_ARG_TOOLS_RUNTIME"}, Class: FlagUnsafe, Why: whyTools},
			{Flags: []string{"--mcp-servers-config"}, Env: []string{"LLAMA_ARG_MCP_SERVERS_CONFIG"}, Class: FlagUnsafe, Why: whyTools},
			{Flags: []string{"--mcp-servers-json"}, Env: []string{"LLAMA_ARG_MCP_SERVERS_JSON"}, Class: FlagUnsafe, Why: whyTools},
			{Flags: []string{"--ui-mcp-proxy", "--webui-mcp-proxy"}, Env: []string{"LLAMA_ARG_UI_MCP_PROXY"}, Class: FlagUnsafe, Why: whyTools},
			{Flags: []string{"-ag", "--agent"}, Class: FlagUnsafe, Why: whyTools},
			{Flags: []string{"--models-dir"}, Env: []string{"LLAMA_ARG_MODELS_DIR"}, Class: FlagUnsafe, Why: whyRouter},
			{Flags: []string{"--models-preset"}, Env: []string{"LLAMA_ARG_MODELS_PRESET"}, Class: FlagUnsafe, Why: whyRouter},
			{Flags: []string{"--path"}, Env: []string{"LLAMA_ARG_STATIC_PATH"}, Class: FlagUnsafe, Why: whyFileRead},
			{Flags: []string{"--media-path"}, Env: []string{"LLAMA_ARG_MEDIA_PATH"}, Class: FlagUnsafe, Why: whyFileRead},
			{Flags: []string{"--slot-save-path"}, Env: []string{"LLAMA_ARG_SLOT_SAVE_PATH"}, Class: FlagUnsafe, Why: whyFileWrite},
			{Flags: []string{"--log-file"}, Env: []string{"LLAMA_LOG_FILE"}, Class: FlagUnsafe, Why: whyFileWrite},
			{Flags: []string{"--log-prompts-dir"}, Class: FlagUnsafe, Why: whyFileWrite},
		},
	}
}

// builtinVLLMFlags is vLLM's: its options come from its command line and
// from a YAML file (--config), and its plugins from Python imports; its
// VLLM_* variables are settings of their own (some load plugins).
func builtinVLLMFlags() *ServerFlags {
	return &ServerFlags{
		Variables: []string{"VLLM_*"},
		Exact:     []string{"--model", "--config-format"},
		Rules: []FlagRule{
			{Flags: []string{"--config"}, Class: FlagUnsafe, Why: whyConfig},
			{Flags: []string{"--tool-parser-plugin"}, Class: FlagUnsafe, Why: whyPlugin},
			{Flags: []string{"--worker-cls"}, Class: FlagUnsafe, Why: whyPlugin},
			{Flags: []string{"--worker-extension-cls"}, Class: FlagUnsafe, Why: whyPlugin},
			{Flags: []string{"--logits-processors"}, Class: FlagUnsafe, Why: whyPlugin},
			{Flags: []string{"--middleware"}, Class: FlagUnsafe, Why: whyPlugin},
			{Flags: []string{"--allowed-local-media-path"}, Class: FlagUnsafe, Why: whyFileRead},
			{Flags: []string{"--load-format"}, Class: FlagUnsafe, Why: whyLoader},
			{Flags: []string{"--model-loader-extra-config"}, Class: FlagUnsafe, Why: whyLoader},
		},
	}
}

// builtinSGLangFlags is SGLang's table (its server arguments page): its
// own SGLANG_* variables tune the server beside its flags, and it reads
// every flag from a YAML file with --config.
func builtinSGLangFlags() *ServerFlags {
	return &ServerFlags{
		Variables: []string{"SGLANG_*", "SGL_*"},
		Rules: []FlagRule{
			{Flags: []string{"--config"}, Class: FlagUnsafe, Why: whyConfig},
			{Flags: []string{"--load-format"}, Class: FlagUnsafe, Why: whyLoader},
			{Flags: []string{"--model-loader-extra-config"}, Class: FlagUnsafe, Why: whyLoader},
			{Flags: []string{"--enable-custom-logit-processor"}, Class: FlagUnsafe, Why: whyClientCode},
		},
	}
}

// builtinTGIFlags is text-generation-inference's: its launcher reads every
// flag from a variable of the flag's name (clap's env), so a claim's
// TRUST_REMOTE_CODE=true is --trust-remote-code.
func builtinTGIFlags() *ServerFlags {
	return &ServerFlags{
		FlagVariablePrefix: ptr(""),
		Variables: []string{
			"MODEL_ID", "REVISION", "VALIDATION_WORKERS", "SHARDED", "NUM_SHARD", "QUANTIZE", "SPECULATE", "DTYPE",
			"KV_CACHE_DTYPE", "TRUST_REMOTE_CODE", "MAX_CONCURRENT_REQUESTS", "MAX_BEST_OF", "MAX_STOP_SEQUENCES",
			"MAX_TOP_N_TOKENS", "MAX_INPUT_TOKENS", "MAX_INPUT_LENGTH", "MAX_TOTAL_TOKENS", "WAITING_SERVED_RATIO",
			"MAX_BATCH_PREFILL_TOKENS", "MAX_BATCH_TOTAL_TOKENS", "MAX_WAITING_TOKENS", "MAX_BATCH_SIZE", "CUDA_GRAPHS",
			"HOSTNAME", "PROMETHEUS_PORT", "SHARD_UDS_PATH", "MASTER_ADDR", "MASTER_PORT", "HUGGINGFACE_HUB_CACHE",
			"HF_HUB_CACHE", "WEIGHTS_CACHE_OVERRIDE", "DISABLE_CUSTOM_KERNELS", "CUDA_MEMORY_FRACTION", "ROPE_SCALING",
			"ROPE_FACTOR", "JSON_OUTPUT", "OTLP_ENDPOINT", "OTLP_SERVICE_NAME", "CORS_ALLOW_ORIGIN", "API_KEY",
			"WATERMARK_GAMMA", "WATERMARK_DELTA", "NGROK", "NGROK_AUTHTOKEN", "NGROK_EDGE", "TOKENIZER_CONFIG_PATH",
			"DISABLE_GRAMMAR_SUPPORT", "ENV", "MAX_CLIENT_BATCH_SIZE", "LORA_ADAPTERS", "USAGE_STATS", "PAYLOAD_LIMIT",
			"ENABLE_PREFILL_LOGPROBS", "GRACEFUL_TERMINATION_TIMEOUT",
		},
		Rules: []FlagRule{
			{Flags: []string{"--trust-remote-code"}, Env: []string{"TRUST_REMOTE_CODE"}, Class: FlagDenied, Why: whyRemoteCode},
			{Flags: []string{"--lora-adapters"}, Env: []string{"LORA_ADAPTERS"}, Class: FlagFetch, Why: whyTGIAdapter},
			{Flags: []string{"--ngrok"}, Env: []string{"NGROK"}, Class: FlagFetch, Why: whyTunnel},
			{Flags: []string{"--ngrok-authtoken"}, Env: []string{"NGROK_AUTHTOKEN"}, Class: FlagFetch, Why: whyTunnel},
			{Flags: []string{"--ngrok-edge"}, Env: []string{"NGROK_EDGE"}, Class: FlagFetch, Why: whyTunnel},
			{Flags: []string{"--otlp-endpoint"}, Env: []string{"OTLP_ENDPOINT"}, Class: FlagUnsafe, Why: whyTunnel},
			{Flags: []string{"--tokenizer-config-path"}, Env: []string{"TOKENIZER_CONFIG_PATH"}, Class: FlagUnsafe, Why: whyFileRead},
			{Flags: []string{"--weights-cache-override"}, Env: []string{"WEIGHTS_CACHE_OVERRIDE"}, Class: FlagUnsafe, Why: whyFileRead},
		},
	}
}

// builtinTritonFlags is Triton's: command-line flags only, of which a few
// load shared libraries. (Its Python backend runs the model.py files of the
// model repository, the weights themselves: a Triton claim's weights are
// code, whatever its flags; docs/security.md.)
func builtinTritonFlags() *ServerFlags {
	return &ServerFlags{
		Rules: []FlagRule{
			{Flags: []string{"--backend-directory"}, Class: FlagUnsafe, Why: whyBackend},
			{Flags: []string{"--repoagent-directory"}, Class: FlagUnsafe, Why: whyBackend},
			{Flags: []string{"--cache-directory"}, Class: FlagUnsafe, Why: whyBackend},
		},
	}
}

// builtinOllamaFlags is Ollama's: `ollama serve` takes no flags and reads
// every setting from OLLAMA_* variables.
func builtinOllamaFlags() *ServerFlags {
	return &ServerFlags{
		Variables: []string{"OLLAMA_*"},
		Rules: []FlagRule{
			{Env: []string{"OLLAMA_HOST"}, Class: FlagPreset, Why: whyListen},
		},
	}
}

// builtinFakeFlags is the fake server's: it reads every flag from a
// variable too (MODEL_DIR and PORT, the function's, and FAKE_*), but none
// of them loads code, reads a file or reaches out (timings for tests), so
// its table is empty and tests under a policy may set FAKE_*.
func builtinFakeFlags() *ServerFlags {
	return &ServerFlags{}
}
