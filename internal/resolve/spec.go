package resolve

import (
	"github.com/inferno-ai/function-inferno/apis/inference/v1alpha1"
	"github.com/inferno-ai/function-inferno/input/v1beta1"
)

// Spec is an InferenceService (or a ModelCache) with every default
// applied and every field checked: what the builders read. It is made from
// the spec and the Input alone, and nothing later changes it.
type Spec struct {
	// Name is the claim's name (the XR's, without a claim): every composed
	// object is named after it.
	Name string
	// Namespace receives the composed objects.
	Namespace string
	// Composite and CompositeUID identify the composite resource being
	// rendered, which controls what it composes.
	Composite, CompositeUID string

	Model   Model
	Runtime v1beta1.RuntimePreset // preset with spec.serve laid over it
	Puller  v1beta1.PullerPreset  // zero for pvc:// models
	ReplicaBounds
	serverSettings
	Storage storage
	// Volume names the cache volume (PersistentVolumeClaim).
	Volume string
	pullSettings
	// Rollout is how the servers' Deployments roll.
	Rollout rollout
	// Versions are the versions that serve, the primary (Model) first.
	Versions []Version
	// Split says spec.traffic splits requests between versions: each
	// version then also gets a Service of its own.
	Split bool
	// NetworkPolicy, when the Input turns it on, says who may reach the
	// servers; nil renders no NetworkPolicy.
	NetworkPolicy *networkPolicy
	// Adapters are spec.adapters and spec.lora, resolved (adapters.go).
	Adapters adapterSettings
	// Gateway is the Input's Gateway API parent: a split is then also
	// routed exactly by an HTTPRoute, which stays once the split ends.
	// Nil without one.
	Gateway *Gateway
	// Progress, when the Input turns it on, has pull Jobs report their
	// progress (progress.go); nil without.
	Progress *pullProgress
	// PodMonitor, when the Input turns it on, is how the servers'
	// metrics are scraped; nil renders no PodMonitor.
	PodMonitor *podMonitor
	// Pool, when the Gateway's inference extension is on, routes the
	// claim through an InferencePool and an endpoint picker of its own
	// instead of to its Services. Nil otherwise.
	Pool *inferencePool
	// MultiNode is spec.nodes and spec.parallelism; nil for a server of
	// one pod without parallel flags. With more than one node the servers
	// are LeaderWorkerSet groups (groups).
	MultiNode *multiNode
	// Credentials is what the platform asks of a Secret named as
	// credentials beyond its name (credentials.go).
	Credentials CredentialsPolicy
	// Placement, with spec.placement, serves the claim on workload
	// clusters instead of here (placement.go); nil without.
	Placement *Placement
}

// Resolve checks an XR against everything the schema cannot express and
// applies the Input's defaults. It returns one error that names each bad
// field and its fix, and warnings for specs that are legal but risky.
//
// Each step takes what it reads as arguments and returns what it decides,
// so the order of the steps is the order of their data.
func Resolve(xr *v1alpha1.XInferenceService, in *v1beta1.Input) (*Spec, []string, error) {
	var errs FieldErrors
	var warnings []string
	spec := xr.Spec

	name, ns := nameAndNamespace(xr, v1alpha1.ClaimKind, in, &errs, &warnings)
	m := resolveModel(spec.Model, &errs)
	rt := resolveRuntime(m.Framework, spec.Serve, in, &errs)
	puller := resolvePuller(m, "spec.model.uri", in, &errs)
	versions := resolveTraffic(name, m, puller, spec, in, &errs, &warnings)
	split := spec.Traffic != nil
	gw := resolveGateway(name, ns, in, &errs)
	pool := resolveInferencePool(in, &errs)
	checkModelCredentials(m, in, &errs)
	checkOCISource(m, "spec.model.uri", "spec.model.revision", "spec.model.credentialsSecretRef", in, &errs, &warnings)
	resolveCacheRef(ns, spec, &errs)
	bounds := resolveReplicas(spec, rt, m.Framework, in, &errs, &warnings)
	versions = spread(versions, bounds)
	adapters := resolveAdapters(name, m, rt, spec, in, &errs, &warnings)
	pool.routeByAdapter(len(adapters.List) > 0)
	servers := resolveResources(spec.Resources, m.Framework, in, &errs, &warnings)
	st := resolveStorage(spec.Storage, in, versions, bounds, split, len(adapters.List) > 0, &errs, &warnings)
	mn := resolveMultiNode(spec, m.Framework, rt, servers.GPU, m, st, &errs, &warnings)
	if mn != nil {
		rt.Args = append(append([]string(nil), rt.Args...), mn.args()...)
	}
	pulls := resolvePulls(in, &errs)
	ro := resolveRollout(in, &errs)
	checkPolicyInput(in, &errs)
	creds := credentialsPolicy(in, &errs)
	// The NetworkPolicy's refusals are reported after the policy's.
	var npErrs FieldErrors
	np := resolveNetworkPolicy(ns, in, &npErrs)
	checkGroupIsolation(mn, m.Framework, rt, np, &npErrs)
	pm := resolvePodMonitor(rt, in, &errs)
	checkMetricsNamespace(np, in, pm, bounds.Autoscaling, &npErrs)
	progress := resolveProgress(in, &errs)

	s := &Spec{
		Name: name, Namespace: ns,
		Composite: xr.GetName(), CompositeUID: string(xr.GetUID()),
		Model: m, Runtime: rt, Puller: puller,
		ReplicaBounds: bounds, serverSettings: servers,
		Storage: st, Volume: name + "-weights", pullSettings: pulls, Rollout: ro,
		Versions: versions, Split: split, Adapters: adapters,
		NetworkPolicy: np, Gateway: gw, Pool: pool, MultiNode: mn,
		Progress: progress, PodMonitor: pm, Credentials: creds,
	}
	checkCredentialRef(m, puller, "spec.model.credentialsSecretRef", in, &errs)
	checkPoolNames(s, &errs)
	checkPolicy(s, spec, in, &errs)
	judgeServe(s, spec.Serve, in, &errs)
	s.Placement = resolvePlacement(s, xr, in, &errs)
	errs = append(errs, npErrs...)
	if err := errs.Err(); err != nil {
		return nil, nil, err
	}
	return s, warnings, nil
}
