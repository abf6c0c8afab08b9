package fn

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"path"
	"regexp"
	"strconv"
	"strings"

	"google.golang.org/protobuf/types/known/structpb"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/inferno-ai/function-inferno/apis/inference/v1alpha1"
	"github.com/inferno-ai/function-inferno/input/v1beta1"
	"github.com/inferno-ai/function-inferno/internal/structcodec"
)

// Labels Crossplane puts on an XR created for a claim.
const (
	labelClaimName      = "crossplane.io/claim-name"
	labelClaimNamespace = "crossplane.io/claim-namespace"
)

// maxNameLength keeps every derived object name a valid label value: the
// longest suffix is the pull Job's "-pull-" plus an 8-hex hash, and the Job
// name becomes the batch.kubernetes.io/job-name label of its pods (63 max).
const maxNameLength = validation.DNS1123LabelMaxLength - len("-pull-") - hashLength

// hashLength is the number of hex digits of the weights hash in names.
const hashLength = 8

// resolvedSpec is an InferenceService (or a ModelCache) with every default
// applied and every field checked: what the builders read. It is made from
// the spec and the Input alone, and nothing later changes it.
type resolvedSpec struct {
	// Name is the claim's name (the XR's, without a claim): every composed
	// object is named after it.
	Name string
	// Namespace receives the composed objects.
	Namespace string
	// Composite and CompositeUID identify the composite resource being
	// rendered, which controls what it composes.
	Composite, CompositeUID string

	Model   model
	Runtime v1beta1.RuntimePreset // preset with spec.serve laid over it
	Puller  v1beta1.PullerPreset  // zero for pvc:// models
	replicaBounds
	serverSettings
	Storage storage
	// Volume names the cache volume (PersistentVolumeClaim).
	Volume string
	pullSettings
	// Rollout is how the servers' Deployments roll.
	Rollout rollout
	// Versions are the versions that serve, the primary (Model) first.
	Versions []modelVersion
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
	Gateway *gateway
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
}

// model is spec.model, parsed.
type model struct {
	URI       string
	Scheme    string // hf, s3, gs, http, https, pvc or oci
	Source    string // the URI without "scheme://"
	Revision  string
	Version   string
	Framework v1alpha1.Framework
	Secret    *v1alpha1.SecretKeyReference
	// Hash identifies the weights (uri and revision): it names the pull Job
	// and the cache directory, so a new model gets a new Job and directory.
	Hash string
	// Claim and SubPath locate pvc:// weights.
	Claim   string
	SubPath string
	// Cache names the ModelCache that holds the weights (spec.model.cacheRef).
	Cache string
	// OCI is the image of oci:// weights, nil for other schemes.
	OCI *ociReference
	// Dir is the weights' directory on the cache volume; empty is Hash.
	Dir string
}

// pulled reports whether the weights are downloaded into our own cache
// volume: everything but pvc:// and oci:// weights and weights of a
// ModelCache.
func (m model) pulled() bool { return m.Scheme != schemePVC && m.Scheme != schemeOCI && m.Cache == "" }

// replicaBounds are spec.replicas and spec.autoscaling, checked.
type replicaBounds struct {
	MinReplicas int32
	MaxReplicas int32
	Autoscaling *autoscaling // nil without an HPA
}

// serverSettings are what each model server requests and where it runs.
type serverSettings struct {
	CPU         resource.Quantity
	Memory      resource.Quantity
	GPU         int32
	GPUSettings v1beta1.GPUSettings
	// Scheduling is the Input's node pool: every pod carries it.
	Scheduling v1beta1.Scheduling
	// ServiceAccount runs the servers, empty for the namespace's default;
	// ServerToken mounts its API token into them. Pull pods never get one.
	ServiceAccount string
	ServerToken    bool
}

// pullSettings are the Input's bounds of a pull Job.
type pullSettings struct {
	Backoff int32
	// PullDeadline bounds a pull Job in seconds (activeDeadlineSeconds);
	// PullStall is how long its download may make no progress.
	PullDeadline int64
	PullStall    int32
}

// rollout is the servers' RollingUpdate bounds.
type rollout struct {
	MaxSurge, MaxUnavailable intstr.IntOrString
}

type autoscaling struct {
	CPUUtilization *int32
	Concurrency    *int32
	Metric         string // the runtime's concurrency metric
	// ScaleToZero, with spec.replicas.min 0, scales the servers with a
	// KEDA ScaledObject instead of an HPA; nil otherwise.
	ScaleToZero *scaleToZero
}

