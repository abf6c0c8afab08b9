package resolve

import (
	"fmt"
	"slices"
	"strings"

	"github.com/inferno-ai/function-inferno/input/v1beta1"
	inferencev1 "sigs.k8s.io/gateway-api-inference-extension/api/v1"
	"sigs.k8s.io/yaml"
)

// inferencePool is the Input's inference extension, checked: every claim
// gets an InferencePool selecting the servers of all its versions, an
// endpoint picker of its own, and its HTTPRoute goes to the pool.
type inferencePool struct {
	// FailureMode is the pool's endpointPickerRef.failureMode.
	FailureMode inferencev1.EndpointPickerFailureMode
	// Picker is the endpoint picker's settings, defaults applied.
	Picker v1beta1.EndpointPicker
	// ConfigHash identifies Picker.Config: the picker's pod template
	// carries it, so a new configuration restarts the picker.
	ConfigHash string
}

// pickerManagedFlags are the picker flags the function sets: the Input's
// args may not set them again (the picker would serve another pool, or
// listen where its Service and probes do not look).
var pickerManagedFlags = []string{
	"pool-name", "pool-namespace", "pool-group", "config-file", "config-text",
	"grpc-port", "grpc-health-port", "metrics-port",
}

// resolveInferencePool checks input.traffic.gateway.inferenceExtension;
// nil when there is no Gateway or the extension is off.
func resolveInferencePool(in *v1beta1.Input, errs *FieldErrors) *inferencePool {
	x := in.InferenceExtension()
	if x == nil {
		return nil
	}
	const field = "input.traffic.gateway.inferenceExtension"
	p := &inferencePool{FailureMode: inferencev1.EndpointPickerFailureMode(x.FailureMode), Picker: *x.Picker}
	switch p.FailureMode {
	case inferencev1.EndpointPickerFailClose, inferencev1.EndpointPickerFailOpen:
	default:
		errs.Add(field+".failureMode", "%q is not a failure mode; use FailClose or FailOpen", x.FailureMode)
	}
	pk := p.Picker
	if strings.TrimSpace(pk.Image) != pk.Image || strings.ContainsAny(pk.Image, " \t\n") {
		errs.Add(field+".picker.image", "%q is not an image reference; write e.g. %s", pk.Image, v1beta1.DefaultPickerImage)
	}
	for i, a := range pk.Args {
		name, _, _ := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if strings.HasPrefix(a, "-") && slices.Contains(pickerManagedFlags, name) {
			errs.Add(fmt.Sprintf("%s.picker.args[%d]", field, i), "%q sets a flag the function sets for each claim's picker (%s); remove it", a, strings.Join(pickerManagedFlags, ", "))
		}
	}
	var cfg struct {
		APIVersion string `json:"apiVersion"`
		Kind       string `json:"kind"`
	}
	if err := yaml.Unmarshal([]byte(pk.Config), &cfg); err != nil {
		errs.Add(field+".picker.config", "is not YAML (%v); give an EndpointPickerConfig", err)
	} else if cfg.Kind != "EndpointPickerConfig" || !strings.HasPrefix(cfg.APIVersion, "inference.networking.x-k8s.io/") {
		errs.Add(field+".picker.config", "is apiVersion %q kind %q; give an EndpointPickerConfig of inference.networking.x-k8s.io/v1alpha1", cfg.APIVersion, cfg.Kind)
	}
	if pk.CPU.Sign() <= 0 {
		errs.Add(field+".picker.cpu", "%s is not a positive quantity", pk.CPU.String())
	}
	if pk.Memory.Sign() <= 0 {
		errs.Add(field+".picker.memory", "%s is not a positive quantity", pk.Memory.String())
	}
	p.ConfigHash = ShortHash(pk.Config)
	return p
}

// LoraAffinityScorer is the endpoint picker's scorer that routes by
// adapter: it prefers the servers where the request's model (the adapter
// name) is already loaded, then those with a free adapter slot, from the
// servers' LoRA metric (vLLM's vllm:lora_requests_info, the picker's
// --lora-info-metric default).
const LoraAffinityScorer = "lora-affinity-scorer"

// LoraAffinityWeight is its weight in each scheduling profile: as much as
// the queue and KV-cache scorers of upstream's default configuration,
// since loading an adapter into a GPU slot costs a request more than a
// short queue.
const LoraAffinityWeight = 2

// routeByAdapter makes the picker route a claim's adapters by name: when
// the claim serves adapters and the platform's configuration has no
// lora-affinity-scorer, it adds one to the plugins and to every
// scheduling profile. A configuration that has one is the platform's
// choice and stays as written; so does every configuration of a claim
// without adapters (its picker is not restarted by this).
func (p *inferencePool) routeByAdapter(adapters bool) {
	if p == nil || !adapters {
		return
	}
	var cfg map[string]any
	if err := yaml.Unmarshal([]byte(p.Picker.Config), &cfg); err != nil {
		return // resolveInferencePool reported it
	}
	plugins, _ := cfg["plugins"].([]any)
	for _, pl := range plugins {
		if m, ok := pl.(map[string]any); ok && m["type"] == LoraAffinityScorer {
			return
		}
	}
	cfg["plugins"] = append(plugins, map[string]any{"type": LoraAffinityScorer})
	profiles, _ := cfg["schedulingProfiles"].([]any)
	for _, pr := range profiles {
		if m, ok := pr.(map[string]any); ok {
			refs, _ := m["plugins"].([]any)
			m["plugins"] = append(refs, map[string]any{"pluginRef": LoraAffinityScorer, "weight": LoraAffinityWeight})
		}
	}
	b, err := yaml.Marshal(cfg)
	if err != nil {
		return
	}
	p.Picker.Config = string(b)
	p.ConfigHash = ShortHash(p.Picker.Config)
}

// checkPoolNames refuses a split version that would take the picker's
// names: version "epp" of claim llama names its Deployment and Service
// llama-epp, the picker's.
func checkPoolNames(s *Spec, errs *FieldErrors) {
	if s.Pool == nil || !s.Split {
		return
	}
	for i := range s.Versions {
		v := &s.Versions[i]
		if v.VersionServiceName(s) == PickerName(s) {
			errs.Add("spec.traffic", "version %q would name its Service %s, which is the endpoint picker's with input.traffic.gateway.inferenceExtension; give the version another name", v.Model.Version, PickerName(s))
		}
	}
}

// PickerName names every object of the picker: <name>-epp, as upstream's
// chart names them after the pool.
func PickerName(s *Spec) string { return s.Name + "-epp" }
