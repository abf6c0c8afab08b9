package v1beta1

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// Built-in defaults that an empty Input stands for.
const (
	DefaultGPUResourceName  = "nvidia.com/gpu"
	DefaultAccessMode       = "ReadWriteOnce"
	DefaultPullBackoffLimit = int32(3)
	// DefaultPullDeadlineSeconds bounds a pull Job, every retry included:
	// six hours, enough for about a terabyte at 50 MB/s. A pull that stops
	// making progress is stopped long before by the stall check.
	DefaultPullDeadlineSeconds = int64(6 * 60 * 60)
	// DefaultPullStallSeconds is how long a download may make (almost) no
	// progress before the built-in pullers give up on it.
	DefaultPullStallSeconds = int32(300)
	// DefaultMaxSurge and DefaultMaxUnavailable are the servers' rolling
	// update: one extra server at a time, never one fewer ready.
	DefaultMaxSurge       = int32(1)
	DefaultMaxUnavailable = int32(0)
)

// DefaultDeniedServeArgs is input.policy.deniedServeArgs when a policy
// leaves it out: remote code from the model's repository would run in the
// servers.
var DefaultDeniedServeArgs = []string{"--trust-remote-code"}

// MarkerFile is written into TARGET_DIR by a puller once the download is
// complete, so that a rerun of the Job is a no-op.
const MarkerFile = ".inferno-complete"

// PullStalledExitCode is the exit code by which a puller says its download
// stalled: it made less than 1 KiB/s of progress (curl) or did not grow
// TARGET_DIR (the others) for PULL_STALL_SECONDS, after its own retries.
// The pull Job fails at once on it (a pod failure policy), and the
// service reports PullStalled rather than PullFailed. Pullers of a
// platform's own should keep to it.
const PullStalledExitCode = int32(75)

// EnvPullStallSeconds is the variable that gives a puller the stall
// period, in seconds (input.pullStallSeconds).
const EnvPullStallSeconds = "PULL_STALL_SECONDS"