type storage struct {
	Size       resource.Quantity
	Class      string
	AccessMode corev1.PersistentVolumeAccessMode
}

const schemePVC = "pvc"

var (
	// supportedSchemes in the order error messages list them.
	supportedSchemes = []string{"hf", "s3", "gs", "http", "https", "pvc", schemeOCI}
	hfRepo           = regexp.MustCompile(`^[A-Za-z0-9][-A-Za-z0-9_.]*(/[A-Za-z0-9][-A-Za-z0-9_.]*)?$`)
	labelValue       = regexp.MustCompile(`^[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$`)
	revisionPattern  = regexp.MustCompile(`^[A-Za-z0-9][-A-Za-z0-9_./]*$`)
)

// fieldErrors collects problems with a claim, each naming its field, so
// that one Fatal result tells the user everything to fix at once.
type fieldErrors []string

func (e *fieldErrors) add(field, format string, a ...any) {
	*e = append(*e, field+": "+fmt.Sprintf(format, a...))
}

func (e fieldErrors) err() error {
	if len(e) == 0 {
		return nil
	}
	return errors.New(strings.Join(e, "; "))
}

// decodeComposite decodes the observed XR into its API type, an
// XInferenceService or an XModelCache. A value of the wrong type is
// reported with its field path.
func decodeComposite[T any](obj *structpb.Struct) (*T, error) {
	if obj == nil {
		return nil, errors.New("the request carries no observed composite resource")
	}
	xr := new(T)
	if err := structcodec.Decode(obj, xr, ""); err != nil {
		return nil, err
	}
	return xr, nil
}

// decodeXR decodes an observed InferenceService.
func decodeXR(obj *structpb.Struct) (*v1alpha1.XInferenceService, error) {
	return decodeComposite[v1alpha1.XInferenceService](obj)
}

// decodeInput decodes the Composition's Input strictly, so that a
// misspelt field is refused rather than silently ignored, with errors that
// name the field and always read the same.
func decodeInput(input *structpb.Struct) (*v1beta1.Input, error) {
	in := &v1beta1.Input{}
	if input == nil {
		return in, nil
	}
	b, err := json.Marshal(input.AsMap())
	if err != nil {
		return nil, fmt.Errorf("input: cannot encode the Composition's function Input: %w", err)
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(in); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) && te.Field != "" {
			return nil, fmt.Errorf("input.%s: must be %s, not %s; check the Composition's function Input against its schema", te.Field, jsonKind(te.Type.Kind().String()), te.Value)
		}
		return nil, fmt.Errorf("input: the Composition's function Input is invalid: %s; check the Composition's function Input against its schema", strings.TrimPrefix(err.Error(), "json: "))
	}
	return in, nil
}

func jsonKind(goKind string) string {
	switch goKind {
	case "int32", "int64", "int":
		return "an integer"
	case "bool":
		return "true or false"
	case "string":
		return "a string"
	case "slice":
		return "a list"
	default:
		return "an object"
	}
}

// resolve checks an XR against everything the schema cannot express and
// applies the Input's defaults. It returns one error that names each bad
// field and its fix, and warnings for specs that are legal but risky.
//
// Each step takes what it reads as arguments and returns what it decides,
// so the order of the steps is the order of their data.
func resolve(xr *v1alpha1.XInferenceService, in *v1beta1.Input) (*resolvedSpec, []string, error) {
	var errs fieldErrors
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
	// The NetworkPolicy's refusals are reported after the policy's.
	var npErrs fieldErrors
	np := resolveNetworkPolicy(ns, in, &npErrs)
	pm := resolvePodMonitor(rt, in, &errs)
	progress := resolveProgress(in, &errs)

	s := &resolvedSpec{
		Name: name, Namespace: ns,
		Composite: xr.GetName(), CompositeUID: string(xr.GetUID()),
		Model: m, Runtime: rt, Puller: puller,
		replicaBounds: bounds, serverSettings: servers,
		Storage: st, Volume: name + "-weights", pullSettings: pulls, Rollout: ro,
		Versions: versions, Split: split, Adapters: adapters,
		NetworkPolicy: np, Gateway: gw, Pool: pool, MultiNode: mn,
		Progress: progress, PodMonitor: pm,
	}
	checkPoolNames(s, &errs)
	checkPolicy(s, spec, in, &errs)
	errs = append(errs, npErrs...)
	if err := errs.err(); err != nil {
		return nil, nil, err
	}
	return s, warnings, nil
}

