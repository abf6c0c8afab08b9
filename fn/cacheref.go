package fn

import (
	"fmt"
	"strings"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"google.golang.org/protobuf/proto"

	"github.com/inferno-ai/function-inferno/apis/inference/v1alpha1"
	"github.com/inferno-ai/function-inferno/internal/structcodec"
)

// An InferenceService with spec.model.cacheRef serves weights a ModelCache
// pulled. The function asks Crossplane for that ModelCache claim (a
// required resource) and reads its status: which volume, and which
// directory holds each revision. Nothing is pulled and no volume is made
// for the service, so the weights outlive it.

// requirementCache keys the required ModelCache in the request and the
// response.
const requirementCache = "model-cache"

// resolveCacheRef checks what a cacheRef rules out: the weights, their
// volume and their credentials belong to the ModelCache.
func resolveCacheRef(namespace string, spec v1alpha1.InferenceServiceSpec, errs *fieldErrors) {
	if st := spec.Storage; st != nil && st.PurgeOnDelete != nil && !*st.PurgeOnDelete {
		errs.add("spec.storage.purgeOnDelete", "false is not possible: Crossplane deletes the weights it composed with the InferenceService; to keep weights beyond a service, pull them with a ModelCache and set spec.model.cacheRef")
	}
	r := spec.Model.CacheRef
	if r == nil {
		return
	}
	if r.Namespace != "" && r.Namespace != namespace {
		errs.add("spec.model.cacheRef.namespace", "%q is not the claim's namespace %q: a volume mounts only in its own namespace; create the ModelCache in %s and remove the namespace", r.Namespace, namespace, namespace)
	}
	if st := spec.Storage; st != nil && (st.Size != nil || st.StorageClassName != nil || st.AccessMode != "") {
		errs.add("spec.storage", "the weights live in ModelCache %q's volume, which this service does not size; size it on the ModelCache and remove spec.storage", r.Name)
	}
	if spec.Traffic != nil {
		errs.add("spec.traffic", "is not supported with spec.model.cacheRef yet; split traffic between InferenceServices on the same ModelCache, or pull each version here without a cacheRef")
	}
}

// cacheRequirement is the selector of the ModelCache claim a service
// needs, or nil without a cacheRef.
func cacheRequirement(s *resolvedSpec) *fnv1.ResourceSelector {
	if s.Model.Cache == "" {
		return nil
	}
	return &fnv1.ResourceSelector{
		ApiVersion: v1alpha1.SchemeGroupVersion.String(),
		Kind:       v1alpha1.CacheClaimKind,
		Match:      &fnv1.ResourceSelector_MatchName{MatchName: s.Model.Cache},
		Namespace:  proto.String(s.Namespace),
	}
}

// requireCache asks Crossplane for the service's ModelCache. It asks
// through both the current and the deprecated field: Crossplane v2 reads
// either, Crossplane v1 only the deprecated one.
func requireCache(rsp *fnv1.RunFunctionResponse, s *resolvedSpec) {
	sel := cacheRequirement(s)
	if sel == nil {
		return
	}
	if rsp.Requirements == nil {
		rsp.Requirements = &fnv1.Requirements{}
	}
	if rsp.Requirements.Resources == nil {
		rsp.Requirements.Resources = map[string]*fnv1.ResourceSelector{}
	}
	rsp.Requirements.Resources[requirementCache] = sel
	if rsp.Requirements.ExtraResources == nil { //nolint:staticcheck // Crossplane v1 reads only this field.
		rsp.Requirements.ExtraResources = map[string]*fnv1.ResourceSelector{} //nolint:staticcheck // See above.
	}
	rsp.Requirements.ExtraResources[requirementCache] = proto.Clone(sel).(*fnv1.ResourceSelector) //nolint:staticcheck // See above.
}

// cacheState is what a ModelCache says about the revision a service wants.
type cacheState int

const (
	// cacheUnresolved: Crossplane has not fetched the ModelCache yet (the
	// first call of a reconcile).
	cacheUnresolved cacheState = iota
	cacheMissing
	cachePulling
	cacheReady
	// cacheFailed: the cache's pull of the revision failed.
	cacheFailed
	// cacheMismatch: spec.model.uri is not the cache's.
	cacheMismatch
	// cacheRevisionMissing: the cache does not pull the revision.
	cacheRevisionMissing
)

// cachedWeights is the observed ModelCache, judged for one service.
type cachedWeights struct {
	// URI of the cached weights.
	URI     string
	State   cacheState
	Message string
	// Weights are the revision's directory on the cache's volume, once
	// State is cacheReady.
	Weights weights
}

