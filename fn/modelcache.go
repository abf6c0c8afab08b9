package fn

import (
	"fmt"
	"strings"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/inferno-ai/function-inferno/apis/inference/v1alpha1"
	"github.com/inferno-ai/function-inferno/input/v1beta1"
)

// A ModelCache composes what an InferenceService composes for its weights,
// and nothing else: the volume (<name>-cache) and one pull Job per
// revision, built by the same builders. InferenceServices mount it through
// spec.model.cacheRef, so the weights outlive each of them.

// isModelCache reports whether the observed composite is a ModelCache.
func isModelCache(xr *structpb.Struct) bool {
	kind := xr.GetFields()["kind"].GetStringValue()
	return kind == v1alpha1.CacheCompositeKind || kind == v1alpha1.CacheClaimKind
}

// maxCacheRevisions is the most revisions one ModelCache pulls (the
// schema's maxItems).
const maxCacheRevisions = 16

// resolveCache checks a ModelCache and applies the Input's defaults. Its
// revisions become versions of a service without servers, so the volume
// and Job builders serve both kinds unchanged.
func resolveCache(xr *v1alpha1.XModelCache, in *v1beta1.Input) (*resolvedSpec, []string, error) {
	var errs fieldErrors
	var warnings []string
	spec := xr.Spec
	name, ns := nameAndNamespace(xr, v1alpha1.CacheClaimKind, in, &errs, &warnings)

	m := model{URI: spec.URI, Secret: spec.CredentialsSecretRef}
	parseURI(&m, "spec.uri", &errs)
	switch m.Scheme {
	case schemePVC:
		errs.add("spec.uri", "pvc:// weights already live in a volume: mount them with an InferenceService's spec.model.uri instead of caching them")
	case schemeOCI:
		errs.add("spec.uri", "oci:// weights already live in an image that the kubelet mounts: serve them with an InferenceService's spec.model.uri instead of caching them")
	}
	checkSecretRef(spec.CredentialsSecretRef, "spec.credentialsSecretRef", &errs)
	if msg, bad := inClearText(m, in); bad {
		errs.add("spec.credentialsSecretRef", "%s", msg)
	}
	if msg, bad := sourceRefused(m, in); bad {
		errs.add("spec.uri", "%s", msg)
	}
	puller := resolvePuller(m, "spec.uri", in, &errs)
	versions := cacheRevisions(m, puller, spec.Revisions, &errs)

	var st *v1alpha1.StorageSpec
	if c := spec.Storage; c != nil {
		st = &v1alpha1.StorageSpec{Size: c.Size, StorageClassName: c.StorageClassName, AccessMode: c.AccessMode}
	}
	var servers serverSettings
	if in.Scheduling != nil {
		servers.Scheduling = *in.Scheduling
	}
	storage := resolveStorage(st, in, versions, replicaBounds{}, false, false, &errs, &warnings)
	pulls := resolvePulls(in, &errs)
	checkPolicyInput(in, &errs)
	np := resolveNetworkPolicy(ns, in, &errs)
	var primary model
	if len(versions) > 0 {
		primary = versions[0].Model
	}
	s := &resolvedSpec{
		Name: name, Namespace: ns, Volume: name + "-cache",
		Model: primary, Puller: puller, serverSettings: servers,
		Storage: storage, pullSettings: pulls,
		Versions: versions, NetworkPolicy: np,
	}
	if p := in.Policy; p != nil {
		sz := spec.Storage != nil && spec.Storage.Size != nil
		class := spec.Storage != nil && spec.Storage.StorageClassName != nil
		checkStoragePolicy(s, sz, class, p, &errs)
	}
	if err := errs.err(); err != nil {
		return nil, nil, err
	}
	return s, warnings, nil
}

