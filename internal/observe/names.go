package observe

import (
	"fmt"
	"slices"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"github.com/inferno-ai/function-inferno/apis/inference/v1alpha1"
	"github.com/inferno-ai/function-inferno/internal/render"
	"github.com/inferno-ai/function-inferno/internal/resolve"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Two claims in one namespace must never render the same object name,
// or whichever comes second fails with Crossplane's "not controlled by"
// error that does not say why. The primary's names are the claim's own
// (<name>), and a split's versions add <name>-<version>: claim llama's
// version 2 and a claim llama-2 both want the Deployment and Service
// llama-2, and claim a's version b-c and claim a-b's version c both want
// a-b-c.
//
// The names stay as they are (they are the DNS names clients use, and
// renaming them would restart every canary), so a clash is detected and
// refused instead, naming both owners. Every such name is a Service's (a
// canary's Deployment and autoscaler share its version Service's name, the
// primary's the claim's), so the function asks Crossplane for the Service
// of each name it is about to create — only those it has not composed yet,
// so a claim whose objects all exist costs nothing — and refuses when one
// exists that another composite controls, or nobody.

// RequirementServicePrefix starts the key of a required Service.
const RequirementServicePrefix = "service-name/"

// ClaimedService is a Service name the service will compose. Entry is the
// index of the spec.traffic entry whose version makes it, -1 for the
// Service <name>, which metadata.name makes.
type ClaimedService struct {
	Resource, Name string
	Entry          int
}

// ClaimedServices lists the Services the service will compose that are not
// observed yet, so not known to be its own.
func ClaimedServices(s *resolve.Spec, spec v1alpha1.InferenceServiceSpec, ocds map[string]*fnv1.Resource) []ClaimedService {
	var out []ClaimedService
	if _, ok := ocds[render.ResourceService]; !ok {
		out = append(out, ClaimedService{Resource: render.ResourceService, Name: s.Name, Entry: -1})
	}
	if _, ok := ocds[render.ResourcePickerService]; s.Pool != nil && !ok {
		// The endpoint picker's <name>-epp: a claim of that name has it.
		out = append(out, ClaimedService{Resource: render.ResourcePickerService, Name: resolve.PickerName(s), Entry: -1})
	}
	if !s.Split {
		return out
	}
	for i := range s.Versions {
		v := &s.Versions[i]
		if _, ok := ocds[render.ServiceResource(v)]; ok {
			continue
		}
		entry := 0
		for j, t := range spec.Traffic {
			if t.Version == v.Model.Version {
				entry = j
			}
		}
		out = append(out, ClaimedService{Resource: render.ServiceResource(v), Name: v.VersionServiceName(s), Entry: entry})
	}
	return out
}

// CheckNameClashes refuses the service when a Service it is about to
// create already exists and is not its own:
//  1. not fetched yet (the first call of a reconcile, or a Crossplane that
//     does not fetch requirements): nothing to say;
//  2. fetched and absent: the name is free;
//  3. controlled by this composite (by uid, or without uids, as in
//     crossplane render, by Crossplane's crossplane.io/composite label):
//     ours;
//  4. otherwise a clash, naming both owners.
func CheckNameClashes(req *fnv1.RunFunctionRequest, s *resolve.Spec, names []ClaimedService) error {
	var errs resolve.FieldErrors
	for _, n := range names {
		key := RequirementServicePrefix + n.Name
		items, resolved := required(req, key)
		if !resolved || len(items.GetItems()) == 0 {
			continue
		}
		svc := &corev1.Service{}
		if err := decodeFields(items.GetItems()[0].GetResource(), svc, "metadata"); err != nil {
			return fmt.Errorf("cannot decode Service %s: %w", n.Name, err)
		}
		if s.Owns(svc.ObjectMeta) {
			continue
		}
		msg := fmt.Sprintf("would name Service %s, which %s already has in namespace %s: two owners cannot share a name (whichever came second would fail), so InferenceService %s is refused; rename this InferenceService or this version, or the other", n.Name, ownerOf(svc.ObjectMeta), s.Namespace, s.Name)
		if n.Entry < 0 {
			errs.Add("metadata.name", "%s", msg)
		} else {
			f := fmt.Sprintf("spec.traffic[%d]", n.Entry)
			errs.Add(f+".version", "%s", msg)
		}
	}
	return errs.Err()
}

// ownerOf describes who has an object: the claim or composite Crossplane
// composed it for, with the version it serves, or nobody we know.
func ownerOf(m metav1.ObjectMeta) string {
	who := ""
	switch c := metav1.GetControllerOfNoCopy(&m); {
	case m.Labels[resolve.LabelClaimName] != "":
		who = fmt.Sprintf("InferenceService %s", m.Labels[resolve.LabelClaimName])
	case c != nil:
		who = fmt.Sprintf("%s %s", c.Kind, c.Name)
	default:
		return "something other than an InferenceService (it has no controller)"
	}
	if v := m.Labels[resolve.LabelVersion]; v != "" && m.Labels[resolve.LabelInstance] != "" && m.Labels[resolve.LabelInstance] != m.Name &&
		slices.Contains([]string{resolve.ComponentServer, resolve.ComponentCanary}, m.Labels[resolve.LabelComponent]) {
		who += fmt.Sprintf(" (for its version %q)", v)
	}
	return who
}
