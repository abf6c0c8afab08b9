package resolve

import (
	"fmt"
	"sort"
	"strings"

	"github.com/inferno-ai/function-inferno/apis/inference/v1alpha1"
	"github.com/inferno-ai/function-inferno/input/v1beta1"
	"k8s.io/apimachinery/pkg/util/validation"
)

// Gateway is the Input's Gateway API parent, checked, with its namespace
// defaulted to the claim's.
type Gateway struct {
	Name, Namespace, SectionName string
	Domain, Scheme               string
}

// VersionNamed is s's version of that name, or nil.
func (s *Spec) VersionNamed(version string) *Version {
	for i := range s.Versions {
		if s.Versions[i].Model.Version == version {
			return &s.Versions[i]
		}
	}
	return nil
}

// ScalesToZero reports whether the version's servers are scaled by a
// ScaledObject.
func (v *Version) ScalesToZero(s *Spec) bool {
	return v.Autoscaled(s) && s.Autoscaling.ScaleToZero != nil
}

// Version is one version of the model that serves a share of the
// requests: the primary (spec.model) or another entry of spec.traffic.
// Without spec.traffic the primary is the only version and has them all.
//
// The primary keeps the names a service without a split has (Deployment
// and autoscaler <name>, composition resources "deployment" and "hpa"), so
// adding or removing a canary never touches its servers.
type Version struct {
	Primary bool
	Model   Model
	Puller  v1beta1.PullerPreset // zero for pvc:// weights
	// Weight is the percent of requests spec.traffic gives the version;
	// 100 without a split.
	Weight int32
	// Replicas is the number of servers without an autoscaler.
	Replicas int32
	// MinReplicas and MaxReplicas bound the version's autoscaler. An
	// autoscaled version of weight 0 has no autoscaler and no servers.
	MinReplicas, MaxReplicas int32
}

// Autoscaled reports whether the version's servers are scaled by an
// autoscaler, which then owns the Deployment's replicas.
func (v *Version) Autoscaled(s *Spec) bool {
	return s.Autoscaling != nil && v.Weight > 0
}

// ServerName names the version's Deployment and autoscaler.
func (v *Version) ServerName(s *Spec) string {
	if v.Primary {
		return s.Name
	}
	return s.Name + "-" + v.Model.Version
}

// VersionServiceName names the Service that reaches this version alone.
func (v *Version) VersionServiceName(s *Spec) string {
	return s.Name + "-" + v.Model.Version
}

// Component is the component label of the version's servers. The servers
// of other versions must not match the primary's Deployment selector
// ({instance, component: model-server}), which is immutable and predates
// any split: overlapping selectors make Deployments adopt each other's
// pods and autoscalers refuse to scale (AmbiguousSelector).
func (v *Version) Component() string {
	if v.Primary {
		return ComponentServer
	}
	return ComponentCanary
}

// Selector selects the version's servers. It never changes for the life of
// the version's Deployment.
func (v *Version) Selector(s *Spec) map[string]string {
	if v.Primary {
		return s.Selector()
	}
	return map[string]string{LabelInstance: s.Name, LabelComponent: ComponentCanary, LabelVersion: v.Model.Version}
}

// VersionSelector selects version v's servers alone, whichever Deployment
// runs them, at every moment of a rollout: the claim's instance, the
// framework's name label and the version label. The servers of other
// versions differ in the version label, also while the primary's
// Deployment rolls from one version to another (its selector, which is
// immutable, holds no version); the pull Jobs' pods carry neither the
// name nor the version label. Across a promotion it selects both the
// promoted primary's new servers and the canary's warm ones, which serve
// the same weights. A Service's selector may change, so existing Services
// switch to it in place.
func (v *Version) VersionSelector(s *Spec) map[string]string {
	return map[string]string{LabelInstance: s.Name, LabelName: string(s.Model.Framework), LabelVersion: v.Model.Version}
}

// maxTrafficTargets is the most versions spec.traffic may list (the
// schema's maxItems, which also bounds the cost of its CEL rules).
const maxTrafficTargets = 8

