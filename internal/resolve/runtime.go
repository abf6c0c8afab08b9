package resolve

import (
	"fmt"
	"slices"
	"strings"

	"github.com/inferno-ai/function-inferno/apis/inference/v1alpha1"
	"github.com/inferno-ai/function-inferno/input/v1beta1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation"
)

// Environment the function sets in every server. Runtime arguments refer to
// them as $(MODEL_DIR) and so on, which Kubernetes expands.
const (
	EnvModelDir     = "MODEL_DIR"
	EnvModelName    = "MODEL_NAME"
	EnvModelVersion = "MODEL_VERSION"
	EnvPort         = "PORT"
)

// MergeEnv appends extra to base; a variable of extra replaces the one of
// the same name in base in place. Kubernetes would take the last of two
// duplicates, but server-side apply refuses duplicate keys outright.
func MergeEnv(base, extra []corev1.EnvVar) []corev1.EnvVar {
	if len(base)+len(extra) == 0 {
		return nil
	}
	out := make([]corev1.EnvVar, len(base), len(base)+len(extra))
	copy(out, base)
	if len(extra) == 0 {
		return out
	}
	at := make(map[string]int, len(base)+len(extra))
	for i := range out {
		at[out[i].Name] = i
	}
	for _, e := range extra {
		if i, ok := at[e.Name]; ok {
			out[i] = e
			continue
		}
		at[e.Name] = len(out)
		out = append(out, e)
	}
	return out
}

// resolveRuntime lays the claim's spec.serve over the platform's runtime
// preset of the framework, and checks the result.
func resolveRuntime(fw v1alpha1.Framework, serve *v1alpha1.ServeSpec, in *v1beta1.Input, errs *FieldErrors) v1beta1.RuntimePreset {
	if fw == "" {
		return v1beta1.RuntimePreset{}
	}
	rt, ok := in.Runtime(string(fw))
	if !ok {
		errs.Add("spec.model.framework", "the platform's Input offers no runtime for %q; ask your platform team or choose another framework", fw)
		return v1beta1.RuntimePreset{}
	}
	rt = applyServe(rt, serve, errs)
	rt = applyOptions(fw, rt, serve, errs)
	checkRuntime(fw, rt, serve, errs)
	return rt
}

// applyServe lays the claim's spec.serve over the runtime preset.
func applyServe(rt v1beta1.RuntimePreset, sv *v1alpha1.ServeSpec, errs *FieldErrors) v1beta1.RuntimePreset {
	if sv == nil {
		return rt
	}
	if sv.Image != "" {
		rt.Image = sv.Image
	}
	if sv.Port != nil {
		if p := *sv.Port; p < 1 || p > 65535 {
			errs.Add("spec.serve.port", "%d is out of range; use a port from 1 to 65535", p)
		}
		rt.Port = sv.Port
	}
	if len(sv.Args) > 0 {
		rt.Args = sv.Args
	}
	for i, e := range sv.Env {
		f := fmt.Sprintf("spec.serve.env[%d]", i)
		for _, m := range validation.IsEnvVarName(e.Name) {
			errs.Add(f+".name", "%q is not an environment variable name: %s", e.Name, m)
		}
		if e.ValueFrom != nil && e.Value != "" {
			errs.Add(f, "sets both value and valueFrom; keep one")
		}
		if reserved(e.Name) {
			errs.Add(f+".name", "%q is set by the function; remove it", e.Name)
		}
		if why, ok := guardedServeEnv[e.Name]; ok {
			errs.Add(f+".name", "%q %s, so a claim may not set it; remove it (a platform that wants it sets it in its runtime preset, input.runtimes.<framework>.env)", e.Name, why)
		}
	}
	// The claim's variables win over the preset's.
	rt.Env = MergeEnv(rt.Env, sv.Env)
	return rt
}

func checkRuntime(fw v1alpha1.Framework, rt v1beta1.RuntimePreset, sv *v1alpha1.ServeSpec, errs *FieldErrors) {
	field := "input.runtimes." + string(fw)
	if rt.Image == "" {
		if sv == nil || sv.Image == "" {
			errs.Add(field+".image", "is empty; the Composition's Input must give the %s runtime an image (or set spec.serve.image)", fw)
		}
	}
	if rt.Port == nil {
		errs.Add(field+".port", "is not set; the Composition's Input must give the %s runtime a port (or set spec.serve.port)", fw)
	} else if p := *rt.Port; (p < 1 || p > 65535) && (sv == nil || sv.Port == nil) {
		// A bad spec.serve.port is reported as the claim's, above.
		errs.Add(field+".port", "%d is out of range; use a port from 1 to 65535", p)
	}
	if rt.HealthPath == "" || rt.HealthPath[0] != '/' {
		errs.Add(field+".healthPath", "%q must be an HTTP path starting with '/'", rt.HealthPath)
	}
	if rt.StartupSeconds == nil || *rt.StartupSeconds < 10 {
		errs.Add(field+".startupSeconds", "must be at least 10 seconds")
	}
}

// Why a claim may not set a variable of guardedServeEnv.
const (
	whyHub  = "would let the servers reach a model hub, but they serve only the weights pulled under the platform's policy (the function sets HF_HUB_OFFLINE=1)"
	whyLoRA = "would let anyone who reaches the servers load adapters at run time (vLLM's unauthenticated /v1/load_lora_adapter or a LoRA resolver), around the adapters' policy"
)

// guardedServeEnv names the variables spec.serve.env may not set, because
// they undo what the function and the runtime presets promise: servers
// never reach a hub (its offline switches, endpoints and tokens, vLLM's
// ModelScope switch, Ollama's model store, which the preset points at the
// read-only weights), and adapters are pulled by the function's Jobs
// under the policy, never loaded at run time.
var guardedServeEnv = map[string]string{
	"HF_HUB_OFFLINE":                   whyHub,
	"TRANSFORMERS_OFFLINE":             whyHub,
	"HF_DATASETS_OFFLINE":              whyHub,
	"HF_ENDPOINT":                      whyHub,
	"HF_TOKEN":                         whyHub,
	"HF_TOKEN_PATH":                    whyHub,
	"HUGGING_FACE_HUB_TOKEN":           whyHub,
	"VLLM_USE_MODELSCOPE":              whyHub,
	"OLLAMA_MODELS":                    whyHub,
	"VLLM_ALLOW_RUNTIME_LORA_UPDATING": whyLoRA,
	"VLLM_LORA_RESOLVER_CACHE_DIR":     whyLoRA,
	"VLLM_PLUGINS":                     whyLoRA,
}

// reserved names the variables the function itself sets in the server.
func reserved(name string) bool {
	switch name {
	case EnvModelDir, EnvModelName, EnvModelVersion, EnvPort, v1beta1.EnvMaxLoras, v1beta1.EnvMaxLoraRank:
		return true
	}
	return false
}

func isFramework(f v1alpha1.Framework) bool {
	return slices.Contains(v1alpha1.Frameworks, f)
}

func joinFrameworks() string {
	names := make([]string, len(v1alpha1.Frameworks))
	for i, f := range v1alpha1.Frameworks {
		names[i] = string(f)
	}
	return strings.Join(names, ", ")
}
