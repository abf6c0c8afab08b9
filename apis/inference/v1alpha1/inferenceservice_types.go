package v1alpha1

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Framework names the model server runtime that serves the weights.
// +kubebuilder:validation:Enum=vllm;sglang;triton;tgi;llamacpp;ollama;fake
type Framework string

// Supported frameworks. Each has a runtime preset (image, port, arguments,
// health path, start-up budget) in the function's Input.
const (
	FrameworkVLLM     Framework = "vllm"
	FrameworkSGLang   Framework = "sglang"
	FrameworkTriton   Framework = "triton"
	FrameworkTGI      Framework = "tgi"
	FrameworkLlamaCPP Framework = "llamacpp"
	FrameworkOllama   Framework = "ollama"
	FrameworkFake     Framework = "fake"
)

// Frameworks lists every supported framework, in a stable order.
var Frameworks = []Framework{FrameworkVLLM, FrameworkSGLang, FrameworkTriton, FrameworkTGI, FrameworkLlamaCPP, FrameworkOllama, FrameworkFake}

// AccessMode is the access mode of the volume that caches the weights.
// ReadWriteOncePod is not offered: the pull Job writes the volume while the
// servers read it, and a new revision is pulled while they keep reading.
// +kubebuilder:validation:Enum=ReadWriteOnce;ReadWriteMany
type AccessMode string

// Phase summarises where an InferenceService is in its life.
// +kubebuilder:validation:Enum=Pending;Pulling;Starting;Serving;Degraded;Failed;Standby;Idle
type Phase string

// Phases of an InferenceService.
const (
	// PhasePending: the pull waits for what it needs first (its
	// credentials Secret, the platform's check of it, a ModelCache).
	PhasePending Phase = "Pending"
	// PhasePulling: the pull Job is created or downloading the weights
	// into the cache volume.
	PhasePulling Phase = "Pulling"
	// PhaseStarting: the weights are ready; the model servers are loading them.
	PhaseStarting Phase = "Starting"
	// PhaseServing: every desired replica is available.
	PhaseServing Phase = "Serving"
	// PhaseDegraded: the service answers, but not with every desired replica,
	// or a newer model revision failed to pull while the old one serves on.
	PhaseDegraded Phase = "Degraded"
	// PhaseFailed: the service cannot serve without a change from the user.
	PhaseFailed Phase = "Failed"
	// PhaseStandby: a version of a traffic split has weight 0: its weights
	// are pulled and its objects kept, but no server runs.
	PhaseStandby Phase = "Standby"
	// PhaseIdle: the service scales to zero (spec.replicas.min 0 with
	// autoscaling) and KEDA has stopped every server after a quiet
	// cooldown; it answers again once a request wakes it. The weights stay
	// cached and status.url stays set.
	PhaseIdle Phase = "Idle"
)

// XInferenceService is the composite resource behind an InferenceService
// claim: a model, pulled once into a cache volume and served by a
// Deployment of the chosen runtime behind a Service.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:scope=Cluster,categories=inference
// +kubebuilder:printcolumn:name="Phase",type=string,JSONPath=".status.phase"
// +kubebuilder:printcolumn:name="Model",type=string,JSONPath=".spec.model.uri"
// +kubebuilder:printcolumn:name="URL",type=string,JSONPath=".status.url"
type XInferenceService struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec is what the app team asks for.
	Spec InferenceServiceSpec `json:"spec"`
	// Status is what the function observed and reports back.
	Status InferenceServiceStatus `json:"status,omitempty"`
}