// resolveTraffic checks spec.traffic against the primary model and returns
// every version, the primary first. Without spec.traffic that is the
// primary alone, with all the traffic.
func resolveTraffic(name string, pm Model, puller v1beta1.PullerPreset, spec v1alpha1.InferenceServiceSpec, in *v1beta1.Input, errs *FieldErrors, warnings *[]string) []Version {
	primary := Version{Primary: true, Model: pm, Puller: puller, Weight: 100}
	if spec.Traffic == nil {
		return []Version{primary}
	}
	const field = "spec.traffic"
	if len(spec.Traffic) == 0 {
		errs.Add(field, "is empty; list spec.model.version with weight 100 and the versions to split with, or leave traffic out")
		return []Version{primary}
	}
	if len(spec.Traffic) > maxTrafficTargets {
		errs.Add(field, "lists %d versions; split between at most %d", len(spec.Traffic), maxTrafficTargets)
	}
	if pm.Version == "" {
		errs.Add("spec.model.version", "is required with spec.traffic: set it and list it in spec.traffic with the primary's weight")
	}

	versions := []Version{primary}
	seen := map[string]int{}
	weights := map[string]int{} // weights hash → traffic index, to refuse two versions of the same weights
	sum := int32(0)
	primaryListed := false
	for i, t := range spec.Traffic {
		f := fmt.Sprintf("%s[%d]", field, i)
		sum += t.Weight
		if t.Weight < 0 || t.Weight > 100 {
			errs.Add(f+".weight", "%d is out of range; use a percentage from 0 to 100", t.Weight)
		}
		if j, dup := seen[t.Version]; dup {
			errs.Add(f+".version", "%q is listed twice (also at %s[%d]); give each version one entry", t.Version, field, j)
			continue
		}
		seen[t.Version] = i

		if t.Version == pm.Version && pm.Version != "" {
			primaryListed = true
			checkVersionName(name, t.Version, f+".version", errs)
			if t.URI != "" || t.Revision != "" || t.CredentialsSecretRef != nil {
				errs.Add(f, "is the primary version, whose weights are spec.model.uri and spec.model.revision and whose credentials spec.model.credentialsSecretRef; remove uri, revision and credentialsSecretRef here")
			}
			versions[0].Weight = t.Weight
			continue
		}

		checkVersionName(name, t.Version, f+".version", errs)
		if t.URI == "" {
			errs.Add(f+".uri", "is required: version %q is not spec.model.version, so name its weights (hf://, s3://, gs://, http(s)://, pvc:// or oci://)", t.Version)
			continue
		}
		m := Model{URI: t.URI, Revision: t.Revision, Version: t.Version, Framework: pm.Framework, Secret: t.CredentialsSecretRef, SecretField: f + ".credentialsSecretRef"}
		ParseURI(&m, f+".uri", errs)
		checkRevision(t.Revision, f+".revision", errs)
		checkSecretRef(t.CredentialsSecretRef, f+".credentialsSecretRef", errs)
		if msg, bad := sourceRefused(m, in); bad {
			errs.Add(f+".uri", "%s", msg)
		}
		switch {
		case m.Secret != nil && m.Scheme == SchemePVC:
			errs.Add(f+".credentialsSecretRef", "pvc:// weights are mounted, not pulled, so no credentials are read; remove it")
		case m.Secret != nil:
			if msg, bad := inClearText(m, in); bad {
				errs.Add(f+".credentialsSecretRef", "%s", msg)
			}
		case pm.Secret != nil && m.Scheme != "" && (m.pulled() || m.Scheme == SchemeOCI):
			// Credentials go only to the source they were given for.
			if sameSource(pm, m) {
				m.Secret, m.SecretField = pm.Secret, pm.SecretField
			} else {
				*warnings = append(*warnings, fmt.Sprintf("%s.credentialsSecretRef: version %q pulls from %s, not from %s as spec.model does, so it does not use spec.model.credentialsSecretRef; if its source needs credentials, name them here", f, t.Version, sourceOf(m), sourceOf(pm)))
			}
		}
		m.Hash = ShortHash([]string{m.URI, m.Revision})
		checkOCISource(m, f+".uri", f+".revision", f+".credentialsSecretRef", in, errs, warnings)
		if m.Hash == pm.Hash {
			errs.Add(f, "serves the same uri and revision as spec.model; a version must differ from the primary in its weights")
		} else if j, dup := weights[m.Hash]; dup {
			errs.Add(f, "serves the same uri and revision as %s[%d]; give each version its own weights", field, j)
		}
		weights[m.Hash] = i
		v := Version{Model: m, Weight: t.Weight}
		v.Puller = resolvePuller(m, f+".uri", in, errs)
		if t.CredentialsSecretRef != nil {
			checkCredentialRef(m, v.Puller, f+".credentialsSecretRef", in, errs)
		}
		versions = append(versions, v)
	}
	if !primaryListed && pm.Version != "" {
		errs.Add(field, "does not list spec.model.version %q, the primary; add {version: %q, weight: …}", pm.Version, pm.Version)
	}
	if sum != 100 {
		errs.Add(field, "the weights sum to %d; make them sum to 100", sum)
	}
	return versions
}

