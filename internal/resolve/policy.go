package resolve

import (
	"fmt"
	"slices"
	"strings"

	"github.com/inferno-ai/function-inferno/apis/inference/v1alpha1"
	"github.com/inferno-ai/function-inferno/input/v1beta1"
	"k8s.io/apimachinery/pkg/util/validation"
)

// What the platform lets a claim ask for. Every claim field is the
// tenant's to write; the Input is the platform's. The checks here hold a
// resolved claim to the Input's policy, and each refusal names the claim's
// field, the limit, and input.policy.* as the platform's setting.

// inClearText reports whether m's credentials would cross the network in
// clear text: m is pulled from plain http:// with a Secret, and the
// platform does not list its host in input.policy.plainHTTPCredentialHosts.
// The message says so and how to fix it.
func inClearText(m Model, in *v1beta1.Input) (string, bool) {
	if m.Secret == nil || m.Scheme != "http" || !m.pulled() || m.Origin.Scheme == "" {
		return "", false
	}
	host := m.Origin.Authority()
	if p := in.Policy; p != nil {
		for _, h := range p.PlainHTTPCredentialHosts {
			if o, err := URIOrigin("http://" + h); err == nil && o == m.Origin {
				return "", false
			}
		}
	}
	return fmt.Sprintf("would send Secret %s to %s in clear text, since %s is plain http://; use https://, or ask your platform team to list %q in input.policy.plainHTTPCredentialHosts", m.Secret.Name, host, m.URI, host), true
}

// sourceRefused reports whether the platform refuses m's source: pvc://
// when input.policy.allowPVCURIs is false, a pulled scheme not in
// input.policy.allowedURISchemes, or a source not in
// input.policy.allowedURIHosts. Every weights source comes here: the
// model, each version of spec.traffic, each adapter, a ModelCache's
// spec.uri (checkCachePolicy), and the uri a service on a ModelCache
// states; the ModelCache such a service names is held to the service's
// policy once its spec is observed (CacheRefused).
func sourceRefused(m Model, in *v1beta1.Input) (string, bool) {
	p := in.Policy
	if p == nil || m.Scheme == "" {
		return "", false
	}
	// A URI that names no origin for certain was refused by ParseURI.
	if m.Scheme != SchemePVC && m.Origin.Scheme == "" {
		return "", false
	}
	if m.Scheme == SchemePVC {
		if p.AllowPVCURIs != nil && !*p.AllowPVCURIs {
			return "mounting a PersistentVolumeClaim of the namespace (pvc://) is not allowed: the platform turned it off (input.policy.allowPVCURIs: false); pull the weights from a source the platform allows, or use a ModelCache", true
		}
		return "", false
	}
	if len(p.AllowedURISchemes) > 0 && !slices.Contains(p.AllowedURISchemes, m.Scheme) {
		return fmt.Sprintf("%s:// is not among the schemes the platform allows (input.policy.allowedURISchemes: %s); pull from one of them", m.Scheme, strings.Join(p.AllowedURISchemes, ", ")), true
	}
	if len(p.AllowedURIHosts) > 0 && !SourceAllowed(m, p.AllowedURIHosts) {
		return fmt.Sprintf("%s is not among the sources the platform allows (input.policy.allowedURIHosts: %s); pull from one of them, or ask your platform team", sourceOf(m), strings.Join(p.AllowedURIHosts, ", ")), true
	}
	return "", false
}

// SourceAllowed reports whether m's origin (host.go: scheme, normalised
// host and port) matches one of the entries of
// input.policy.allowedURIHosts: the same scheme, and the same host and port
// (the scheme's default port when an entry names none), "*" for any, or
// "*.domain" for a name below domain on the same port.
func SourceAllowed(m Model, entries []string) bool {
	if m.Origin.Scheme == "" {
		return false
	}
	for _, e := range entries {
		if m.Origin.matches(e) {
			return true
		}
	}
	return false
}

