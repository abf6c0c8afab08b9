package v1beta1

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// Built-in defaults that an empty Input stands for.
const (
	DefaultGPUResourceName  = "nvidia.com/gpu"
	DefaultAccessMode       = "ReadWriteOnce"
	DefaultPullBackoffLimit = int32(3)
)

// MarkerFile is written into TARGET_DIR by a puller once the download is
// complete, so that a rerun of the Job is a no-op.
const MarkerFile = ".inferno-complete"

// The built-in pull scripts share one shape: skip when the marker exists,
// download, write the marker last. The URI reaches them only through
// environment variables, never spliced into the script, so no URI can
// inject shell.
const (
	pullPrologue = `set -eu
if [ -f "$TARGET_DIR/` + MarkerFile + `" ]; then echo "weights for $MODEL_URI already in $TARGET_DIR"; exit 0; fi
mkdir -p "$TARGET_DIR"
`
	pullEpilogue = `
printf '%s\n' "$MODEL_URI" > "$TARGET_DIR/` + MarkerFile + `"
echo "pulled $MODEL_URI into $TARGET_DIR"
`
	hfScript = pullPrologue +
		`hf download "$MODEL_SOURCE" ${MODEL_REVISION:+--revision "$MODEL_REVISION"} --local-dir "$TARGET_DIR"` +
		pullEpilogue
	s3Script = pullPrologue +
		`aws s3 sync --only-show-errors "s3://$MODEL_SOURCE" "$TARGET_DIR"` +
		pullEpilogue
	gsScript = pullPrologue +
		`if [ -n "${GOOGLE_CREDENTIALS_JSON:-}" ]; then
  printf '%s' "$GOOGLE_CREDENTIALS_JSON" > "$HOME/key.json"
  gcloud auth activate-service-account --key-file="$HOME/key.json"
fi
gcloud storage rsync --recursive "gs://$MODEL_SOURCE" "$TARGET_DIR"` +
		pullEpilogue
	httpScript = pullPrologue +
		`f="${MODEL_SOURCE##*/}"; f="${f%%\?*}"; [ -n "$f" ] || f=model
curl -fsSL --retry 5 ${BEARER_TOKEN:+-H "Authorization: Bearer $BEARER_TOKEN"} -o "$TARGET_DIR/.partial" "$MODEL_URI"
mv "$TARGET_DIR/.partial" "$TARGET_DIR/$f"` +
		pullEpilogue
)

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
		},
		"tgi": {
			Image:             "ghcr.io/huggingface/text-generation-inference:3.3.4",
			Args:              []string{"--model-id=$(MODEL_DIR)", "--port=$(PORT)"},
			Port:              ptr(int32(8080)),
			HealthPath:        "/health",
			StartupSeconds:    ptr(int32(1800)),
			SharedMemory:      ptr(true),
			ConcurrencyMetric: "tgi_queue_size",
		},
		"llamacpp": {
			// llama-server takes one GGUF file; the weights directory holds
			// whatever the source had, so pick its first GGUF at start.
			Image:             "ghcr.io/ggml-org/llama.cpp:server-b6700",
			Command:           []string{"/bin/sh", "-c"},
			Args:              []string{`exec /app/llama-server --host 0.0.0.0 --port "$PORT" --metrics -m "$(find "$MODEL_DIR" -name '*.gguf' | sort | head -n 1)"`},
			Port:              ptr(int32(8080)),
			HealthPath:        "/health",
			StartupSeconds:    ptr(int32(900)),
			SharedMemory:      ptr(false),
			ConcurrencyMetric: "llamacpp_requests_processing",
		},
		"ollama": {
			// Ollama reads its own model store: the source must hold an
			// Ollama models directory (blobs/ and manifests/).
			Image:          "ollama/ollama:0.12.3",
			Env:            []corev1.EnvVar{{Name: "OLLAMA_MODELS", Value: "$(MODEL_DIR)"}, {Name: "OLLAMA_HOST", Value: "0.0.0.0:$(PORT)"}},
			Port:           ptr(int32(11434)),
			HealthPath:     "/api/version",
			StartupSeconds: ptr(int32(600)),
			SharedMemory:   ptr(false),
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
		},
	}
}

// BuiltinPullers returns the puller preset of every URI scheme that is
// downloaded (pvc:// is mounted, not pulled).
func BuiltinPullers() map[string]PullerPreset {
	sh := func(script string) []string { return []string{"/bin/sh", "-c", script} }
	return map[string]PullerPreset{
		"hf":    {Image: "vllm/vllm-openai:v0.11.0", Command: sh(hfScript), TokenEnv: "HF_TOKEN"},
		"s3":    {Image: "amazon/aws-cli:2.31.13", Command: sh(s3Script)},
		"gs":    {Image: "gcr.io/google.com/cloudsdktool/google-cloud-cli:542.0.0-slim", Command: sh(gsScript), TokenEnv: "GOOGLE_CREDENTIALS_JSON"},
		"http":  {Image: "curlimages/curl:8.16.0", Command: sh(httpScript), TokenEnv: "BEARER_TOKEN"},
		"https": {Image: "curlimages/curl:8.16.0", Command: sh(httpScript), TokenEnv: "BEARER_TOKEN"},
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
		g.Tolerations = in.GPU.Tolerations
	}
	if g.Tolerations == nil {
		g.Tolerations = []corev1.Toleration{{Key: g.ResourceName, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule}}
	}
	return g
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