// resolveRuntime lays the claim's spec.serve over the platform's runtime
// preset of the framework, and checks the result.
func resolveRuntime(fw v1alpha1.Framework, serve *v1alpha1.ServeSpec, in *v1beta1.Input, errs *fieldErrors) v1beta1.RuntimePreset {
	if fw == "" {
		return v1beta1.RuntimePreset{}
	}
	rt, ok := in.Runtime(string(fw))
	if !ok {
		errs.add("spec.model.framework", "the platform's Input offers no runtime for %q; ask your platform team or choose another framework", fw)
		return v1beta1.RuntimePreset{}
	}
	rt = applyServe(rt, serve, errs)
	checkRuntime(fw, rt, serve, errs)
	return rt
}

// resolvePuller finds the platform's puller of m's scheme, refusing at
// uriField (the field m came from) a scheme the Input offers none for;
// zero for weights that are not pulled. Every pulled source — the model, a
// canary version, an adapter, a ModelCache — finds its puller here.
func resolvePuller(m model, uriField string, in *v1beta1.Input, errs *fieldErrors) v1beta1.PullerPreset {
	if !m.pulled() || m.Scheme == "" {
		return v1beta1.PullerPreset{}
	}
	p, ok := in.Puller(m.Scheme)
	switch {
	case !ok:
		errs.add(uriField, "the platform's Input offers no puller for %s://; ask your platform team or use another source", m.Scheme)
	case p.Image == "":
		errs.add("input.pullers."+m.Scheme+".image", "is empty; the Composition's Input must give the %s:// puller an image", m.Scheme)
	case len(p.Command) == 0:
		errs.add("input.pullers."+m.Scheme+".command", "is empty; the Composition's Input must give the %s:// puller a download command", m.Scheme)
	}
	return p
}

// checkModelCredentials refuses credentials spec.model cannot use and
// sources the platform does not allow.
func checkModelCredentials(m model, in *v1beta1.Input, errs *fieldErrors) {
	switch {
	case m.Secret != nil && m.Cache != "":
		errs.add("spec.model.credentialsSecretRef", "the ModelCache %q pulls the weights, so this service reads no credentials; set them on the ModelCache and remove them here", m.Cache)
	case m.Secret != nil && m.Scheme == schemePVC:
		// Not even for the other versions: credentials go only to the
		// source they were given for (spec.traffic[].credentialsSecretRef).
		errs.add("spec.model.credentialsSecretRef", "pvc:// models are mounted, not pulled, so no credentials are read; remove it (a version of spec.traffic that needs credentials names its own)")
	}
	if msg, bad := inClearText(m, in); bad {
		errs.add("spec.model.credentialsSecretRef", "%s", msg)
	}
	if msg, bad := sourceRefused(m, in); bad {
		errs.add("spec.model.uri", "%s", msg)
	}
}

// resolvePulls applies and checks the Input's settings of pull Jobs.
func resolvePulls(in *v1beta1.Input, errs *fieldErrors) pullSettings {
	p := pullSettings{Backoff: in.BackoffLimit(), PullDeadline: in.PullDeadline(), PullStall: in.PullStall()}
	if p.Backoff < 0 || p.Backoff > 20 {
		errs.add("input.pullBackoffLimit", "%d is out of range; use 0 to 20", p.Backoff)
	}
	if p.PullDeadline < 60 || p.PullDeadline > 7*24*3600 {
		errs.add("input.pullDeadlineSeconds", "%d is out of range; use 60 to 604800 seconds (a week), generously: it stops the pull, retries included", p.PullDeadline)
	}
	if p.PullStall < 30 || p.PullStall > 3600 {
		errs.add("input.pullStallSeconds", "%d is out of range; use 30 to 3600 seconds", p.PullStall)
	}
	return p
}

// resolveRollout checks input.rollout: each bound a count of 0 or more
// or a percentage, and not both 0.
func resolveRollout(in *v1beta1.Input, errs *fieldErrors) rollout {
	surge, unavailable := in.RollingUpdate()
	// As the Deployment API: a surge may exceed the desired count, an
	// outage may not.
	noSurge := rolloutBoundZero("input.rollout.maxSurge", surge, 1000, errs)
	noOutage := rolloutBoundZero("input.rollout.maxUnavailable", unavailable, 100, errs)
	if noSurge && noOutage {
		errs.add("input.rollout", "maxSurge and maxUnavailable are both 0, so a rollout could never replace a server; allow a surge (it needs a spare GPU or node per extra server) or, with no spare capacity, maxUnavailable (a rollout then drops capacity)")
	}
	return rollout{MaxSurge: surge, MaxUnavailable: unavailable}
}

