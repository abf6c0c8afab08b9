package reason

// Condition reasons. Every reason the function reports is a constant here,
// with its condition type, its status and what it means and what to do,
// so that a condition can only be built from a documented reason
// (reason.condition), the phase switches on the constants, and the
// Conditions table of docs/troubleshooting.md is generated from this
// file (make generate; TestTroubleshootingConditions keeps it fresh).

// Reason is why a condition has its status.
type Reason int

// The reasons, in the order the troubleshooting page lists them.
const (
	PullPending Reason = iota
	Pulling
	PullFailed
	PullStalled
	PullTimedOut
	CredentialsMissing
	Pulled
	UserVolume
	ImageVolumePending
	ImageVolumePulling
	ImageVolumeRefused
	ImageVolumeFailed
	ImageVolumeMounted
	WaitingForWeights
	Creating
	Starting
	Degraded
	RollingOut
	ProgressDeadlineExceeded
	ScalingUp
	ScaledToZero
	Available
	NoTraffic
	Idle
	Waking
	ScalerNotReady
	GroupsStarting
	GroupsDegraded
	GroupsRollingOut
	GroupsAvailable
	CacheUnresolved
	CacheMissing
	CachePulling
	CacheFailed
	CacheMismatch
	CacheRevisionMissing
	Cached
	Approximate
	Routed
	VersionsNotReady
	VersionFailed
	RoutePending
	RouteNotAccepted
	Shifting
	RouteHeld
	AdaptersPulling
	AdapterPullFailed
	AdaptersRollingOut
	AdaptersServed
	PoolSplit
	PoolWaiting
	PickerStarting
	PickerFailed
	PoolPending
	PoolNotAccepted
	PoolRouted
	Placing
	ClustersStarting
	PlacedShort
	ClusterUnreachable
	ClustersFailing
	Placed

	// NumReasons counts the reasons; it is not one.
	NumReasons
)

// doc documents one reason: the condition it sets and the two
// columns of the troubleshooting page.
type doc struct {
	// Name is the reason as Kubernetes shows it.
	Name string
	// Type and Status are the condition the reason always comes with.
	Type   string
	Status bool
	// Means says what the reason means, Do what the reader can do about
	// it: Markdown, one paragraph each.
	Means, Do string
}