// checkPolicyInput refuses entries of input.policy that cannot match.
func checkPolicyInput(in *v1beta1.Input, errs *FieldErrors) {
	if in.Policy == nil {
		return
	}
	for i, a := range in.Policy.DeniedServeArgs {
		if a != "*" && !strings.HasPrefix(a, "-") {
			errs.Add(fmt.Sprintf("input.policy.deniedServeArgs[%d]", i), "%q is not a flag; list flags such as --trust-remote-code, or \"*\" to deny every argument", a)
		}
	}
	for i, e := range in.Policy.AllowedServeEnv {
		name := strings.TrimSuffix(e, "*")
		if name == "" || strings.Contains(name, "*") || len(validation.IsEnvVarName(name)) > 0 {
			errs.Add(fmt.Sprintf("input.policy.allowedServeEnv[%d]", i), "%q is not a variable name or a prefix ending in '*'; list names such as VLLM_LOGGING_LEVEL or prefixes such as FAKE_*", e)
		}
	}
	for _, e := range in.Policy.AllowedURIHosts {
		scheme, a, ok := strings.Cut(e, "://")
		if !ok || a == "" || !slices.Contains(supportedSchemes, scheme) || scheme == SchemePVC || strings.Contains(a, "/") {
			errs.Add("input.policy.allowedURIHosts", "%q is not <scheme>://<authority> of a scheme with sources (hf, s3, gs, http, https, oci), e.g. hf://meta-llama, s3://models, https://*.models.internal", e)
		} else if err := entryOrigin(e); err != nil {
			errs.Add("input.policy.allowedURIHosts", "%q can never match: its authority %s; e.g. hf://meta-llama, s3://models, https://*.models.internal", e, err)
		}
	}
}

// checkPolicy holds a resolved InferenceService to the platform's limits:
// its servers' GPUs, count, CPU and memory, its volume's size and class,
// its server image, and what spec.serve.env may read. Sources are checked
// where they are parsed (sourceRefused).
func checkPolicy(s *Spec, spec v1alpha1.InferenceServiceSpec, in *v1beta1.Input, errs *FieldErrors) {
	p := in.Policy
	if p == nil {
		return
	}
	if limit := p.MaxGPUsPerClaim; limit != nil && s.GPU > 0 {
		servers, total := s.MostServers(), s.MostGPUs()
		if s.Groups() {
			if total > *limit {
				errs.Add("spec.nodes", "%d GPUs per pod on %d nodes per server, %d servers, is %d GPUs, over the limit of %d GPUs per claim that the platform set (input.policy.maxGPUsPerClaim); use fewer nodes, GPUs per pod or servers", s.GPU, s.MultiNode.Nodes, servers, total, *limit)
			}
		} else if total > *limit {
			errs.Add("spec.resources.gpu", "%d GPUs per server on up to %d servers (every version, at the autoscalers' maxima) is %d GPUs, over the limit of %d GPUs per claim that the platform set (input.policy.maxGPUsPerClaim); request fewer GPUs per server or fewer servers", s.GPU, servers, total, *limit)
		}
	}
	if limit := p.MaxReplicas; limit != nil {
		switch {
		case s.MinReplicas > *limit:
			errs.Add("spec.replicas.min", "%d servers is over the limit of %d that the platform set (input.policy.maxReplicas); lower it", s.MinReplicas, *limit)
		case s.Autoscaling != nil && s.MaxReplicas > *limit:
			errs.Add("spec.replicas.max", "%d servers is over the limit of %d that the platform set (input.policy.maxReplicas); lower it", s.MaxReplicas, *limit)
		}
	}
	if limit := p.MaxCPUPerServer; limit != nil && s.CPU.Cmp(*limit) > 0 {
		field := "input.resources.cpu"
		if spec.Resources != nil && spec.Resources.CPU != nil {
			field = "spec.resources.cpu"
		}
		errs.Add(field, "%s CPU per server is over the limit of %s that the platform set (input.policy.maxCPUPerServer); request at most %s", s.CPU.String(), limit.String(), limit.String())
	}
	if limit := p.MaxMemoryPerServer; limit != nil && s.Memory.Cmp(*limit) > 0 {
		field := "input.resources.memory"
		if spec.Resources != nil && spec.Resources.Memory != nil {
			field = "spec.resources.memory"
		}
		errs.Add(field, "%s of memory per server is over the limit of %s that the platform set (input.policy.maxMemoryPerServer); request at most %s", s.Memory.String(), limit.String(), limit.String())
	}
	if pulledAny(s.Versions) || len(s.Adapters.List) > 0 {
		checkStoragePolicy(s.Storage, spec.Storage != nil && spec.Storage.Size != nil, spec.Storage != nil && spec.Storage.StorageClassName != nil, p, errs)
	}
	if prefixes := p.AllowedServerImages; len(prefixes) > 0 && !ImageAllowed(s.Runtime.Image, prefixes) {
		if spec.Serve != nil && spec.Serve.Image != "" {
			errs.Add("spec.serve.image", "%q is not among the images the platform allows (input.policy.allowedServerImages: %s); use one of them, or leave spec.serve.image out for the runtime's", s.Runtime.Image, strings.Join(prefixes, ", "))
		} else {
			errs.Add("input.runtimes."+string(s.Model.Framework)+".image", "%q, the %s runtime's image, is not among the images the platform allows (input.policy.allowedServerImages: %s); the platform team must pin the preset to an allowed image", s.Runtime.Image, s.Model.Framework, strings.Join(prefixes, ", "))
		}
	}
	if p.AllowEnvValueFrom != nil && !*p.AllowEnvValueFrom && spec.Serve != nil {
		for i, e := range spec.Serve.Env {
			if e.ValueFrom != nil {
				f := fmt.Sprintf("spec.serve.env[%d]", i)
				errs.Add(f+".valueFrom", "reading Secrets, ConfigMaps or fields into the servers is not allowed: the platform turned it off (input.policy.allowEnvValueFrom: false); set a value, or ask your platform team")
			}
		}
	}
}