// rolloutBoundZero checks one bound of input.rollout, a number of servers
// or a percentage of at most most, and reports whether it is 0.
func rolloutBoundZero(field string, v intstr.IntOrString, most int, errs *fieldErrors) bool {
	if v.Type == intstr.Int {
		if v.IntVal < 0 {
			errs.add(field, "%d is negative; use a number of servers of 0 or more, or a percentage such as \"25%%\"", v.IntVal)
		}
		return boundIsZero(v)
	}
	n, err := strconv.Atoi(strings.TrimSuffix(v.StrVal, "%"))
	if !strings.HasSuffix(v.StrVal, "%") || err != nil || n < 0 || n > most {
		errs.add(field, "%q is neither a number of servers nor a percentage from 0%% to %d%%; write e.g. 1 or \"25%%\"", v.StrVal, most)
		return false
	}
	return boundIsZero(v)
}

// boundIsZero reports whether a rollout bound allows nothing: 0, or 0%.
func boundIsZero(v intstr.IntOrString) bool {
	if v.Type == intstr.Int {
		return v.IntVal == 0
	}
	n, err := strconv.Atoi(strings.TrimSuffix(v.StrVal, "%"))
	return strings.HasSuffix(v.StrVal, "%") && err == nil && n == 0
}

// nameAndNamespace finds the name and namespace of an XR's composed
// objects. kind is the claim kind error messages name.
//
//  1. A namespaced (Crossplane v2) composite is named by its own
//     metadata.name and metadata.namespace, which the API server vouches
//     for. It has no claim, so the crossplane.io/claim-* labels on it are
//     whatever its author wrote: they are ignored (with a warning when
//     they name someone else), or a composite in team-a could take the
//     name, the hostname and the ModelCache of a service in team-b.
//  2. A cluster-scoped composite is named by the claim labels Crossplane
//     sets on the composite it creates for a claim. Whoever may create
//     such a composite directly can write them, so tenants must never get
//     create on the cluster-scoped kinds (docs/security.md).
//  3. A cluster-scoped composite without them takes its own name and the
//     Input's namespace, or is refused.
func nameAndNamespace(xr metav1.Object, kind string, in *v1beta1.Input, errs *fieldErrors, warnings *[]string) (string, string) {
	name, ns := xr.GetLabels()[labelClaimName], xr.GetLabels()[labelClaimNamespace]
	switch {
	case xr.GetNamespace() != "":
		if (name != "" && name != xr.GetName()) || (ns != "" && ns != xr.GetNamespace()) {
			*warnings = append(*warnings, fmt.Sprintf("metadata.labels: %s=%q and %s=%q are ignored on a namespaced %s, which is always named by its own name and namespace (%s/%s); remove them", labelClaimName, name, labelClaimNamespace, ns, kind, xr.GetNamespace(), xr.GetName()))
		}
		name, ns = xr.GetName(), xr.GetNamespace()
	case name != "" && ns != "":
	default:
		name, ns = xr.GetName(), in.Namespace
		if ns == "" {
			errs.add("metadata.labels", "the composite resource has no %s label and the function's Input sets no namespace; create it through %s claim, or set input.namespace in the Composition", labelClaimNamespace, withArticle(kind))
		}
	}
	if ns != "" {
		for _, m := range validation.IsDNS1123Label(ns) {
			errs.add("namespace", "%q is not a namespace name: %s", ns, m)
		}
	}
	switch {
	case name == "":
		errs.add("metadata.name", "is empty; give the %s a name", kind)
	case len(name) > maxNameLength:
		errs.add("metadata.name", "%q is %d characters; use at most %d so that the pull Job's name (%q plus a hash) stays within Kubernetes' 63-character limit", name, len(name), maxNameLength, name+"-pull-")
	default:
		// The Service is named after the claim, and Service names are
		// DNS-1035 labels: no dots, no leading digit.
		for _, m := range validation.IsDNS1035Label(name) {
			if kind == v1alpha1.ClaimKind {
				errs.add("metadata.name", "%q cannot name the Service: %s; rename the InferenceService", name, m)
			} else {
				errs.add("metadata.name", "%q cannot name the objects: %s; rename the %s", name, m, kind)
			}
		}
	}
	return name, ns
}

