package resolve

import (
	"fmt"
	"strings"

	"github.com/inferno-ai/function-inferno/apis/inference/v1alpha1"
	"github.com/inferno-ai/function-inferno/input/v1beta1"
)

// resolveCacheRef checks what a cacheRef rules out: the weights, their
// volume and their credentials belong to the ModelCache.
func resolveCacheRef(namespace string, spec v1alpha1.InferenceServiceSpec, errs *FieldErrors) {
	if st := spec.Storage; st != nil && st.PurgeOnDelete != nil && !*st.PurgeOnDelete {
		errs.Add("spec.storage.purgeOnDelete", "false is not possible: Crossplane deletes the weights it composed with the InferenceService; to keep weights beyond a service, pull them with a ModelCache and set spec.model.cacheRef")
	}
	r := spec.Model.CacheRef
	if r == nil {
		return
	}
	if r.Namespace != "" && r.Namespace != namespace {
		errs.Add("spec.model.cacheRef.namespace", "%q is not the claim's namespace %q: a volume mounts only in its own namespace; create the ModelCache in %s and remove the namespace", r.Namespace, namespace, namespace)
	}
	if st := spec.Storage; st != nil && (st.Size != nil || st.StorageClassName != nil || st.AccessMode != "") {
		errs.Add("spec.storage", "the weights live in ModelCache %q's volume, which this service does not size; size it on the ModelCache and remove spec.storage", r.Name)
	}
	if spec.Traffic != nil {
		errs.Add("spec.traffic", "is not supported with spec.model.cacheRef yet; split traffic between InferenceServices on the same ModelCache, or pull each version here without a cacheRef")
	}
}

// CacheRefused holds the ModelCache name that a service names, as its spec
// was observed, to the policy of the service's own Input: the checks the
// cache's own composition makes with its Input (checkCachePolicy), with
// the service's Input filling what the cache's spec leaves out (its
// storage class and size), as if the service's platform composed the
// cache. So a cache composed under another Input (or none) serves no
// weights that the service's platform would not pull. It returns nil when
// the policy allows the cache, else one refusal at spec.model.cacheRef
// that names the cache and what it pulls, each of its fields the policy
// refuses with the platform's setting, and the fix.
//
// It is pure, as everything in resolve is: the caller (observe.Cache,
// where the cache's spec first exists as a typed value) hands it the spec.
func CacheRefused(name string, spec v1alpha1.ModelCacheSpec, in *v1beta1.Input) error {
	if in.Policy == nil {
		return nil
	}
	var found FieldErrors
	m := Model{URI: spec.URI, Secret: spec.CredentialsSecretRef}
	ParseURI(&m, "spec.uri", &found)
	if m.Scheme == SchemePVC || m.Scheme == SchemeOCI {
		found.Add("spec.uri", "%s:// weights are never cached", m.Scheme)
	}
	if len(found) == 0 {
		var ignored FieldErrors // the cache's own composition refuses the rest
		var warnings []string
		st := resolveStorage(cacheStorage(spec), in, []Version{{Model: m}}, ReplicaBounds{}, false, false, &ignored, &warnings)
		checkCachePolicy(m, st, spec, in, &found)
	}
	if len(found) == 0 {
		return nil
	}
	var errs FieldErrors
	errs.Add("spec.model.cacheRef", "ModelCache %s (%s) is refused by this service's platform: its %s; serve a ModelCache that the platform allows (the cache's owner fixes the fields named), or pull the weights here with spec.model.uri from an allowed source", name, sourceOfCache(spec), strings.Join(found, "; its "))
	return errs.Err()
}

// sourceOfCache says what a ModelCache pulls, for a refusal: its uri,
// revisions, storage and credentials as its spec states them.
func sourceOfCache(spec v1alpha1.ModelCacheSpec) string {
	parts := []string{"uri " + spec.URI}
	if len(spec.Revisions) > 0 {
		parts = append(parts, "revisions "+strings.Join(spec.Revisions, ", "))
	}
	if st := spec.Storage; st != nil {
		if st.Size != nil {
			parts = append(parts, "storage size "+st.Size.String())
		}
		if st.StorageClassName != nil {
			parts = append(parts, fmt.Sprintf("storage class %q", *st.StorageClassName))
		}
	}
	if r := spec.CredentialsSecretRef; r != nil {
		parts = append(parts, "credentials from Secret "+r.Name)
	}
	return strings.Join(parts, ", ")
}