// cacheRevisions checks spec.revisions and makes each a version of m.
func cacheRevisions(m model, puller v1beta1.PullerPreset, revisions []string, errs *fieldErrors) []modelVersion {
	listed := len(revisions) > 0
	if !listed {
		revisions = []string{""}
	}
	if len(revisions) > maxCacheRevisions {
		errs.add("spec.revisions", "lists %d revisions; cache at most %d in one ModelCache", len(revisions), maxCacheRevisions)
	}
	var versions []modelVersion
	seen := map[string]int{}
	for i, r := range revisions {
		f := fmt.Sprintf("spec.revisions[%d]", i)
		if j, dup := seen[r]; dup {
			errs.add(f, "%q is listed twice (also at spec.revisions[%d]); list each revision once", r, j)
			continue
		}
		seen[r] = i
		if r == "" && listed {
			errs.add(f, "is empty; name a branch, tag, commit or object version, or leave spec.revisions out to pull the default")
		}
		checkRevision(r, f, errs)
		rm := m
		rm.Revision = r
		rm.Hash = shortHash([]string{rm.URI, rm.Revision})
		versions = append(versions, modelVersion{Primary: len(versions) == 0, Model: rm, Puller: puller, Weight: 100})
	}
	return versions
}

// composeCache decides what a ModelCache returns: its volume and a pull Job
// per revision, each ready as for an InferenceService, and its status.
// Each revision's weights are pulled as an InferenceService's are
// (pulledWeights), by the same builders.
func composeCache(s *resolvedSpec, ocds map[string]*fnv1.Resource) (composition, error) {
	var c composition
	o, err := observe(ocds)
	if err != nil {
		return c, err
	}
	pulls := make([]*pulledWeights, len(s.Versions))
	for i := range s.Versions {
		if pulls[i], err = newPulledWeights(s, &s.Versions[i], o); err != nil {
			return c, err
		}
	}
	pvc, warnings := renderPVC(s, o.PVC)
	c.Resources = append(c.Resources, composedResource{Name: resourcePVC, Object: pvc, Ready: pvcBound(o.PVC)})
	for _, p := range pulls {
		c.Resources = append(c.Resources, p.resources()...)
	}
	if s.NetworkPolicy != nil {
		c.Resources = append(c.Resources, composedResource{Name: resourceNetworkPolicyPull, Object: renderPullPolicy(s), Ready: networkPolicyReady(o.has(resourceNetworkPolicyPull))})
	}
	st, cond := cacheStatusFor(s, pulls)
	c.CacheStatus = &st
	c.Report.Conditions = []condition{cond}
	c.Report.Warnings = warnings
	return c, nil
}

// cacheStatusFor reports each revision and the cache as a whole:
//  1. any revision failed: Failed, with each failure;
//  2. every revision pulled: Ready;
//  3. any revision's Job running: Pulling;
//  4. otherwise Pending.
func cacheStatusFor(s *resolvedSpec, pulls []*pulledWeights) (v1alpha1.ModelCacheStatus, condition) {
	st := v1alpha1.ModelCacheStatus{PVCName: pvcName(s), URI: s.Model.URI}
	var failed, waiting []string
	running := false
	why := pullFailedOther // of the first failed revision
	for _, p := range pulls {
		r := v1alpha1.CachedRevision{Revision: p.model.Revision, Path: cacheDir(p.model)}
		w := p.condition()
		r.Message = w.Message
		switch p.state() {
		case jobComplete:
			r.Phase = v1alpha1.CacheReady
		case jobFailed:
			r.Phase = v1alpha1.CacheFailed
			if len(failed) == 0 {
				why = p.failure
			}
			failed = append(failed, w.Message)
		case jobRunning:
			r.Phase = v1alpha1.CachePulling
			running = true
			waiting = append(waiting, w.Message)
		default:
			r.Phase = v1alpha1.CachePending
			waiting = append(waiting, w.Message)
		}
		st.Revisions = append(st.Revisions, r)
	}
	n := len(s.Versions)
	switch {
	case len(failed) > 0:
		st.Phase, st.Message = v1alpha1.CacheFailed, strings.Join(failed, "; ")
		switch why {
		case pullStalled:
			return st, reasonPullStalled.condition(st.Message)
		case pullTimedOut:
			return st, reasonPullTimedOut.condition(st.Message)
		}
		return st, reasonPullFailed.condition(st.Message)
	case len(waiting) == 0:
		st.Phase = v1alpha1.CacheReady
		st.Message = fmt.Sprintf("%d of %d revisions of %s are in volume %s", n, n, s.Model.URI, st.PVCName)
		return st, reasonPulled.condition(st.Message)
	case running:
		st.Phase, st.Message = v1alpha1.CachePulling, strings.Join(waiting, "; ")
		return st, reasonPulling.condition(st.Message)
	default:
		st.Phase, st.Message = v1alpha1.CachePending, strings.Join(waiting, "; ")
		return st, reasonPullPending.condition(st.Message)
	}
}