// withArticle is kind with its indefinite article: "an InferenceService".
func withArticle(kind string) string {
	if strings.ContainsRune("AEIOU", rune(kind[0])) {
		return "an " + kind
	}
	return "a " + kind
}

func resolveModel(m v1alpha1.ModelSpec, errs *fieldErrors) model {
	out := model{URI: m.URI, Revision: m.Revision, Version: m.Version, Framework: m.Framework, Secret: m.CredentialsSecretRef}
	if out.Framework == "" {
		out.Framework = v1alpha1.FrameworkVLLM
	}
	if r := m.CacheRef; r != nil {
		out.Cache = r.Name
		for _, msg := range validation.IsDNS1035Label(r.Name) {
			errs.add("spec.model.cacheRef.name", "%q is not a ModelCache name: %s", r.Name, msg)
		}
		if out.URI != "" {
			parseURI(&out, "spec.model.uri", errs)
			if out.Scheme == schemePVC {
				errs.add("spec.model.uri", "pvc:// weights are mounted from their own claim; remove spec.model.cacheRef or the pvc:// uri")
			}
			if out.Scheme == schemeOCI {
				errs.add("spec.model.uri", "oci:// weights are mounted from their image, which a ModelCache does not hold; remove spec.model.cacheRef or the oci:// uri")
			}
		}
	} else {
		parseURI(&out, "spec.model.uri", errs)
	}

	if !isFramework(out.Framework) {
		errs.add("spec.model.framework", "%q is not supported; use one of %s", out.Framework, joinFrameworks())
	}
	if m.Version != "" && (len(m.Version) > validation.LabelValueMaxLength || !labelValue.MatchString(m.Version)) {
		errs.add("spec.model.version", "%q is not a valid label value; use at most 63 letters, digits, '-', '_' or '.', starting and ending with a letter or digit", m.Version)
	}
	checkRevision(m.Revision, "spec.model.revision", errs)
	checkSecretRef(m.CredentialsSecretRef, "spec.model.credentialsSecretRef", errs)
	out.Hash = shortHash([]string{out.URI, out.Revision})
	return out
}

// checkSecretRef refuses a Secret reference that cannot name a Secret or
// one of its keys.
func checkSecretRef(r *v1alpha1.SecretKeyReference, field string, errs *fieldErrors) {
	if r == nil {
		return
	}
	for _, msg := range validation.IsDNS1123Subdomain(r.Name) {
		errs.add(field+".name", "%q is not a Secret name: %s", r.Name, msg)
	}
	if r.Key != "" {
		for _, msg := range validation.IsConfigMapKey(r.Key) {
			errs.add(field+".key", "%q is not a Secret key: %s", r.Key, msg)
		}
	}
}

// checkRevision refuses a revision that is not a branch, tag, commit or
// object version.
func checkRevision(rev, field string, errs *fieldErrors) {
	if rev != "" && (len(rev) > 128 || !revisionPattern.MatchString(rev) || strings.Contains(rev, "..")) {
		errs.add(field, "%q is not a revision; use a branch, tag, commit or object version of at most 128 letters, digits, '-', '_', '.' or '/'", rev)
	}
}

// parseURI parses the weights URI of out, reporting problems under field.
func parseURI(out *model, field string, errs *fieldErrors) {
	uri := out.URI
	if uri == "" {
		errs.add(field, "is required; set it to hf://org/model, s3://bucket/prefix, gs://bucket/prefix, https://host/file, pvc://claim[/path] or oci://registry/repository@sha256:<digest>")
		return
	}
	scheme, rest, ok := strings.Cut(uri, "://")
	if !ok {
		errs.add(field, "%q has no scheme; use hf://, s3://, gs://, http(s)://, pvc:// or oci://", uri)
		return
	}
	if !contains(supportedSchemes, scheme) {
		errs.add(field, "scheme %q is not supported; use hf://, s3://, gs://, http(s)://, pvc:// or oci://", scheme)
		return
	}
	out.Scheme, out.Source = scheme, rest
	host, _, _ := strings.Cut(rest, "/")
	if strings.Contains(host, "@") {
		errs.add(field, "must not carry credentials (user:password@); put them in a Secret and set spec.model.credentialsSecretRef")
		return
	}
	if strings.ContainsAny(uri, " \t\r\n\"'`\\") {
		errs.add(field, "must not contain spaces, quotes or backslashes")
		return
	}
	switch scheme {
	case "hf":
		if !hfRepo.MatchString(rest) {
			errs.add(field, "%q is not a Hugging Face repository; write hf://org/model", uri)
		}
	case "s3", "gs":
		if host == "" {
			errs.add(field, "%q names no bucket; write %s://bucket/prefix", uri, scheme)
		}
		if scheme == "gs" && strings.ContainsAny(rest, "*?[]{}") {
			// gcloud storage expands them, to objects nobody named.
			errs.add(field, "%q contains a wildcard (* ? [ ] { }), which gcloud storage would expand; name one bucket and prefix", uri)
		}
	case "http", "https":
		if host == "" {
			errs.add(field, "%q names no host; write %s://host/path/to/file", uri, scheme)
		}
	case schemePVC:
		claim, sub, _ := strings.Cut(rest, "/")
		if claim == "" {
			errs.add(field, "pvc:// needs a claim name; write pvc://<claim>[/path]")
			return
		}
		for _, m := range validation.IsDNS1123Subdomain(claim) {
			errs.add(field, "%q is not a PersistentVolumeClaim name: %s", claim, m)
		}
		sub = strings.Trim(sub, "/")
		if sub != "" && (path.Clean(sub) != sub || strings.HasPrefix(sub, "..")) {
			errs.add(field, "path %q in the claim must be clean and relative (no '..' or '//')", sub)
		}
		out.Claim, out.SubPath = claim, sub
	case schemeOCI:
		if r, ok := parseOCI(rest, field, errs); ok {
			out.OCI = &r
		}
	}
}

