package v1beta1

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// Input is the platform team's configuration of function-inferno, given in
// the Composition's pipeline step. Every field is optional: an empty Input
// uses the built-in presets and defaults (see defaults.go), and each field
// set here replaces the built-in value it names.
//
// +kubebuilder:object:root=true
// +kubebuilder:storageversion
// +kubebuilder:resource:categories=crossplane
type Input struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// BuiltinPresets keeps the built-in runtime and puller presets under the
	// ones given here. Set it to false to allow only the frameworks and URI
	// schemes this Input describes in full. Defaults to true.
	// +optional
	BuiltinPresets *bool `json:"builtinPresets,omitempty"`

	// Runtimes override the runtime presets, keyed by framework (vllm,
	// triton, tgi, llamacpp, ollama, fake). Fields set here replace the
	// built-in preset's; unset fields keep it.
	// +optional
	Runtimes map[string]RuntimePreset `json:"runtimes,omitempty"`

	// Pullers override the puller presets, keyed by URI scheme (hf, s3, gs,
	// http, https). Fields set here replace the built-in preset's.
	// +optional
	Pullers map[string]PullerPreset `json:"pullers,omitempty"`

	// Storage is the default for the weights cache volume of claims that do
	// not size it themselves.
	// +optional
	Storage *StorageDefaults `json:"storage,omitempty"`

	// Resources are the default CPU and memory requests of a model server.
	// +optional
	Resources *ResourceDefaults `json:"resources,omitempty"`

	// GPU says how GPUs are requested and where GPU servers may run.
	// +optional
	GPU *GPUSettings `json:"gpu,omitempty"`

	// Scheduling places every pod this Composition renders, servers and
	// pull Jobs alike, on a node pool: a platform offers one Composition
	// per pool (CPU, a GPU type, a test pool) and claims pick one with
	// spec.compositionSelector. GPU servers add gpu.nodeSelector and
	// gpu.tolerations to these.
	// +optional
	Scheduling *Scheduling `json:"scheduling,omitempty"`

	// Namespace receives the composed objects of an XR that has no claim
	// (and so no claim namespace). Without it such XRs are refused.
	// +optional
	// +kubebuilder:validation:MaxLength=63
	Namespace string `json:"namespace,omitempty"`

	// PullBackoffLimit is how many times a failed pull is retried before
	// the pull Job, and the InferenceService, are marked Failed. Defaults to 3.
	// +optional
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=20
	PullBackoffLimit *int32 `json:"pullBackoffLimit,omitempty"`

	// PullDeadlineSeconds bounds each pull Job, all its retries included
	// (the Job's activeDeadlineSeconds): past it the Job is stopped and
	// the claim reports PullTimedOut. Defaults to 21600 (six hours), about
	// a terabyte at 50 MB/s; raise it for larger weights or slower links.
	// +optional
	// +kubebuilder:validation:Minimum=60
	// +kubebuilder:validation:Maximum=604800
	PullDeadlineSeconds *int64 `json:"pullDeadlineSeconds,omitempty"`

	// PullStallSeconds is how long a built-in puller lets a download make
	// no progress (curl: less than 1 KiB/s; the hf, s3 and gs pullers: no
	// growth of the target directory) before it gives up; the pull Job
	// then fails at once and the claim reports PullStalled. The puller
	// reads it as PULL_STALL_SECONDS. Defaults to 300.
	// +optional
	// +kubebuilder:validation:Minimum=30
	// +kubebuilder:validation:Maximum=3600
	PullStallSeconds *int32 `json:"pullStallSeconds,omitempty"`

	// ServerServiceAccount runs the model servers under a ServiceAccount of
	// the claim's namespace, for servers that need an identity of their own
	// (a cloud's workload identity, a secrets agent). Without it they run
	// under the namespace's default ServiceAccount. Either way no pod the
	// function renders mounts a Kubernetes API token unless
	// serverServiceAccount.automountToken is true: the servers run images
	// the claim may choose, and pull Jobs never get one.
	// +optional
	ServerServiceAccount *ServiceAccountSettings `json:"serverServiceAccount,omitempty"`

	// Policy is what the platform lets a claim ask for: limits and
	// allow-lists that every claim of this Composition is held to. A claim
	// beyond one is refused, and the refusal names the setting. Left out,
	// nothing beyond the schema's own caps is enforced.
	// +optional
	Policy *Policy `json:"policy,omitempty"`

	// NetworkPolicy, when enabled, gives every InferenceService and
	// ModelCache NetworkPolicies, each rule naming its port: the servers
	// accept requests only from their own namespace and the Gateway's (and
	// KEDA's, for a claim that scales to zero through its HTTP add-on) on
	// their serving port, and the metrics namespace on their metrics port;
	// the pods of a multi-node group (spec.nodes > 1) reach each other, and
	// nothing else reaches the group's Ray ports; an endpoint picker
	// accepts only the Gateway's namespace on its ext-proc port and the
	// metrics namespace on its metrics port; pull pods accept none. The
	// servers reach out only to DNS (dnsNamespace), their own group's
	// pods, and what egress lists.
	// Enforcing them needs a CNI that implements NetworkPolicy.
	// +optional
	NetworkPolicy *NetworkPolicySettings `json:"networkPolicy,omitempty"`

	// Rollout bounds how the model servers' Deployments replace and add
	// servers (their RollingUpdate strategy), for a new revision, a
	// promotion or a weight shift alike. Left out, a rollout never has
	// fewer ready servers than it asks for: maxUnavailable 0, maxSurge 1.
	// +optional
	Rollout *RolloutSettings `json:"rollout,omitempty"`

	// Traffic says how the split of a claim's spec.traffic reaches the
	// servers. Without it the split is approximate: the claim's Service
	// spreads requests over the servers of every version.
	// +optional
	Traffic *TrafficSettings `json:"traffic,omitempty"`

	// OCI says whether oci:// weights are served, as Kubernetes image
	// volumes, or refused. Left out, they are refused.
	// +optional
	OCI *OCISettings `json:"oci,omitempty"`
	// KEDA lets claims scale to zero (spec.replicas.min 0 with autoscaling)
	// through a KEDA ScaledObject. Left out, such claims are refused.
	// +optional
	KEDA *KEDASettings `json:"keda,omitempty"`
	// Monitoring renders what the platform's Prometheus needs to scrape
	// the model servers (a PodMonitor per claim).
	// +optional
	Monitoring *Monitoring `json:"monitoring,omitempty"`

	// PullProgress makes pull Jobs report their progress into the claim's
	// status (status.pulls, the WeightsReady message).
	// +optional
	PullProgress *PullProgress `json:"pullProgress,omitempty"`

	// Poll is how soon the function asks Crossplane to call it again,
	// above all while Crossplane's circuit breaker has cut a composite's
	// watch (see PollSettings).
	// +optional
	Poll *PollSettings `json:"poll,omitempty"`

	// Fleet is the workload clusters claims may be placed on with
	// spec.placement (docs/fleet.md). Left out, placement is refused.
	// +optional
	Fleet *Fleet `json:"fleet,omitempty"`
}

