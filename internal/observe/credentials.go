package observe

import (
	"fmt"
	"slices"
	"strings"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"github.com/inferno-ai/function-inferno/apis/inference/v1alpha1"
	"github.com/inferno-ai/function-inferno/internal/resolve"
	"google.golang.org/protobuf/proto"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
)

// The Secrets a claim names as credentials are required resources: the
// function asks Crossplane for each by name, in the claim's namespace,
// and reads of it only what it needs to judge it — whether it exists, the
// names of its keys, and its labels. It never reads a value: Crossplane
// hands the whole object over, and only the key names of data and
// stringData are kept (Secret). A pull does not start until its Secret is
// there with the keys its puller reads (CredentialsMissing), and a Secret
// outside input.policy.credentialSecretSelector is refused.

// RequirementSecretPrefix, followed by the Secret's name, keys a required
// Secret in the request and the response.
const RequirementSecretPrefix = "credentials-secret-"

// SecretRequirements are the selectors of every Secret the claim names as
// credentials, by requirement key.
func SecretRequirements(s *resolve.Spec) map[string]*fnv1.ResourceSelector {
	names := s.SecretNames()
	if len(names) == 0 {
		return nil
	}
	out := make(map[string]*fnv1.ResourceSelector, len(names))
	for _, n := range names {
		out[RequirementSecretPrefix+n] = &fnv1.ResourceSelector{
			ApiVersion: "v1",
			Kind:       "Secret",
			Match:      &fnv1.ResourceSelector_MatchName{MatchName: n},
			Namespace:  proto.String(s.Namespace),
		}
	}
	return out
}

// Secret is what the function knows of a required Secret: never its
// values.
type Secret struct {
	// Resolved says Crossplane fetched it (it may have found none).
	Resolved bool
	// Exists says it was found; Keys are its keys, sorted, and Labels its
	// labels.
	Exists bool
	Keys   []string
	Labels map[string]string
}

// Secrets are the required Secrets by name. A name the claim does not use
// is absent; a used one that Crossplane has not fetched is not Resolved.
type Secrets map[string]Secret

// ReadSecrets reads every Secret the claim names from the request's
// required resources (or, for Crossplane v1, its extra resources).
func ReadSecrets(req *fnv1.RunFunctionRequest, s *resolve.Spec) (Secrets, error) {
	names := s.SecretNames()
	if len(names) == 0 {
		return nil, nil
	}
	out := make(Secrets, len(names))
	for _, n := range names {
		key := RequirementSecretPrefix + n
		items, resolved := required(req, key)
		if !resolved {
			out[n] = Secret{}
			continue
		}
		if len(items.GetItems()) == 0 {
			out[n] = Secret{Resolved: true}
			continue
		}
		obj := items.GetItems()[0].GetResource()
		meta := &corev1.Secret{}
		if err := decodeFields(obj, meta, "metadata"); err != nil {
			return nil, fmt.Errorf("cannot decode the metadata of Secret %s: %w", n, err)
		}
		sec := Secret{Resolved: true, Exists: true, Labels: meta.Labels}
		// The key names only: the values are left in the request.
		for _, field := range []string{"data", "stringData"} {
			for k := range obj.GetFields()[field].GetStructValue().GetFields() {
				if !slices.Contains(sec.Keys, k) {
					sec.Keys = append(sec.Keys, k)
				}
			}
		}
		slices.Sort(sec.Keys)
		out[n] = sec
	}
	return out, nil
}

// CheckCredentialSecrets refuses a service that names, as credentials, a
// Secret outside input.policy.credentialSecretSelector, at the field that
// names it. A Secret not fetched yet, or not found, is not refused here:
// nothing is pulled with it meanwhile (Secrets.Judge).
func CheckCredentialSecrets(s *resolve.Spec, spec v1alpha1.InferenceServiceSpec, secrets Secrets) error {
	var errs resolve.FieldErrors
	checkSecretLabels(s, secrets, spec.Model.CredentialsSecretRef, "spec.model.credentialsSecretRef", &errs)
	for i, t := range spec.Traffic {
		checkSecretLabels(s, secrets, t.CredentialsSecretRef, fmt.Sprintf("spec.traffic[%d].credentialsSecretRef", i), &errs)
	}
	for i, a := range spec.Adapters {
		checkSecretLabels(s, secrets, a.CredentialsSecretRef, fmt.Sprintf("spec.adapters[%d].credentialsSecretRef", i), &errs)
	}
	return errs.Err()
}