// applyServe lays the claim's spec.serve over the runtime preset.
func applyServe(rt v1beta1.RuntimePreset, sv *v1alpha1.ServeSpec, errs *fieldErrors) v1beta1.RuntimePreset {
	if sv == nil {
		return rt
	}
	if sv.Image != "" {
		rt.Image = sv.Image
	}
	if sv.Port != nil {
		if p := *sv.Port; p < 1 || p > 65535 {
			errs.add("spec.serve.port", "%d is out of range; use a port from 1 to 65535", p)
		}
		rt.Port = sv.Port
	}
	if len(sv.Args) > 0 {
		rt.Args = sv.Args
	}
	for i, e := range sv.Env {
		f := fmt.Sprintf("spec.serve.env[%d]", i)
		for _, m := range validation.IsEnvVarName(e.Name) {
			errs.add(f+".name", "%q is not an environment variable name: %s", e.Name, m)
		}
		if e.ValueFrom != nil && e.Value != "" {
			errs.add(f, "sets both value and valueFrom; keep one")
		}
		if reserved(e.Name) {
			errs.add(f+".name", "%q is set by the function; remove it", e.Name)
		}
	}
	// The claim's variables win over the preset's.
	rt.Env = mergeEnv(rt.Env, sv.Env)
	return rt
}

func checkRuntime(fw v1alpha1.Framework, rt v1beta1.RuntimePreset, sv *v1alpha1.ServeSpec, errs *fieldErrors) {
	field := "input.runtimes." + string(fw)
	if rt.Image == "" {
		if sv == nil || sv.Image == "" {
			errs.add(field+".image", "is empty; the Composition's Input must give the %s runtime an image (or set spec.serve.image)", fw)
		}
	}
	if rt.Port == nil {
		errs.add(field+".port", "is not set; the Composition's Input must give the %s runtime a port (or set spec.serve.port)", fw)
	} else if p := *rt.Port; (p < 1 || p > 65535) && (sv == nil || sv.Port == nil) {
		// A bad spec.serve.port is reported as the claim's, above.
		errs.add(field+".port", "%d is out of range; use a port from 1 to 65535", p)
	}
	if rt.HealthPath == "" || rt.HealthPath[0] != '/' {
		errs.add(field+".healthPath", "%q must be an HTTP path starting with '/'", rt.HealthPath)
	}
	if rt.StartupSeconds == nil || *rt.StartupSeconds < 10 {
		errs.add(field+".startupSeconds", "must be at least 10 seconds")
	}
}

// reserved names the variables the function itself sets in the server.
func reserved(name string) bool {
	switch name {
	case envModelDir, envModelName, envModelVersion, envPort, v1beta1.EnvMaxLoras, v1beta1.EnvMaxLoraRank:
		return true
	}
	return false
}

