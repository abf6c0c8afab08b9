package resolve

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/inferno-ai/function-inferno/apis/inference/v1alpha1"
	"github.com/inferno-ai/function-inferno/input/v1beta1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
)

// Labels Crossplane puts on an XR created for a claim.
const (
	LabelClaimName      = "crossplane.io/claim-name"
	LabelClaimNamespace = "crossplane.io/claim-namespace"
)

// MaxNameLength keeps every derived object name a valid label value: the
// longest suffix is the pull Job's "-pull-" plus an 8-hex hash, and the Job
// name becomes the batch.kubernetes.io/job-name label of its pods (63 max).
const MaxNameLength = validation.DNS1123LabelMaxLength - len("-pull-") - HashLength

// HashLength is the number of hex digits of the weights hash in names.
const HashLength = 8

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
func nameAndNamespace(xr metav1.Object, kind string, in *v1beta1.Input, errs *FieldErrors, warnings *[]string) (string, string) {
	name, ns := xr.GetLabels()[LabelClaimName], xr.GetLabels()[LabelClaimNamespace]
	switch {
	case xr.GetNamespace() != "":
		if (name != "" && name != xr.GetName()) || (ns != "" && ns != xr.GetNamespace()) {
			*warnings = append(*warnings, fmt.Sprintf("metadata.labels: %s=%q and %s=%q are ignored on a namespaced %s, which is always named by its own name and namespace (%s/%s); remove them", LabelClaimName, name, LabelClaimNamespace, ns, kind, xr.GetNamespace(), xr.GetName()))
		}
		name, ns = xr.GetName(), xr.GetNamespace()
	case name != "" && ns != "":
	default:
		name, ns = xr.GetName(), in.Namespace
		if ns == "" {
			errs.Add("metadata.labels", "the composite resource has no %s label and the function's Input sets no namespace; create it through %s claim, or set input.namespace in the Composition", LabelClaimNamespace, withArticle(kind))
		}
	}
	if ns != "" {
		for _, m := range validation.IsDNS1123Label(ns) {
			errs.Add("namespace", "%q is not a namespace name: %s", ns, m)
		}
	}
	switch {
	case name == "":
		errs.Add("metadata.name", "is empty; give the %s a name", kind)
	case len(name) > MaxNameLength:
		errs.Add("metadata.name", "%q is %d characters; use at most %d so that the pull Job's name (%q plus a hash) stays within Kubernetes' 63-character limit", name, len(name), MaxNameLength, name+"-pull-")
	default:
		// The Service is named after the claim, and Service names are
		// DNS-1035 labels: no dots, no leading digit.
		for _, m := range validation.IsDNS1035Label(name) {
			if kind == v1alpha1.ClaimKind {
				errs.Add("metadata.name", "%q cannot name the Service: %s; rename the InferenceService", name, m)
			} else {
				errs.Add("metadata.name", "%q cannot name the objects: %s; rename the %s", name, m, kind)
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

// ShortHash is the first hashLength hex digits of the SHA-256 of v's JSON
// form, which is deterministic (struct fields in order, map keys sorted).
func ShortHash(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		// Only values that cannot be JSON (channels, functions) fail, and
		// callers pass API structs.
		panic(fmt.Sprintf("cannot hash %T: %v", v, err))
	}
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:])[:HashLength]
}