// Policy holds the platform's limits and allow-lists. Every field is
// optional; a field left out allows what it would restrict.
type Policy struct {
	// MaxGPUsPerClaim caps the GPUs one claim may hold: GPUs per server
	// times the servers of every version at their most (the autoscalers'
	// maxima, or replicas without autoscaling). 0 allows no GPU.
	// +optional
	// +kubebuilder:validation:Minimum=0
	MaxGPUsPerClaim *int32 `json:"maxGPUsPerClaim,omitempty"`

	// MaxReplicas caps spec.replicas.min and spec.replicas.max.
	// +optional
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=1000
	MaxReplicas *int32 `json:"maxReplicas,omitempty"`

	// MaxCPUPerServer caps the CPU request of one model server.
	// +optional
	MaxCPUPerServer *resource.Quantity `json:"maxCPUPerServer,omitempty"`

	// MaxMemoryPerServer caps the memory request (and limit) of one model
	// server.
	// +optional
	MaxMemoryPerServer *resource.Quantity `json:"maxMemoryPerServer,omitempty"`

	// MaxStorageSize caps the weights volume of an InferenceService or a
	// ModelCache.
	// +optional
	MaxStorageSize *resource.Quantity `json:"maxStorageSize,omitempty"`

	// AllowedStorageClasses lists the StorageClasses a weights volume may
	// use. A claim that names none takes input.storage.storageClassName,
	// which must then be one of them.
	// +optional
	// +kubebuilder:validation:MaxItems=64
	// +kubebuilder:validation:items:MaxLength=253
	AllowedStorageClasses []string `json:"allowedStorageClasses,omitempty"`

	// AllowedServerImages lists the image prefixes a model server's image
	// must start with, the runtime presets' images included, e.g.
	// "registry.internal/inference/". A prefix that does not end in '/',
	// ':' or '@' matches only a whole repository path: "docker.io/vllm/vllm-openai"
	// allows "docker.io/vllm/vllm-openai:v0.11.0", not
	// "docker.io/vllm/vllm-openai-evil". Images are compared as written.
	// +optional
	// +kubebuilder:validation:MaxItems=64
	// +kubebuilder:validation:items:MinLength=1
	// +kubebuilder:validation:items:MaxLength=512
	AllowedServerImages []string `json:"allowedServerImages,omitempty"`

	// AllowedURISchemes lists the schemes weights may come from: hf, s3,
	// gs, http, https, oci. pvc:// is governed by allowPVCURIs alone.
	// +optional
	// +kubebuilder:validation:MaxItems=6
	// +kubebuilder:validation:items:Enum=hf;s3;gs;http;https;oci
	AllowedURISchemes []string `json:"allowedURISchemes,omitempty"`

	// AllowedURIHosts lists the sources weights may be pulled from, each
	// "<scheme>://<authority>": the organisation of hf://, the bucket of
	// s3:// and gs://, host[:port] of http(s):// and of the registry of
	// oci://. "*" allows every authority of a scheme (hf://*); "*." a
	// host's subdomains (https://*.models.internal). Hosts are compared as
	// hosts: a URI is parsed as a URL (RFC 3986), case, a trailing dot and
	// the default port (http 80, https and oci 443) never change which
	// entry matches, IP addresses compare as addresses and never match a
	// wildcard, and a URI whose host is ambiguous (user@host, '%' or
	// non-ASCII in the host, IPv4 in hex or octal) is refused. The http(s)
	// pullers follow redirects, which may leave the listed host (they never
	// take credentials along).
	// +optional
	// +kubebuilder:validation:MaxItems=128
	// +kubebuilder:validation:items:MaxLength=300
	AllowedURIHosts []string `json:"allowedURIHosts,omitempty"`

	// AllowEnvValueFrom lets spec.serve.env[].valueFrom read Secrets,
	// ConfigMaps and fields of the claim's namespace into the servers.
	// Defaults to true.
	// +optional
	AllowEnvValueFrom *bool `json:"allowEnvValueFrom,omitempty"`

	// AllowPVCURIs lets a claim mount an existing PersistentVolumeClaim of
	// its namespace as its weights (pvc://claim/path). Defaults to true.
	// +optional
	AllowPVCURIs *bool `json:"allowPVCURIs,omitempty"`

	// DeniedServeArgs lists the model server arguments that
	// spec.serve.args may not pass, each a flag such as
	// "--trust-remote-code". A denied flag is refused also as
	// --flag=value, with '_' for '-' (--trust_remote_code, which vLLM
	// reads alike), abbreviated (--trust-remote, which Python's argparse
	// expands), and as a word of an argument (an sh -c script). "*" denies
	// every argument: spec.serve.args is then refused and the runtime
	// preset's arguments are the only ones. Left out while a policy is set,
	// it is ["--trust-remote-code"] (the server would run Python code from
	// the model's repository); [] denies nothing. The preset's own
	// arguments (input.runtimes) are the platform's and never checked.
	// +optional
	// +kubebuilder:validation:MaxItems=64
	// +kubebuilder:validation:items:MinLength=1
	// +kubebuilder:validation:items:MaxLength=128
	DeniedServeArgs []string `json:"deniedServeArgs,omitempty"`

	// AllowedServeEnv lists the environment variables spec.serve.env may
	// set, each a name (VLLM_LOGGING_LEVEL) or a prefix ending in '*'
	// (FAKE_*); a claim setting any other is refused. [] allows none. Left
	// out while a policy is set, every variable is allowed but those that
	// load or run code or move where code is found (the dynamic loader's,
	// the interpreters' and the shells' hooks and search paths, PATH, HOME:
	// DefaultDeniedServeEnv) and the runtime's own flag variables
	// (input.runtimes.<framework>.flags.variables, such as llama-server's
	// LLAMA_ARG_* and every flag of TGI's launcher), which would pass a
	// flag around deniedServeArgs. The variables the function itself sets
	// and those that would let servers reach a hub are refused in any case.
	// +optional
	// +kubebuilder:validation:MaxItems=128
	// +kubebuilder:validation:items:MinLength=1
	// +kubebuilder:validation:items:MaxLength=128
	// +kubebuilder:validation:items:Pattern=`^[-._a-zA-Z][-._a-zA-Z0-9]*\*?$`
	AllowedServeEnv []string `json:"allowedServeEnv,omitempty"`

	// PlainHTTPCredentialHosts lists the hosts (host[:port], compared as
	// allowedURIHosts' are) to which pull Jobs may send credentials over
	// plain http://. Every other http://
	// source with credentials is refused: they would cross the network in
	// clear text.
	// +optional
	// +kubebuilder:validation:MaxItems=64
	// +kubebuilder:validation:items:MaxLength=300
	PlainHTTPCredentialHosts []string `json:"plainHTTPCredentialHosts,omitempty"`

	// AllowedCredentialSecrets lists the Secrets (by name, in the claim's
	// namespace) that a claim may name as credentials: in
	// spec.model.credentialsSecretRef, spec.traffic[].credentialsSecretRef,
	// spec.adapters[].credentialsSecretRef or a ModelCache's
	// spec.credentialsSecretRef. A claim naming another is refused. Left
	// out, any name is allowed (and credentialSecretSelector alone decides).
	// A pull Job sends the Secret's value to the weights' source, so
	// without a restriction a tenant who may create claims but not read
	// Secrets could send any Secret of the namespace that has the right
	// key to a source the policy allows.
	// +optional
	// +kubebuilder:validation:MaxItems=64
	// +kubebuilder:validation:items:MaxLength=253
	AllowedCredentialSecrets []string `json:"allowedCredentialSecrets,omitempty"`

	// CredentialSecretSelector restricts the Secrets a claim may name as
	// credentials to those whose labels it selects, e.g. matchLabels
	// inference.inferno.io/credentials: "true". The function reads the
	// Secret's labels (a required resource; never its values), and a claim
	// naming a Secret outside it is refused; until Crossplane has fetched
	// the Secret nothing is pulled with it. With allowedCredentialSecrets
	// too, a Secret must satisfy both. Left out, labels are not checked.
	// +optional
	CredentialSecretSelector *metav1.LabelSelector `json:"credentialSecretSelector,omitempty"`
}