// checkStoragePolicy holds a weights volume st to input.policy's size and
// classes. claimSize and claimClass say whether the claim set them (the
// refusal names its field) or the Input's defaults did.
func checkStoragePolicy(st storage, claimSize, claimClass bool, p *v1beta1.Policy, errs *FieldErrors) {
	if limit := p.MaxStorageSize; limit != nil && st.Size.Cmp(*limit) > 0 {
		field := "input.storage.size"
		if claimSize {
			field = "spec.storage.size"
		}
		errs.Add(field, "%s is over the limit of %s per volume that the platform set (input.policy.maxStorageSize); request at most %s", st.Size.String(), limit.String(), limit.String())
	}
	if classes := p.AllowedStorageClasses; len(classes) > 0 && !slices.Contains(classes, st.Class) {
		switch {
		case claimClass:
			errs.Add("spec.storage.storageClassName", "%q is not among the StorageClasses the platform allows (input.policy.allowedStorageClasses: %s); use one of them", st.Class, strings.Join(classes, ", "))
		case st.Class == "":
			errs.Add("spec.storage.storageClassName", "is not set and the platform's Input sets no default, so the cluster's default StorageClass would be used, which is not among those the platform allows (input.policy.allowedStorageClasses: %s); set one of them", strings.Join(classes, ", "))
		default:
			errs.Add("input.storage.storageClassName", "%q, the platform's default StorageClass, is not among those it allows (input.policy.allowedStorageClasses: %s); the platform team must make them agree (or set spec.storage.storageClassName to an allowed one)", st.Class, strings.Join(classes, ", "))
		}
	}
}

// ImageAllowed reports whether image starts with one of prefixes. A prefix
// that does not end in '/', ':' or '@' must be followed by one of them (or
// end the image), so that a repository prefix never matches a longer
// repository name.
func ImageAllowed(image string, prefixes []string) bool {
	for _, p := range prefixes {
		if !strings.HasPrefix(image, p) {
			continue
		}
		rest := image[len(p):]
		if strings.HasSuffix(p, "/") || strings.HasSuffix(p, ":") || strings.HasSuffix(p, "@") ||
			rest == "" || rest[0] == '/' || rest[0] == ':' || rest[0] == '@' {
			return true
		}
	}
	return false
}

// DeniedArg reports which entry of input.policy.deniedServeArgs a model
// server argument passes: "*" any argument; a flag ("--trust-remote-code")
// the argument itself or any whitespace-separated word of it (an sh -c
// script) that is the flag, the flag=value, the flag with '_' for '-', or
// an abbreviation of it (argparse expands a unique prefix; at least three
// letters after "--").
func DeniedArg(arg string, denied []string) (string, bool) {
	words := append([]string{arg}, strings.Fields(arg)...)
	for _, d := range denied {
		if d == "*" {
			return "an argument", true
		}
		flag := strings.ReplaceAll(d, "_", "-")
		for _, w := range words {
			name, _, _ := strings.Cut(strings.Trim(w, `"'`+"`;"), "=")
			name = strings.ReplaceAll(name, "_", "-")
			if name == flag || (strings.HasPrefix(name, "--") && len(name) >= 5 && strings.HasPrefix(flag, name)) {
				return d, true
			}
		}
	}
	return "", false
}

// MostServers is the most servers the service runs at once: every
// version's, at the autoscalers' maxima.
func (s *Spec) MostServers() int32 {
	servers := int32(0)
	for i := range s.Versions {
		v := &s.Versions[i]
		if v.Autoscaled(s) {
			servers += v.MaxReplicas
		} else {
			servers += v.Replicas
		}
	}
	return servers
}

// MostGPUs is the most GPUs the service holds at once: GPUs per pod, times
// the pods of a server (a group's nodes), times mostServers. The platform's
// per-claim limit and a workload cluster's capacity are judged by it.
func (s *Spec) MostGPUs() int32 {
	total := s.GPU * s.MostServers()
	if s.Groups() {
		total *= s.MultiNode.Nodes
	}
	return total
}
