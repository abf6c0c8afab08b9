package resolve

import (
	"errors"
	"path"
	"regexp"
	"slices"
	"strings"

	"github.com/inferno-ai/function-inferno/apis/inference/v1alpha1"
	"github.com/inferno-ai/function-inferno/input/v1beta1"
	"k8s.io/apimachinery/pkg/util/validation"
)

// Model is spec.model, parsed.
type Model struct {
	URI       string
	Scheme    string // hf, s3, gs, http, https, pvc or oci
	Source    string // the URI without "scheme://"
	Revision  string
	Version   string
	Framework v1alpha1.Framework
	Secret    *v1alpha1.SecretKeyReference
	// SecretField is the claim's field Secret comes from (a version or
	// adapter may share spec.model's).
	SecretField string
	// Hash identifies the weights (uri and revision): it names the pull Job
	// and the cache directory, so a new model gets a new Job and directory.
	Hash string
	// Claim and SubPath locate pvc:// weights.
	Claim   string
	SubPath string
	// Cache names the ModelCache that holds the weights (spec.model.cacheRef).
	Cache string
	// OCI is the image of oci:// weights, nil for other schemes.
	OCI *OCIReference
	// Dir is the weights' directory on the cache volume; empty is Hash.
	Dir string
	// Origin is where the weights' requests go (host.go); zero for pvc://
	// weights and for a URI that ParseURI refused.
	Origin Origin
}

// pulled reports whether the weights are downloaded into our own cache
// volume: everything but pvc:// and oci:// weights and weights of a
// ModelCache.
func (m Model) pulled() bool { return m.Scheme != SchemePVC && m.Scheme != SchemeOCI && m.Cache == "" }

// SchemePVC is the scheme of pvc://claim[/path] weights: the app team's
// own PersistentVolumeClaim, mounted read-only, never pulled.
const SchemePVC = "pvc"

var (
	// supportedSchemes in the order error messages list them.
	supportedSchemes = []string{"hf", "s3", "gs", "http", "https", "pvc", SchemeOCI}
	hfRepo           = regexp.MustCompile(`^[A-Za-z0-9][-A-Za-z0-9_.]*(/[A-Za-z0-9][-A-Za-z0-9_.]*)?$`)
	labelValue       = regexp.MustCompile(`^[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$`)
	revisionPattern  = regexp.MustCompile(`^[A-Za-z0-9][-A-Za-z0-9_./]*$`)
)

// resolvePuller finds the platform's puller of m's scheme, refusing at
// uriField (the field m came from) a scheme the Input offers none for;
// zero for weights that are not pulled. Every pulled source — the model, a
// canary version, an adapter, a ModelCache — finds its puller here.
func resolvePuller(m Model, uriField string, in *v1beta1.Input, errs *FieldErrors) v1beta1.PullerPreset {
	if !m.pulled() || m.Scheme == "" {
		return v1beta1.PullerPreset{}
	}
	p, ok := in.Puller(m.Scheme)
	switch {
	case !ok:
		errs.Add(uriField, "the platform's Input offers no puller for %s://; ask your platform team or use another source", m.Scheme)
	case p.Image == "":
		errs.Add("input.pullers."+m.Scheme+".image", "is empty; the Composition's Input must give the %s:// puller an image", m.Scheme)
	case len(p.Command) == 0:
		errs.Add("input.pullers."+m.Scheme+".command", "is empty; the Composition's Input must give the %s:// puller a download command", m.Scheme)
	}
	return p
}