// BuiltinRuntimes returns the runtime preset of every framework. Images are
// pinned by tag; platform teams pin by digest through the Input.
func BuiltinRuntimes() map[string]RuntimePreset {
	return map[string]RuntimePreset{
		"vllm": {
			Image:             "vllm/vllm-openai:v0.11.0",
			Args:              []string{"--model=$(MODEL_DIR)", "--served-model-name=$(MODEL_NAME)", "--port=$(PORT)"},
			Port:              ptr(int32(8000)),
			HealthPath:        "/health",
			StartupSeconds:    ptr(int32(1800)),
			SharedMemory:      ptr(true),
			ConcurrencyMetric: "vllm_num_requests_running",
			MetricsPath:       "/metrics",
			Adapters: &AdapterPreset{
				Args:        []string{"--enable-lora", "--max-loras=$(MAX_LORAS)", "--max-lora-rank=$(MAX_LORA_RANK)"},
				ModulesFlag: "--lora-modules",
				MaxLoras:    ptr(DefaultMaxLoras),
				MaxLoraRank: ptr(DefaultMaxLoraRank),
			},
			MultiNode: builtinVLLMMultiNode(),
			Flags:     builtinVLLMFlags(),
			Options:   builtinVLLMOptions(),
		},
		// SGLang's server, from SGLang's own documentation (server
		// arguments, LoRA serving, production metrics); it has never met
		// its real server here. --enable-metrics serves its Prometheus
		// series on the serving port.
		"sglang": {
			Image:             "lmsysorg/sglang:v0.5.9",
			Command:           []string{"python3", "-m", "sglang.launch_server"},
			Args:              []string{"--model-path=$(MODEL_DIR)", "--served-model-name=$(MODEL_NAME)", "--host=0.0.0.0", "--port=$(PORT)", "--enable-metrics"},
			Port:              ptr(int32(30000)),
			HealthPath:        "/health",
			StartupSeconds:    ptr(int32(1800)),
			SharedMemory:      ptr(true),
			ConcurrencyMetric: "sglang:num_running_reqs",
			MetricsPath:       "/metrics",
			Adapters: &AdapterPreset{
				Args:        []string{"--enable-lora", "--max-loras-per-batch=$(MAX_LORAS)", "--max-lora-rank=$(MAX_LORA_RANK)"},
				ModulesFlag: "--lora-paths",
				MaxLoras:    ptr(DefaultMaxLoras),
				MaxLoraRank: ptr(DefaultMaxLoraRank),
			},
			Flags:   builtinSGLangFlags(),
			Options: builtinSGLangOptions(),
		},
		"triton": {
			Image:             "nvcr.io/nvidia/tritonserver:25.01-py3",
			Command:           []string{"tritonserver"},
			Args:              []string{"--model-repository=$(MODEL_DIR)", "--http-port=$(PORT)", "--allow-grpc=false"},
			Port:              ptr(int32(8000)),
			HealthPath:        "/v2/health/ready",
			StartupSeconds:    ptr(int32(1200)),
			SharedMemory:      ptr(true),
			ConcurrencyMetric: "nv_inference_pending_request_count",
			// Triton serves its metrics on a port of their own.
			MetricsPath: "/metrics",
			MetricsPort: ptr(int32(8002)),
			Flags:       builtinTritonFlags(),
		},
		"tgi": {
			Image:             "ghcr.io/huggingface/text-generation-inference:3.3.4",
			Args:              []string{"--model-id=$(MODEL_DIR)", "--port=$(PORT)"},
			Port:              ptr(int32(8080)),
			HealthPath:        "/health",
			StartupSeconds:    ptr(int32(1800)),
			SharedMemory:      ptr(true),
			ConcurrencyMetric: "tgi_queue_size",
			MetricsPath:       "/metrics",
			Flags:             builtinTGIFlags(),
			Options:           builtinTGIOptions(),
		},
		"llamacpp": {
			// llama-server takes one GGUF file; the weights directory holds
			// whatever the source had, so pick its first model GGUF at
			// start. Not a multimodal projector (mmproj-*.gguf, which sorts
			// before most model names) nor a LoRA adapter (*lora*): llama-server
			// would fail to load either as the model. Split models load from
			// their first part, which sorts first.
			//
			// The script is the command, so that the container's args
			// (none here; spec.serve.args, and the adapters) reach
			// llama-server after the script ($0 is "llama-server") instead
			// of replacing it. Adapters come as "--lora DIR" pairs: each
			// becomes --lora-scaled FILE:0, the
			// directory's GGUF loaded at scale 0, so that a request without
			// "lora" is answered by the base model alone and one with
			// "lora": [{"id": N, "scale": 1}] by adapter N.
			// --lora-init-without-apply does not do that: llama-server still
			// applies such adapters at scale 1 to every request that names
			// none (seen with the e2e's llama-server).
			//
			// The preset's own flags come after the claim's, since
			// llama-server takes the last of a flag given twice and its
			// command line over its LLAMA_ARG_* variables: the model, the
			// address and --offline (llama-server ignores HF_HUB_OFFLINE,
			// and without it downloads whatever -hf, -mu or -dr name) hold
			// whatever a claim passes. The claim's spellings of them are
			// refused as well (Flags), so a claim learns why.
			Image: "ghcr.io/ggml-org/llama.cpp:server-b6700",
			Command: []string{"/bin/sh", "-c", `m="$(find "$MODEL_DIR" -name '*.gguf' ! -iname '*mmproj*' ! -iname '*lora*' | sort | head -n 1)"; ` +
				`[ -n "$m" ] || { echo "no model GGUF under $MODEL_DIR" >&2; exit 1; }; ` +
				`n=$#; p=; for a in "$@"; do ` +
				`if [ "$p" = --lora ]; then f="$(find "$a" -name '*.gguf' | sort | head -n 1)"; ` +
				`[ -n "$f" ] || { echo "no adapter GGUF under $a" >&2; exit 1; }; ` +
				`case "$f" in *,*|*:*) echo "adapter file $f has a comma or a colon, which --lora-scaled cannot take" >&2; exit 1;; esac; ` +
				`set -- "$@" --lora-scaled "$f:0"; ` +
				`elif [ "$a" != --lora ]; then set -- "$@" "$a"; fi; p="$a"; done; shift "$n"; ` +
				`exec /app/llama-server "$@" --host 0.0.0.0 --port "$PORT" --metrics -m "$m" --offline`, "llama-server"},
			// llama-server runs one thread per core it sees, and in a
			// container it sees every core of the node, not its CPU
			// request: threads beyond its share contend for the same CPU
			// (2 threads on 2 busy cores ran the e2e's model at 14-200
			// tokens/s, 1 thread at 2,600-6,200). Its thread count (-t,
			// and -tb, which follows it) comes from the CPU request
			// instead, rounded up: 1 for anything up to one CPU.
			Env: []corev1.EnvVar{{Name: "LLAMA_ARG_THREADS", ValueFrom: &corev1.EnvVarSource{
				ResourceFieldRef: &corev1.ResourceFieldSelector{Resource: "requests.cpu", Divisor: resource.MustParse("1")},
			}}},
			Port:           ptr(int32(8080)),
			HealthPath:     "/health",
			StartupSeconds: ptr(int32(900)),
			SharedMemory:   ptr(false),
			// llama-server exports its gauges as llamacpp:<name> (with
			// --metrics); an underscore instead of the colon names a
			// series that does not exist.
			ConcurrencyMetric: "llamacpp:requests_processing",
			MetricsPath:       "/metrics",
			// llama-server numbers its adapters in the order of its
			// command line and takes no name: the servers' adapters are
			// given by path alone, and status.adapters says each one's id.
			Adapters: &AdapterPreset{
				ModulesFlag:     "--lora",
				ModulesFlagEach: ptr(true),
				PathOnly:        ptr(true),
				MaxLoras:        ptr(DefaultMaxLoras),
				MaxLoraRank:     ptr(DefaultMaxLoraRank),
			},
			Flags:   builtinLlamaCppFlags(),
			Options: builtinLlamaCPPOptions(),
		},
		"ollama": {
			// `ollama serve` serves only models in its own store, by the
			// store's names, and wants the store writable; the weights are
			// a read-only volume. The start script (scripts/serve/ollama.sh)
			// serves a store the weights are, in place, or else makes a
			// private store in the scratch volume whose one model is the
			// weights' first GGUF, linked, not copied, named MODEL_NAME
			// (the claim's name: what clients send as "model"), and made
			// read-only before the server listens on the port. Like
			// llamacpp's, the script is the command so that the
			// container's args reach `ollama serve` ($0 is "ollama").
			Image:   "ollama/ollama:0.12.3",
			Command: []string{"/bin/sh", "-c", serveScriptText("scripts/serve/ollama.sh"), "ollama"},
			Env: []corev1.EnvVar{
				// Ollama unloads a model idle for 5 minutes, and the next
				// request waits for it to load again: keep it loaded, the
				// pod is there for it.
				{Name: "OLLAMA_KEEP_ALIVE", Value: "-1"},
				// Ollama has no thread-count variable and runs one thread
				// per physical core of the node, not of its CPU share (as
				// llama-server does, see llamacpp's LLAMA_ARG_THREADS): the
				// script makes the CPU request, rounded up, the model's
				// num_thread. A store served in place keeps its own.
				{Name: "NUM_THREAD", ValueFrom: &corev1.EnvVarSource{
					ResourceFieldRef: &corev1.ResourceFieldSelector{Resource: "requests.cpu", Divisor: resource.MustParse("1")},
				}},
			},
			Port:           ptr(int32(11434)),
			HealthPath:     "/api/version",
			StartupSeconds: ptr(int32(600)),
			SharedMemory:   ptr(false),
			// Ollama serves no Prometheus metrics (/metrics is a 404, and
			// /api/ps counts no requests in flight): no PodMonitor, and no
			// concurrency autoscaling but to zero through KEDA's HTTP
			// add-on, whose interceptor counts the requests itself.
			Flags:   builtinOllamaFlags(),
			Options: builtinOllamaOptions(),
		},
		"fake": {
			// A tiny OpenAI-shaped server that answers from a fixed table:
			// for tests and demos, no accelerator needed.
			Image:             "ghcr.io/inferno-ai/fake-model-server:v0.1.0",
			Args:              []string{"--model-dir=$(MODEL_DIR)", "--port=$(PORT)"},
			Port:              ptr(int32(8080)),
			HealthPath:        "/healthz",
			StartupSeconds:    ptr(int32(60)),
			SharedMemory:      ptr(false),
			ConcurrencyMetric: "inferno_fake_requests_running",
			MetricsPath:       "/metrics",
			Adapters: &AdapterPreset{
				ModulesFlag:     "--adapter",
				ModulesFlagEach: ptr(true),
				MaxLoras:        ptr(DefaultMaxLoras),
				MaxLoraRank:     ptr(DefaultMaxLoraRank),
			},
			Flags: builtinFakeFlags(),
		},
	}
}