// InferenceServiceSpec describes the model to serve and how to serve it.
// +kubebuilder:validation:XValidation:rule="!has(self.traffic) || self.traffic.map(t, t.weight).sum() == 100",message="spec.traffic: the weights must sum to 100"
// +kubebuilder:validation:XValidation:rule="!has(self.traffic) || (has(self.model.version) && self.traffic.exists(t, t.version == self.model.version))",message="spec.traffic must list spec.model.version, the primary version; set spec.model.version and give it a weight"
// +kubebuilder:validation:XValidation:rule="!has(self.traffic) || self.traffic.all(t, (has(self.model.version) && t.version == self.model.version) || has(t.uri))",message="spec.traffic: every version other than spec.model.version needs a uri"
// +kubebuilder:validation:XValidation:rule="!has(self.traffic) || !has(self.model.version) || self.traffic.all(t, t.version != self.model.version || (!has(t.uri) && !has(t.revision) && !has(t.credentialsSecretRef)))",message="spec.traffic: the primary version's weights are spec.model.uri and spec.model.revision, and its credentials spec.model.credentialsSecretRef; remove uri, revision and credentialsSecretRef from its traffic entry"
type InferenceServiceSpec struct {
	// Model says which weights to serve and with which runtime.
	Model ModelSpec `json:"model"`

	// Serve overrides parts of the runtime preset the platform team chose
	// for the framework. Leave it out to use the preset as it is.
	// +optional
	Serve *ServeSpec `json:"serve,omitempty"`

	// Replicas bounds the number of model servers. Without autoscaling the
	// Deployment runs replicas.min servers.
	// +optional
	Replicas *ReplicasSpec `json:"replicas,omitempty"`

	// Resources each model server requests. Unset fields take the platform
	// defaults.
	// +optional
	Resources *ResourcesSpec `json:"resources,omitempty"`

	// Autoscaling scales the servers between replicas.min and replicas.max
	// with a HorizontalPodAutoscaler.
	// +optional
	Autoscaling *AutoscalingSpec `json:"autoscaling,omitempty"`

	// Storage sizes the PersistentVolumeClaim that caches the weights. It is
	// ignored for pvc:// models, which mount the user's own claim.
	// +optional
	Storage *StorageSpec `json:"storage,omitempty"`

	// Traffic splits requests between versions of the model, for a canary.
	// Each entry names a version and the percent of requests it gets; the
	// weights sum to 100 and spec.model.version, the primary, is one of
	// them. Every other entry names its own weights (uri, optional
	// revision); framework, serve, resources and storage are shared. Each
	// version gets its own pull Job, Deployment and Service
	// (<name>-<version>).
	//
	// The servers of spec.replicas.min are apportioned by largest
	// remainder: each version gets the whole part of min × weight / 100,
	// the servers left over go to the largest fractional parts, and a
	// version of weight above 0 gets at least one (taken from the version
	// most above its share). So the total is replicas.min, or the number
	// of versions of weight above 0 when that is more (min 4 at 90/10 runs
	// 3 and 1; min 1 over three versions runs 3); a min of 0 runs none.
	// With autoscaling, each version's autoscaler is bounded by its shares
	// of min and of max, apportioned the same way. status.traffic[].replicas
	// reports each share and adds up to the total.
	//
	// The Service <name> spreads requests over the servers of every
	// version, so without a Gateway the split follows the number of
	// servers per version and is approximate. Promote a canary by moving
	// spec.model to it and dropping the old entry. Leave traffic out to
	// serve spec.model alone.
	// +optional
	// +listType=map
	// +listMapKey=version
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=8
	Traffic []TrafficTarget `json:"traffic,omitempty"`

	// Adapters are LoRA adapters served beside the base model, each under
	// its own name (docs/adapters.md). Only runtimes that serve adapters
	// (vllm, fake) accept them, and not with spec.traffic.
	// +optional
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MaxItems=16
	Adapters []AdapterSpec `json:"adapters,omitempty"`

	// LoRA tunes how the runtime serves spec.adapters.
	// +optional
	LoRA *LoRASpec `json:"lora,omitempty"`
	// Nodes spreads each model server over this many pods, one per node,
	// for models larger than one node: the servers then run as a
	// LeaderWorkerSet (leaderworkerset.x-k8s.io/v1, which the cluster must
	// have installed) instead of a Deployment, each replica a group of a
	// leader, which serves, and nodes - 1 workers, each pod with
	// spec.resources.gpu GPUs. Only runtimes whose preset has multiNode
	// (vLLM, over Ray) support more than 1. Defaults to 1: a Deployment.
	// See docs/multi-node.md.
	// +optional
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=64
	Nodes *int32 `json:"nodes,omitempty"`

	// Parallelism splits the model over the server's GPUs (tensor and
	// pipeline parallel sizes); tensor × pipeline must equal nodes × gpu.
	// Leave it out for tensor = gpu, pipeline = nodes.
	// +optional
	Parallelism *ParallelismSpec `json:"parallelism,omitempty"`

	// Placement serves the service on workload clusters the platform
	// offers instead of this one (docs/fleet.md). Leave it out to serve it
	// here.
	// +optional
	Placement *PlacementSpec `json:"placement,omitempty"`
}

