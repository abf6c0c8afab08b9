package fn

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	inferencev1 "sigs.k8s.io/gateway-api-inference-extension/api/v1"
	"sigs.k8s.io/yaml"

	"github.com/inferno-ai/function-inferno/input/v1beta1"
)

// The InferencePool comes from upstream's own Go types
// (sigs.k8s.io/gateway-api-inference-extension/api/v1): that package
// imports only apimachinery, and requiring the module raised no other
// module's version, so there is nothing to gain from a copy of ours.

// resourcePool is the composition resource name of the InferencePool.
const resourcePool = "inference-pool"

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
func resolveInferencePool(in *v1beta1.Input, errs *fieldErrors) *inferencePool {
	x := in.InferenceExtension()
	if x == nil {
		return nil
	}
	const field = "input.traffic.gateway.inferenceExtension"
	p := &inferencePool{FailureMode: inferencev1.EndpointPickerFailureMode(x.FailureMode), Picker: *x.Picker}
	switch p.FailureMode {
	case inferencev1.EndpointPickerFailClose, inferencev1.EndpointPickerFailOpen:
	default:
		errs.add(field+".failureMode", "%q is not a failure mode; use FailClose or FailOpen", x.FailureMode)
	}
	pk := p.Picker
	if strings.TrimSpace(pk.Image) != pk.Image || strings.ContainsAny(pk.Image, " \t\n") {
		errs.add(field+".picker.image", "%q is not an image reference; write e.g. %s", pk.Image, v1beta1.DefaultPickerImage)
	}
	for i, a := range pk.Args {
		name, _, _ := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if strings.HasPrefix(a, "-") && contains(pickerManagedFlags, name) {
			errs.add(fmt.Sprintf("%s.picker.args[%d]", field, i), "%q sets a flag the function sets for each claim's picker (%s); remove it", a, strings.Join(pickerManagedFlags, ", "))
		}
	}
	var cfg struct {
		APIVersion string `json:"apiVersion"`
		Kind       string `json:"kind"`
	}
	if err := yaml.Unmarshal([]byte(pk.Config), &cfg); err != nil {
		errs.add(field+".picker.config", "is not YAML (%v); give an EndpointPickerConfig", err)
	} else if cfg.Kind != "EndpointPickerConfig" || !strings.HasPrefix(cfg.APIVersion, "inference.networking.x-k8s.io/") {
		errs.add(field+".picker.config", "is apiVersion %q kind %q; give an EndpointPickerConfig of inference.networking.x-k8s.io/v1alpha1", cfg.APIVersion, cfg.Kind)
	}
	if pk.CPU.Sign() <= 0 {
		errs.add(field+".picker.cpu", "%s is not a positive quantity", pk.CPU.String())
	}
	if pk.Memory.Sign() <= 0 {
		errs.add(field+".picker.memory", "%s is not a positive quantity", pk.Memory.String())
	}
	p.ConfigHash = shortHash(pk.Config)
	return p
}

// loraAffinityScorer is the endpoint picker's scorer that routes by
// adapter: it prefers the servers where the request's model (the adapter
// name) is already loaded, then those with a free adapter slot, from the
// servers' LoRA metric (vLLM's vllm:lora_requests_info, the picker's
// --lora-info-metric default).
const loraAffinityScorer = "lora-affinity-scorer"

// loraAffinityWeight is its weight in each scheduling profile: as much as
// the queue and KV-cache scorers of upstream's default configuration,
// since loading an adapter into a GPU slot costs a request more than a
// short queue.
const loraAffinityWeight = 2

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
		if m, ok := pl.(map[string]any); ok && m["type"] == loraAffinityScorer {
			return
		}
	}
	cfg["plugins"] = append(plugins, map[string]any{"type": loraAffinityScorer})
	profiles, _ := cfg["schedulingProfiles"].([]any)
	for _, pr := range profiles {
		if m, ok := pr.(map[string]any); ok {
			refs, _ := m["plugins"].([]any)
			m["plugins"] = append(refs, map[string]any{"pluginRef": loraAffinityScorer, "weight": loraAffinityWeight})
		}
	}
	b, err := yaml.Marshal(cfg)
	if err != nil {
		return
	}
	p.Picker.Config = string(b)
	p.ConfigHash = shortHash(p.Picker.Config)
}

