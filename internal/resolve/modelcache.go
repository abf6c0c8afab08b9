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
	if msg, bad := inClearText(m, in); bad {
		errs.Add("spec.credentialsSecretRef", "%s", msg)
	}
	if msg, bad := sourceRefused(m, in); bad {
		errs.Add("spec.uri", "%s", msg)
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
	storage := resolveStorage(st, in, versions, ReplicaBounds{}, false, false, &errs, &warnings)
	pulls := resolvePulls(in, &errs)
	checkPolicyInput(in, &errs)
	creds := credentialsPolicy(in, &errs)
	np := resolveNetworkPolicy(ns, in, &errs)
	var primary Model
	if len(versions) > 0 {
		primary = versions[0].Model
	}
	s := &Spec{
		Name: name, Namespace: ns, Volume: name + "-cache",
		Model: primary, Puller: puller, serverSettings: servers,
		Storage: storage, pullSettings: pulls,
		Versions: versions, NetworkPolicy: np, Credentials: creds,
	}
	checkCredentialRef(m, puller, "spec.credentialsSecretRef", in, &errs)
	if p := in.Policy; p != nil {
		sz := spec.Storage != nil && spec.Storage.Size != nil
		class := spec.Storage != nil && spec.Storage.StorageClassName != nil
		checkStoragePolicy(s, sz, class, p, &errs)
	}
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
		rm := m
		rm.Revision = r
		rm.Hash = ShortHash([]string{rm.URI, rm.Revision})
		versions = append(versions, Version{Primary: len(versions) == 0, Model: rm, Puller: puller, Weight: 100})
	}
	return versions
}
