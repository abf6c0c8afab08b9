package render

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestCrossplaneRenderCanary renders the canary example
// (examples/canary) through the real crossplane CLI at each stage of
// examples/canary/observed: a 90/10 split with both versions serving, a
// canary whose pull failed while the primary serves, the split routed by an
// HTTPRoute, and a version of weight 0.
func TestCrossplaneRenderCanary(t *testing.T) {
	cli := crossplaneCLI(t)
	f, err := StartFunction(buildFunction(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(f.Stop)

	type version struct{ Version, Phase string }
	cases := []struct {
		stage, xr, composition string
		resources              []string // composition resource names; pull-job-* once per Job
		phase, split, ready    string   // status.phase, TrafficSplit and Ready condition status
		versions               []version
		backends               string // the HTTPRoute's backends, "" for none
		routeURL               string
	}{
		{
			stage: "serving", xr: "xr.yaml",
			resources: []string{"deployment", "deployment-2", "pull-job-*", "pull-job-*", "service", "service-1", "service-2", "weights-pvc"},
			phase:     "Serving", split: "True", ready: "True",
			versions: []version{{"1", "Serving"}, {"2", "Serving"}},
		},
		{
			stage: "canary-failed", xr: "xr.yaml",
			resources: []string{"deployment", "pull-job-*", "pull-job-*", "service", "service-1", "weights-pvc"},
			phase:     "Degraded", split: "False", ready: "False",
			versions: []version{{"1", "Serving"}, {"2", "Failed"}},
		},
		{
			stage: "route", xr: "xr.yaml", composition: "examples/canary/composition-gateway.yaml",
			resources: []string{"deployment", "deployment-2", "pull-job-*", "pull-job-*", "route", "service", "service-1", "service-2", "weights-pvc"},
			phase:     "Serving", split: "True", ready: "True",
			versions: []version{{"1", "Serving"}, {"2", "Serving"}},
			backends: "llama-1=90,llama-2=10", routeURL: "http://llama.team-a.models.example.com",
		},
		{
			stage: "weight-zero", xr: "weight-zero.yaml",
			resources: []string{"deployment", "deployment-2", "pull-job-*", "pull-job-*", "service", "service-1", "service-2", "weights-pvc"},
			phase:     "Serving", split: "True", ready: "True",
			versions: []version{{"1", "Serving"}, {"2", "Standby"}},
		},
	}
	for _, tc := range cases {
		t.Run(tc.stage, func(t *testing.T) {
			comp := tc.composition
			if comp == "" {
				comp = "apis/composition.yaml"
			}
			a := Args{
				CLI:         cli,
				XR:          filepath.Join(root, "examples", "canary", tc.xr),
				Composition: filepath.Join(root, comp),
				Functions:   filepath.Join(root, "examples", "functions.yaml"),
				Observed:    filepath.Join(root, "examples", "canary", "observed", tc.stage+".yaml"),
			}
			xr, got, composed := sortOutput(renderDocs(t, f, a), "XInferenceService")
			backends := ""
			for _, d := range composed {
				if d["kind"] == "HTTPRoute" {
					backends = routeBackends(d)
				}
				if meta, _ := d["metadata"].(map[string]any); meta["namespace"] != "team-a" {
					t.Errorf("%s %v is in namespace %v, want team-a", d["kind"], meta["name"], meta["namespace"])
				}
			}
			if diff := cmp.Diff(tc.resources, got); diff != "" {
				t.Errorf("composed resources (-want +got):\n%s", diff)
			}
			if xr == nil {
				t.Fatal("the output has no XInferenceService")
			}
			status, _ := xr["status"].(map[string]any)
			if status["phase"] != tc.phase {
				t.Errorf("status.phase %v, want %s (%v)", status["phase"], tc.phase, status["message"])
			}
			conds := conditions(status)
			if conds["TrafficSplit"] != tc.split || conds["Ready"] != tc.ready {
				t.Errorf("TrafficSplit=%q Ready=%q, want %q and %q (all %v)", conds["TrafficSplit"], conds["Ready"], tc.split, tc.ready, conds)
			}
			var versions []version
			list, _ := status["traffic"].([]any)
			for _, e := range list {
				m, _ := e.(map[string]any)
				v, _ := m["version"].(string)
				p, _ := m["phase"].(string)
				versions = append(versions, version{v, p})
			}
			if diff := cmp.Diff(tc.versions, versions); diff != "" {
				t.Errorf("status.traffic (-want +got):\n%s", diff)
			}
			if backends != tc.backends {
				t.Errorf("HTTPRoute backends %q, want %q", backends, tc.backends)
			}
			if url, _ := status["routeURL"].(string); url != tc.routeURL {
				t.Errorf("status.routeURL %q, want %q", url, tc.routeURL)
			}
		})
	}
}

// routeBackends writes an HTTPRoute's backends as name=weight pairs.
func routeBackends(route map[string]any) string {
	spec, _ := route["spec"].(map[string]any)
	rules, _ := spec["rules"].([]any)
	var out []string
	for _, r := range rules {
		refs, _ := r.(map[string]any)["backendRefs"].([]any)
		for _, b := range refs {
			m, _ := b.(map[string]any)
			out = append(out, fmt.Sprintf("%v=%v", m["name"], m["weight"]))
		}
	}
	return strings.Join(out, ",")
}