// NetworkPolicySettings say which namespaces may reach the model servers,
// and what the servers may reach.
type NetworkPolicySettings struct {
	// Enabled renders the NetworkPolicies. Defaults to false.
	Enabled bool `json:"enabled"`

	// GatewayNamespace is the namespace of the Gateway's data plane, whose
	// pods forward routed requests to the servers. Defaults to
	// traffic.gateway.namespace. Some Gateway implementations run their
	// proxies in a namespace of their own: name that one here.
	// +optional
	// +kubebuilder:validation:MaxLength=63
	GatewayNamespace string `json:"gatewayNamespace,omitempty"`

	// MetricsNamespace is where the metrics scraper (Prometheus) runs.
	// The servers admit it on their metrics port (the runtime's
	// metricsPort, else its serving port), the endpoint picker on its
	// metrics port. Required when Prometheus reads the servers
	// (input.monitoring.podMonitor, a claim that scales to zero with
	// input.keda, or an autoscaler on the runtime's concurrency metric,
	// spec.autoscaling.targetConcurrency, which a custom-metrics adapter
	// answers from Prometheus): such claims are refused without it rather
	// than admit a guessed namespace, which whoever may create a namespace
	// of that name could use, or leave Prometheus (and KEDA, and the
	// autoscaler) blind.
	// +optional
	// +kubebuilder:validation:MaxLength=63
	MetricsNamespace string `json:"metricsNamespace,omitempty"`

	// KEDANamespace is where KEDA's HTTP add-on runs. Its interceptor
	// forwards the requests of a claim that scales to zero through the
	// add-on (input.keda.httpAddOn) to the claim's servers, which admit it
	// only then. Defaults to the namespace of the add-on's scaler
	// (input.keda.httpAddOn.scalerAddress, <service>.<namespace>:<port>),
	// which runs beside the interceptor; set, it must agree with it, and
	// it is required when the address names no namespace (an IP, a bare
	// Service name).
	// +optional
	// +kubebuilder:validation:MaxLength=63
	KEDANamespace string `json:"kedaNamespace,omitempty"`

	// DNSNamespace is where the cluster's DNS server (kube-dns, CoreDNS)
	// runs: the servers may reach its pods on port 53, UDP and TCP, and
	// no other pod of it. Defaults to kube-system. A query to the DNS
	// Service's ClusterIP is admitted too: kube-proxy (and the CNIs that
	// replace it) translates the address to the DNS pod's before the
	// policy is judged. A node-local DNS cache listens on a link-local
	// address instead: list that address in egress.
	// +optional
	// +kubebuilder:validation:MaxLength=63
	DNSNamespace string `json:"dnsNamespace,omitempty"`

	// Egress is what the model servers may reach besides DNS and, for a
	// multi-node claim, their own group's pods: nothing else by default,
	// so that code running in a server (a tenant's weights, a template, a
	// flaw in the runtime) reaches neither the cluster's services nor the
	// internet nor the cloud's metadata endpoint. The servers need no
	// more: their weights and adapters are pulled by Jobs, whose egress
	// is left open, and their clients, the kubelet's probes and the
	// metrics scrape connect to them. List here what a runtime of this
	// platform does call: a tracing collector, a cache, the API server
	// for servers given a token (serverServiceAccount.automountToken).
	// +optional
	// +kubebuilder:validation:MaxItems=32
	Egress []EgressRule `json:"egress,omitempty"`
}

