package fn

import (
	"slices"
	"strings"
	"testing"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"github.com/google/go-cmp/cmp"
	"github.com/inferno-ai/function-inferno/internal/observe"
	"github.com/inferno-ai/function-inferno/internal/resolve"
	"google.golang.org/protobuf/proto"
)

// takenService is a Service name in team-a that Crossplane composed for
// claim owner's version (component is the servers' component label).
func takenService(name, owner, version, component string) map[string]any {
	return map[string]any{
		"apiVersion": "v1", "kind": "Service",
		"metadata": map[string]any{
			"name": name, "namespace": "team-a",
			"labels": map[string]any{
				resolve.LabelClaimName: owner, resolve.LabelClaimNamespace: "team-a", resolve.LabelComposite: owner + "-x1y2z",
				resolve.LabelInstance: owner, resolve.LabelVersion: version, resolve.LabelComponent: component,
			},
			"ownerReferences": []any{map[string]any{
				"apiVersion": "inference.inferno.io/v1alpha1", "kind": "XInferenceService", "name": owner + "-x1y2z",
				"uid": "uid-of-" + owner, "controller": true,
			}},
		},
	}
}

// withServices puts Services Crossplane fetched for the function's name
// requirements into a request; a nil value is fetched and not found.
func withServices(t testing.TB, req *fnv1.RunFunctionRequest, services map[string]map[string]any) *fnv1.RunFunctionRequest {
	t.Helper()
	if len(services) > 0 && req.RequiredResources == nil {
		req.RequiredResources = map[string]*fnv1.Resources{}
	}
	for name, svc := range services {
		items := &fnv1.Resources{}
		if svc != nil {
			items.Items = []*fnv1.Resource{{Resource: mustStruct(t, svc)}}
		}
		req.RequiredResources[observe.RequirementServicePrefix+name] = items
	}
	return req
}

// TestNameClashes: a Service name the claim is about to create is looked
// up first; one that another composite (or nobody) controls refuses the
// claim naming both owners, one of its own does not, and nothing fetched
// yet says nothing.
func TestNameClashes(t *testing.T) {
	llama := func() map[string]any { return testXR() }
	withUID := func(uid string) func() map[string]any {
		return func() map[string]any {
			xr := testXR()
			setPath(xr, uid, "metadata", "uid")
			return xr
		}
	}
	ours := takenService("llama", "llama", "", resolve.ComponentServer)
	setPath(ours, "llama-abcde", "metadata", "labels", resolve.LabelComposite)
	setPath(ours, []any{map[string]any{"apiVersion": "inference.inferno.io/v1alpha1", "kind": "XInferenceService", "name": "llama-abcde", "uid": "u1", "controller": true}}, "metadata", "ownerReferences")
	sameLabelOtherUID := takenService("llama", "llama", "", resolve.ComponentServer)
	setPath(sameLabelOtherUID, "llama-abcde", "metadata", "labels", resolve.LabelComposite)
	byHand := map[string]any{"apiVersion": "v1", "kind": "Service", "metadata": map[string]any{"name": "llama", "namespace": "team-a"}}
	namespaced := func() map[string]any {
		xr := readYAML(t, namespacedXR)
		return xr
	}
	cases := map[string]struct {
		xr       func() map[string]any
		services map[string]map[string]any
		refused  string // a fragment of the Fatal; "" for none
	}{
		"NotFetchedYet":     {xr: llama},
		"Free":              {xr: llama, services: map[string]map[string]any{"llama": nil}},
		"OursByLabel":       {xr: llama, services: map[string]map[string]any{"llama": ours}},
		"OursByUID":         {xr: withUID("u1"), services: map[string]map[string]any{"llama": ours}},
		"OtherUIDSameLabel": {xr: withUID("u1"), services: map[string]map[string]any{"llama": sameLabelOtherUID}, refused: "metadata.name: would name Service llama, which InferenceService llama already has"},
		"ByHand":            {xr: llama, services: map[string]map[string]any{"llama": byHand}, refused: "something other than an InferenceService"},
		// A namespaced InferenceService and a claim of one name in one
		// namespace: the same Service.
		"NamespacedBesideClaim": {xr: namespaced, services: map[string]map[string]any{"llama": takenService("llama", "llama", "1", resolve.ComponentServer)}, refused: "metadata.name: would name Service llama, which InferenceService llama already has in namespace team-a"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			rsp := run(t, withServices(t, newRequest(t, tc.xr(), nil), tc.services))
			msg := fatalMessage(rsp)
			if (tc.refused == "") != (msg == "") || !strings.Contains(msg, tc.refused) {
				t.Errorf("Fatal %q, want one containing %q", msg, tc.refused)
			}
		})
	}
}

// TestNameRequirements: the function asks for the Services it has not
// composed yet, in the claim's namespace, and for none once they exist,
// so a claim whose objects all exist costs Crossplane no lookup.
func TestNameRequirements(t *testing.T) {
	names := func(rsp *fnv1.RunFunctionResponse) []string {
		var out []string
		for k, sel := range rsp.GetRequirements().GetResources() {
			if !strings.HasPrefix(k, observe.RequirementServicePrefix) {
				continue
			}
			want := &fnv1.ResourceSelector{ApiVersion: "v1", Kind: "Service", Match: &fnv1.ResourceSelector_MatchName{MatchName: strings.TrimPrefix(k, observe.RequirementServicePrefix)}, Namespace: proto.String("team-a")}
			if !proto.Equal(sel, want) {
				t.Errorf("requirement %s = %v, want %v", k, sel, want)
			}
			if !proto.Equal(rsp.GetRequirements().GetExtraResources()[k], want) { //nolint:staticcheck // Crossplane v1's field.
				t.Errorf("deprecated requirement %s missing", k)
			}
			out = append(out, strings.TrimPrefix(k, observe.RequirementServicePrefix))
		}
		slices.Sort(out)
		return out
	}
	fresh := run(t, newRequest(t, testXR(), nil))
	if diff := cmp.Diff([]string{"llama"}, names(fresh)); diff != "" {
		t.Errorf("fresh claim requires (-want +got):\n%s", diff)
	}
	split := run(t, newRequest(t, canaryXR(t), nil))
	if diff := cmp.Diff([]string{"llama", "llama-1", "llama-2"}, names(split)); diff != "" {
		t.Errorf("fresh split requires (-want +got):\n%s", diff)
	}
	served, _ := settle(t, canaryXR(t), nil, world{}, nil)
	if diff := cmp.Diff([]string(nil), names(served)); diff != "" {
		t.Errorf("a serving split requires (-want +got):\n%s", diff)
	}
	for k := range served.GetRequirements().GetResources() {
		if !strings.HasPrefix(k, observe.RequirementSecretPrefix) {
			t.Errorf("a serving claim without a ModelCache requires %s (only its Secrets are asked for on every call)", k)
		}
	}
}
