package resolve

import (
	"github.com/inferno-ai/function-inferno/apis/inference/v1alpha1"
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