// DefaultDNSNamespace is input.networkPolicy.dnsNamespace's default, where
// kubeadm and most distributions run the cluster's DNS.
const DefaultDNSNamespace = "kube-system"

// EgressRule is one destination the model servers may reach: an address
// range or a namespace's pods, on some ports or all of them.
type EgressRule struct {
	// CIDR is an IPv4 or IPv6 address range, such as 10.20.0.0/16 or
	// 192.0.2.10/32, written with its host bits zero. Set either cidr or
	// namespace.
	// +optional
	// +kubebuilder:validation:MaxLength=43
	CIDR string `json:"cidr,omitempty"`

	// Except are ranges inside cidr that stay closed, such as a cloud's
	// metadata endpoint 169.254.169.254/32. Only with cidr.
	// +optional
	// +kubebuilder:validation:MaxItems=16
	Except []string `json:"except,omitempty"`

	// Namespace admits every pod of the namespace of this name (matched by
	// its kubernetes.io/metadata.name label). Set either cidr or
	// namespace.
	// +optional
	// +kubebuilder:validation:MaxLength=63
	Namespace string `json:"namespace,omitempty"`

	// Ports are the destination's ports the servers may reach; left out,
	// every port.
	// +optional
	// +kubebuilder:validation:MaxItems=16
	Ports []EgressPort `json:"ports,omitempty"`
}

