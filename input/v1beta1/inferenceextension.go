package v1beta1

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// InferenceExtension turns on the Gateway API Inference Extension for the
// Gateway it is set on: every claim then gets an InferencePool
// (inference.networking.k8s.io/v1) that selects the servers of all its
// versions, an endpoint picker of its own that the Gateway asks which
// server should take each request (by load, queue and KV-cache use), and
// an HTTPRoute whose backend is the pool instead of the Services. The
// Gateway's implementation must support InferencePool backends (Istio,
// kgateway, Envoy AI Gateway, GKE, NGINX Gateway Fabric), and the
// InferencePool CRD (and InferenceObjective, which the picker watches)
// must be installed.
type InferenceExtension struct {
	// Enabled renders the pools, pickers and pool routes. Defaults to
	// false: routes then go to the Services, as without this field.
	Enabled bool `json:"enabled"`

	// FailureMode is what the Gateway does when the picker does not
	// answer: FailClose refuses the request, FailOpen sends it to a server
	// of its own choice. Defaults to FailClose, as upstream.
	// +optional
	// +kubebuilder:validation:Enum=FailOpen;FailClose
	FailureMode string `json:"failureMode,omitempty"`

	// Picker is how each claim's endpoint picker runs.
	// +optional
	Picker *EndpointPicker `json:"picker,omitempty"`
}

// EndpointPicker is the endpoint picker (EPP) each claim runs. The
// function sets the flags that tie it to its pool (--pool-name,
// --pool-namespace, --config-file, the ports); args adds others.
type EndpointPicker struct {
	// Image of the picker. Defaults to
	// registry.k8s.io/gateway-api-inference-extension/epp:v1.2.0. Pin it by
	// tag or digest; claims cannot change it.
	// +optional
	// +kubebuilder:validation:MaxLength=512
	Image string `json:"image,omitempty"`

	// Args are more flags of the picker, after the function's own, e.g.
	// ["--v", "2"] or, for Triton servers, the metric flags
	// (--total-queued-requests-metric …). The flags the function sets
	// (--pool-name, --pool-namespace, --pool-group, --config-file,
	// --config-text, --grpc-port, --grpc-health-port, --metrics-port) are
	// refused here.
	// +optional
	// +kubebuilder:validation:MaxItems=64
	// +kubebuilder:validation:items:MaxLength=1024
	Args []string `json:"args,omitempty"`

	// Config is the picker's EndpointPickerConfig
	// (inference.networking.x-k8s.io/v1alpha1) as YAML: its plugins and
	// scheduling profiles. The function mounts it from a ConfigMap.
	// Defaults to upstream's default profile: queue, KV-cache utilisation
	// and prefix-cache scorers weighted 2, 2 and 3. For a claim with LoRA
	// adapters the function adds lora-affinity-scorer (weight 2 in every
	// profile), which routes by adapter name, unless the configuration
	// already lists it.
	// +optional
	// +kubebuilder:validation:MaxLength=65536
	Config string `json:"config,omitempty"`

	// CPU request of the picker. Defaults to 250m.
	// +optional
	CPU *resource.Quantity `json:"cpu,omitempty"`

	// Memory request and limit of the picker. Defaults to 512Mi.
	// +optional
	Memory *resource.Quantity `json:"memory,omitempty"`

	// NodeSelector of the picker's pod. Defaults to input.scheduling's.
	// +optional
	NodeSelector map[string]string `json:"nodeSelector,omitempty"`

	// Tolerations of the picker's pod. Defaults to input.scheduling's.
	// +optional
	Tolerations []corev1.Toleration `json:"tolerations,omitempty"`
}

// Built-in defaults of the endpoint picker.
const (
	DefaultPickerImage       = "registry.k8s.io/gateway-api-inference-extension/epp:v1.2.0"
	DefaultPickerFailureMode = "FailClose"
	// DefaultPickerConfig is upstream's default-plugins.yaml (the
	// inferencepool Helm chart of v1.2.0).
	DefaultPickerConfig = `apiVersion: inference.networking.x-k8s.io/v1alpha1
kind: EndpointPickerConfig
plugins:
- type: queue-scorer
- type: kv-cache-utilization-scorer
- type: prefix-cache-scorer
schedulingProfiles:
- name: default
  plugins:
  - pluginRef: queue-scorer
    weight: 2
  - pluginRef: kv-cache-utilization-scorer
    weight: 2
  - pluginRef: prefix-cache-scorer
    weight: 3
`
)

var (
	defaultPickerCPU    = resource.MustParse("250m")
	defaultPickerMemory = resource.MustParse("512Mi")
)

// InferenceExtension is the Gateway's inference extension settings when
// they enable it, with every default applied; nil when it is off.
func (in *Input) InferenceExtension() *InferenceExtension {
	if in.Traffic == nil || in.Traffic.Gateway == nil {
		return nil
	}
	x := in.Traffic.Gateway.InferenceExtension
	if x == nil || !x.Enabled {
		return nil
	}
	out := *x
	if out.FailureMode == "" {
		out.FailureMode = DefaultPickerFailureMode
	}
	p := EndpointPicker{}
	if x.Picker != nil {
		p = *x.Picker.DeepCopy()
	}
	if p.Image == "" {
		p.Image = DefaultPickerImage
	}
	if p.Config == "" {
		p.Config = DefaultPickerConfig
	}
	if p.CPU == nil {
		p.CPU = ptr(defaultPickerCPU.DeepCopy())
	}
	if p.Memory == nil {
		p.Memory = ptr(defaultPickerMemory.DeepCopy())
	}
	if p.NodeSelector == nil && in.Scheduling != nil {
		p.NodeSelector = in.Scheduling.NodeSelector
	}
	if p.Tolerations == nil && in.Scheduling != nil {
		p.Tolerations = in.Scheduling.Tolerations
	}
	out.Picker = &p
	return &out
}