// sameSource reports whether two models are pulled from the same source:
// the same origin (host.go: the organisation of hf://, the bucket of s3://
// and gs://, normalised host and port of http(s)://), the only case in
// which one's credentials may go to the other's puller.
func sameSource(a, b Model) bool {
	return a.Origin.Scheme != "" && a.Origin == b.Origin
}

// sourceOf names a model's source in messages: scheme://authority.
func sourceOf(m Model) string {
	if m.Origin.Scheme == "" {
		return m.URI
	}
	return m.Origin.String()
}

// checkVersionName refuses a version that cannot name its objects: the
// Deployment and Service <name>-<version> are DNS-1035 labels.
func checkVersionName(claim, version, field string, errs *FieldErrors) {
	name := claim + "-" + version
	if m := validation.IsDNS1035Label(name); len(m) > 0 || version == "" {
		errs.Add(field, "%q would name the Deployment and Service %q, which is not a valid name (%s); use lowercase letters, digits and '-', at most %d characters", version, name, strings.Join(m, "; "), validation.DNS1035LabelMaxLength-len(claim)-1)
	}
}

// spread sets each version's servers from its weight (apportion).
// Without an autoscaler a version runs its share of spec.replicas.min;
// with one, its autoscaler's bounds are its shares of min and of max (and
// never a ceiling below its floor). The shares of min add up to min, or to
// the number of versions of weight above 0 when that is more.
func spread(versions []Version, b ReplicaBounds) []Version {
	w := make([]int32, len(versions))
	for i := range versions {
		w[i] = versions[i].Weight
	}
	mins, maxes := Apportion(b.MinReplicas, w), Apportion(b.MaxReplicas, w)
	out := make([]Version, len(versions))
	for i, v := range versions {
		v.Replicas, v.MinReplicas = mins[i], mins[i]
		v.MaxReplicas = max(mins[i], maxes[i])
		out[i] = v
	}
	return out
}

// Apportion divides n servers between versions of the given weights
// (percentages summing to 100) by largest remainder:
//  1. n is 0: no version gets a server;
//  2. the total is n, or the number of versions of weight above 0 when
//     that is more: each of them gets at least one server;
//  3. each version gets the whole part of its quota total·weight/100, and
//     the servers left over go one each to the largest fractional parts,
//     the earlier version first on a tie;
//  4. a version of weight above 0 left with none takes one from the
//     version most above its quota (of two, the later), until none is
//     left with none.
func Apportion(n int32, weights []int32) []int32 {
	out := make([]int32, len(weights))
	positive := int32(0)
	for _, w := range weights {
		if w < 0 || w > 100 {
			return out // refused by resolveTraffic
		}
		if w > 0 {
			positive++
		}
	}
	if n <= 0 || positive == 0 {
		return out
	}
	total := max(n, positive)
	left := total
	order := make([]int, len(weights))
	for i, w := range weights {
		out[i] = total * w / 100
		left -= out[i]
		order[i] = i
	}
	remainder := func(i int) int32 { return total * weights[i] % 100 }
	sort.SliceStable(order, func(a, b int) bool { return remainder(order[a]) > remainder(order[b]) })
	// Weights that do not sum to 100 are refused (resolveTraffic); until
	// then nothing here may fail on them.
	left = min(max(left, 0), int32(len(order)))
	for _, i := range order[:left] {
		out[i]++
	}
	for i, w := range weights {
		if w == 0 || out[i] > 0 {
			continue
		}
		donor := -1
		for j := range weights {
			// Above its quota by out·100 − total·weight hundredths.
			if out[j] > 1 && (donor < 0 || out[j]*100-total*weights[j] >= out[donor]*100-total*weights[donor]) {
				donor = j
			}
		}
		if donor < 0 {
			break
		}
		out[donor]--
		out[i]++
	}
	return out
}