// TrafficTarget is one version of the model and its share of the requests.
type TrafficTarget struct {
	// Version names the version: spec.model.version for the primary, or a
	// new tag for another version. It names that version's Deployment and
	// Service, <name>-<version>, so it is a DNS label: lowercase letters,
	// digits and '-'.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:XValidation:rule="self.matches('^[a-z0-9]([-a-z0-9]*[a-z0-9])?$')",message="must be lowercase letters, digits and '-', starting and ending with a letter or digit: it names the version's Deployment and Service"
	Version string `json:"version"`

	// Weight is the percent of requests this version gets, 0 to 100. A
	// version of weight 0 keeps its weights pulled and its objects, with
	// no server running.
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=100
	Weight int32 `json:"weight"`

	// URI of this version's weights, in the forms spec.model.uri takes.
	// Required for every version but the primary, whose weights are
	// spec.model.uri.
	// +optional
	// +kubebuilder:validation:MinLength=6
	// +kubebuilder:validation:MaxLength=2048
	// +kubebuilder:validation:XValidation:rule="self.matches('^(hf|s3|gs|https?|pvc|oci)://.+')",message="must start with hf://, s3://, gs://, http://, https://, pvc:// or oci:// and name a model"
	// +kubebuilder:validation:XValidation:rule="!self.matches('^[a-z0-9]+://[^/]*@')",message="must not carry credentials (user:password@); put them in a Secret and set spec.model.credentialsSecretRef"
	URI string `json:"uri,omitempty"`

	// Revision pins this version's source, as spec.model.revision does.
	// +optional
	// +kubebuilder:validation:MaxLength=128
	// +kubebuilder:validation:Pattern=`^[A-Za-z0-9][-A-Za-z0-9_./]*$`
	Revision string `json:"revision,omitempty"`

	// CredentialsSecretRef names the Secret this version's pull Job reads
	// its source's credentials from, as spec.model.credentialsSecretRef
	// does for the primary. Without it a version uses
	// spec.model.credentialsSecretRef only when its uri has the same
	// scheme and the same authority as spec.model.uri (the organisation of
	// hf://, the bucket of s3:// and gs://, the host and port of
	// http(s)://): credentials never travel to a source they were not
	// given for. Set it, to the same Secret if need be, for any other.
	// +optional
	CredentialsSecretRef *SecretKeyReference `json:"credentialsSecretRef,omitempty"`
}