// CheckCacheCredentialSecret is CheckCredentialSecrets for a ModelCache.
func CheckCacheCredentialSecret(s *resolve.Spec, spec v1alpha1.ModelCacheSpec, secrets Secrets) error {
	var errs resolve.FieldErrors
	checkSecretLabels(s, secrets, spec.CredentialsSecretRef, "spec.credentialsSecretRef", &errs)
	return errs.Err()
}

// checkSecretLabels refuses, at field, the fetched Secret ref names when
// its labels are outside the platform's selector.
func checkSecretLabels(s *resolve.Spec, secrets Secrets, ref *v1alpha1.SecretKeyReference, field string, errs *resolve.FieldErrors) {
	sel := s.Credentials.Selector
	if sel == nil || ref == nil {
		return
	}
	if sec := secrets[ref.Name]; sec.Exists && !sel.Matches(labels.Set(sec.Labels)) {
		errs.Add(field+".name", "Secret %q does not carry the labels the platform requires of credentials (input.policy.credentialSecretSelector: %s), so it is not used; name a Secret that does, or ask your platform team to label this one", ref.Name, s.Credentials.SelectorText)
	}
}

// CredentialsState is what a pull's Secret says.
type CredentialsState int

const (
	// CredentialsNone: the pull reads no Secret.
	CredentialsNone CredentialsState = iota
	// CredentialsUnresolved: Crossplane has not fetched the Secret yet
	// (the first call of a reconcile, or a Crossplane without required
	// resources).
	CredentialsUnresolved
	// CredentialsMissing: the Secret does not exist, or lacks a key the
	// puller reads.
	CredentialsMissing
	// CredentialsPresent: the Secret has every key the puller reads.
	CredentialsPresent
)

// Credentials is a pull's Secret, judged.
type Credentials struct {
	State CredentialsState
	// Message says what is missing and how to fix it.
	Message string
}

// Judge judges the Secret of m, pulled by p (or mounted as an image pull
// Secret), for the claim s:
//  1. no Secret: none;
//  2. not fetched: unresolved;
//  3. fetched and not found: missing;
//  4. without a key it needs (for an image pull Secret, without
//     .dockerconfigjson or .dockercfg): missing;
//  5. otherwise present.
func (ss Secrets) Judge(s *resolve.Spec, v *resolve.Version) Credentials {
	u, ok := resolve.CredentialUseOf(v)
	if !ok {
		return Credentials{}
	}
	sec := ss[u.Secret]
	switch {
	case !sec.Resolved:
		return Credentials{State: CredentialsUnresolved, Message: fmt.Sprintf("waiting for Crossplane to fetch Secret %s (%s)", u.Secret, u.Field)}
	case !sec.Exists:
		return Credentials{State: CredentialsMissing, Message: fmt.Sprintf("Secret %s (%s) does not exist in namespace %s; create it with %s, or fix %s.name", u.Secret, u.Field, s.Namespace, keysText(u), u.Field)}
	}
	var missing []string
	for _, k := range u.Keys {
		if !slices.Contains(sec.Keys, k) {
			missing = append(missing, k)
		}
	}
	if len(missing) > 0 && (!u.AnyOf || len(missing) == len(u.Keys)) {
		have := "no keys"
		if len(sec.Keys) > 0 {
			have = "keys " + strings.Join(sec.Keys, ", ")
		}
		return Credentials{State: CredentialsMissing, Message: fmt.Sprintf("Secret %s (%s) has %s, not %s; add %s to it, or fix %s", u.Secret, u.Field, have, keysText(u), keysText(u), u.Field)}
	}
	return Credentials{State: CredentialsPresent}
}

// keysText names the keys a use needs, for a message.
func keysText(u resolve.CredentialUse) string {
	if len(u.Keys) == 0 {
		return "its keys"
	}
	join := " and "
	if u.AnyOf {
		join = " or "
	}
	word := "key "
	if len(u.Keys) > 1 && !u.AnyOf {
		word = "keys "
	}
	return word + strings.Join(u.Keys, join)
}