// EgressPort is one port of an EgressRule.
type EgressPort struct {
	// Port is the port number.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=65535
	Port int32 `json:"port"`

	// Protocol is TCP or UDP. Defaults to TCP.
	// +optional
	// +kubebuilder:validation:Enum=TCP;UDP
	Protocol corev1.Protocol `json:"protocol,omitempty"`
}

// ServiceAccountSettings name the ServiceAccount of the model servers.
type ServiceAccountSettings struct {
	// Name of the ServiceAccount, which must exist in every namespace that
	// claims of this Composition live in.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	Name string `json:"name"`

	// AutomountToken mounts the ServiceAccount's Kubernetes API token into
	// the servers (automountServiceAccountToken). Defaults to false: grant
	// it only to servers that call the API server, and give the
	// ServiceAccount no more RBAC than they need.
	// +optional
	AutomountToken *bool `json:"automountToken,omitempty"`
}

// RolloutSettings are the rolling-update bounds of the model servers'
// Deployments. They may not both be 0: a rollout could then never replace
// a server.
type RolloutSettings struct {
	// MaxSurge is how many servers a rollout may start above the desired
	// count, as a number or a percentage of it (rounded up). Each surge
	// server is a whole server: with GPUs it needs a spare GPU (or node
	// capacity for one more server) while the rollout runs, or it stays
	// Pending and the rollout waits. Defaults to 1.
	// +optional
	// +kubebuilder:validation:XIntOrString
	MaxSurge *intstr.IntOrString `json:"maxSurge,omitempty"`

	// MaxUnavailable is how many of the desired servers a rollout may stop
	// before their replacements are ready, as a number or a percentage
	// (rounded down). Above 0 a rollout drops capacity: the remaining
	// servers take their requests, and a one-server service stops
	// answering while its server is replaced. It lets a platform with no
	// spare GPU roll at all (with maxSurge 0). Defaults to 0.
	// +optional
	// +kubebuilder:validation:XIntOrString
	MaxUnavailable *intstr.IntOrString `json:"maxUnavailable,omitempty"`
}

