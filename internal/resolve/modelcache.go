package resolve

import (
	"fmt"

	"github.com/inferno-ai/function-inferno/apis/inference/v1alpha1"
	"github.com/inferno-ai/function-inferno/input/v1beta1"
)

// maxCacheRevisions is the most revisions one ModelCache pulls (the
// schema's maxItems).
const maxCacheRevisions = 16

// ResolveCache checks a ModelCache and applies the Input's defaults. Its
// revisions become versions of a service without servers, so the volume
// and Job builders serve both kinds unchanged.
func ResolveCache(xr *v1alpha1.XModelCache, in *v1beta1.Input) (*Spec, []string, error) {
	var errs FieldErrors
	var warnings []string
	spec := xr.Spec
	name, ns := nameAndNamespace(xr, v1alpha1.CacheClaimKind, in, &errs, &warnings)

	m := Model{URI: spec.URI, Secret: spec.CredentialsSecretRef, SecretField: "spec.credentialsSecretRef"}
	ParseURI(&m, "spec.uri", &errs)
	switch m.Scheme {
	case SchemePVC:
		errs.Add("spec.uri", "pvc:// weights already live in a volume: mount them with an InferenceService's spec.model.uri instead of caching them")
	case SchemeOCI:
		errs.Add("spec.uri", "oci:// weights already live in an image that the kubelet mounts: serve them with an InferenceService's spec.model.uri instead of caching them")
	}
	checkSecretRef(spec.CredentialsSecretRef, "spec.credentialsSecretRef", &errs)
	puller := resolvePuller(m, "spec.uri", in, &errs)
	versions := cacheRevisions(m, puller, spec.Revisions, &errs)

	var servers serverSettings
	if in.Scheduling != nil {
		servers.Scheduling = *in.Scheduling
	}
	storage := resolveStorage(cacheStorage(spec), in, versions, ReplicaBounds{}, false, false, &errs, &warnings)
	checkCachePolicy(m, storage, spec, in, &errs)
	pulls := resolvePulls(in, &errs)
	checkPolicyInput(in, &errs)
	creds := credentialsPolicy(in, &errs)
	np := resolveNetworkPolicy(ns, in, &errs)
	var primary Model
	if len(versions) > 0 {
		primary = versions[0].Model
	}
	s := &Spec{
		Name: name, Namespace: ns, Volume: CacheVolume(name),
		Model: primary, Puller: puller, serverSettings: servers,
		Storage: storage, pullSettings: pulls,
		Versions: versions, NetworkPolicy: np, Credentials: creds,
	}
	checkCredentialRef(m, puller, "spec.credentialsSecretRef", in, &errs)
	if err := errs.Err(); err != nil {
		return nil, nil, err
	}
	return s, warnings, nil
}

// cacheRevisions checks spec.revisions and makes each a version of m.
func cacheRevisions(m Model, puller v1beta1.PullerPreset, revisions []string, errs *FieldErrors) []Version {
	listed := len(revisions) > 0
	if !listed {
		revisions = []string{""}
	}
	if len(revisions) > maxCacheRevisions {
		errs.Add("spec.revisions", "lists %d revisions; cache at most %d in one ModelCache", len(revisions), maxCacheRevisions)
	}
	var versions []Version
	seen := map[string]int{}
	for i, r := range revisions {
		f := fmt.Sprintf("spec.revisions[%d]", i)
		if j, dup := seen[r]; dup {
			errs.Add(f, "%q is listed twice (also at spec.revisions[%d]); list each revision once", r, j)
			continue
		}
		seen[r] = i
		if r == "" && listed {
			errs.Add(f, "is empty; name a branch, tag, commit or object version, or leave spec.revisions out to pull the default")
		}
		checkRevision(r, f, errs)
		versions = append(versions, Version{Primary: len(versions) == 0, Model: CachedRevision(m, r), Puller: puller, Weight: 100})
	}
	return versions
}

// CacheVolume names the volume of the ModelCache called name (the claim's
// name): <name>-cache. The cache's own composition names its
// PersistentVolumeClaim with it (Spec.Volume, render.PVCName), and a
// service on the cache mounts the volume it names, never the one the
// cache's status reports (observe.Cache).
func CacheVolume(name string) string { return name + "-cache" }

// CachedRevision is revision rev of the weights m of a ModelCache, as the
// cache pulls it: its Hash, of the uri and the revision alone, names the
// revision's directory on the cache's volume (render.CacheDir), for the
// cache's pull Job and for the servers of a service on the cache alike.
func CachedRevision(m Model, rev string) Model {
	m.Revision = rev
	m.Hash = ShortHash([]string{m.URI, m.Revision})
	return m
}

// cacheStorage is a ModelCache's spec.storage as a service's, which the
// volume builders read.
func cacheStorage(spec v1alpha1.ModelCacheSpec) *v1alpha1.StorageSpec {
	c := spec.Storage
	if c == nil {
		return nil
	}
	return &v1alpha1.StorageSpec{Size: c.Size, StorageClassName: c.StorageClassName, AccessMode: c.AccessMode}
}

// checkCachePolicy holds a ModelCache to input.policy with the checks
// every weights source goes through (policy.go): its source m (scheme,
// host; pvc:// and oci:// are refused as caches before), its credentials
// (never in clear text), and its volume st (size and class). The fields
// are the ModelCache's. The cache's own composition applies it with its
// Input (ResolveCache), and a service on the cache with the service's
// (CacheRefused).
func checkCachePolicy(m Model, st storage, spec v1alpha1.ModelCacheSpec, in *v1beta1.Input, errs *FieldErrors) {
	if msg, bad := inClearText(m, in); bad {
		errs.Add("spec.credentialsSecretRef", "%s", msg)
	}
	if msg, bad := sourceRefused(m, in); bad {
		errs.Add("spec.uri", "%s", msg)
	}
	if p := in.Policy; p != nil {
		sz := spec.Storage != nil && spec.Storage.Size != nil
		class := spec.Storage != nil && spec.Storage.StorageClassName != nil
		checkStoragePolicy(st, sz, class, p, errs)
	}
}