// checkPoolNames refuses a split version that would take the picker's
// names: version "epp" of claim llama names its Deployment and Service
// llama-epp, the picker's.
func checkPoolNames(s *resolvedSpec, errs *fieldErrors) {
	if s.Pool == nil || !s.Split {
		return
	}
	for i := range s.Versions {
		v := &s.Versions[i]
		if v.versionServiceName(s) == pickerName(s) {
			errs.add("spec.traffic", "version %q would name its Service %s, which is the endpoint picker's with input.traffic.gateway.inferenceExtension; give the version another name", v.Model.Version, pickerName(s))
		}
	}
}

// renderInferencePool builds the claim's InferencePool: it selects the
// servers of every version (splitSelector: the claim's instance and the
// framework's name label, which neither the pull pods nor the picker
// carry) on the port they listen on, and names the claim's picker. It is
// named after the claim, like its Service and route.
func renderInferencePool(s *resolvedSpec) *inferencev1.InferencePool {
	sel := map[inferencev1.LabelKey]inferencev1.LabelValue{}
	for k, v := range s.splitSelector() {
		sel[inferencev1.LabelKey(k)] = inferencev1.LabelValue(v)
	}
	return &inferencev1.InferencePool{
		TypeMeta:   metav1.TypeMeta{APIVersion: inferencev1.GroupVersion.String(), Kind: "InferencePool"},
		ObjectMeta: metav1.ObjectMeta{Name: s.Name, Namespace: s.Namespace, Labels: s.labels(s.primary(), componentRoute)},
		Spec: inferencev1.InferencePoolSpec{
			Selector:    inferencev1.LabelSelector{MatchLabels: sel},
			TargetPorts: []inferencev1.Port{{Number: inferencev1.PortNumber(*s.Runtime.Port)}},
			EndpointPickerRef: inferencev1.EndpointPickerRef{
				Kind:        "Service",
				Name:        inferencev1.ObjectName(pickerName(s)),
				Port:        &inferencev1.Port{Number: pickerGRPCPort},
				FailureMode: s.Pool.FailureMode,
			},
		},
	}
}

// poolReady reads an InferencePool's status.parents for the Input's
// Gateway, as the Gateway's implementation writes it:
//  1. no entry for that Gateway (parentRef kind Gateway or unset, its name,
//     its namespace or unset for the pool's own): no implementation has
//     looked at the pool yet; not ready;
//  2. conditions Accepted=True and ResolvedRefs=True (the picker's
//     Service resolved): ready;
//  3. either False: rejected, with its reason and message;
//  4. otherwise (one missing, or Unknown): not reported yet.
func poolReady(s *resolvedSpec, pool *inferencev1.InferencePool) (bool, routeState) {
	gw := s.Gateway
	st := routeState{Message: fmt.Sprintf("no Gateway implementation has reported on InferencePool %s for Gateway %s/%s yet", s.Name, gw.Namespace, gw.Name)}
	if pool == nil {
		return false, st
	}
	for _, p := range pool.Status.Parents {
		ref := p.ParentRef
		ns := string(ref.Namespace)
		if ns == "" {
			ns = pool.Namespace
		}
		if (ref.Kind != "" && ref.Kind != "Gateway") || string(ref.Name) != gw.Name || ns != gw.Namespace {
			continue
		}
		accepted := meta.FindStatusCondition(p.Conditions, string(inferencev1.InferencePoolConditionAccepted))
		resolved := meta.FindStatusCondition(p.Conditions, string(inferencev1.InferencePoolConditionResolvedRefs))
		for _, c := range []*metav1.Condition{accepted, resolved} {
			if c != nil && c.Status == metav1.ConditionFalse {
				st.Reported, st.Rejected = true, true
				st.Message = fmt.Sprintf("Gateway %s/%s (%s) reports InferencePool %s %s=False: %s: %s", gw.Namespace, gw.Name, p.ControllerName, s.Name, c.Type, c.Reason, c.Message)
				return false, st
			}
		}
		if accepted == nil || resolved == nil || accepted.Status != metav1.ConditionTrue || resolved.Status != metav1.ConditionTrue {
			return false, st
		}
		st.Reported = true
		st.Message = fmt.Sprintf("Gateway %s/%s accepted InferencePool %s and resolved its endpoint picker", gw.Namespace, gw.Name, s.Name)
		return true, st
	}
	return false, st
}