// observeCache reads the required ModelCache from the request and judges
// it for the service's revision:
//  1. not fetched yet: unresolved;
//  2. fetched and not found: missing;
//  3. spec.model.uri set and not the cache's: failed (CacheMismatch);
//  4. the revision (spec.model.revision, or the cache's first) not among
//     the cache's: failed (CacheRevisionMissing), unless the cache lists it
//     and has not reported it yet (pulling);
//  5. otherwise the revision's phase: Ready, Failed, or pulling.
func observeCache(req *fnv1.RunFunctionRequest, s *resolvedSpec) (*cachedWeights, error) {
	if s.Model.Cache == "" {
		return nil, nil
	}
	name := s.Model.Cache
	items, resolved := req.GetRequiredResources()[requirementCache]
	if !resolved {
		items, resolved = req.GetExtraResources()[requirementCache] //nolint:staticcheck // Crossplane v1 fills only this field.
	}
	switch {
	case !resolved:
		return &cachedWeights{State: cacheUnresolved, Message: fmt.Sprintf("waiting for Crossplane to fetch ModelCache %s", name)}, nil
	case len(items.GetItems()) == 0:
		return &cachedWeights{State: cacheMissing, Message: fmt.Sprintf("ModelCache %s does not exist in namespace %s; create it, or fix spec.model.cacheRef.name", name, s.Namespace)}, nil
	}
	mc := &v1alpha1.XModelCache{}
	if err := structcodec.Decode(items.GetItems()[0].GetResource(), mc, ""); err != nil {
		return nil, fmt.Errorf("cannot decode ModelCache %s: %w", name, err)
	}
	c := judgeCache(s, mc)
	c.URI = mc.Spec.URI
	return c, nil
}

// judgeCache judges a decoded ModelCache for the service (see observeCache).
func judgeCache(s *resolvedSpec, mc *v1alpha1.XModelCache) *cachedWeights {
	name, st := s.Model.Cache, mc.Status
	if s.Model.URI != "" && s.Model.URI != mc.Spec.URI {
		return &cachedWeights{State: cacheMismatch, Message: fmt.Sprintf("ModelCache %s holds %s, not spec.model.uri %s; point spec.model.cacheRef at a cache of %s, or remove spec.model.uri", name, mc.Spec.URI, s.Model.URI, s.Model.URI)}
	}
	want, listed := s.Model.Revision, false
	if want == "" && len(mc.Spec.Revisions) > 0 {
		want = mc.Spec.Revisions[0]
	}
	listed = want == "" && len(mc.Spec.Revisions) == 0 || contains(mc.Spec.Revisions, want)
	label := want
	if label == "" {
		label = "the default revision"
	}
	for _, r := range st.Revisions {
		if r.Revision != want {
			continue
		}
		switch {
		case r.Phase == v1alpha1.CacheReady && st.PVCName != "" && r.Path != "":
			return &cachedWeights{
				State:   cacheReady,
				Message: fmt.Sprintf("serving %s of %s from ModelCache %s (volume %s, directory %s)", label, mc.Spec.URI, name, st.PVCName, r.Path),
				Weights: weights{ID: r.Path, Claim: st.PVCName, SubPath: r.Path},
			}
		case r.Phase == v1alpha1.CacheFailed:
			return &cachedWeights{State: cacheFailed, Message: fmt.Sprintf("ModelCache %s failed to pull %s: %s; see: kubectl describe -n %s modelcache/%s", name, label, r.Message, s.Namespace, name)}
		}
		return &cachedWeights{State: cachePulling, Message: fmt.Sprintf("ModelCache %s is pulling %s of %s; the servers start once it is there", name, label, mc.Spec.URI)}
	}
	if listed {
		return &cachedWeights{State: cachePulling, Message: fmt.Sprintf("ModelCache %s has not reported %s of %s yet; the servers start once it is pulled", name, label, mc.Spec.URI)}
	}
	have := make([]string, len(mc.Spec.Revisions))
	for i, r := range mc.Spec.Revisions {
		have[i] = fmt.Sprintf("%q", r)
	}
	return &cachedWeights{State: cacheRevisionMissing, Message: fmt.Sprintf("ModelCache %s does not pull revision %q (it pulls %s); add it to the cache's spec.revisions, or choose one of those in spec.model.revision", name, want, strings.Join(have, ", "))}
}

// pullState maps the cache onto the states of a pull, so that phases read
// as they do for weights the service pulls itself. A cache that vanished
// under running servers is a failure (they keep the volume only until they
// stop); before any server exists it is merely pending.
func (c *cachedWeights) pullState(serversExist bool) jobState {
	switch c.State {
	case cacheReady:
		return jobComplete
	case cachePulling:
		return jobRunning
	case cacheFailed, cacheMismatch, cacheRevisionMissing:
		return jobFailed
	case cacheMissing:
		if serversExist {
			return jobFailed
		}
	}
	return jobAbsent
}

// cacheCondition is the WeightsReady condition of a service on a
// ModelCache.
func cacheCondition(c *cachedWeights, serversExist bool) condition {
	msg := c.Message
	switch c.State {
	case cacheReady:
		return reasonCached.condition(msg)
	case cacheMissing:
		if serversExist {
			msg += "; the running servers keep its volume until they stop (Kubernetes holds a mounted claim), but no new server can start"
		}
		return reasonCacheMissing.condition(msg)
	case cachePulling:
		return reasonCachePulling.condition(msg)
	case cacheFailed:
		return reasonCacheFailed.condition(msg)
	case cacheMismatch:
		return reasonCacheMismatch.condition(msg)
	case cacheRevisionMissing:
		return reasonCacheRevisionMissing.condition(msg)
	default:
		return reasonCacheUnresolved.condition(msg)
	}
}