// BuiltinPullers returns the puller preset of every URI scheme that is
// downloaded (pvc:// is mounted, not pulled).
func BuiltinPullers() map[string]PullerPreset {
	sh := func(file string) []string { return []string{"/bin/sh", "-c", pullScriptText(file)} }
	return map[string]PullerPreset{
		"hf":    {Image: "vllm/vllm-openai:v0.11.0", Command: sh("scripts/hf.sh"), TokenEnv: "HF_TOKEN"},
		"s3":    {Image: "amazon/aws-cli:2.31.13", Command: sh("scripts/s3.sh")},
		"gs":    {Image: "gcr.io/google.com/cloudsdktool/google-cloud-cli:542.0.0-slim", Command: sh("scripts/gs.sh"), TokenEnv: "GOOGLE_CREDENTIALS_JSON"},
		"http":  {Image: "curlimages/curl:8.16.0", Command: sh("scripts/http.sh"), TokenEnv: "BEARER_TOKEN"},
		"https": {Image: "curlimages/curl:8.16.0", Command: sh("scripts/http.sh"), TokenEnv: "BEARER_TOKEN"},
	}
}

// BuiltinStorage returns the default cache volume.
func BuiltinStorage() StorageDefaults {
	return StorageDefaults{Size: ptr(resource.MustParse("50Gi")), AccessMode: DefaultAccessMode}
}