// Docs documents every reason.
var Docs = [NumReasons]doc{
	PullPending: {
		Name: "PullPending", Type: ConditionWeightsReady, Status: false,
		Means: "The pull waits before its Job is created: on an InferenceService, for the platform's check of the credentials Secret's labels (`input.policy.credentialSecretSelector`); on a ModelCache, while its volume and pull Jobs are being created. Phase `Pending`.",
		Do:    "Wait a few seconds. If it stays, check `Synced` on the claim and the Events: Crossplane may be unable to create the objects or fetch the Secret (see *Before the function runs*).",
	},
	Pulling: {
		Name: "Pulling", Type: ConditionWeightsReady, Status: false,
		Means: "The pull Job is created or runs (the two read the same, so that the claim's status changes once while they come up). A volume of a `WaitForFirstConsumer` class stays `Pending` until the Job's pod starts; nothing waits for it. Phase `Pulling`. With `input.pullProgress`, `status.message` ends with the pull pod's last report (`3.1 of 15.0 GiB (20%), 120.0 MiB/s, ETA 2m (reported <time>)`, also in `status.pulls`), or `no progress report yet`; the condition's message leaves the figures out.",
		Do:    "Wait: big models take minutes. Follow it with `kubectl -n <ns> logs -f job/<name>-pull-<hash>`. If the pod is `Pending`, `kubectl describe pod` says why (no node with the storage class, quota). A report whose time stops moving is one that stopped coming: the pod's log says `progress: cannot report` with curl's reason (the API server unreachable from the pod, or `apis/rbac.yaml` missing so Crossplane could not create its Role); the download goes on regardless (docs/progress.md).",
	},
	PullFailed: {
		Name: "PullFailed", Type: ConditionWeightsReady, Status: false,
		Means: "The pull Job failed after its retries; the message carries its reason. Phase `Failed` (or `Degraded` while older weights still serve).",
		Do:    "Read the Job's logs with the command in the message. Usual causes: a wrong URI or revision, missing credentials (`spec.model.credentialsSecretRef`, a Secret in the same namespace), a volume too small (`spec.storage.size`). Fix the spec: a new URI or revision makes a new Job. To retry the same one, delete the Job; the function recreates it.",
	},
	PullStalled: {
		Name: "PullStalled", Type: ConditionWeightsReady, Status: false,
		Means: "The pull Job's download made (almost) no progress for `input.pullStallSeconds` (300 s by default), after the puller's own retries: curl moved less than 1 KiB/s, or the hf, s3 or gs puller did not grow its directory. The puller exits 75 and the Job fails at once, without its backoff retries. Phase `Failed` (`Degraded` while older weights serve).",
		Do:    "The source is unreachable or hangs: check it from the namespace (a proxy, a firewall, the NetworkPolicy egress of the platform, a throttled bucket). Once it answers, delete the Job to retry (`kubectl -n <ns> delete job/<name>`); the function recreates it and the puller resumes where the CLI can.",
	},
	PullTimedOut: {
		Name: "PullTimedOut", Type: ConditionWeightsReady, Status: false,
		Means: "The pull Job ran longer than `input.pullDeadlineSeconds` (six hours by default), retries included, and Kubernetes stopped it (`DeadlineExceeded`). Phase `Failed` (`Degraded` while older weights serve).",
		Do:    "Usually very large weights on a slow link: ask the platform team to raise `input.pullDeadlineSeconds`, or pull them once into a ModelCache. Delete the Job to retry.",
	},
	CredentialsMissing: {
		Name: "CredentialsMissing", Type: ConditionWeightsReady, Status: false,
		Means: "The Secret a `credentialsSecretRef` names does not exist in the claim's namespace, or lacks a key its puller reads (`HF_TOKEN`, `GOOGLE_CREDENTIALS_JSON` or `BEARER_TOKEN` without a `key`, the `key` given; for `s3://` `AWS_ACCESS_KEY_ID` and `AWS_SECRET_ACCESS_KEY`; for `oci://` an image pull Secret's `.dockerconfigjson`). The function reads the Secret's key names, never its values. Nothing is pulled until it is there (a pull Job created earlier is kept, and its pod waits for the Secret). Phase `Pending`.",
		Do:    "Create the Secret, or add the key, in the claim's namespace (the message names both), or fix the `credentialsSecretRef` it names. The pull starts on the next reconcile.",
	},
	Pulled: {
		Name: "Pulled", Type: ConditionWeightsReady, Status: true,
		Means: "The weights are in the cache volume.",
		Do:    "Nothing.",
	},
	UserVolume: {
		Name: "UserVolume", Type: ConditionWeightsReady, Status: true,
		Means: "A `pvc://` model: the servers mount the team's own claim read-only and nothing is pulled.",
		Do:    "Nothing. If the servers cannot find the model, check the path after `pvc://<claim>/`.",
	},
	ImageVolumePending: {
		Name: "ImageVolumePending", Type: ConditionWeightsReady, Status: false,
		Means: "An `oci://` model: no pull Job and no volume; the servers' Deployment is being created, and the kubelet pulls the image and mounts it read-only at `/model` as each server's pod starts. Phase `Starting`.",
		Do:    "Wait a few seconds. If it stays, check `Synced` on the claim and the Events.",
	},
	ImageVolumePulling: {
		Name: "ImageVolumePulling", Type: ConditionWeightsReady, Status: false,
		Means: "An `oci://` model: the Deployment exists and no server has started with the image mounted yet. The kubelet pulls the image before the container starts, so a large model shows as pods in `ContainerCreating`; the function sees the Deployment only, not the pods. Phase `Starting`.",
		Do:    "Wait: a pull takes as long as the image is big. If it stays, `kubectl -n <ns> describe pods -l app.kubernetes.io/instance=<name>`: `ErrImagePull`/`ImagePullBackOff` is the registry, the reference or the pull Secret (`spec.model.credentialsSecretRef`, type `kubernetes.io/dockerconfigjson`, with an entry for the registry host); `CreateContainerError` naming the mount is a node runtime without image volumes (containerd before 2.1, CRI-O before 1.31): ask your platform team.",
	},
	ImageVolumeRefused: {
		Name: "ImageVolumeRefused", Type: ConditionWeightsReady, Status: false,
		Means: "An `oci://` model, and the Deployment reports `ReplicaFailure`: the API server refused the servers' pods. If the message names `volumes[].image`, the API server does not serve image volumes (the `ImageVolume` feature is off), although the platform's Input says it does (`input.oci.mode: ImageVolume`). Phase `Starting`.",
		Do:    "Platform team: turn the `ImageVolume` feature gate on (Kubernetes 1.33 and 1.34; on by default from 1.35), or set `input.oci.mode: Refuse`. Other refusals (a quota, Pod Security) are in the message.",
	},
	ImageVolumeFailed: {
		Name: "ImageVolumeFailed", Type: ConditionWeightsReady, Status: false,
		Means: "An `oci://` model, and the Deployment's rollout passed its progress deadline with no server started on the image: it does not pull or does not mount. Phase `Failed` (`Degraded` while older servers answer).",
		Do:    "Look at the pods' events as for `ImageVolumePulling`; fix the reference or the Secret (a new `uri` rolls out anew).",
	},
	ImageVolumeMounted: {
		Name: "ImageVolumeMounted", Type: ConditionWeightsReady, Status: true,
		Means: "An `oci://` model: a server started with the image mounted read-only, so the kubelet pulled it.",
		Do:    "Nothing. A tag (not a digest) can move: servers that start later mount what it names then; pin a digest.",
	},
	WaitingForWeights: {
		Name: "WaitingForWeights", Type: ConditionServerReady, Status: false,
		Means: "The servers start once the first pull completes.",
		Do:    "See `WeightsReady`.",
	},
	Creating: {
		Name: "Creating", Type: ConditionServerReady, Status: false,
		Means: "The Deployment of a version that runs no server yet is being created (one that will run servers reads `Starting` from the call that creates it). Phase `Starting`.",
		Do:    "Wait. If it stays, check `Synced` and the Events.",
	},
	Starting: {
		Name: "Starting", Type: ConditionServerReady, Status: false,
		Means: "No server is ready yet: pods are scheduling, pulling the image or loading the model. The start-up probe allows the runtime's budget (30 minutes for vLLM). Phase `Starting`.",
		Do:    "`kubectl -n <ns> get pods -l app.kubernetes.io/instance=<name>`; a `Pending` pod usually wants GPUs no node has (`kubectl describe pod`; with GPUs through DRA, `input.gpu.dra`, the message names the DeviceClass and type, and a pod's `cannot allocate all claims` means no node has that many free devices matching the pool's and the type's selectors: `kubectl get resourceclaims,resourceslices`); a pod restarting wants more memory (`spec.resources.memory`) or a longer start-up budget (the platform's Input). In a namespace enforcing Pod Security `restricted`, the ReplicaSet's Events show a refused pod.",
	},
	Degraded: {
		Name: "Degraded", Type: ConditionServerReady, Status: false,
		Means: "Some, not all, servers are ready. Phase `Degraded`.",
		Do:    "Look at the pods that are not ready, as for `Starting`. Lower `spec.replicas.min` if the cluster cannot fit them.",
	},
	RollingOut: {
		Name: "RollingOut", Type: ConditionServerReady, Status: false,
		Means: "Every desired server answers, and an updated set is rolling out. Phase `Serving`.",
		Do:    "Wait for the rollout: `kubectl -n <ns> rollout status deployment/<name>`.",
	},
	ProgressDeadlineExceeded: {
		Name: "ProgressDeadlineExceeded", Type: ConditionServerReady, Status: false,
		Means: "The rollout gave up: the Deployment made no progress within its deadline. Phase `Failed` with no server ready, else `Degraded`.",
		Do:    "`kubectl -n <ns> describe deployment/<name>` (the message has the command) and the new pods' Events and logs: usually the image, the arguments (`spec.serve`) or resources. Fix the spec; a new rollout starts.",
	},
	ScalingUp: {
		Name: "ScalingUp", Type: ConditionServerReady, Status: false,
		Means: "The version is getting servers (a weight shift, a promotion or a rollback moved them to it) and not all of them are ready yet, while make before break keeps the versions it takes them from at their count (`TrafficSplit` `Shifting`). Phase `Serving`: it answers with the servers that are ready.",
		Do:    "Wait; if it stays, see `Shifting` and look at the new pods as for `Starting`.",
	},
	ScaledToZero: {
		Name: "ScaledToZero", Type: ConditionServerReady, Status: false,
		Means: "`spec.replicas.min` is 0: no server runs; the weights stay cached. Phase `Degraded`.",
		Do:    "Set `spec.replicas.min` to 1 or more to serve.",
	},
	Available: {
		Name: "Available", Type: ConditionServerReady, Status: true,
		Means: "Every desired server is ready. Phase `Serving`, `status.url` set.",
		Do:    "Nothing. If `Ready` is still `False`, the autoscaler is not yet able to scale (its first check takes up to 15 s).",
	},
	GroupsStarting: {
		Name: "GroupsStarting", Type: ConditionServerReady, Status: false,
		Means: "With `spec.nodes` > 1: no group of the LeaderWorkerSet is ready yet. A group is ready when its leader and every worker are; the leader starts Ray, waits for its workers to join, then loads the model, within the runtime's start-up budget. Also while the LeaderWorkerSet is being created. Phase `Starting`.",
		Do:    "`kubectl -n <ns> get lws,pods -l app.kubernetes.io/instance=<name>`. No pods at all: the LWS controller is not installed or not running (the platform team installs sigs.k8s.io/lws). A `Pending` pod wants GPUs on more nodes than are free. A leader logging `waiting for the N pods of the group` has workers that cannot reach it (a NetworkPolicy, or the Ray port). Workers that never start: the weights volume is not `ReadWriteMany`.",
	},
	GroupsDegraded: {
		Name: "GroupsDegraded", Type: ConditionServerReady, Status: false,
		Means: "With `spec.nodes` > 1: some, not all, groups are ready. A pod that restarts restarts its whole group. Phase `Degraded`.",
		Do:    "Look at the groups' pods as for `GroupsStarting`; lower `spec.replicas.min` if the cluster cannot fit them.",
	},
	GroupsRollingOut: {
		Name: "GroupsRollingOut", Type: ConditionServerReady, Status: false,
		Means: "With `spec.nodes` > 1: every desired group answers, and updated groups are rolling out, one group at a time within `input.rollout` (its bounds count groups). Phase `Serving`.",
		Do:    "Wait; `kubectl -n <ns> get lws <name>` shows the updated groups. A surge needs a spare group's worth of nodes.",
	},
	GroupsAvailable: {
		Name: "GroupsAvailable", Type: ConditionServerReady, Status: true,
		Means: "With `spec.nodes` > 1: the LeaderWorkerSet is `Available`, every group ready on the current templates. Phase `Serving`, `status.url` set; `status.readyReplicas` counts groups.",
		Do:    "Nothing.",
	},
	NoTraffic: {
		Name: "NoTraffic", Type: ConditionServerReady, Status: true,
		Means: "A version of a split has weight 0: its Deployment runs no server; its weights stay pulled. Phase `Standby` in `status.traffic`.",
		Do:    "Nothing; give it a weight in `spec.traffic` to serve it again.",
	},
	Idle: {
		Name: "Idle", Type: ConditionServerReady, Status: true,
		Means: "The service scales to zero (`spec.replicas.min: 0` with autoscaling, on a platform with `input.keda`) and KEDA stopped every server after `input.keda.cooldownPeriod` seconds without an in-flight request. Phase `Idle`, `Ready`, `status.url` set; the weights stay cached.",
		Do:    "Nothing. The first request waits for a server to start and load the model: for that to happen something in front of the servers must hold or count it (KEDA's HTTP add-on, a Gateway metric; see docs/scale-to-zero.md). Set `spec.replicas.min` to 1 to keep a server warm.",
	},
	Waking: {
		Name: "Waking", Type: ConditionServerReady, Status: false,
		Means: "The service was at zero and KEDA reports in-flight requests (its ScaledObject is `Active`): a server is being started. Phase `Starting`.",
		Do:    "Wait: the first requests wait for the model to load. If it stays, look at the pods as for `Starting`.",
	},
	ScalerNotReady: {
		Name: "ScalerNotReady", Type: ConditionServerReady, Status: false,
		Means: "No server runs and the ScaledObject is not `Ready` (KEDA's operator is not running, or its Prometheus query fails), so nothing would start a server. Phase `Degraded`. With servers running, the same cause is a warning and they keep their count.",
		Do:    "Platform team: check that KEDA runs and can reach `input.keda.prometheusAddress` (`kubectl -n <ns> describe scaledobject/<name>`; the message carries KEDA's condition). To serve meanwhile, set `spec.replicas.min` to 1.",
	},
	CacheUnresolved: {
		Name: "CacheUnresolved", Type: ConditionWeightsReady, Status: false,
		Means: "The service is on a ModelCache (`spec.model.cacheRef`) and Crossplane has not fetched it (or its composite and volume claim) yet. Seen only mid-reconcile, or with a Crossplane that does not resolve required resources.",
		Do:    "Wait. If it stays, the Crossplane version does not support required resources (v1.15 and later do).",
	},
	CacheMissing: {
		Name: "CacheMissing", Type: ConditionWeightsReady, Status: false,
		Means: "No ModelCache of that name in the service's namespace. Phase `Pending`; if the servers already run (the cache was deleted under them), `Degraded`: they keep the volume only until they stop.",
		Do:    "Create the ModelCache (`kubectl get modelcache -n <ns>`), or fix `spec.model.cacheRef.name`.",
	},
	CachePulling: {
		Name: "CachePulling", Type: ConditionWeightsReady, Status: false,
		Means: "The ModelCache is still pulling the revision, or reports it pulled while its volume claim does not exist (yet, or any more). Phase `Pulling`.",
		Do:    "Wait; follow it with `kubectl -n <ns> get modelcache <name>`.",
	},
	CacheFailed: {
		Name: "CacheFailed", Type: ConditionWeightsReady, Status: false,
		Means: "The ModelCache failed to pull the revision; the message carries its reason. Phase `Failed` (`Degraded` while servers run).",
		Do:    "Fix the ModelCache (`kubectl -n <ns> describe modelcache <name>`), as for `PullFailed`.",
	},
	CacheMismatch: {
		Name: "CacheMismatch", Type: ConditionWeightsReady, Status: false,
		Means: "`spec.model.uri` is set and is not the ModelCache's `spec.uri`. Phase `Failed`.",
		Do:    "Remove `spec.model.uri` (the cache names the weights) or point `cacheRef` at a cache of that model.",
	},
	CacheRevisionMissing: {
		Name: "CacheRevisionMissing", Type: ConditionWeightsReady, Status: false,
		Means: "The ModelCache does not pull `spec.model.revision`. Phase `Failed`.",
		Do:    "Add the revision to the cache's `spec.revisions`, or choose one it pulls.",
	},
	Cached: {
		Name: "Cached", Type: ConditionWeightsReady, Status: true,
		Means: "The servers mount the ModelCache's volume read-only at the revision's directory.",
		Do:    "Nothing.",
	},
	Approximate: {
		Name: "Approximate", Type: ConditionTrafficSplit, Status: true,
		Means: "Every version of `spec.traffic` serves; the Service `<name>` spreads requests over all servers, so the split follows the servers per version (the message gives the effective percentages).",
		Do:    "For an exact split, ask the platform team to name a Gateway in the Input (`input.traffic.gateway`); for a closer approximate one, raise `spec.replicas.min`.",
	},
	Routed: {
		Name: "Routed", Type: ConditionTrafficSplit, Status: true,
		Means: "The HTTPRoute splits requests exactly between the version Services and the Gateway accepted it.",
		Do:    "Nothing; reach it at `status.routeURL`.",
	},
	VersionsNotReady: {
		Name: "VersionsNotReady", Type: ConditionTrafficSplit, Status: false,
		Means: "A version is still pulling or starting; requests go to the versions that serve (through the Gateway, a version's weight is scaled by its share of ready servers and the rest goes to versions with ready servers).",
		Do:    "Wait; `status.traffic` gives each version's phase.",
	},
	VersionFailed: {
		Name: "VersionFailed", Type: ConditionTrafficSplit, Status: false,
		Means: "A version's pull failed or its rollout gave up. A failing canary makes a serving claim `Degraded`, never `Failed`.",
		Do:    "Read the version's message in `status.traffic`; fix its `uri`/`revision`, or drop it from `spec.traffic`.",
	},
	RoutePending: {
		Name: "RoutePending", Type: ConditionTrafficSplit, Status: false,
		Means: "No gateway controller has reported on the HTTPRoute yet, so the exact split is not in effect (the Service `<name>` still serves, approximately).",
		Do:    "Platform team: check the Gateway named in `input.traffic.gateway` exists and its controller runs.",
	},
	RouteNotAccepted: {
		Name: "RouteNotAccepted", Type: ConditionTrafficSplit, Status: false,
		Means: "The Gateway refused the HTTPRoute or could not resolve its backends; the message carries its condition.",
		Do:    "Platform team: allow routes from the namespace on the listener (`allowedRoutes`), or fix `sectionName`.",
	},
	Shifting: {
		Name: "Shifting", Type: ConditionTrafficSplit, Status: false,
		Means: "Servers are moving between versions (a new split or weights, a promotion, a rollback, a removed canary) and make before break holds them: until every version taking servers has them ready on its weights, a version losing servers keeps the ones it had, and a version no longer in `spec.traffic` keeps its Deployment and Service (a promoted canary's warm servers stay until the primary serves the new weights on its full count). The message says who waits for whom. The extra servers need room: see `input.rollout`.",
		Do:    "Wait: it ends on its own once the new servers are ready, and the holding versions then step down. If it stays, look at the versions it waits for (`status.traffic`, `ServerReady`) as for `Starting`; usually no node has room (a spare GPU) for the new servers.",
	},
	RouteHeld: {
		Name: "RouteHeld", Type: ConditionTrafficSplit, Status: false,
		Means: "No version behind the HTTPRoute has a ready server, so the route keeps the weights it was observed with rather than send requests where nothing answers (its weights otherwise follow readiness: a version gets its weight scaled by its share of ready servers, the rest goes to versions that have ready servers).",
		Do:    "See why no server is ready (`ServerReady`, `status.traffic`); the route follows again as soon as one is.",
	},
	AdaptersPulling: {
		Name: "AdaptersPulling", Type: ConditionAdaptersReady, Status: false,
		Means: "A LoRA adapter of `spec.adapters` is being pulled by its own Job into the cache volume. The first servers start only once the base model and every adapter are pulled (phase `Pulling`); servers that already run keep serving, and add the adapter once it is pulled.",
		Do:    "Wait; `status.adapters` gives each adapter's phase and Job. Follow a pull with `kubectl -n <ns> logs -f job/<name>-pull-<hash>`.",
	},
	AdapterPullFailed: {
		Name: "AdapterPullFailed", Type: ConditionAdaptersReady, Status: false,
		Means: "An adapter's pull Job failed (the message has its reason and the command for its logs). Before the first servers start, phase `Failed`; once they serve, `Degraded`: the base model and the other adapters still answer, and an adapter that was served on earlier weights still is.",
		Do:    "As for `PullFailed`: fix the adapter's `uri`, `revision` or `credentialsSecretRef` (a new one makes a new Job), or delete the Job to retry, or remove the adapter from `spec.adapters`.",
	},
	AdaptersRollingOut: {
		Name: "AdaptersRollingOut", Type: ConditionAdaptersReady, Status: false,
		Means: "Every adapter is pulled, and the servers are starting or rolling out to serve the set `spec.adapters` now lists: the pod template lists the adapters, so adding, changing or removing one rolls the servers one at a time with `maxUnavailable: 0` (`input.rollout`): no request fails, and the extra server needs room (a spare GPU).",
		Do:    "Wait: `kubectl -n <ns> rollout status deployment/<name>`. If it stays, see `ServerReady`.",
	},
	AdaptersServed: {
		Name: "AdaptersServed", Type: ConditionAdaptersReady, Status: true,
		Means: "The servers serve every adapter of `spec.adapters`: a request whose `model` is an adapter's name is answered by the base model with that adapter.",
		Do:    "Nothing; `GET /v1/models` lists them.",
	},
	PoolSplit: {
		Name: "PoolSplit", Type: ConditionTrafficSplit, Status: true,
		Means: "Every version of `spec.traffic` serves, behind one InferencePool (the Input's inference extension): its endpoint picker chooses a server of any version for each request, by load, so the split follows the servers per version (each version runs its weight's share of `spec.replicas`; the message gives the shares), not the weights exactly.",
		Do:    "Nothing. For a closer split raise `spec.replicas.min`; to reach one version alone, call its Service `<name>-<version>`.",
	},
	PoolWaiting: {
		Name: "PoolWaiting", Type: ConditionInferencePool, Status: false,
		Means: "The InferencePool, its endpoint picker and the HTTPRoute to the pool come with the first servers, once the weights are there.",
		Do:    "See `WeightsReady` and `ServerReady`.",
	},
	PickerStarting: {
		Name: "PickerStarting", Type: ConditionInferencePool, Status: false,
		Means: "The endpoint picker's Deployment `<name>-epp` is not available yet. Until it is, the Gateway refuses the pool's requests (`failureMode: FailClose`, the default) or sends them to a server of its own choice (`FailOpen`); the Service `<name>` serves meanwhile.",
		Do:    "`kubectl -n <ns> describe deployment/<name>-epp` and its pod's Events and logs: usually the picker's image cannot be pulled (the platform's `input.traffic.gateway.inferenceExtension.picker.image`), or the InferencePool and InferenceObjective CRDs are missing (the picker exits when it cannot watch them).",
	},
	PickerFailed: {
		Name: "PickerFailed", Type: ConditionInferencePool, Status: false,
		Means: "The endpoint picker's rollout gave up (`ProgressDeadlineExceeded`); the message carries the Deployment's reason.",
		Do:    "Platform team: as for `PickerStarting`; fix the picker's image, args or config in the Input, and a new rollout starts.",
	},
	PoolPending: {
		Name: "PoolPending", Type: ConditionInferencePool, Status: false,
		Means: "No Gateway implementation has reported on the InferencePool (its `status.parents`), or on the HTTPRoute to it, for the Input's Gateway yet: requests through the Gateway do not reach the pool. The Service `<name>` serves meanwhile.",
		Do:    "Platform team: check that the Gateway exists and that its implementation supports InferencePool backends (the Gateway API Inference Extension) and runs.",
	},
	PoolNotAccepted: {
		Name: "PoolNotAccepted", Type: ConditionInferencePool, Status: false,
		Means: "The Gateway refused the InferencePool or the HTTPRoute to it, or could not resolve a reference (the picker's Service, the pool); the message carries its condition.",
		Do:    "Platform team: read the message; `NotSupportedByParent` means the Gateway's implementation does not take InferencePool backends; `InvalidExtensionRef` that the picker's Service `<name>-epp` is missing; for the route see `RouteNotAccepted`.",
	},
	PoolRouted: {
		Name: "PoolRouted", Type: ConditionInferencePool, Status: true,
		Means: "The Gateway accepted the InferencePool and the HTTPRoute to it, and the endpoint picker runs: each request through the Gateway goes to the server the picker chooses.",
		Do:    "Nothing; reach it at `status.routeURL`.",
	},
	Placing: {
		Name: "Placing", Type: ConditionPlaced, Status: false,
		Means: "With `spec.placement`: the function has chosen the workload clusters and is creating an Object for each on this cluster; none reports the service yet. Phase `Pending`.",
		Do:    "Wait a few seconds. If it stays, check the Objects (`kubectl get objects.kubernetes.crossplane.io`) and provider-kubernetes' logs: its ProviderConfig may not reach the cluster (docs/fleet.md).",
	},
	ClustersStarting: {
		Name: "ClustersStarting", Type: ConditionPlaced, Status: false,
		Means: "With `spec.placement`: every chosen cluster was reached, and not all of them serve yet (a first start, a cluster added, or a move away from a draining cluster, which keeps serving until its replacement does). `status.clusters` has each cluster's phase and reasons. Phase `Serving` while one serves, else the earliest phase among them.",
		Do:    "Wait; a cluster's own reasons (`status.clusters[].reasons`) are those of docs/troubleshooting.md on that cluster.",
	},
	PlacedShort: {
		Name: "PlacedShort", Type: ConditionPlaced, Status: false,
		Means: "With `spec.placement`: fewer clusters than `spec.placement.count` can take the service; the message names each offered cluster that matches and why it was skipped (draining, too few free GPUs), or says that none matches. Clusters that serve keep serving.",
		Do:    "Widen `spec.placement.selector` or `spec.placement.clusters`, lower `spec.placement.count`, or ask the platform team for capacity (`input.fleet.clusters[].capacity`).",
	},
	ClusterUnreachable: {
		Name: "ClusterUnreachable", Type: ConditionPlaced, Status: false,
		Means: "With `spec.placement`: provider-kubernetes cannot reach or apply to the workload clusters the message names (their Objects are `Synced=False`). Nothing is deleted or moved on their account: their services keep running as they were, and the claim converges when they answer again. Phase `Degraded` while another cluster serves.",
		Do:    "Platform team: check the cluster's API server and the ProviderConfig's credentials (the Object's `Synced` message says which). To move the service away, drain the cluster (`input.fleet.clusters[].draining`).",
	},
	ClustersFailing: {
		Name: "ClustersFailing", Type: ConditionPlaced, Status: false,
		Means: "With `spec.placement`: a chosen cluster reports its service `Failed` or `Degraded`; `status.clusters[]` has its phase, reasons and message. Phase `Degraded` while another cluster serves, else `Failed`.",
		Do:    "Read the cluster's reasons in docs/troubleshooting.md; the fix is usually in the spec, which every cluster shares.",
	},
	Placed: {
		Name: "Placed", Type: ConditionPlaced, Status: true,
		Means: "With `spec.placement`: every chosen cluster serves the service. Phase `Serving`; `status.url` is the first cluster's address, `status.clusters` has each.",
		Do:    "Nothing.",
	},
}