// checkModelCredentials refuses credentials spec.model cannot use and
// sources the platform does not allow.
func checkModelCredentials(m Model, in *v1beta1.Input, errs *FieldErrors) {
	switch {
	case m.Secret != nil && m.Cache != "":
		errs.Add("spec.model.credentialsSecretRef", "the ModelCache %q pulls the weights, so this service reads no credentials; set them on the ModelCache and remove them here", m.Cache)
	case m.Secret != nil && m.Scheme == SchemePVC:
		// Not even for the other versions: credentials go only to the
		// source they were given for (spec.traffic[].credentialsSecretRef).
		errs.Add("spec.model.credentialsSecretRef", "pvc:// models are mounted, not pulled, so no credentials are read; remove it (a version of spec.traffic that needs credentials names its own)")
	}
	if msg, bad := inClearText(m, in); bad {
		errs.Add("spec.model.credentialsSecretRef", "%s", msg)
	}
	if msg, bad := sourceRefused(m, in); bad {
		errs.Add("spec.model.uri", "%s", msg)
	}
}

func resolveModel(m v1alpha1.ModelSpec, errs *FieldErrors) Model {
	out := Model{URI: m.URI, Revision: m.Revision, Version: m.Version, Framework: m.Framework, Secret: m.CredentialsSecretRef, SecretField: "spec.model.credentialsSecretRef"}
	if out.Framework == "" {
		out.Framework = v1alpha1.FrameworkVLLM
	}
	if r := m.CacheRef; r != nil {
		out.Cache = r.Name
		for _, msg := range validation.IsDNS1035Label(r.Name) {
			errs.Add("spec.model.cacheRef.name", "%q is not a ModelCache name: %s", r.Name, msg)
		}
		if out.URI != "" {
			ParseURI(&out, "spec.model.uri", errs)
			if out.Scheme == SchemePVC {
				errs.Add("spec.model.uri", "pvc:// weights are mounted from their own claim; remove spec.model.cacheRef or the pvc:// uri")
			}
			if out.Scheme == SchemeOCI {
				errs.Add("spec.model.uri", "oci:// weights are mounted from their image, which a ModelCache does not hold; remove spec.model.cacheRef or the oci:// uri")
			}
		}
	} else {
		ParseURI(&out, "spec.model.uri", errs)
	}

	if !isFramework(out.Framework) {
		errs.Add("spec.model.framework", "%q is not supported; use one of %s", out.Framework, joinFrameworks())
	}
	if m.Version != "" && (len(m.Version) > validation.LabelValueMaxLength || !labelValue.MatchString(m.Version)) {
		errs.Add("spec.model.version", "%q is not a valid label value; use at most 63 letters, digits, '-', '_' or '.', starting and ending with a letter or digit", m.Version)
	}
	checkRevision(m.Revision, "spec.model.revision", errs)
	checkSecretRef(m.CredentialsSecretRef, "spec.model.credentialsSecretRef", errs)
	out.Hash = ShortHash([]string{out.URI, out.Revision})
	return out
}

// checkSecretRef refuses a Secret reference that cannot name a Secret or
// one of its keys.
func checkSecretRef(r *v1alpha1.SecretKeyReference, field string, errs *FieldErrors) {
	if r == nil {
		return
	}
	for _, msg := range validation.IsDNS1123Subdomain(r.Name) {
		errs.Add(field+".name", "%q is not a Secret name: %s", r.Name, msg)
	}
	if r.Key != "" {
		for _, msg := range validation.IsConfigMapKey(r.Key) {
			errs.Add(field+".key", "%q is not a Secret key: %s", r.Key, msg)
		}
	}
}

// checkRevision refuses a revision that is not a branch, tag, commit or
// object version.
func checkRevision(rev, field string, errs *FieldErrors) {
	if rev != "" && (len(rev) > 128 || !revisionPattern.MatchString(rev) || strings.Contains(rev, "..")) {
		errs.Add(field, "%q is not a revision; use a branch, tag, commit or object version of at most 128 letters, digits, '-', '_', '.' or '/'", rev)
	}
}