// TrafficSettings say how traffic splits are routed.
type TrafficSettings struct {
	// Gateway, when set, makes every claim with spec.traffic also get a
	// Gateway API HTTPRoute (gateway.networking.k8s.io/v1) attached to this
	// Gateway, with one weighted backend per version: an exact split, its
	// weights scaled by each version's ready servers. A claim keeps its
	// route when its split ends (all weight on the claim's Service), until
	// the Input no longer names a Gateway.
	// +optional
	Gateway *GatewayParent `json:"gateway,omitempty"`
}

// GatewayParent names the Gateway, and optionally its listener, that
// HTTPRoutes attach to.
type GatewayParent struct {
	// Name of the Gateway.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	Name string `json:"name"`

	// Namespace of the Gateway. Empty means the claim's namespace. A Gateway
	// in another namespace must allow routes from the claims' namespaces
	// (its listener's allowedRoutes).
	// +optional
	// +kubebuilder:validation:MaxLength=63
	Namespace string `json:"namespace,omitempty"`

	// SectionName is the Gateway's listener to attach to. Empty attaches to
	// every listener that accepts the route.
	// +optional
	// +kubebuilder:validation:MaxLength=253
	SectionName string `json:"sectionName,omitempty"`

	// Domain gives every route the hostname <name>.<namespace>.<domain>
	// and the claim status.routeURL; the Gateway's listener must serve
	// it (e.g. *.<domain>). Required: without it a route has no hostname
	// and matches every request on the Gateway, so two claims' routes
	// would match the same requests; claims are refused until it is set.
	// +optional
	// +kubebuilder:validation:MaxLength=200
	Domain string `json:"domain,omitempty"`

	// Scheme of status.routeURL: http or https, as the listener serves.
	// Defaults to http.
	// +optional
	// +kubebuilder:validation:Enum=http;https
	Scheme string `json:"scheme,omitempty"`

	// InferenceExtension routes every claim through an InferencePool and
	// an endpoint picker of its own (the Gateway API Inference Extension)
	// instead of to its Services; see docs/inference-pool.md.
	// +optional
	InferenceExtension *InferenceExtension `json:"inferenceExtension,omitempty"`
}

