package render

import (
	"strconv"

	"github.com/inferno-ai/function-inferno/internal/resolve"
	corev1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// ResourceClaimTemplatePrefix starts the composition resource name of a
// version's ResourceClaimTemplate, the servers' GPUs through Dynamic
// Resource Allocation (input.gpu.dra).
//
// A ResourceClaimTemplate's spec is immutable, as a Job's pod template
// is, so the template is named after a hash of its spec, and the hash is
// part of the resource name too (see ResourceJobPrefix): another count or
// type makes a new template, which the servers' pod template names, and
// the Deployment rolls onto it. Crossplane deletes the old template once
// the function stops returning it; the ResourceClaims made from it belong
// to their pods and stay until the pods go.
const ResourceClaimTemplatePrefix = "gpu-claims-"

// GPUClaim names the pod's claim from the template and the server
// container's reference to it; gpuRequest names the claim's one device
// request.
const (
	GPUClaim   = "gpu"
	gpuRequest = "gpu"
)

// NamedClaimTemplate is a rendered ResourceClaimTemplate and its
// composition resource name.
type NamedClaimTemplate struct {
	Resource string
	Template *resourcev1.ResourceClaimTemplate
}

// ResourceClaimTemplate builds the template of version v's GPUs: every
// pod of the version (each server's pod, or each pod of a multi-node
// group) gets a ResourceClaim of its own from it, asking for s.Devices:
//  1. Count devices of the platform's DeviceClass, exactly
//     (allocationMode ExactCount);
//  2. each satisfying every selector: the pool's, then those of the
//     claim's GPU type (input.gpu.dra), the platform's CEL alone.
//
// The claims carry the claim's instance label, so kubectl get
// resourceclaims -l app.kubernetes.io/instance=<name> lists them.
//
// Its readiness rule is Exists: a template has no status, and whether a
// pod's claim is allocated is the servers' readiness (their pods stay
// Pending until it is).
func ResourceClaimTemplate(s *resolve.Spec, v *resolve.Version) NamedClaimTemplate {
	spec := claimTemplateSpec(s)
	hash := resolve.ShortHash(spec)
	resource := ResourceClaimTemplatePrefix + hash
	if !v.Primary {
		resource = ResourceClaimTemplatePrefix + v.Model.Version + "-" + hash
	}
	return NamedClaimTemplate{
		Resource: resource,
		Template: &resourcev1.ResourceClaimTemplate{
			TypeMeta:   metav1.TypeMeta{APIVersion: resourcev1.SchemeGroupVersion.String(), Kind: "ResourceClaimTemplate"},
			ObjectMeta: metav1.ObjectMeta{Name: claimTemplateName(s, v, hash), Namespace: s.Namespace, Labels: s.Labels(v, v.Component())},
			Spec:       spec,
		},
	}
}

// claimTemplateSpec is what a server's pod claims: the template's spec,
// the same for every version (spec.resources is the claim's).
func claimTemplateSpec(s *resolve.Spec) resourcev1.ResourceClaimTemplateSpec {
	d := s.Devices
	var selectors []resourcev1.DeviceSelector
	for _, e := range d.Selectors {
		selectors = append(selectors, resourcev1.DeviceSelector{CEL: &resourcev1.CELDeviceSelector{Expression: e}})
	}
	return resourcev1.ResourceClaimTemplateSpec{
		ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{resolve.LabelInstance: s.Name, resolve.LabelManagedBy: resolve.ManagedBy}},
		Spec: resourcev1.ResourceClaimSpec{Devices: resourcev1.DeviceClaim{Requests: []resourcev1.DeviceRequest{{
			Name: gpuRequest,
			Exactly: &resourcev1.ExactDeviceRequest{
				DeviceClassName: d.Class,
				Selectors:       selectors,
				AllocationMode:  resourcev1.DeviceAllocationModeExactCount,
				Count:           int64(d.Count),
			},
		}}}},
	}
}

// claimTemplateName names version v's template: <server name>-gpu-<hash>.
func claimTemplateName(s *resolve.Spec, v *resolve.Version, hash string) string {
	return v.ServerName(s) + "-gpu-" + hash
}

// withDevices makes pod ask for the GPUs of version v through its
// template, the server container using them; the pod asks for no
// extended resource.
func withDevices(s *resolve.Spec, v *resolve.Version, pod *corev1.PodSpec) {
	name := claimTemplateName(s, v, resolve.ShortHash(claimTemplateSpec(s)))
	pod.ResourceClaims = []corev1.PodResourceClaim{{Name: GPUClaim, ResourceClaimTemplateName: ptr.To(name)}}
	pod.Containers[0].Resources.Claims = []corev1.ResourceClaim{{Name: GPUClaim}}
}

// GPUsPerPod describes one pod's GPUs for messages: "8 nvidia.com/gpu",
// or "8 devices of DeviceClass gpu.nvidia.com (type h100)".
func GPUsPerPod(s *resolve.Spec) string {
	d := s.Devices
	if d == nil {
		return strconv.Itoa(int(s.GPU)) + " " + s.GPUSettings.ResourceName
	}
	out := strconv.Itoa(int(d.Count)) + " devices of DeviceClass " + d.Class
	if d.Count == 1 {
		out = "1 device of DeviceClass " + d.Class
	}
	if d.Type != "" {
		out += " (type " + d.Type + ")"
	}
	return out
}