// ModelSpec identifies the weights and the runtime that serves them.
// +kubebuilder:validation:XValidation:rule="has(self.uri) || has(self.cacheRef)",message="spec.model needs a uri, or a cacheRef to a ModelCache that holds the weights"
// +kubebuilder:validation:XValidation:rule="!has(self.cacheRef) || !has(self.credentialsSecretRef)",message="spec.model.credentialsSecretRef: the ModelCache pulls the weights, so set the credentials there and remove them here"
type ModelSpec struct {
	// URI of the weights. Supported schemes: hf://org/model (Hugging Face
	// Hub), s3://bucket/prefix, gs://bucket/prefix, http(s)://host/path (a
	// single file), pvc://claim[/path] (an existing PersistentVolumeClaim
	// in the same namespace, mounted read-only, nothing is pulled) and
	// oci://registry/repository:tag or oci://registry/repository@sha256:<digest>
	// (an OCI image or artifact the kubelet mounts read-only as an image
	// volume, where the platform's Input allows it; pin a digest).
	// Credentials never go in the URI: use credentialsSecretRef. With
	// cacheRef it may be left out; set, it must be the ModelCache's.
	// +optional
	// +kubebuilder:validation:MinLength=6
	// +kubebuilder:validation:MaxLength=2048
	// +kubebuilder:validation:XValidation:rule="self.matches('^(hf|s3|gs|https?|pvc|oci)://.+')",message="must start with hf://, s3://, gs://, http://, https://, pvc:// or oci:// and name a model"
	// +kubebuilder:validation:XValidation:rule="!self.matches('^[a-z0-9]+://[^/]*@')",message="must not carry credentials (user:password@); put them in a Secret and set spec.model.credentialsSecretRef"
	URI string `json:"uri,omitempty"`

	// CacheRef serves weights a ModelCache in the same namespace already
	// pulled, instead of pulling them for this service: nothing is
	// downloaded, no volume is made, and the servers mount the cache's
	// volume read-only at the revision's directory (spec.model.revision,
	// or the cache's first revision). The servers start once the cache has
	// that revision; the weights outlive this service, and several
	// services can share them.
	// +optional
	CacheRef *CacheReference `json:"cacheRef,omitempty"`

	// Version is the app team's own tag for this model, e.g. "1" or
	// "2024-06". It becomes the app.kubernetes.io/version label and the
	// MODEL_VERSION environment variable of the servers.
	// +optional
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:Pattern=`^[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$`
	Version string `json:"version,omitempty"`

	// Revision pins the source: a Hugging Face branch, tag or commit, or an
	// object version. A new revision pulls into a new directory with a new
	// Job; the servers keep serving the old weights until the pull completes.
	// +optional
	// +kubebuilder:validation:MaxLength=128
	// +kubebuilder:validation:Pattern=`^[A-Za-z0-9][-A-Za-z0-9_./]*$`
	Revision string `json:"revision,omitempty"`

	// Framework is the model server runtime.
	// +optional
	// +kubebuilder:default=vllm
	Framework Framework `json:"framework,omitempty"`

	// CredentialsSecretRef names a Secret in the claim's namespace that the
	// pull Job reads the source's credentials from, each by secretKeyRef:
	// only the variables the puller reads for credentials, never the whole
	// Secret (so it cannot set an endpoint or a proxy). With key set, that
	// key becomes the puller's token variable (HF_TOKEN for hf://,
	// GOOGLE_CREDENTIALS_JSON for gs://, BEARER_TOKEN for http(s)://);
	// without it the Secret's key of that same name does, and for s3:// the
	// keys AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (and
	// AWS_SESSION_TOKEN, if present) do; s3:// takes no key. The Secret
	// must exist with those keys before anything is pulled
	// (CredentialsMissing), and the platform may restrict which Secrets
	// serve (input.policy.allowedCredentialSecrets,
	// credentialSecretSelector). Servers that download nothing never see
	// it. For oci:// weights it
	// names an image pull Secret (type kubernetes.io/dockerconfigjson,
	// without key) that the servers' pods list in imagePullSecrets.
	// +optional
	CredentialsSecretRef *SecretKeyReference `json:"credentialsSecretRef,omitempty"`
}

// CacheReference names a ModelCache in the claim's namespace.
type CacheReference struct {
	// Name of the ModelCache.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:Pattern=`^[a-z]([-a-z0-9]*[a-z0-9])?$`
	Name string `json:"name"`

	// Namespace of the ModelCache. A volume mounts only in its own
	// namespace, so this must be the claim's; leave it out.
	// +optional
	// +kubebuilder:validation:MaxLength=63
	Namespace string `json:"namespace,omitempty"`
}