// Primary is the version spec.model names.
func (s *Spec) Primary() *Version { return &s.Versions[0] }

// pulledAny reports whether any version is pulled into the cache volume.
func pulledAny(versions []Version) bool {
	for i := range versions {
		if versions[i].Model.pulled() {
			return true
		}
	}
	return false
}

// resolveGateway checks the Input's Gateway API parent. A claim gets its
// HTTPRoute with its first split (or with the inference extension), and
// keeps it while the Input names the Gateway.
//
// The Gateway needs a domain: every route's hostname is then
// <name>.<namespace>.<domain>, and as neither a claim's name nor a
// namespace has dots, two claims' hostnames differ, whatever the domains
// of the Inputs that share the Gateway (equal hostnames have as many
// labels, so the same name, namespace and domain). Without a domain a
// route has no hostname and matches every request the Gateway takes, and
// of two such routes the oldest wins: one team would receive another's
// requests. Refused rather than a hostname derived without a domain
// (e.g. <name>.<namespace>), which no DNS resolves to the Gateway, no
// listener's hostname admits and status.routeURL could not name.
func resolveGateway(name, namespace string, in *v1beta1.Input, errs *FieldErrors) *Gateway {
	if in.Traffic == nil || in.Traffic.Gateway == nil {
		return nil
	}
	const field = "input.traffic.gateway"
	g := in.Traffic.Gateway
	gw := &Gateway{Name: g.Name, Namespace: g.Namespace, SectionName: g.SectionName, Domain: g.Domain, Scheme: g.Scheme}
	if gw.Namespace == "" {
		gw.Namespace = namespace
	}
	if gw.Scheme == "" {
		gw.Scheme = "http"
	}
	for _, m := range validation.IsDNS1123Subdomain(gw.Name) {
		errs.Add(field+".name", "%q is not a Gateway name: %s", gw.Name, m)
	}
	if g.Namespace != "" {
		for _, m := range validation.IsDNS1123Label(g.Namespace) {
			errs.Add(field+".namespace", "%q is not a namespace name: %s", g.Namespace, m)
		}
	}
	if g.SectionName != "" {
		for _, m := range validation.IsDNS1123Subdomain(g.SectionName) {
			errs.Add(field+".sectionName", "%q is not a listener name: %s", g.SectionName, m)
		}
	}
	if g.Domain == "" {
		errs.Add(field+".domain", "is required: without it the HTTPRoutes on Gateway %s/%s have no hostname, so every claim's route (from any namespace the Gateway admits) matches every request and the oldest takes them all; the platform must set the domain the Gateway's listener serves, and this claim's route gets the hostname %s.%s.<domain>", gw.Namespace, gw.Name, name, namespace)
	} else {
		host := name + "." + namespace + "." + g.Domain
		for _, m := range validation.IsDNS1123Subdomain(host) {
			errs.Add(field+".domain", "%q makes the hostname %q, which is not a DNS name: %s", g.Domain, host, m)
		}
	}
	if gw.Scheme != "http" && gw.Scheme != "https" {
		errs.Add(field+".scheme", "%q is not supported; use http or https", gw.Scheme)
	}
	return gw
}
