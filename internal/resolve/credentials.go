package resolve

import (
	"fmt"
	"slices"
	"strings"

	"github.com/inferno-ai/function-inferno/input/v1beta1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
)

// Credentials. A claim names a Secret of its namespace for each source
// that needs one (credentialsSecretRef); a pull Job reads from it only the
// variables its puller reads for credentials, each by secretKeyRef, and
// never the whole Secret (envFrom): a Secret whose keys the tenant writes
// must not set the puller's endpoint or proxy variables (HF_ENDPOINT,
// AWS_ENDPOINT_URL, HTTPS_PROXY, CURL_CA_BUNDLE, …), which would send an
// allowed URI through a host of the tenant's choice. Those come from the
// puller's preset alone. The platform may restrict which Secrets serve
// (input.policy.allowedCredentialSecrets, credentialSecretSelector), and
// the function asks Crossplane for each named Secret (a required
// resource, observe/credentials.go) so that a missing Secret or key is
// reported (CredentialsMissing) instead of a pull that never starts.

// The variables of s3://'s credentials, which the AWS CLI reads: a key
// pair and, for temporary credentials, a session token.
const (
	EnvAWSAccessKeyID     = "AWS_ACCESS_KEY_ID"
	EnvAWSSecretAccessKey = "AWS_SECRET_ACCESS_KEY"
	EnvAWSSessionToken    = "AWS_SESSION_TOKEN"
)

// CredentialVar is one variable a pull Job reads from the Secret of its
// source: the variable, the Secret's key, and whether the key may be
// absent.
type CredentialVar struct {
	Env, Key string
	Optional bool
}

// CredentialVars are the variables a pull of m by puller p reads from m's
// Secret, nil without one or for weights that are not pulled:
//  1. with credentialsSecretRef.key: that key, as the puller's TokenEnv;
//  2. s3:// without a key: AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY,
//     and AWS_SESSION_TOKEN if the Secret has it;
//  3. any other scheme without a key: the key named TokenEnv, as TokenEnv.
//
// checkCredentials refuses what gives no variable (s3:// with a key and
// no TokenEnv, a puller without TokenEnv).
func CredentialVars(m Model, p v1beta1.PullerPreset) []CredentialVar {
	if m.Secret == nil || !m.pulled() {
		return nil
	}
	switch {
	case m.Secret.Key != "":
		if p.TokenEnv == "" {
			return nil
		}
		return []CredentialVar{{Env: p.TokenEnv, Key: m.Secret.Key}}
	case m.Scheme == "s3":
		return []CredentialVar{
			{Env: EnvAWSAccessKeyID, Key: EnvAWSAccessKeyID},
			{Env: EnvAWSSecretAccessKey, Key: EnvAWSSecretAccessKey},
			{Env: EnvAWSSessionToken, Key: EnvAWSSessionToken, Optional: true},
		}
	case p.TokenEnv != "":
		return []CredentialVar{{Env: p.TokenEnv, Key: p.TokenEnv}}
	}
	return nil
}

// Image pull Secrets hold their registries' credentials under one of these
// keys: .dockerconfigjson (type kubernetes.io/dockerconfigjson) or the
// older .dockercfg (kubernetes.io/dockercfg).
var pullSecretKeys = []string{".dockerconfigjson", ".dockercfg"}

// CredentialUse is one field of the claim that names a Secret, and what
// its user reads from it.
type CredentialUse struct {
	// Field is the claim's credentialsSecretRef the Secret comes from
	// (spec.model.credentialsSecretRef for a version or adapter that
	// shares spec.model's).
	Field string
	// Secret is the Secret's name, in the claim's namespace.
	Secret string
	// Keys are the keys that must be there; AnyOf says one of them is
	// enough (an image pull Secret's), else each is needed.
	Keys  []string
	AnyOf bool
}

// credentialUse is m's use of its Secret pulled by p; ok is false without
// a Secret, or for weights that read none (pvc://, a ModelCache's).
func credentialUse(m Model, p v1beta1.PullerPreset) (CredentialUse, bool) {
	if m.Secret == nil {
		return CredentialUse{}, false
	}
	u := CredentialUse{Field: m.SecretField, Secret: m.Secret.Name}
	switch {
	case m.Scheme == SchemeOCI:
		u.Keys, u.AnyOf = pullSecretKeys, true
	case m.pulled():
		for _, v := range CredentialVars(m, p) {
			if !v.Optional {
				u.Keys = append(u.Keys, v.Key)
			}
		}
	default:
		return CredentialUse{}, false
	}
	return u, true
}