// RuntimePreset is how one framework's model server runs.
type RuntimePreset struct {
	// Image of the model server, pinned by tag or digest.
	// +optional
	Image string `json:"image,omitempty"`

	// Command replaces the image's entrypoint. Empty keeps it.
	// +optional
	Command []string `json:"command,omitempty"`

	// Args of the server. $(MODEL_DIR), $(MODEL_NAME), $(MODEL_VERSION) and
	// $(PORT) expand to the mounted weights, the claim's name, the model
	// version and the port.
	// +optional
	Args []string `json:"args,omitempty"`

	// Env adds environment variables to every server of this framework.
	// +optional
	Env []corev1.EnvVar `json:"env,omitempty"`

	// Port the server listens on.
	// +optional
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=65535
	Port *int32 `json:"port,omitempty"`

	// HealthPath is the HTTP path that answers 200 once the model is loaded.
	// The start-up, readiness and liveness probes all use it.
	// +optional
	HealthPath string `json:"healthPath,omitempty"`

	// StartupSeconds is how long a server may take to load its model before
	// it is restarted. Large models take many minutes.
	// +optional
	// +kubebuilder:validation:Minimum=10
	// +kubebuilder:validation:Maximum=86400
	StartupSeconds *int32 `json:"startupSeconds,omitempty"`

	// SharedMemory mounts a memory-backed /dev/shm, which runtimes that
	// share tensors between processes (vLLM, TGI) need.
	// +optional
	SharedMemory *bool `json:"sharedMemory,omitempty"`

	// ConcurrencyMetric is the Pods metric, as the cluster's custom metrics
	// adapter serves it, that counts in-flight requests per server. Claims
	// that set spec.autoscaling.targetConcurrency scale on it; a framework
	// without one refuses such claims. Claims that scale to zero
	// (input.keda) have KEDA query Prometheus for it under the same name,
	// summed over the claim's servers; it must then be a Prometheus metric
	// name.
	// +optional
	ConcurrencyMetric string `json:"concurrencyMetric,omitempty"`

	// MetricsPath is the HTTP path of the server's Prometheus metrics, as
	// a PodMonitor scrapes it (input.monitoring). Empty: the runtime has
	// none, and its claims get no PodMonitor.
	// +optional
	// +kubebuilder:validation:Pattern=`^/[-A-Za-z0-9_./]*$`
	MetricsPath string `json:"metricsPath,omitempty"`

	// MetricsPort is the port of the metrics, when it is not Port.
	// +optional
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=65535
	MetricsPort *int32 `json:"metricsPort,omitempty"`
	// Adapters says how the runtime serves LoRA adapters; a runtime
	// without it refuses spec.adapters.
	// +optional
	Adapters *AdapterPreset `json:"adapters,omitempty"`
	// MultiNode lets claims of this framework spread one server over
	// several nodes (spec.nodes, spec.parallelism). Replaces the built-in
	// one as a whole; the vLLM preset has one.
	// +optional
	MultiNode *MultiNodePreset `json:"multiNode,omitempty"`
	// Flags says where else than its command line the server reads its
	// options, and which of its flags a claim may not pass
	// (spec.serve.args) or set through a variable (spec.serve.env).
	// Replaces the built-in table as a whole; {} judges no flag of the
	// runtime beyond input.policy.deniedServeArgs.
	// +optional
	Flags *ServerFlags `json:"flags,omitempty"`
	// Options translates the claims' typed server options
	// (spec.serve.options) into this runtime's flags or variables, entry
	// by entry over the built-in table; a claim setting an option without
	// an entry is refused. Triton and fake have none.
	// +optional
	Options *OptionsPreset `json:"options,omitempty"`
}

