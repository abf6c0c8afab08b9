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

// The built-in pull scripts share one shape: skip when the marker exists,
// download, write the marker last. They are POSIX sh (dash, busybox ash
// and bash run them alike). The URI reaches them only through environment
// variables, never spliced into the script, so no URI can inject shell.
//
// Every download ends: curl stops a transfer slower than 1 KiB/s for
// PULL_STALL_SECONDS and retries it; the hf, s3 and gs CLIs get their own
// timeouts and retries, and a watchdog stops them once TARGET_DIR has not
// grown for PULL_STALL_SECONDS. A stall exits PullStalledExitCode; the
// Job's activeDeadlineSeconds bounds the rest.
const (
	pullPrologue = `set -eu
if [ -f "$TARGET_DIR/` + MarkerFile + `" ]; then echo "weights for $MODEL_URI already in $TARGET_DIR"; exit 0; fi
mkdir -p "$TARGET_DIR"
stall="${` + EnvPullStallSeconds + `:-300}"
`
	pullEpilogue = `
printf '%s\n' "$MODEL_URI" > "$TARGET_DIR/` + MarkerFile + `"
echo "pulled $MODEL_URI into $TARGET_DIR"
`
	// watchdog runs its arguments and stops them, exiting 75, once
	// TARGET_DIR has not grown for $stall seconds (the CLIs write their
	// partial files there, so a download in progress grows it).
	watchdog = `watch() {
  "$@" &
  pid=$!
  last=-1
  still=0
  while kill -0 "$pid" 2>/dev/null; do
    sleep 2
    size=$(du -sk "$TARGET_DIR" 2>/dev/null | cut -f1)
    if [ "$size" != "$last" ]; then last=$size; still=0; else still=$((still + 2)); fi
    if [ "$still" -ge "$stall" ]; then
      kill "$pid" 2>/dev/null || true
      wait "$pid" 2>/dev/null || true
      echo "stalled: $TARGET_DIR did not grow for ${stall}s; stopped the download of $MODEL_URI" >&2
      exit 75
    fi
  done
  wait "$pid"
}
`
	// progress reports the download's progress when the Input asks for
	// it (PROGRESS_PATH set; input.pullProgress): every
	// $PROGRESS_INTERVAL_SECONDS a background loop measures the bytes
	// done (progress_bytes: the partial file, or TARGET_DIR's size), reads
	// the total (progress_total: curl's dumped headers' Content-Length,
	// or nothing) and merge-patches them into the pull's ConfigMap with
	// the rate over the last interval and the times, through the API
	// server with the pod's projected token. The token goes to curl on
	// its standard input, never on a command line. A report that fails
	// is logged once and the download goes on: progress is never a
	// reason to fail a pull. progress_stop sends the last report.
	progress = `cr=$(printf '\r')
progress_pid=""
progress_report() {
  bytes=$(progress_bytes); total=$(progress_total); now=$(date +%s)
  case "$bytes" in ''|*[!0-9]*) bytes=0 ;; esac
  case "$total" in *[!0-9]*) total="" ;; esac
  rate=0
  if [ "$now" -gt "$last_t" ] && [ "$bytes" -ge "$last_b" ]; then rate=$(( (bytes - last_b) / (now - last_t) )); fi
  last_b=$bytes; last_t=$now
  host="$KUBERNETES_SERVICE_HOST"; case "$host" in *:*) host="[$host]" ;; esac
  body=$(printf '{"data":{"bytes":"%s","total":"%s","rate":"%s","startedAt":"%s","updatedAt":"%s"}}' "$bytes" "$total" "$rate" "$started" "$(date -u +%Y-%m-%dT%H:%M:%SZ)")
  if ! err=$(printf 'header = "Authorization: Bearer %s"\n' "$(cat "$sa/token")" | curl --fail --silent --show-error --max-time 10 -K - \
      --cacert "$sa/ca.crt" -H 'Content-Type: application/merge-patch+json' -X PATCH --data "$body" -o /dev/null \
      "https://$host:$KUBERNETES_SERVICE_PORT$` + EnvProgressPath + `" 2>&1); then
    [ -n "$warned" ] || echo "progress: cannot report to $` + EnvProgressPath + ` ($err); the download goes on" >&2
    warned=1
  fi
}
progress_start() {
  [ -n "${` + EnvProgressPath + `:-}" ] || return 0
  if ! command -v curl >/dev/null 2>&1; then echo "progress: no curl in the image; not reporting" >&2; return 0; fi
  sa=` + ServiceAccountTokenDir + `; every="${` + EnvProgressInterval + `:-5}"; warned=""
  started=$(date -u +%Y-%m-%dT%H:%M:%SZ); last_t=$(date +%s); last_b=0
  ( set +e; while :; do sleep "$every"; progress_report; done ) &
  progress_pid=$!
}
progress_stop() {
  [ -n "$progress_pid" ] || return 0
  kill "$progress_pid" 2>/dev/null || true
  wait "$progress_pid" 2>/dev/null || true
  progress_pid=""
  set +e; progress_report; set -e
}
`
	// progressDir measures the download as TARGET_DIR's size: the hf, s3
	// and gs CLIs say no total.
	progressDir = `progress_bytes() { echo $(( $(du -sk "$TARGET_DIR" 2>/dev/null | cut -f1) * 1024 )); }
progress_total() { echo ""; }
`
	// hf: a read that waits over a minute fails (HF_HUB_DOWNLOAD_TIMEOUT,
	// HF_HUB_ETAG_TIMEOUT); the CLI has no retry flag, but a rerun resumes
	// the partial files it keeps under --local-dir.
	hfScript = pullPrologue + watchdog + progress + progressDir +
		`export HF_HUB_DOWNLOAD_TIMEOUT="${HF_HUB_DOWNLOAD_TIMEOUT:-60}" HF_HUB_ETAG_TIMEOUT="${HF_HUB_ETAG_TIMEOUT:-60}"
progress_start
watch hf download "$MODEL_SOURCE" ${MODEL_REVISION:+--revision "$MODEL_REVISION"} --local-dir "$TARGET_DIR"
progress_stop` +
		pullEpilogue
	// s3: the AWS CLI's standard retry mode with 10 attempts, and a
	// connect and a read timeout.
	s3Script = pullPrologue + watchdog + progress + progressDir +
		`export AWS_RETRY_MODE="${AWS_RETRY_MODE:-standard}" AWS_MAX_ATTEMPTS="${AWS_MAX_ATTEMPTS:-10}"
progress_start
watch aws s3 sync --only-show-errors --cli-connect-timeout 30 --cli-read-timeout 60 "s3://$MODEL_SOURCE" "$TARGET_DIR"
progress_stop` +
		pullEpilogue
	// gs: gcloud storage's retries (storage/max_retries) and socket
	// timeout (core/http_timeout), through their environment variables.
	gsScript = pullPrologue + watchdog + progress + progressDir +
		`export CLOUDSDK_STORAGE_MAX_RETRIES="${CLOUDSDK_STORAGE_MAX_RETRIES:-10}" CLOUDSDK_CORE_HTTP_TIMEOUT="${CLOUDSDK_CORE_HTTP_TIMEOUT:-60}"
if [ -n "${GOOGLE_CREDENTIALS_JSON:-}" ]; then
  printf '%s' "$GOOGLE_CREDENTIALS_JSON" > "$HOME/key.json"
  gcloud auth activate-service-account --key-file="$HOME/key.json"
fi
progress_start
watch gcloud storage rsync --recursive "gs://$MODEL_SOURCE" "$TARGET_DIR"
progress_stop` +
		pullEpilogue
	// http(s): curl takes the URI literally (--globoff: no [] or {}
	// ranges), speaks and follows redirects only over HTTP(S), at most 10
	// of them, stops a transfer slower than 1 KiB/s for $stall seconds
	// and retries transient failures (timeouts, refused connections, 5xx)
	// five times. Every option is in curl 7.88. curl sends the bearer
	// token only to the URI's host, never to a host it is redirected to.
	httpScript = pullPrologue + progress +
		`f="${MODEL_SOURCE##*/}"; f="${f%%\?*}"; [ -n "$f" ] || f=model
headers="${HOME:-/tmp}/.pull-headers"
progress_bytes() { set -- $(ls -ln "$TARGET_DIR/.partial" 2>/dev/null); echo "${5:-0}"; }
progress_total() {
  t=""
  [ -f "$headers" ] || { echo ""; return 0; }
  while IFS= read -r line; do
    line="${line%"$cr"}"
    case "$line" in
      HTTP/*) t="" ;;
      [Cc][Oo][Nn][Tt][Ee][Nn][Tt]-[Ll][Ee][Nn][Gg][Tt][Hh]:*) t="${line#*:}"; t="${t# }" ;;
    esac
  done < "$headers"
  echo "$t"
}
progress_start
rc=0
curl --fail --silent --show-error --location --globoff -D "$headers" \
  --proto =http,https --proto-redir =http,https --max-redirs 10 \
  --connect-timeout 30 --speed-limit 1024 --speed-time "$stall" \
  --retry 5 --retry-delay 10 --retry-connrefused \
  ${BEARER_TOKEN:+-H "Authorization: Bearer $BEARER_TOKEN"} \
  -o "$TARGET_DIR/.partial" "$MODEL_URI" || rc=$?
progress_stop
case "$rc" in
  0) ;;
  28) echo "stalled: less than 1 KiB/s for ${stall}s, six times; gave up on $MODEL_URI" >&2; exit 75 ;;
  *) exit "$rc" ;;
esac
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
			MetricsPath:       "/metrics",
			Adapters: &AdapterPreset{
				Args:        []string{"--enable-lora", "--max-loras=$(MAX_LORAS)", "--max-lora-rank=$(MAX_LORA_RANK)"},
				ModulesFlag: "--lora-modules",
				MaxLoras:    ptr(DefaultMaxLoras),
				MaxLoraRank: ptr(DefaultMaxLoraRank),
			},
			MultiNode: builtinVLLMMultiNode(),
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
			MetricsPath:       "/metrics",
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
			// Ollama serves no Prometheus metrics: no PodMonitor.
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
	p.MetricsPath = orString(o.MetricsPath, p.MetricsPath)
	p.MetricsPort = orPtr(o.MetricsPort, p.MetricsPort)
	p.Adapters = mergeAdapters(o.Adapters, p.Adapters)
	p.MultiNode = orPtr(o.MultiNode, p.MultiNode)
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