// ParseURI parses the weights URI of out, reporting problems under field.
func ParseURI(out *Model, field string, errs *FieldErrors) {
	uri := out.URI
	if uri == "" {
		errs.Add(field, "is required; set it to hf://org/model, s3://bucket/prefix, gs://bucket/prefix, https://host/file, pvc://claim[/path] or oci://registry/repository@sha256:<digest>")
		return
	}
	scheme, rest, ok := strings.Cut(uri, "://")
	if !ok {
		errs.Add(field, "%q has no scheme; use hf://, s3://, gs://, http(s)://, pvc:// or oci://", uri)
		return
	}
	if !slices.Contains(supportedSchemes, scheme) {
		errs.Add(field, "scheme %q is not supported; use hf://, s3://, gs://, http(s)://, pvc:// or oci://", scheme)
		return
	}
	out.Scheme, out.Source = scheme, rest
	host, _, _ := strings.Cut(rest, "/")
	// The credentials' field beside the URI's: spec.model.uri's is
	// spec.model.credentialsSecretRef, a ModelCache's spec.uri's
	// spec.credentialsSecretRef.
	secretField := strings.TrimSuffix(strings.TrimSuffix(field, "uri"), ".")
	if secretField != "" {
		secretField += "."
	}
	secretField += "credentialsSecretRef"
	if strings.Contains(host, "@") && scheme != "http" && scheme != "https" {
		errs.Add(field, "must not carry credentials (user:password@); put them in a Secret and set %s", secretField)
		return
	}
	// originOf sets out.Origin, or reports why the URI names no origin
	// for certain; the host allow-list (input.policy.allowedURIHosts) is
	// matched against that origin alone.
	originOf := func() bool {
		o, err := URIOrigin(uri)
		if errors.Is(err, ErrUserinfo) {
			errs.Add(field, "must not carry credentials (user:password@), which also hide the host a URI reaches (the platform matches its sources, input.policy.allowedURIHosts, by host); put them in a Secret and set %s, and write %s://host/path", secretField, scheme)
			return false
		}
		if err != nil {
			errs.Add(field, "%q %s (the platform matches its sources, input.policy.allowedURIHosts, by host)", uri, err)
			return false
		}
		out.Origin = o
		return true
	}
	// http(s) URIs are parsed as URLs first: their refusals say how the
	// host would be misread.
	if scheme == "http" || scheme == "https" {
		if strings.ContainsAny(uri, " \"'`") {
			errs.Add(field, "must not contain spaces, quotes or backslashes")
			return
		}
		if host == "" {
			errs.Add(field, "%q names no host; write %s://host/path/to/file", uri, scheme)
			return
		}
		if !originOf() {
			return
		}
	}
	if strings.ContainsAny(uri, " \t\r\n\"'`\\") {
		errs.Add(field, "must not contain spaces, quotes or backslashes")
		return
	}
	switch scheme {
	case "hf":
		if !hfRepo.MatchString(rest) {
			errs.Add(field, "%q is not a Hugging Face repository; write hf://org/model", uri)
			return
		}
		originOf()
	case "s3", "gs":
		if host == "" {
			errs.Add(field, "%q names no bucket; write %s://bucket/prefix", uri, scheme)
			return
		}
		if scheme == "gs" && strings.ContainsAny(rest, "*?[]{}") {
			// gcloud storage expands them, to objects nobody named.
			errs.Add(field, "%q contains a wildcard (* ? [ ] { }), which gcloud storage would expand; name one bucket and prefix", uri)
			return
		}
		originOf()
	case "http", "https":
		// Parsed above.
	case SchemePVC:
		claim, sub, _ := strings.Cut(rest, "/")
		if claim == "" {
			errs.Add(field, "pvc:// needs a claim name; write pvc://<claim>[/path]")
			return
		}
		for _, m := range validation.IsDNS1123Subdomain(claim) {
			errs.Add(field, "%q is not a PersistentVolumeClaim name: %s", claim, m)
		}
		sub = strings.Trim(sub, "/")
		if sub != "" && (path.Clean(sub) != sub || strings.HasPrefix(sub, "..")) {
			errs.Add(field, "path %q in the claim must be clean and relative (no '..' or '//')", sub)
		}
		out.Claim, out.SubPath = claim, sub
	case SchemeOCI:
		if r, ok := ParseOCI(rest, field, errs); ok {
			out.OCI = &r
			originOf()
		}
	}
}