// SecretKeyReference points at a Secret, or one key of it, in the claim's
// namespace.
type SecretKeyReference struct {
	// Name of the Secret.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$`
	Name string `json:"name"`

	// Key within the Secret that holds the token, for the pullers that
	// read one (hf, gs, http, https). Leave it out to read the key named
	// after the puller's variable (HF_TOKEN, GOOGLE_CREDENTIALS_JSON,
	// BEARER_TOKEN; the AWS keys for s3://).
	// +optional
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^[-._a-zA-Z0-9]+$`
	Key string `json:"key,omitempty"`
}

// ServeSpec overrides parts of the framework's runtime preset.
type ServeSpec struct {
	// Image of the model server, replacing the preset's.
	// +optional
	// +kubebuilder:validation:MaxLength=512
	Image string `json:"image,omitempty"`

	// Port the model server listens on inside the pod. The Service always
	// listens on port 80 and forwards here.
	// +optional
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=65535
	Port *int32 `json:"port,omitempty"`

	// Args replace the preset's arguments. $(MODEL_DIR), $(MODEL_NAME),
	// $(MODEL_VERSION) and $(PORT) expand to the mounted weights, the
	// claim's name, spec.model.version and the port.
	// +optional
	// +kubebuilder:validation:MaxItems=128
	Args []string `json:"args,omitempty"`

	// Env adds environment variables to the model server. Secrets are read
	// by reference (valueFrom.secretKeyRef), never inline.
	// +optional
	// +kubebuilder:validation:MaxItems=128
	Env []corev1.EnvVar `json:"env,omitempty"`

	// Options are typed server settings (context length, dtype,
	// quantization, parallel sequences, GPU memory, chat template),
	// translated into the runtime's own flags or variables. Unlike args,
	// a policy that denies free arguments keeps them.
	// +optional
	Options *ServeOptions `json:"options,omitempty"`
}

// ReplicasSpec bounds the number of model servers.
// +kubebuilder:validation:XValidation:rule="!has(self.min) || !has(self.max) || self.min <= self.max",message="spec.replicas.min must not exceed spec.replicas.max"
type ReplicasSpec struct {
	// Min is the number of servers without autoscaling, and the floor with
	// it. Zero stops serving but keeps the cached weights; with autoscaling
	// it scales to zero, which the platform must allow (input.keda): a
	// KEDA ScaledObject then replaces the HorizontalPodAutoscaler, stops
	// every server after a quiet cooldown and starts them again on
	// demand (phase Idle in between). Scaling to zero does not combine
	// with spec.traffic. With
	// spec.traffic it is apportioned between the versions (see there):
	// the versions' servers add up to min, or to the number of versions of
	// weight above 0 when that is more.
	// +optional
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=1000
	// +kubebuilder:default=1
	Min *int32 `json:"min,omitempty"`

	// Max is the ceiling for the autoscaler. It defaults to min.
	// +optional
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=1000
	Max *int32 `json:"max,omitempty"`
}

// ResourcesSpec is what each model server requests.
// +kubebuilder:validation:XValidation:rule="!has(self.gpuType) || (has(self.gpu) && self.gpu > 0)",message="gpuType needs gpu above 0"
type ResourcesSpec struct {
	// CPU request, e.g. "4" or "500m". No CPU limit is set, so servers may
	// burst while loading.
	// +optional
	CPU *resource.Quantity `json:"cpu,omitempty"`

	// Memory request and limit, e.g. "16Gi".
	// +optional
	Memory *resource.Quantity `json:"memory,omitempty"`

	// GPU is the number of GPUs per server, requested under the platform's
	// GPU resource name (nvidia.com/gpu by default), or as that many
	// devices of the platform's DeviceClass where it allocates GPUs
	// through Dynamic Resource Allocation. GPU servers also get the
	// platform's GPU node selector and tolerations.
	// +optional
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=64
	GPU *int32 `json:"gpu,omitempty"`

	// GPUType asks for GPUs of a type the platform names (its Input's
	// gpu.dra.types, e.g. h100-80gb), on platforms that allocate GPUs
	// through Dynamic Resource Allocation. Left out, any GPU the platform
	// offers. Needs gpu above 0.
	// +optional
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`
	GPUType string `json:"gpuType,omitempty"`
}

// AutoscalingSpec turns on a HorizontalPodAutoscaler for the servers, or
// a KEDA ScaledObject when spec.replicas.min is 0.
type AutoscalingSpec struct {
	// Enabled creates the HorizontalPodAutoscaler (the ScaledObject with
	// spec.replicas.min 0). The Deployment then leaves spec.replicas to it.
	Enabled bool `json:"enabled"`

	// TargetCPUUtilization is the average CPU utilisation, in percent of the
	// CPU request, the autoscaler aims for. Defaults to 80 when no target is
	// set at all.
	// +optional
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=100
	TargetCPUUtilization *int32 `json:"targetCPUUtilization,omitempty"`

	// TargetConcurrency is the average number of in-flight requests per
	// server the autoscaler aims for. It scales on the runtime's
	// concurrency metric (a Pods metric served by the cluster's custom
	// metrics adapter), which the platform names per framework. Required
	// to scale to zero: with no server running there is no CPU to measure,
	// and the ScaledObject's Prometheus trigger aims for this many
	// in-flight requests per server.
	// +optional
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=100000
	TargetConcurrency *int32 `json:"targetConcurrency,omitempty"`
}