// BuiltinResources returns the default requests of a model server.
func BuiltinResources() ResourceDefaults {
	return ResourceDefaults{CPU: ptr(resource.MustParse("2")), Memory: ptr(resource.MustParse("8Gi"))}
}

// Runtime returns the preset for a framework: the built-in one (unless
// BuiltinPresets is false) with every field the Input sets laid over it.
// ok is false when neither has the framework.
func (in *Input) Runtime(framework string) (p RuntimePreset, ok bool) {
	if in.builtins() {
		p, ok = BuiltinRuntimes()[framework]
	}
	o, set := in.Runtimes[framework]
	if !set {
		return p, ok
	}
	p.Image = orString(o.Image, p.Image)
	p.Command = orSlice(o.Command, p.Command)
	p.Args = orSlice(o.Args, p.Args)
	p.Env = orSlice(o.Env, p.Env)
	p.Port = orPtr(o.Port, p.Port)
	p.HealthPath = orString(o.HealthPath, p.HealthPath)
	p.StartupSeconds = orPtr(o.StartupSeconds, p.StartupSeconds)
	p.SharedMemory = orPtr(o.SharedMemory, p.SharedMemory)
	p.ConcurrencyMetric = orString(o.ConcurrencyMetric, p.ConcurrencyMetric)
	p.MetricsPath = orString(o.MetricsPath, p.MetricsPath)
	p.MetricsPort = orPtr(o.MetricsPort, p.MetricsPort)
	p.Adapters = mergeAdapters(o.Adapters, p.Adapters)
	p.MultiNode = orPtr(o.MultiNode, p.MultiNode)
	p.Flags = orPtr(o.Flags, p.Flags)
	p.Options = mergeOptions(o.Options, p.Options)
	return p, true
}