// PullerPreset is how weights are downloaded for one URI scheme.
//
// The command runs in the pull Job with these environment variables:
// MODEL_URI (the whole URI), MODEL_SOURCE (the URI without its scheme),
// MODEL_REVISION (may be empty) and TARGET_DIR (an empty or partly filled
// directory on the cache volume). It must be idempotent: the built-in
// commands exit at once when TARGET_DIR/.inferno-complete exists and write
// that marker last.
type PullerPreset struct {
	// Image that has the download tool, pinned by tag or digest.
	// +optional
	Image string `json:"image,omitempty"`

	// Command that downloads MODEL_SOURCE into TARGET_DIR.
	// +optional
	Command []string `json:"command,omitempty"`

	// TokenEnv is the environment variable that receives the credential:
	// the key named by a claim's credentialsSecretRef.key, or, without a
	// key, the Secret's key of the same name (HF_TOKEN for hf://,
	// GOOGLE_CREDENTIALS_JSON for gs://, BEARER_TOKEN for http(s)://). It
	// is the only variable a Secret reaches, by secretKeyRef; s3:// reads
	// AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY and, if present,
	// AWS_SESSION_TOKEN instead. A puller without one takes no
	// credentials.
	// +optional
	TokenEnv string `json:"tokenEnv,omitempty"`
}

// StorageDefaults are the cache volume defaults.
type StorageDefaults struct {
	// Size of the cache volume.
	// +optional
	Size *resource.Quantity `json:"size,omitempty"`

	// StorageClassName of the cache volume. Empty uses the cluster default.
	// +optional
	StorageClassName string `json:"storageClassName,omitempty"`

	// AccessMode of the cache volume.
	// +optional
	// +kubebuilder:validation:Enum=ReadWriteOnce;ReadWriteMany
	AccessMode string `json:"accessMode,omitempty"`
}

// ResourceDefaults are the default requests of a model server.
type ResourceDefaults struct {
	// CPU request.
	// +optional
	CPU *resource.Quantity `json:"cpu,omitempty"`

	// Memory request and limit.
	// +optional
	Memory *resource.Quantity `json:"memory,omitempty"`
}

// Scheduling says which nodes a Composition's pods run on.
type Scheduling struct {
	// NodeSelector of every server and pull pod. Pull Jobs carry it too:
	// a WaitForFirstConsumer volume (local-path and most node-local
	// classes) is bound on the node of the pull, and the servers that
	// mount it can only follow.
	// +optional
	NodeSelector map[string]string `json:"nodeSelector,omitempty"`

	// Tolerations of every server and pull pod, e.g. of the pool's taint.
	// +optional
	Tolerations []corev1.Toleration `json:"tolerations,omitempty"`
}

// GPUSettings say how GPUs are requested and scheduled.
type GPUSettings struct {
	// ResourceName is the extended resource that counts GPUs.
	// Defaults to nvidia.com/gpu.
	// +optional
	ResourceName string `json:"resourceName,omitempty"`

	// NodeSelector of pods that request GPUs.
	// +optional
	NodeSelector map[string]string `json:"nodeSelector,omitempty"`

	// Tolerations of pods that request GPUs. Defaults to tolerating the
	// resource name's NoSchedule taint, as GPU node pools usually carry.
	// +optional
	Tolerations []corev1.Toleration `json:"tolerations,omitempty"`
}