// resolveReplicas checks spec.replicas and spec.autoscaling; rt is the
// runtime, whose concurrency metric targetConcurrency scales on.
func resolveReplicas(spec v1alpha1.InferenceServiceSpec, rt v1beta1.RuntimePreset, fw v1alpha1.Framework, in *v1beta1.Input, errs *fieldErrors, warnings *[]string) replicaBounds {
	s := replicaBounds{MinReplicas: 1}
	if r := spec.Replicas; r != nil {
		if r.Min != nil {
			s.MinReplicas = *r.Min
		}
		if r.Max != nil {
			s.MaxReplicas = *r.Max
		}
	}
	if s.MinReplicas < 0 {
		errs.add("spec.replicas.min", "%d is negative; use 0 or more", s.MinReplicas)
	}
	if spec.Replicas == nil || spec.Replicas.Max == nil {
		s.MaxReplicas = max(s.MinReplicas, 1)
	} else if s.MaxReplicas < 1 {
		errs.add("spec.replicas.max", "%d is less than 1; use 1 or more, or leave it out to default to min", s.MaxReplicas)
	}
	if s.MaxReplicas < s.MinReplicas && s.MaxReplicas > 0 {
		errs.add("spec.replicas", "min (%d) exceeds max (%d); raise max or lower min", s.MinReplicas, s.MaxReplicas)
	}
	if s.MinReplicas > 1000 || s.MaxReplicas > 1000 {
		errs.add("spec.replicas", "at most 1000 servers are allowed")
	}

	a := spec.Autoscaling
	if a == nil || !a.Enabled {
		if a != nil && (a.TargetCPUUtilization != nil || a.TargetConcurrency != nil) {
			*warnings = append(*warnings, "spec.autoscaling: targets have no effect while spec.autoscaling.enabled is false")
		}
		if spec.Replicas != nil && spec.Replicas.Max != nil && s.MaxReplicas != s.MinReplicas {
			*warnings = append(*warnings, fmt.Sprintf("spec.replicas.max (%d) has no effect while spec.autoscaling.enabled is false; %d servers run", s.MaxReplicas, s.MinReplicas))
		}
		return s
	}
	as := &autoscaling{CPUUtilization: a.TargetCPUUtilization, Concurrency: a.TargetConcurrency}
	if s.MinReplicas == 0 {
		as.ScaleToZero = resolveScaleToZero(spec, rt, fw, in, errs)
	}
	if t := a.TargetCPUUtilization; t != nil && (*t < 1 || *t > 100) {
		errs.add("spec.autoscaling.targetCPUUtilization", "%d is out of range; use a percentage from 1 to 100", *t)
	}
	if t := a.TargetConcurrency; t != nil {
		switch {
		case *t < 1:
			errs.add("spec.autoscaling.targetConcurrency", "%d must be at least 1", *t)
		case rt.ConcurrencyMetric == "" && fw != "":
			errs.add("spec.autoscaling.targetConcurrency", "the %s runtime exposes no concurrency metric in the platform's Input; use targetCPUUtilization, or ask your platform team to set input.runtimes.%s.concurrencyMetric", fw, fw)
		}
		as.Metric = rt.ConcurrencyMetric
	}
	if as.CPUUtilization == nil && as.Concurrency == nil && as.ScaleToZero == nil {
		as.CPUUtilization = ptrTo(defaultCPUUtilization)
	}
	if s.MaxReplicas == s.MinReplicas && s.MinReplicas > 0 {
		*warnings = append(*warnings, fmt.Sprintf("spec.replicas.max: the autoscaler cannot scale beyond %d servers while max equals min; raise spec.replicas.max", s.MinReplicas))
	}
	s.Autoscaling = as
	return s
}

// defaultCPUUtilization is the autoscaler's target when a claim enables
// autoscaling without naming a target.
const defaultCPUUtilization = int32(80)

