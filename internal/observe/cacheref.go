package observe

import (
	"fmt"
	"slices"
	"strings"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"github.com/inferno-ai/function-inferno/apis/inference/v1alpha1"
	"github.com/inferno-ai/function-inferno/input/v1beta1"
	"github.com/inferno-ai/function-inferno/internal/render"
	"github.com/inferno-ai/function-inferno/internal/resolve"
	"github.com/inferno-ai/function-inferno/internal/structcodec"
	"google.golang.org/protobuf/proto"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// An InferenceService with spec.model.cacheRef serves weights a ModelCache
// pulled. The function asks Crossplane for that ModelCache claim (a
// required resource). Where the weights are, the volume and the
// revision's directory, is derived from the cache's identity (its name, in
// the service's namespace) and its spec, by the functions the cache's own
// composition names them with (resolve.CacheVolume, resolve.CachedRevision,
// render.CacheDir); its status is read for phase only. Whoever can write
// that status (Crossplane's aggregated edit role grants it) could
// otherwise point the servers at any volume claim of the namespace, around
// input.policy.allowPVCURIs. Nothing is pulled and no volume is made for
// the service, so the weights outlive it.
//
// The volume of that name must also be the cache's own: whoever may create
// a PersistentVolumeClaim in the namespace could make <cache>-cache before
// the cache's composition does (bound to a volume of its choosing, or
// cloned from another claim, with the puller's marker already in it), and
// the servers would then mount weights that no pull under the policy put
// there. So the function also asks Crossplane for the cache's composite (by
// the claim labels Crossplane sets on it, which no tenant writes) and for
// the volume claim, and serves only from a volume the composite controls
// (CheckCacheVolume).

// The keys of the required resources of a service on a ModelCache, in the
// request and the response: the ModelCache claim, its composite, and the
// volume claim that holds its weights.
const (
	RequirementCache          = "model-cache"
	RequirementCacheComposite = "model-cache-composite"
	RequirementCacheVolume    = "model-cache-volume"
)

// CacheRequirements are the selectors of what a service on a ModelCache
// needs, by requirement key: the cache's claim, its composite and its
// volume claim. None without a cacheRef.
func CacheRequirements(s *resolve.Spec) map[string]*fnv1.ResourceSelector {
	if s.Model.Cache == "" {
		return nil
	}
	return map[string]*fnv1.ResourceSelector{
		RequirementCache: {
			ApiVersion: v1alpha1.SchemeGroupVersion.String(),
			Kind:       v1alpha1.CacheClaimKind,
			Match:      &fnv1.ResourceSelector_MatchName{MatchName: s.Model.Cache},
			Namespace:  proto.String(s.Namespace),
		},
		// Cluster-scoped: no namespace.
		RequirementCacheComposite: {
			ApiVersion: v1alpha1.SchemeGroupVersion.String(),
			Kind:       v1alpha1.CacheCompositeKind,
			Match: &fnv1.ResourceSelector_MatchLabels{MatchLabels: &fnv1.MatchLabels{Labels: map[string]string{
				resolve.LabelClaimName: s.Model.Cache, resolve.LabelClaimNamespace: s.Namespace,
			}}},
		},
		RequirementCacheVolume: {
			ApiVersion: "v1",
			Kind:       "PersistentVolumeClaim",
			Match:      &fnv1.ResourceSelector_MatchName{MatchName: resolve.CacheVolume(s.Model.Cache)},
			Namespace:  proto.String(s.Namespace),
		},
	}
}

// cacheState is what a ModelCache says about the revision a service wants.
type cacheState int

const (
	// cacheUnresolved: Crossplane has not fetched the ModelCache yet (the
	// first call of a reconcile).
	cacheUnresolved cacheState = iota
	// CacheMissing: Crossplane fetched the ModelCache and found none of
	// that name in the service's namespace; a wait before the servers
	// exist, a failure once they run on its volume (PullState).
	CacheMissing
	// CachePulling: the cache has not pulled the revision yet, or lists it
	// and has not reported it yet; the servers start once it is there.
	CachePulling
	// CacheReady: the revision is pulled, and CachedWeights.Weights locate
	// it on the cache's volume.
	CacheReady
	// CacheFailed: the cache's pull of the revision failed.
	CacheFailed
	// CacheMismatch: spec.model.uri is not the cache's.
	CacheMismatch
	// CacheRevisionMissing: the cache does not pull the revision.
	CacheRevisionMissing
)

// CachedWeights is the observed ModelCache, judged for one service.
type CachedWeights struct {
	// URI of the cached weights.
	URI     string
	State   cacheState
	Message string
	// Weights are the revision's directory on the cache's volume, once
	// State is CacheReady: derived from the cache's name and spec, never
	// read from its status.
	Weights render.Weights
	// Warnings say where the cache's status disagrees with the volume and
	// directory derived from its name and spec: the status is ignored.
	Warnings []string
}

// Cache reads the required ModelCache from the request and judges
// it for the service's revision:
//  1. not fetched yet: unresolved;
//  2. fetched and not found: missing;
//  3. its spec (uri, revisions, storage, credentials) refused by the
//     service's own policy in: an error naming spec.model.cacheRef, which
//     the edge reports as a Fatal, like every refusal of resolve;
//  4. spec.model.uri set and not the cache's: failed (CacheMismatch);
//  5. the revision (spec.model.revision, or the cache's first) not among
//     the cache's spec.revisions: failed (CacheRevisionMissing), whatever
//     its status reports; listed and not reported yet: pulling;
//  6. otherwise the revision's phase, as the cache's status reports it:
//     Ready, Failed, or pulling. Ready, the weights are the volume and
//     directory derived from the cache's name and spec; a status.pvcName
//     or revision path that names others is ignored, with a warning;
//  7. the volume claim judged (CheckCacheVolume): one that the cache's
//     composite does not control refuses the service, at any stage; Ready
//     waits until both are fetched and the volume exists.
//
// Step 3 is a check, and checks live in resolve; but resolve is pure and
// never sees an observed object, and the cache's spec exists first here,
// as a typed value, before anything is planned. So the check is
// resolve.CacheRefused, pure, the same checks the cache's own composition
// makes, and this is only where it is called: a refusal then stops the
// call before plan, as resolve's refusals do, instead of becoming a
// condition the plan would have to branch on.
func Cache(req *fnv1.RunFunctionRequest, s *resolve.Spec, in *v1beta1.Input) (*CachedWeights, error) {
	if s.Model.Cache == "" {
		return nil, nil
	}
	name := s.Model.Cache
	items, resolved := required(req, RequirementCache)
	switch {
	case !resolved:
		return &CachedWeights{State: cacheUnresolved, Message: fmt.Sprintf("waiting for Crossplane to fetch ModelCache %s", name)}, nil
	case len(items.GetItems()) == 0:
		return &CachedWeights{State: CacheMissing, Message: fmt.Sprintf("ModelCache %s does not exist in namespace %s; create it, or fix spec.model.cacheRef.name", name, s.Namespace)}, nil
	}
	mc := &v1alpha1.XModelCache{}
	if err := structcodec.Decode(items.GetItems()[0].GetResource(), mc, ""); err != nil {
		return nil, fmt.Errorf("cannot decode ModelCache %s: %w", name, err)
	}
	if err := resolve.CacheRefused(name, mc.Spec, in); err != nil {
		return nil, err
	}
	c := judgeCache(s, mc)
	c.URI = mc.Spec.URI
	return c, CheckCacheVolume(req, s, c)
}

// CheckCacheVolume judges the volume claim a service on a ModelCache would
// mount, <cache>-cache, against the cache's composite, both as Crossplane
// fetched them:
//  1. the volume exists and no composite of the cache controls it (another
//     controller, or none: someone made it before the cache's composition
//     could): an error naming spec.model.cacheRef, the volume and who has
//     it, which refuses the service at any stage;
//  2. the cache reports the revision Ready, and the volume or the
//     composite is not fetched yet: the wait of an unresolved cache;
//  3. Ready, and the volume or the composite does not exist (a status
//     that runs ahead of the cache, or a cache being deleted): pulling;
//  4. otherwise c stands.
//
// A volume with no composite to compare against is not refused (3): that
// is a cache on its way in or out, and nothing is mounted meanwhile.
func CheckCacheVolume(req *fnv1.RunFunctionRequest, s *resolve.Spec, c *CachedWeights) error {
	name, vol := s.Model.Cache, resolve.CacheVolume(s.Model.Cache)
	vols, volFetched := required(req, RequirementCacheVolume)
	xrs, xrFetched := required(req, RequirementCacheComposite)
	var composites []metav1.ObjectMeta
	for _, it := range xrs.GetItems() {
		xr := &v1alpha1.XModelCache{}
		if err := decodeFields(it.GetResource(), xr, "metadata"); err != nil {
			return fmt.Errorf("cannot decode the composite of ModelCache %s: %w", name, err)
		}
		composites = append(composites, xr.ObjectMeta)
	}
	if len(vols.GetItems()) > 0 && len(composites) > 0 {
		pvc := &corev1.PersistentVolumeClaim{}
		if err := decodeFields(vols.GetItems()[0].GetResource(), pvc, "metadata"); err != nil {
			return fmt.Errorf("cannot decode volume claim %s: %w", vol, err)
		}
		if !slices.ContainsFunc(composites, func(xr metav1.ObjectMeta) bool { return controlledByComposite(pvc.ObjectMeta, xr) }) {
			var errs resolve.FieldErrors
			errs.Add("spec.model.cacheRef.name", "ModelCache %s keeps its weights in volume claim %s, but the %s in namespace %s is not the cache's own: %s, not by the cache's composite %s. The servers would mount weights that no pull under the platform's policy put there, so InferenceService %s is refused; delete that volume claim (kubectl delete -n %s pvc/%s) so that the cache's composition can make its own and pull into it",
				name, vol, vol, s.Namespace, volumeController(pvc.ObjectMeta), composites[0].Name, s.Name, s.Namespace, vol)
			return errs.Err()
		}
	}
	if c.State != CacheReady {
		return nil
	}
	switch {
	case !volFetched || !xrFetched:
		*c = CachedWeights{URI: c.URI, State: cacheUnresolved, Message: fmt.Sprintf("waiting for Crossplane to fetch the volume claim %s of ModelCache %s", vol, name)}
	case len(vols.GetItems()) == 0 || len(composites) == 0:
		*c = CachedWeights{URI: c.URI, State: CachePulling, Message: fmt.Sprintf("ModelCache %s reports its weights ready, but its volume claim %s or its composite does not exist (yet, or any more); the servers start once the cache's composition has made the volume", name, vol)}
	}
	return nil
}

// volumeController says who controls a volume claim, for a refusal.
func volumeController(m metav1.ObjectMeta) string {
	c := metav1.GetControllerOfNoCopy(&m)
	switch {
	case c == nil:
		return "it is controlled by nobody (someone made it by hand)"
	case c.Kind == v1alpha1.CacheCompositeKind:
		return fmt.Sprintf("its controller reference names %s %s with uid %s", c.Kind, c.Name, c.UID)
	default:
		return fmt.Sprintf("it is controlled by %s %s", c.Kind, c.Name)
	}
}

// controlledByComposite says whether the object of metadata m is
// controlled by composite xr: its controller reference names xr's uid.
// Only where xr has no uid (crossplane render's composites have none) is
// Crossplane's crossplane.io/composite label taken instead. Stricter than
// resolve.Spec.Owns, which takes the label whenever either uid is missing:
// there a wrong verdict costs a confusing name clash, here a volume of the
// tenant's choosing, and the label is anyone's to write.
func controlledByComposite(m metav1.ObjectMeta, xr metav1.ObjectMeta) bool {
	if xr.UID == "" {
		return m.Labels[resolve.LabelComposite] != "" && m.Labels[resolve.LabelComposite] == xr.Name
	}
	c := metav1.GetControllerOfNoCopy(&m)
	return c != nil && c.UID == xr.UID && c.Kind == v1alpha1.CacheCompositeKind
}

// judgeCache judges a decoded ModelCache for the service (see Cache).
func judgeCache(s *resolve.Spec, mc *v1alpha1.XModelCache) *CachedWeights {
	name, st := s.Model.Cache, mc.Status
	if s.Model.URI != "" && s.Model.URI != mc.Spec.URI {
		return &CachedWeights{State: CacheMismatch, Message: fmt.Sprintf("ModelCache %s holds %s, not spec.model.uri %s; point spec.model.cacheRef at a cache of %s, or remove spec.model.uri", name, mc.Spec.URI, s.Model.URI, s.Model.URI)}
	}
	want := s.Model.Revision
	if want == "" && len(mc.Spec.Revisions) > 0 {
		want = mc.Spec.Revisions[0]
	}
	listed := want == "" && len(mc.Spec.Revisions) == 0 || slices.Contains(mc.Spec.Revisions, want)
	label := want
	if label == "" {
		label = "the default revision"
	}
	if !listed {
		return revisionMissing(name, want, mc.Spec.Revisions)
	}
	// Where the cache's own composition puts the revision: its volume is
	// named after the cache, the directory after the uri and revision.
	vol := resolve.CacheVolume(name)
	dir := render.CacheDir(resolve.CachedRevision(resolve.Model{URI: mc.Spec.URI}, want))
	for _, r := range st.Revisions {
		if r.Revision != want {
			continue
		}
		switch r.Phase {
		case v1alpha1.CacheReady:
			c := &CachedWeights{
				State:   CacheReady,
				Message: fmt.Sprintf("serving %s of %s from ModelCache %s (volume %s, directory %s)", label, mc.Spec.URI, name, vol, dir),
				Weights: render.Weights{ID: dir, Claim: vol, SubPath: dir},
			}
			if (st.PVCName != "" && st.PVCName != vol) || (r.Path != "" && r.Path != dir) {
				c.Warnings = append(c.Warnings, fmt.Sprintf("spec.model.cacheRef: ModelCache %s's status names volume %q and directory %q for %s, not %s and %s, which its name and spec give; the servers mount %s at %s and the status is ignored: a cache's status is read for its phase only, and the function never wrote that one (see: kubectl get -n %s modelcache/%s -o yaml)", name, st.PVCName, r.Path, label, vol, dir, vol, dir, s.Namespace, name))
			}
			return c
		case v1alpha1.CacheFailed:
			return &CachedWeights{State: CacheFailed, Message: fmt.Sprintf("ModelCache %s failed to pull %s: %s; see: kubectl describe -n %s modelcache/%s", name, label, r.Message, s.Namespace, name)}
		}
		return &CachedWeights{State: CachePulling, Message: fmt.Sprintf("ModelCache %s is pulling %s of %s; the servers start once it is there", name, label, mc.Spec.URI)}
	}
	return &CachedWeights{State: CachePulling, Message: fmt.Sprintf("ModelCache %s has not reported %s of %s yet; the servers start once it is pulled", name, label, mc.Spec.URI)}
}

// revisionMissing is the verdict on a revision want that the cache's spec
// does not list, whatever its status says.
func revisionMissing(name, want string, revisions []string) *CachedWeights {
	have := make([]string, len(revisions))
	for i, r := range revisions {
		have[i] = fmt.Sprintf("%q", r)
	}
	return &CachedWeights{State: CacheRevisionMissing, Message: fmt.Sprintf("ModelCache %s does not pull revision %q (it pulls %s); add it to the cache's spec.revisions, or choose one of those in spec.model.revision", name, want, strings.Join(have, ", "))}
}

// PullState maps the cache onto the states of a pull, so that phases read
// as they do for weights the service pulls itself. A cache that vanished
// under running servers is a failure (they keep the volume only until they
// stop); before any server exists it is merely pending.
func (c *CachedWeights) PullState(serversExist bool) render.JobState {
	switch c.State {
	case CacheReady:
		return render.JobComplete
	case CachePulling:
		return render.JobRunning
	case CacheFailed, CacheMismatch, CacheRevisionMissing:
		return render.JobFailed
	case CacheMissing:
		if serversExist {
			return render.JobFailed
		}
	}
	return render.JobAbsent
}
