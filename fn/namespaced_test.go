package fn

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/inferno-ai/function-inferno/apis/inference/v1alpha1"
	"github.com/inferno-ai/function-inferno/internal/resolve"
	"google.golang.org/protobuf/testing/protocmp"
)

// Paths of the namespaced (Crossplane v2) example.
const (
	namespacedXR       = "../examples/namespaced/xr.yaml"
	namespacedObserved = "../examples/namespaced/observed"
)

// TestGoldenNamespaced renders examples/namespaced/xr.yaml — a namespaced
// composite in group inference.inferno.dev, no claim — fresh and at every
// stage, and compares the responses with fn/testdata/golden/namespaced-*.
// Like TestGolden, -update also rewrites the observed fixtures the render
// tests read, and the stages render from the checked-in fixtures.
func TestGoldenNamespaced(t *testing.T) {
	input := compositionInput(t)
	xr := readYAML(t, namespacedXR)
	if got := xr["apiVersion"]; got != v1alpha1.NamespacedGroupVersion.String() {
		t.Fatalf("%s has apiVersion %v, want %s", namespacedXR, got, v1alpha1.NamespacedGroupVersion)
	}
	t.Run("fresh", func(t *testing.T) {
		compareGolden(t, "namespaced-fresh", run(t, newRequest(t, xr, input)))
	})
	for _, stage := range stages {
		t.Run(stage, func(t *testing.T) {
			observed, ok := stageObserved(t, xr, input, stage)
			if !ok {
				t.Fatalf("the namespaced example has no %s stage", stage)
			}
			fixture := filepath.Join(namespacedObserved, stage+".yaml")
			if *update {
				writeObserved(t, fixture, "examples/namespaced/xr.yaml", stage, observed)
			}
			observed = readObserved(t, fixture)
			compareGolden(t, "namespaced-"+stage, run(t, newRequest(t, xr, input, observed...)))
		})
	}
}

// TestNamespacedComposesInItsNamespace: at every stage, every object the
// namespaced XR composes is in the XR's own namespace and named after it,
// and the status URL is that namespace's Service — whatever the Input's
// namespace for claimless XRs says.
func TestNamespacedComposesInItsNamespace(t *testing.T) {
	xr := readYAML(t, namespacedXR)
	input := compositionInput(t)
	input["namespace"] = "platform-default"
	name, ns := xr["metadata"].(map[string]any)["name"].(string), xr["metadata"].(map[string]any)["namespace"].(string)

	for _, stage := range append([]string{"fresh"}, stages...) {
		t.Run(stage, func(t *testing.T) {
			var observed []observedObject
			if stage != "fresh" {
				observed = readObserved(t, filepath.Join(namespacedObserved, stage+".yaml"))
			}
			rsp := run(t, newRequest(t, xr, input, observed...))
			if msg := fatalMessage(rsp); msg != "" {
				t.Fatalf("fatal: %s", msg)
			}
			type placement struct{ Namespace, NamedAfter string }
			want, got := map[string]placement{}, map[string]placement{}
			for rn, r := range rsp.GetDesired().GetResources() {
				md, _ := r.GetResource().AsMap()["metadata"].(map[string]any)
				objName, _ := md["name"].(string)
				want[rn] = placement{Namespace: ns, NamedAfter: name}
				after := objName
				if strings.HasPrefix(objName, name+"-") {
					after = name
				}
				got[rn] = placement{Namespace: md["namespace"].(string), NamedAfter: after}
			}
			if len(got) == 0 {
				t.Fatal("no desired resources")
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("namespace and name prefix per composed resource (-want +got):\n%s", diff)
			}
			if url, ok := nested(rsp.GetDesired().GetComposite().GetResource().AsMap(), "status", "url"); ok && url != "http://"+name+"."+ns+".svc.cluster.local:80" {
				t.Errorf("status.url = %v, want the Service in %s", url, ns)
			}
		})
	}
}

// TestNamespacedMatchesClaim: the function reads nothing from the XR's
// group, kind or scope but the name and namespace it composes into. A
// namespaced XR team-a/llama and the claim team-a/llama's cluster-scoped
// XR, with the same spec and observed objects, get identical responses at
// every stage.
func TestNamespacedMatchesClaim(t *testing.T) {
	input := compositionInput(t)
	claimXR := readYAML(t, "../examples/xr.yaml")
	nsXR := readYAML(t, namespacedXR)
	if diff := cmp.Diff(claimXR["spec"].(map[string]any)["model"], nsXR["spec"].(map[string]any)["model"]); diff != "" {
		t.Fatalf("the examples' models differ; keep examples/namespaced/xr.yaml's spec that of examples/xr.yaml (-claim +namespaced):\n%s", diff)
	}
	for _, stage := range append([]string{"fresh"}, stages...) {
		t.Run(stage, func(t *testing.T) {
			var observed []observedObject
			if stage != "fresh" {
				observed = readObserved(t, filepath.Join("..", "examples", "observed", stage+".yaml"))
			}
			want := run(t, newRequest(t, claimXR, input, observed...))
			got := run(t, newRequest(t, nsXR, input, observed...))
			if diff := cmp.Diff(want, got, protocmp.Transform()); diff != "" {
				t.Errorf("response for the namespaced XR differs from the claim's (-claim +namespaced):\n%s", diff)
			}
		})
	}
}

// TestNamespacedBadName: a namespaced XR's own name is checked as a claim's
// is, since everything is named after it.
func TestNamespacedBadName(t *testing.T) {
	cases := map[string]struct {
		name, fix string
	}{
		"TooLong":      {name: "l" + strings.Repeat("o", resolve.MaxNameLength), fix: "use at most"},
		"DotsInName":   {name: "llama.v1", fix: "cannot name the Service"},
		"LeadingDigit": {name: "3llama", fix: "cannot name the Service"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			xr := readYAML(t, namespacedXR)
			setPath(xr, tc.name, "metadata", "name")
			msg := fatalMessage(run(t, newRequest(t, xr, compositionInput(t))))
			got := [2]bool{strings.Contains(msg, "metadata.name:"), strings.Contains(msg, tc.fix)}
			if diff := cmp.Diff([2]bool{true, true}, got); diff != "" {
				t.Errorf("Fatal names metadata.name, suggests %q (-want +got):\n%s\nmessage: %q", tc.fix, diff, msg)
			}
		})
	}
}