// CredentialUseOf is version v's use of its Secret (an adapter's pull is
// a version too); ok is false when it reads none.
func CredentialUseOf(v *Version) (CredentialUse, bool) { return credentialUse(v.Model, v.Puller) }

// CredentialUses lists every Secret the claim's pulls and image volumes
// read, once per field and Secret, in the order of the spec: the
// versions (the primary first), then the adapters.
func (s *Spec) CredentialUses() []CredentialUse {
	var out []CredentialUse
	add := func(m Model, p v1beta1.PullerPreset) {
		u, ok := credentialUse(m, p)
		if !ok {
			return
		}
		for _, have := range out {
			if have.Field == u.Field && have.Secret == u.Secret {
				return
			}
		}
		out = append(out, u)
	}
	for i := range s.Versions {
		add(s.Versions[i].Model, s.Versions[i].Puller)
	}
	for _, a := range s.Adapters.List {
		add(a.Model, a.Puller)
	}
	return out
}

// SecretNames are the names of every Secret the claim reads, sorted, once
// each.
func (s *Spec) SecretNames() []string {
	var out []string
	for _, u := range s.CredentialUses() {
		if !slices.Contains(out, u.Secret) {
			out = append(out, u.Secret)
		}
	}
	slices.Sort(out)
	return out
}

// credentialSelector parses input.policy.credentialSecretSelector; nil
// without one.
func credentialSelector(in *v1beta1.Input, errs *FieldErrors) labels.Selector {
	if in.Policy == nil || in.Policy.CredentialSecretSelector == nil {
		return nil
	}
	sel, err := metav1.LabelSelectorAsSelector(in.Policy.CredentialSecretSelector)
	if err != nil {
		errs.Add("input.policy.credentialSecretSelector", "is not a label selector: %v", err)
		return nil
	}
	return sel
}

// checkCredentialRef holds the Secret that field names for m, pulled by
// p, to the platform's list (input.policy.allowedCredentialSecrets), and
// refuses a reference that would give its puller no variable: s3:// with
// a key (the AWS CLI reads a key pair) and a puller without a token
// variable. Each reference is checked where it is written; a version or
// adapter that shares spec.model's is checked there. The Secret's labels
// are checked once Crossplane has fetched it
// (observe.CheckCredentialSecrets).
func checkCredentialRef(m Model, p v1beta1.PullerPreset, field string, in *v1beta1.Input, errs *FieldErrors) {
	if m.Secret == nil {
		return
	}
	if in.Policy != nil && len(in.Policy.AllowedCredentialSecrets) > 0 && !slices.Contains(in.Policy.AllowedCredentialSecrets, m.Secret.Name) {
		errs.Add(field+".name", "Secret %q is not among the Secrets the platform lets claims use as credentials (input.policy.allowedCredentialSecrets: %s); name one of them, or ask your platform team to list it", m.Secret.Name, strings.Join(in.Policy.AllowedCredentialSecrets, ", "))
	}
	if !m.pulled() || m.Scheme == "" || len(p.Command) == 0 {
		// Not pulled, or without a puller (refused at the uri).
		return
	}
	switch {
	case m.Secret.Key != "" && p.TokenEnv == "" && m.Scheme == "s3":
		errs.Add(field+".key", "s3:// reads a key pair, from the Secret's keys %s and %s (and %s, if present); remove the key and name the Secret's keys so", EnvAWSAccessKeyID, EnvAWSSecretAccessKey, EnvAWSSessionToken)
	case m.Scheme != "s3" && p.TokenEnv == "":
		errs.Add(field, "the platform's %s:// puller reads no credentials (input.pullers.%s.tokenEnv is empty); remove the reference, or ask your platform team to name the puller's token variable", m.Scheme, m.Scheme)
	}
}

// CredentialsPolicy is what the platform allows as credentials beyond
// names: the label selector a Secret must match, nil for any.
type CredentialsPolicy struct {
	Selector labels.Selector
	// SelectorText is the selector as the refusal shows it.
	SelectorText string
}

// credentialsPolicy resolves input.policy's selector for the spec.
func credentialsPolicy(in *v1beta1.Input, errs *FieldErrors) CredentialsPolicy {
	sel := credentialSelector(in, errs)
	if sel == nil {
		return CredentialsPolicy{}
	}
	return CredentialsPolicy{Selector: sel, SelectorText: fmt.Sprintf("%q", sel.String())}
}
