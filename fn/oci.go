package fn

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"

	"github.com/inferno-ai/function-inferno/input/v1beta1"
)

// oci:// weights are an OCI image or artifact that the kubelet pulls and
// mounts read-only as a Kubernetes image volume (volumes[].image) in each
// server's pod: nothing is pulled by a Job of ours and no volume is
// composed. The function cannot see whether the cluster mounts image
// volumes, so the platform's Input says (input.oci.mode); by default
// oci:// is refused.

const schemeOCI = "oci"

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

// ociReference is an oci:// URI, parsed.
type ociReference struct {
	// Registry is host[:port]; Repository the path below it.
	Registry, Repository string
	// Tag and Digest ("sha256:<hex>"); at least one is set. With a digest
	// the reference is pinned, whatever the tag says.
	Tag, Digest string
}

// String is the reference as the kubelet takes it: without "oci://".
func (r ociReference) String() string {
	s := r.Registry + "/" + r.Repository
	if r.Tag != "" {
		s += ":" + r.Tag
	}
	if r.Digest != "" {
		s += "@" + r.Digest
	}
	return s
}

// pullPolicy is the image volume's: a digest never changes, so a node
// that has it keeps it (IfNotPresent); a tag may move, so every server
// that starts asks the registry what it names now (Always) rather than
// mount whatever its node pulled last.
func (r ociReference) pullPolicy() corev1.PullPolicy {
	if r.Digest != "" {
		return corev1.PullIfNotPresent
	}
	return corev1.PullAlways
}