// StorageSpec sizes the volume that caches the weights.
// +kubebuilder:validation:XValidation:rule="!has(self.purgeOnDelete) || self.purgeOnDelete",message="spec.storage.purgeOnDelete: the weights of an InferenceService are deleted with it; to keep weights beyond a service, pull them with a ModelCache and set spec.model.cacheRef"
type StorageSpec struct {
	// Size of the cache volume, e.g. "50Gi". It can grow later (if the
	// storage class allows expansion) but never shrink.
	// +optional
	Size *resource.Quantity `json:"size,omitempty"`

	// StorageClassName of the cache volume. Empty uses the platform
	// default, then the cluster default. Fixed once the volume exists.
	// +optional
	// +kubebuilder:validation:MaxLength=253
	StorageClassName *string `json:"storageClassName,omitempty"`

	// AccessMode of the cache volume. ReadWriteOnce volumes attach to one
	// node, so replicas on other nodes cannot start: use ReadWriteMany for
	// more than one replica across nodes. Fixed once the volume exists.
	// +optional
	AccessMode AccessMode `json:"accessMode,omitempty"`

	// PurgeOnDelete states what happens to the weights when the
	// InferenceService is deleted: they are deleted with it, since
	// Crossplane deletes every object it composed and cannot orphan one.
	// Only true is accepted; weights that outlive a service belong in a
	// ModelCache (see spec.model.cacheRef).
	// +optional
	// +kubebuilder:default=true
	PurgeOnDelete *bool `json:"purgeOnDelete,omitempty"`
}

// InferenceServiceStatus is what the function reports about the service.
type InferenceServiceStatus struct {
	// Phase summarises where the service is in its life.
	// +optional
	Phase Phase `json:"phase,omitempty"`

	// ReadyReplicas is the number of model servers ready to answer.
	// +optional
	ReadyReplicas int32 `json:"readyReplicas"`

	// ServiceName is the Service that fronts the servers, in the claim's
	// namespace.
	// +optional
	ServiceName string `json:"serviceName,omitempty"`

	// URL is the in-cluster address of the service.
	// +optional
	URL string `json:"url,omitempty"`

	// Message explains the phase in words a user can act on.
	// +optional
	Message string `json:"message,omitempty"`

	// Traffic reports each version of spec.traffic as it is served.
	// +optional
	Traffic []TrafficStatus `json:"traffic,omitempty"`

	// RouteURL is the address of the HTTPRoute that splits the traffic
	// exactly, when the platform routes through a Gateway with a domain.
	// +optional
	RouteURL string `json:"routeURL,omitempty"`

	// Pulls are the service's pulls of weights and how far each is, when
	// the platform has pull Jobs report their progress
	// (input.pullProgress): each version's it pulls itself, then each
	// adapter's.
	// +optional
	Pulls []PullStatus `json:"pulls,omitempty"`
	// Adapters reports each adapter of spec.adapters and its phase.
	// +optional
	Adapters []AdapterStatus `json:"adapters,omitempty"`
	// Clusters reports each workload cluster that serves the service, with
	// spec.placement (docs/fleet.md).
	// +optional
	Clusters []ClusterStatus `json:"clusters,omitempty"`
}

// TrafficStatus is one version of a traffic split as it is served.
type TrafficStatus struct {
	// Version is the version's name from spec.traffic.
	Version string `json:"version"`

	// Weight is the percent of requests spec.traffic asks for.
	Weight int32 `json:"weight"`

	// URI of the version's weights.
	URI string `json:"uri"`

	// Replicas is the version's share of spec.replicas.min, apportioned by
	// largest remainder (see spec.traffic): the servers it runs, or its
	// autoscaler's floor. The versions' replicas add up to replicas.min,
	// or to the number of versions of weight above 0 when that is more.
	Replicas int32 `json:"replicas"`

	// ReadyReplicas is the number of the version's servers ready to answer.
	ReadyReplicas int32 `json:"readyReplicas"`

	// ServiceName is the Service that reaches this version alone.
	// +optional
	ServiceName string `json:"serviceName,omitempty"`

	// Phase is where this version is in its life.
	// +optional
	Phase Phase `json:"phase,omitempty"`

	// Message explains the version's phase.
	// +optional
	Message string `json:"message,omitempty"`
}