// Puller returns the preset for a URI scheme, merged like Runtime.
func (in *Input) Puller(scheme string) (p PullerPreset, ok bool) {
	if in.builtins() {
		p, ok = BuiltinPullers()[scheme]
	}
	o, set := in.Pullers[scheme]
	if !set {
		return p, ok
	}
	p.Image = orString(o.Image, p.Image)
	p.Command = orSlice(o.Command, p.Command)
	p.TokenEnv = orString(o.TokenEnv, p.TokenEnv)
	return p, true
}

// StorageDefaults returns the cache volume defaults, the Input's over the
// built-in ones.
func (in *Input) StorageDefaults() StorageDefaults {
	d := BuiltinStorage()
	if s := in.Storage; s != nil {
		d.Size = orPtr(s.Size, d.Size)
		d.StorageClassName = orString(s.StorageClassName, d.StorageClassName)
		d.AccessMode = orString(s.AccessMode, d.AccessMode)
	}
	return d
}

// ResourceDefaults returns the default server requests, the Input's over
// the built-in ones.
func (in *Input) ResourceDefaults() ResourceDefaults {
	d := BuiltinResources()
	if r := in.Resources; r != nil {
		d.CPU = orPtr(r.CPU, d.CPU)
		d.Memory = orPtr(r.Memory, d.Memory)
	}
	return d
}

// GPUSettings returns how GPUs are requested and scheduled, the Input's
// over the built-in ones.
func (in *Input) GPUSettings() GPUSettings {
	g := GPUSettings{ResourceName: DefaultGPUResourceName}
	if in.GPU != nil {
		g.ResourceName = orString(in.GPU.ResourceName, g.ResourceName)
		g.NodeSelector = in.GPU.NodeSelector
		g.DRA = in.GPU.DRA
		g.Tolerations = in.GPU.Tolerations
	}
	if g.Tolerations == nil {
		g.Tolerations = []corev1.Toleration{{Key: g.ResourceName, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule}}
	}
	return g
}

// PullDeadline returns the most seconds a pull Job may run.
func (in *Input) PullDeadline() int64 {
	if in.PullDeadlineSeconds != nil {
		return *in.PullDeadlineSeconds
	}
	return DefaultPullDeadlineSeconds
}

// RollingUpdate is the servers' maxSurge and maxUnavailable, defaulted.
func (in *Input) RollingUpdate() (maxSurge, maxUnavailable intstr.IntOrString) {
	maxSurge, maxUnavailable = intstr.FromInt32(DefaultMaxSurge), intstr.FromInt32(DefaultMaxUnavailable)
	if r := in.Rollout; r != nil {
		if r.MaxSurge != nil {
			maxSurge = *r.MaxSurge
		}
		if r.MaxUnavailable != nil {
			maxUnavailable = *r.MaxUnavailable
		}
	}
	return maxSurge, maxUnavailable
}

// PullStall returns how many seconds a download may make no progress.
func (in *Input) PullStall() int32 {
	if in.PullStallSeconds != nil {
		return *in.PullStallSeconds
	}
	return DefaultPullStallSeconds
}

// BackoffLimit returns how often a failed pull is retried.
func (in *Input) BackoffLimit() int32 {
	if in.PullBackoffLimit != nil {
		return *in.PullBackoffLimit
	}
	return DefaultPullBackoffLimit
}

func (in *Input) builtins() bool { return in.BuiltinPresets == nil || *in.BuiltinPresets }

func ptr[T any](v T) *T { return &v }

func orString(v, fallback string) string {
	if v != "" {
		return v
	}
	return fallback
}

func orSlice[T any](v, fallback []T) []T {
	if len(v) > 0 {
		return v
	}
	return fallback
}

func orPtr[T any](v, fallback *T) *T {
	if v != nil {
		return v
	}
	return fallback
}
