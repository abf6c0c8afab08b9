package resolve

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/inferno-ai/function-inferno/input/v1beta1"
	corev1 "k8s.io/api/core/v1"
)

// oci:// weights are an OCI image or artifact that the kubelet pulls and
// mounts read-only as a Kubernetes image volume (volumes[].image) in each
// server's pod: nothing is pulled by a Job of ours and no volume is
// composed. The function cannot see whether the cluster mounts image
// volumes, so the platform's Input says (input.oci.mode); by default
// oci:// is refused.

// SchemeOCI is the scheme of oci://registry/repository[:tag|@digest]
// weights: an image the kubelet mounts as an image volume, refused unless
// input.oci.mode is ImageVolume; no Job of ours pulls it.
const SchemeOCI = "oci"

// The OCI reference grammar (github.com/distribution/reference), with a
// registry host required: a bare "library/model" would mean Docker Hub to
// one runtime and a mirror to another.
var (
	ociDomainComponent = regexp.MustCompile(`^[A-Za-z0-9]([-A-Za-z0-9]*[A-Za-z0-9])?$`)
	ociPathComponent   = regexp.MustCompile(`^[a-z0-9]+((\.|_|__|-+)[a-z0-9]+)*$`)
	ociTag             = regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$`)
	ociSHA256          = regexp.MustCompile(`^[a-f0-9]{64}$`)
)

// ociNameMaxLength bounds registry and repository together, as the
// reference grammar does.
const ociNameMaxLength = 255

// OCIReference is an oci:// URI, parsed.
type OCIReference struct {
	// Registry is host[:port]; Repository the path below it.
	Registry, Repository string
	// Tag and Digest ("sha256:<hex>"); at least one is set. With a digest
	// the reference is pinned, whatever the tag says.
	Tag, Digest string
}

// String is the reference as the kubelet takes it: without "oci://".
func (r OCIReference) String() string {
	s := r.Registry + "/" + r.Repository
	if r.Tag != "" {
		s += ":" + r.Tag
	}
	if r.Digest != "" {
		s += "@" + r.Digest
	}
	return s
}

// PullPolicy is the image volume's for a public image (a private one is
// pulled Always: Model.ImagePullPolicy): a digest never changes, so a node
// that has it keeps it (IfNotPresent); a tag may move, so every server
// that starts asks the registry what it names now (Always) rather than
// mount whatever its node pulled last.
func (r OCIReference) PullPolicy() corev1.PullPolicy {
	if r.Digest != "" {
		return corev1.PullIfNotPresent
	}
	return corev1.PullAlways
}

// ImagePullPolicy is the pull policy of m's image volume. A private image
// (m names an image pull Secret) is pulled Always, digest or not: with
// IfNotPresent a node that has the image would mount it for any pod that
// asks, so another tenant's pod on that node could mount it without
// credentials. Always makes the kubelet ask the registry, with the pod's
// own pull Secret, each time a pod starts; the layers stay cached, so a
// pull that finds them moves only the manifest. A public image keeps its
// reference's policy (OCIReference.PullPolicy).
func (m Model) ImagePullPolicy() corev1.PullPolicy {
	if m.Secret != nil {
		return corev1.PullAlways
	}
	return m.OCI.PullPolicy()
}

// ParseOCI parses the rest of an oci:// URI (without the scheme),
// reporting every problem under field.
func ParseOCI(rest, field string, errs *FieldErrors) (OCIReference, bool) {
	const form = "write oci://<registry>/<repository>:<tag> or, better, oci://<registry>/<repository>@sha256:<64 hex digits>"
	var r OCIReference
	name, digest, hasDigest := strings.Cut(rest, "@")
	if hasDigest {
		algo, hex, _ := strings.Cut(digest, ":")
		switch {
		case algo != "sha256":
			errs.Add(field, "digest %q is not a sha256 digest; %s", digest, form)
			return r, false
		case !ociSHA256.MatchString(hex):
			errs.Add(field, "digest %q must be sha256: and 64 lowercase hex digits; %s", digest, form)
			return r, false
		}
		r.Digest = digest
	}
	registry, repo, ok := strings.Cut(name, "/")
	if !ok || repo == "" {
		errs.Add(field, "%q names no repository below a registry; %s", "oci://"+rest, form)
		return r, false
	}
	if i := strings.LastIndex(repo, ":"); i >= 0 {
		r.Tag, repo = repo[i+1:], repo[:i]
		if !ociTag.MatchString(r.Tag) {
			errs.Add(field, "tag %q is not a tag: use at most 128 letters, digits, '_', '.' or '-', not starting with '.' or '-'", r.Tag)
			return r, false
		}
	}
	if r.Tag == "" && r.Digest == "" {
		errs.Add(field, "%q has neither a tag nor a digest, and an implicit :latest would change under the servers; %s", "oci://"+rest, form)
		return r, false
	}
	if msg := checkRegistry(registry); msg != "" {
		errs.Add(field, "%s; %s", msg, form)
		return r, false
	}
	for _, c := range strings.Split(repo, "/") {
		if !ociPathComponent.MatchString(c) {
			errs.Add(field, "repository component %q must be lowercase letters and digits, separated by '.', '_', '__' or dashes", c)
			return r, false
		}
	}
	if n := len(registry) + 1 + len(repo); n > ociNameMaxLength {
		errs.Add(field, "registry and repository are %d characters; at most %d are allowed", n, ociNameMaxLength)
		return r, false
	}
	r.Registry, r.Repository = registry, repo
	return r, true
}

// checkRegistry says what is wrong with a registry host[:port], or "".
// A registry host has a '.' or a port, or is localhost: without one it
// would be a Docker Hub namespace.
func checkRegistry(registry string) string {
	host, port, hasPort := strings.Cut(registry, ":")
	if strings.HasPrefix(registry, "[") {
		return fmt.Sprintf("registry %q: IPv6 literals are not supported; name the registry by host name or IPv4 address", registry)
	}
	if hasPort {
		if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 || port[0] == '0' {
			return fmt.Sprintf("registry %q has port %q; use a port from 1 to 65535", registry, port)
		}
	}
	if !hasPort && !strings.Contains(host, ".") && host != "localhost" {
		return fmt.Sprintf("%q is not a registry host (it has no '.' or port and is not localhost), so runtimes would read it as a Docker Hub namespace; name the registry, e.g. docker.io/%s", host, host)
	}
	for _, c := range strings.Split(host, ".") {
		if !ociDomainComponent.MatchString(c) {
			return fmt.Sprintf("registry %q is not a host name: component %q must be letters, digits and '-', starting and ending with a letter or digit", registry, c)
		}
	}
	return ""
}

// checkOCISource refuses what oci:// weights cannot take, under field
// (spec.model.uri or spec.traffic[i].uri): a revision (the digest is the
// pin), a Secret key (an image pull Secret is used whole), and any oci://
// at all unless the platform's Input mounts image volumes. It warns about
// tags.
func checkOCISource(m Model, field, revisionField, secretField string, in *v1beta1.Input, errs *FieldErrors, warnings *[]string) {
	if m.Scheme != SchemeOCI || m.OCI == nil {
		return
	}
	if in.OCIWeights() != v1beta1.OCIImageVolume {
		errs.Add(field, "oci:// weights are mounted as Kubernetes image volumes, and the platform has not turned them on (input.oci.mode: %s): the function cannot see whether the cluster's API server, kubelets and container runtime mount them (Kubernetes 1.35, or 1.33 with the ImageVolume feature gate; containerd 2.1 or CRI-O 1.31 and later); ask your platform team to set input.oci.mode: ImageVolume, or pull the weights from hf://, s3://, gs:// or http(s)://", in.OCIWeights())
	}
	if m.Revision != "" {
		errs.Add(revisionField, "oci:// weights are pinned by their digest, not by a revision; remove it and write the uri as oci://<registry>/<repository>@sha256:<digest>")
	}
	if m.Secret != nil && m.Secret.Key != "" {
		errs.Add(secretField+".key", "oci:// weights are pulled by the kubelet with an image pull Secret (type kubernetes.io/dockerconfigjson), which it reads whole; remove the key")
	}
	if m.OCI.Digest == "" {
		*warnings = append(*warnings, fmt.Sprintf("%s: tag %q can move: servers that start later mount what it names then (pull policy Always), while running ones keep what they mounted, and nothing rolls; pin a digest (oci://%s/%s@sha256:…) so that a new model is a new uri and a rollout", field, m.OCI.Tag, m.OCI.Registry, m.OCI.Repository))
	}
}