// parseOCI parses the rest of an oci:// URI (without the scheme),
// reporting every problem under field.
func parseOCI(rest, field string, errs *fieldErrors) (ociReference, bool) {
	const form = "write oci://<registry>/<repository>:<tag> or, better, oci://<registry>/<repository>@sha256:<64 hex digits>"
	var r ociReference
	name, digest, hasDigest := strings.Cut(rest, "@")
	if hasDigest {
		algo, hex, _ := strings.Cut(digest, ":")
		switch {
		case algo != "sha256":
			errs.add(field, "digest %q is not a sha256 digest; %s", digest, form)
			return r, false
		case !ociSHA256.MatchString(hex):
			errs.add(field, "digest %q must be sha256: and 64 lowercase hex digits; %s", digest, form)
			return r, false
		}
		r.Digest = digest
	}
	registry, repo, ok := strings.Cut(name, "/")
	if !ok || repo == "" {
		errs.add(field, "%q names no repository below a registry; %s", "oci://"+rest, form)
		return r, false
	}
	if i := strings.LastIndex(repo, ":"); i >= 0 {
		r.Tag, repo = repo[i+1:], repo[:i]
		if !ociTag.MatchString(r.Tag) {
			errs.add(field, "tag %q is not a tag: use at most 128 letters, digits, '_', '.' or '-', not starting with '.' or '-'", r.Tag)
			return r, false
		}
	}
	if r.Tag == "" && r.Digest == "" {
		errs.add(field, "%q has neither a tag nor a digest, and an implicit :latest would change under the servers; %s", "oci://"+rest, form)
		return r, false
	}
	if msg := checkRegistry(registry); msg != "" {
		errs.add(field, "%s; %s", msg, form)
		return r, false
	}
	for _, c := range strings.Split(repo, "/") {
		if !ociPathComponent.MatchString(c) {
			errs.add(field, "repository component %q must be lowercase letters and digits, separated by '.', '_', '__' or dashes", c)
			return r, false
		}
	}
	if n := len(registry) + 1 + len(repo); n > ociNameMaxLength {
		errs.add(field, "registry and repository are %d characters; at most %d are allowed", n, ociNameMaxLength)
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
func checkOCISource(m model, field, revisionField, secretField string, in *v1beta1.Input, errs *fieldErrors, warnings *[]string) {
	if m.Scheme != schemeOCI || m.OCI == nil {
		return
	}
	if in.OCIWeights() != v1beta1.OCIImageVolume {
		errs.add(field, "oci:// weights are mounted as Kubernetes image volumes, and the platform has not turned them on (input.oci.mode: %s): the function cannot see whether the cluster's API server, kubelets and container runtime mount them (Kubernetes 1.35, or 1.33 with the ImageVolume feature gate; containerd 2.1 or CRI-O 1.31 and later); ask your platform team to set input.oci.mode: ImageVolume, or pull the weights from hf://, s3://, gs:// or http(s)://", in.OCIWeights())
	}
	if m.Revision != "" {
		errs.add(revisionField, "oci:// weights are pinned by their digest, not by a revision; remove it and write the uri as oci://<registry>/<repository>@sha256:<digest>")
	}
	if m.Secret != nil && m.Secret.Key != "" {
		errs.add(secretField+".key", "oci:// weights are pulled by the kubelet with an image pull Secret (type kubernetes.io/dockerconfigjson), which it reads whole; remove the key")
	}
	if m.OCI.Digest == "" {
		*warnings = append(*warnings, fmt.Sprintf("%s: tag %q can move: servers that start later mount what it names then (pull policy Always), while running ones keep what they mounted, and nothing rolls; pin a digest (oci://%s/%s@sha256:…) so that a new model is a new uri and a rollout", field, m.OCI.Tag, m.OCI.Registry, m.OCI.Repository))
	}
}

// imageVolume are oci:// weights: an image volume in each server's pod,
// pulled by the kubelet as the pod starts. There is nothing to wait for
// before the servers are created, so its state is complete from the
// start; its condition follows the servers, whose start is the pull.
type imageVolume struct {
	model model
	// deployment is the version's observed Deployment, nil before it is.
	deployment *observedDeployment
}

func newImageVolume(v *modelVersion, o observed) imageVolume {
	return imageVolume{model: v.Model, deployment: o.Deployments[v.deploymentResource()]}
}

func (iv imageVolume) wanted() weights {
	w := weights{ID: iv.model.Hash, Image: iv.model.OCI.String(), PullPolicy: iv.model.OCI.pullPolicy()}
	if iv.model.Secret != nil {
		w.PullSecret = iv.model.Secret.Name
	}
	return w
}
func (iv imageVolume) state() jobState               { return jobComplete }
func (iv imageVolume) ownVolume() bool               { return false }
func (iv imageVolume) resources() []composedResource { return nil }
func (iv imageVolume) uri() string                   { return iv.model.URI }

// condition says what the servers' pods say of the image, as far as their
// Deployment shows it (the function observes no pods):
//  1. no Deployment observed: pending;
//  2. a server ready on these weights: mounted;
//  3. condition ReplicaFailure=True: the API server refused the pods
//     (image volumes off, or any other refusal, which the message names);
//  4. the rollout passed its progress deadline with no server on these
//     weights: failed (the image may not pull, or not mount);
//  5. otherwise pulling.
func (iv imageVolume) condition() condition {
	ref, sel := iv.model.OCI.String(), labelInstance
	d := iv.deployment
	switch {
	case d == nil:
		return reasonImageVolumePending.condition(fmt.Sprintf("the servers' pods mount %s read-only as an image volume; the kubelet pulls it as each one starts", ref))
	case d.readyOn(iv.wanted()) > 0:
		return reasonImageVolumeMounted.condition(fmt.Sprintf("the servers mount %s read-only as an image volume", ref))
	}
	if c := replicaFailure(d.Deployment); c != nil {
		return reasonImageVolumeRefused.condition(fmt.Sprintf("the servers' pods cannot be created (%s: %s); if it names volumes[].image, this cluster's API server does not serve image volumes: ask your platform team to turn on the ImageVolume feature or set input.oci.mode: Refuse", c.Reason, c.Message))
	}
	hint := fmt.Sprintf("see the pods' events: kubectl describe pods -n %s -l %s=%s (ErrImagePull or ImagePullBackOff: the registry, the reference or the pull Secret; CreateContainerError: the node's container runtime cannot mount image volumes)", d.Namespace, sel, d.Labels[labelInstance])
	if stalled, msg := deploymentStalled(d.Deployment); stalled {
		return reasonImageVolumeFailed.condition(fmt.Sprintf("no server started with %s mounted before the rollout gave up (%s); %s", ref, msg, hint))
	}
	return reasonImageVolumePulling.condition(fmt.Sprintf("waiting for a server to start with %s mounted: the kubelet pulls it before the container starts; if it stays, %s", ref, hint))
}

// replicaFailure is d's condition ReplicaFailure=True, which the
// Deployment controller copies from a ReplicaSet that cannot create its
// pods, or nil.
func replicaFailure(d *appsv1.Deployment) *appsv1.DeploymentCondition {
	for i, c := range d.Status.Conditions {
		if c.Type == appsv1.DeploymentReplicaFailure && c.Status == corev1.ConditionTrue {
			return &d.Status.Conditions[i]
		}
	}
	return nil
}

// weightsVolume is the servers' weights volume: the image of oci://
// weights, else the claim that holds them.
func weightsVolume(w weights) corev1.Volume {
	if w.Image != "" {
		return corev1.Volume{Name: volumeWeights, VolumeSource: corev1.VolumeSource{
			Image: &corev1.ImageVolumeSource{Reference: w.Image, PullPolicy: w.PullPolicy},
		}}
	}
	return corev1.Volume{Name: volumeWeights, VolumeSource: corev1.VolumeSource{
		PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: w.Claim, ReadOnly: true},
	}}
}
