package plan

import (
	"fmt"

	"github.com/inferno-ai/function-inferno/internal/observe"
	"github.com/inferno-ai/function-inferno/internal/reason"
	"github.com/inferno-ai/function-inferno/internal/render"
	"github.com/inferno-ai/function-inferno/internal/resolve"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
)

// imageVolume are oci:// weights: an image volume in each server's pod,
// pulled by the kubelet as the pod starts. There is nothing to wait for
// before the servers are created but their image pull Secret, if any, so
// its state is complete from the start once that is there; its condition
// follows the servers, whose start is the pull.
type imageVolume struct {
	model resolve.Model
	// deployment is the version's observed Deployment, nil before it is.
	deployment *observe.Deployment
	// creds is the image pull Secret, judged; held says the first servers
	// wait for it (heldForCredentials).
	creds observe.Credentials
	held  bool
}

func newImageVolume(s *resolve.Spec, v *resolve.Version, o observe.Objects) imageVolume {
	iv := imageVolume{model: v.Model, deployment: o.Deployments[render.DeploymentResource(v)], creds: o.Secrets.Judge(s, v)}
	iv.held = iv.deployment == nil && heldForCredentials(s, iv.creds)
	return iv
}

// Wanted is the image itself, by reference and with the pull policy and
// pull Secret the kubelet needs: the servers' pods mount it as volume
// source, so it is known from the start.
func (iv imageVolume) Wanted() render.Weights {
	w := render.Weights{ID: iv.model.Hash, Image: iv.model.OCI.String(), PullPolicy: iv.model.ImagePullPolicy()}
	if iv.model.Secret != nil {
		w.PullSecret = iv.model.Secret.Name
	}
	return w
}

// State is JobComplete: the kubelet pulls the image as each pod starts,
// so the servers' creation waits for nothing but their image pull Secret
// (JobAbsent while it is held).
func (iv imageVolume) State() render.JobState {
	if iv.held {
		return render.JobAbsent
	}
	return render.JobComplete
}

func (iv imageVolume) ownVolume() bool { return false }

// Resources is nil: an image volume composes no pull Job and no volume.
func (iv imageVolume) Resources() []render.Resource { return nil }

// URI is the claim's oci:// URI, as spec.model or the version gives it.
func (iv imageVolume) URI() string { return iv.model.URI }

// Condition says what the servers' pods say of the image, as far as their
// Deployment shows it (the function observes no pods):
//  1. no Deployment observed: the pull Secret missing (CredentialsMissing)
//     or not fetched while the platform checks its labels, else pending;
//  2. a server ready on these weights: mounted;
//  3. the pull Secret missing: CredentialsMissing (the kubelet cannot pull);
//  4. condition ReplicaFailure=True: the API server refused the pods
//     (image volumes off, or any other refusal, which the message names);
//  5. the rollout passed its progress deadline with no server on these
//     weights: failed (the image may not pull, or not mount);
//  6. otherwise pulling.
func (iv imageVolume) Condition() reason.Condition {
	ref, sel := iv.model.OCI.String(), resolve.LabelInstance
	d := iv.deployment
	missing := iv.creds.State == observe.CredentialsMissing
	switch {
	case d == nil && missing:
		return reason.CredentialsMissing.Condition(fmt.Sprintf("%s; the servers, which mount %s, start once it is there", iv.creds.Message, ref))
	case d == nil && iv.held:
		return reason.PullPending.Condition(fmt.Sprintf("%s, whose labels the platform checks (input.policy.credentialSecretSelector), before starting the servers that mount %s", iv.creds.Message, ref))
	case d == nil:
		return reason.ImageVolumePending.Condition(fmt.Sprintf("the servers' pods mount %s read-only as an image volume; the kubelet pulls it as each one starts", ref))
	case d.ReadyOn(iv.Wanted()) > 0:
		return reason.ImageVolumeMounted.Condition(fmt.Sprintf("the servers mount %s read-only as an image volume", ref))
	case missing:
		return reason.CredentialsMissing.Condition(fmt.Sprintf("%s; the kubelet cannot pull %s for the servers without it", iv.creds.Message, ref))
	}
	if c := replicaFailure(d.Deployment); c != nil {
		return reason.ImageVolumeRefused.Condition(fmt.Sprintf("the servers' pods cannot be created (%s: %s); if it names volumes[].image, this cluster's API server does not serve image volumes: ask your platform team to turn on the ImageVolume feature or set input.oci.mode: Refuse", c.Reason, c.Message))
	}
	hint := fmt.Sprintf("see the pods' events: kubectl describe pods -n %s -l %s=%s (ErrImagePull or ImagePullBackOff: the registry, the reference or the pull Secret; CreateContainerError: the node's container runtime cannot mount image volumes)", d.Namespace, sel, d.Labels[resolve.LabelInstance])
	if stalled, msg := render.DeploymentStalled(d.Deployment); stalled {
		return reason.ImageVolumeFailed.Condition(fmt.Sprintf("no server started with %s mounted before the rollout gave up (%s); %s", ref, msg, hint))
	}
	return reason.ImageVolumePulling.Condition(fmt.Sprintf("waiting for a server to start with %s mounted: the kubelet pulls it before the container starts; if it stays, %s", ref, hint))
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