// Named is the documented reason of that name, and whether there is one.
func Named(name string) (Reason, bool) {
	for r := range NumReasons {
		if Docs[r].Name == name {
			return r, true
		}
	}
	return 0, false
}

// String is the reason as Kubernetes shows it.
func (r Reason) String() string { return Docs[r].Name }

// Condition is the reason's condition, with a message for this claim.
func (r Reason) Condition(message string) Condition {
	d := Docs[r]
	return Condition{Type: d.Type, Status: d.Status, Reason: r, Message: message}
}

// Condition types the function sets on the composite and the claim, beside
// Crossplane's own Ready and Synced.
const (
	ConditionWeightsReady = "WeightsReady"
	ConditionServerReady  = "ServerReady"
	// ConditionTrafficSplit reports, in a split only, whether every
	// version serves its share.
	ConditionTrafficSplit = "TrafficSplit"
	// ConditionAdaptersReady reports, with spec.adapters only, whether
	// every server serves every adapter.
	ConditionAdaptersReady = "AdaptersReady"
	// ConditionInferencePool reports, with the Input's inference
	// extension, whether requests through the Gateway reach the claim's
	// InferencePool and its endpoint picker.
	ConditionInferencePool = "InferencePoolReady"
	// ConditionPlaced reports, with spec.placement only, whether every
	// chosen workload cluster serves the claim.
	ConditionPlaced = "Placed"
)

// Condition is one status condition the function reports. Build it with
// reason.condition, which gives it the reason's type and status.
type Condition struct {
	Type   string
	Status bool
	Reason Reason
	// Message is the condition's message: it says what the reason means
	// for this claim, without the figures of the moment.
	Message string
	// Detail, when set, is Message with the figures of the moment (servers
	// ready, bytes pulled), for status.message. Crossplane writes the
	// function's status fields and its conditions in two writes of the
	// composite: figures kept out of the condition make a change of a
	// figure alone one write, and two watch events against Crossplane's
	// circuit breaker, instead of two writes and four.
	Detail string
}

// Text is what the condition says with its figures: Detail when set,
// else Message.
func (c Condition) Text() string {
	if c.Detail != "" {
		return c.Detail
	}
	return c.Message
}

// WithDetail is c with its figures of the moment (see Detail).
func (c Condition) WithDetail(detail string) Condition {
	c.Detail = detail
	return c
}