// resolveResources applies the Input's defaults to spec.resources and says
// where the servers run.
func resolveResources(r *v1alpha1.ResourcesSpec, fw v1alpha1.Framework, in *v1beta1.Input, errs *fieldErrors, warnings *[]string) serverSettings {
	var s serverSettings
	d := in.ResourceDefaults()
	s.CPU, s.Memory = *d.CPU, *d.Memory
	if r != nil {
		if r.CPU != nil {
			s.CPU = *r.CPU
			if s.CPU.Sign() <= 0 {
				errs.add("spec.resources.cpu", "%s must be more than zero", r.CPU.String())
			}
		}
		if r.Memory != nil {
			s.Memory = *r.Memory
			if s.Memory.Sign() <= 0 {
				errs.add("spec.resources.memory", "%s must be more than zero", r.Memory.String())
			}
		}
		if r.GPU != nil {
			s.GPU = *r.GPU
			if s.GPU < 0 || s.GPU > 64 {
				errs.add("spec.resources.gpu", "%d is out of range; use 0 to 64 GPUs per server", s.GPU)
			}
		}
	}
	s.GPUSettings = in.GPUSettings()
	if in.Scheduling != nil {
		s.Scheduling = *in.Scheduling
	}
	if sa := in.ServerServiceAccount; sa != nil {
		s.ServiceAccount = sa.Name
		s.ServerToken = sa.AutomountToken != nil && *sa.AutomountToken
		for _, m := range validation.IsDNS1123Subdomain(sa.Name) {
			errs.add("input.serverServiceAccount.name", "%q is not a ServiceAccount name: %s", sa.Name, m)
		}
	}
	if s.GPU == 0 && (fw == v1alpha1.FrameworkVLLM || fw == v1alpha1.FrameworkTGI || fw == v1alpha1.FrameworkTriton) {
		*warnings = append(*warnings, fmt.Sprintf("spec.resources.gpu: no GPU requested; %s will run on CPU, slowly if at all", fw))
	}
	return s
}

// resolveStorage applies the Input's defaults to the cache volume of the
// versions, and warns when its access mode cannot serve their servers.
// adapters says spec.adapters are pulled into the volume whatever the base
// model's source.
func resolveStorage(st *v1alpha1.StorageSpec, in *v1beta1.Input, versions []modelVersion, bounds replicaBounds, split, adapters bool, errs *fieldErrors, warnings *[]string) storage {
	d := in.StorageDefaults()
	out := storage{Class: d.StorageClassName, AccessMode: corev1.PersistentVolumeAccessMode(d.AccessMode)}
	if d.Size != nil {
		out.Size = *d.Size
	}
	if st != nil {
		if st.Size != nil {
			out.Size = *st.Size
			if out.Size.Sign() <= 0 {
				errs.add("spec.storage.size", "%s must be more than zero", st.Size.String())
			}
		}
		if st.StorageClassName != nil {
			out.Class = *st.StorageClassName
			for _, m := range validation.IsDNS1123Subdomain(out.Class) {
				errs.add("spec.storage.storageClassName", "%q is not a StorageClass name: %s", out.Class, m)
			}
		}
		if st.AccessMode != "" {
			out.AccessMode = corev1.PersistentVolumeAccessMode(st.AccessMode)
		}
	}
	switch out.AccessMode {
	case corev1.ReadWriteOnce, corev1.ReadWriteMany:
	default:
		field := "input.storage.accessMode"
		if st != nil && st.AccessMode != "" {
			field = "spec.storage.accessMode"
		}
		errs.add(field, "%q is not supported; use ReadWriteOnce or ReadWriteMany (the pull Job writes the volume while the servers read it)", out.AccessMode)
	}
	if !pulledAny(versions) && !adapters {
		if st != nil && len(versions) > 0 && versions[0].Model.Cache == "" && (st.Size != nil || st.StorageClassName != nil || st.AccessMode != "") {
			*warnings = append(*warnings, "spec.storage has no effect: pvc:// and oci:// models are mounted from the claim or image they name, and no cache volume is made")
		}
		return out
	}
	servers := bounds.MaxReplicas
	if split {
		// Every version's servers mount the one volume.
		servers = 0
		for i := range versions {
			servers += versions[i].MaxReplicas
		}
	}
	if out.AccessMode != corev1.ReadWriteMany && servers > 1 {
		*warnings = append(*warnings, fmt.Sprintf("spec.storage.accessMode: %s volumes attach to one node, so of up to %d servers only those on that node can start; use ReadWriteMany for more than one replica across nodes", out.AccessMode, servers))
	}
	return out
}

func isFramework(f v1alpha1.Framework) bool {
	return contains(v1alpha1.Frameworks, f)
}

func joinFrameworks() string {
	names := make([]string, len(v1alpha1.Frameworks))
	for i, f := range v1alpha1.Frameworks {
		names[i] = string(f)
	}
	return strings.Join(names, ", ")
}

func contains[T comparable](list []T, v T) bool {
	for _, x := range list {
		if x == v {
			return true
		}
	}
	return false
}

func ptrTo[T any](v T) *T { return &v }

// shortHash is the first hashLength hex digits of the SHA-256 of v's JSON
// form, which is deterministic (struct fields in order, map keys sorted).
func shortHash(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		// Only values that cannot be JSON (channels, functions) fail, and
		// callers pass API structs.
		panic(fmt.Sprintf("cannot hash %T: %v", v, err))
	}
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:])[:hashLength]
}
