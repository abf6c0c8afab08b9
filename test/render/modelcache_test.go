package render

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/yaml"
)

// TestCrossplaneRenderModelCache renders the ModelCache example
// (examples/modelcache) through the real crossplane CLI: the cache fresh
// and at each stage of examples/modelcache/observed, and a service on it
// with the cache claim of each stage as a required resource
// (--required-resources), or none.
func TestCrossplaneRenderModelCache(t *testing.T) {
	cli := crossplaneCLI(t)
	f, err := StartFunction(buildFunction(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(f.Stop)
	dir := filepath.Join(root, "examples", "modelcache")

	cases := []struct {
		name                  string
		xr, composition       string
		observed, required    string
		kind                  string   // the composite's kind in the output
		resources             []string // composition resource names; pull-job-* per Job
		phase, weights, ready string   // status.phase, WeightsReady and Ready
	}{
		{name: "cache/fresh", xr: "xr.yaml", kind: "XModelCache", resources: []string{"pull-job-*", "weights-pvc"}, phase: "Pending", weights: "False", ready: "False"},
		{name: "cache/pulling", xr: "xr.yaml", observed: "pulling", kind: "XModelCache", resources: []string{"pull-job-*", "weights-pvc"}, phase: "Pulling", weights: "False", ready: "False"},
		{name: "cache/failed", xr: "xr.yaml", observed: "failed", kind: "XModelCache", resources: []string{"pull-job-*", "weights-pvc"}, phase: "Failed", weights: "False", ready: "False"},
		{name: "cache/ready", xr: "xr.yaml", observed: "ready", kind: "XModelCache", resources: []string{"pull-job-*", "weights-pvc"}, phase: "Ready", weights: "True", ready: "True"},
		{name: "service/missing", xr: "service-xr.yaml", kind: "XInferenceService", phase: "Pending", weights: "False", ready: "False"},
		{name: "service/pulling", xr: "service-xr.yaml", required: "pulling", kind: "XInferenceService", phase: "Pulling", weights: "False", ready: "False"},
		{name: "service/failed", xr: "service-xr.yaml", required: "failed", kind: "XInferenceService", phase: "Failed", weights: "False", ready: "False"},
		{name: "service/ready", xr: "service-xr.yaml", required: "ready", kind: "XInferenceService", resources: []string{"deployment", "service"}, phase: "Starting", weights: "True", ready: "False"},
		// A status naming another claim and directory: the Deployment
		// still mounts llama-3-1-8b-cache (checked below) at b76ee785.
		{name: "service/tampered", xr: "service-xr.yaml", required: "tampered", kind: "XInferenceService", resources: []string{"deployment", "service"}, phase: "Starting", weights: "True", ready: "False"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			comp := filepath.Join(root, "apis", "composition.yaml")
			if tc.kind == "XModelCache" {
				comp = filepath.Join(root, "apis", "modelcache-composition.yaml")
			}
			a := Args{CLI: cli, XR: filepath.Join(dir, tc.xr), Composition: comp, Functions: filepath.Join(root, "examples", "functions.yaml")}
			if tc.observed != "" {
				a.Observed = filepath.Join(dir, "observed", tc.observed+".yaml")
			}
			if tc.required != "" {
				a.Required = filepath.Join(dir, "required", tc.required+".yaml")
			}
			xr, got, composed := sortOutput(renderDocs(t, f, a), tc.kind)
			for _, d := range composed {
				meta, _ := d["metadata"].(map[string]any)
				if meta["namespace"] != "team-a" {
					t.Errorf("%s %v is in namespace %v, want team-a", d["kind"], meta["name"], meta["namespace"])
				}
				if d["kind"] == "Deployment" && (!strings.Contains(toYAMLString(d), "claimName: llama-3-1-8b-cache") || !strings.Contains(toYAMLString(d), "subPath: b76ee785") || strings.Contains(toYAMLString(d), "team-a-secrets")) {
					t.Errorf("the service's Deployment does not mount the cache's volume llama-3-1-8b-cache at b76ee785, and only it")
				}
			}
			if diff := cmp.Diff(tc.resources, got); diff != "" {
				t.Errorf("composed resources (-want +got):\n%s", diff)
			}
			if xr == nil {
				t.Fatalf("the output has no %s", tc.kind)
			}
			status, _ := xr["status"].(map[string]any)
			conds := conditions(status)
			if status["phase"] != tc.phase || conds["WeightsReady"] != tc.weights || conds["Ready"] != tc.ready {
				t.Errorf("phase %v WeightsReady %q Ready %q, want %s %s %s (message %v)", status["phase"], conds["WeightsReady"], conds["Ready"], tc.phase, tc.weights, tc.ready, status["message"])
			}
		})
	}
}

func toYAMLString(v any) string {
	b, err := yaml.Marshal(v)
	if err != nil {
		return ""
	}
	return string(b)
}

// TestCrossplaneRenderCacheVolumeNotTheCaches renders the service on the
// ModelCache example through the real crossplane CLI with the Ready cache,
// its composite, and a volume claim llama-3-1-8b-cache that the composite
// does not control (made by hand, with Crossplane's labels copied onto it):
// the service is refused, naming the volume and the fix, and nothing is
// composed. service/ready in TestCrossplaneRenderModelCache is the same
// with the cache's own volume.
func TestCrossplaneRenderCacheVolumeNotTheCaches(t *testing.T) {
	cli := crossplaneCLI(t)
	f, err := StartFunction(buildFunction(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(f.Stop)
	b, err := os.ReadFile(filepath.Join(root, "examples", "modelcache", "required", "ready.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	docs := strings.Split(string(b), "\n---\n")
	if len(docs) != 3 || !strings.Contains(docs[2], "kind: PersistentVolumeClaim") {
		t.Fatalf("examples/modelcache/required/ready.yaml: want the claim, the composite and the volume claim, got %d documents", len(docs))
	}
	// The cache's own volume claim, less its controller reference.
	byHand := docs[2][:strings.Index(docs[2], "  ownerReferences:")] + docs[2][strings.Index(docs[2], "status:"):]
	if strings.Contains(byHand, "ownerReferences") || !strings.Contains(byHand, "crossplane.io/composite: llama-3-1-8b-m4x2p") {
		t.Fatalf("the hand-made volume claim is not what the test means:\n%s", byHand)
	}
	required := filepath.Join(t.TempDir(), "required.yaml")
	if err := os.WriteFile(required, []byte(strings.Join([]string{docs[0], docs[1], byHand}, "\n---\n")), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	out, err := f.Render(ctx, Args{
		CLI:         cli,
		XR:          filepath.Join(root, "examples", "modelcache", "service-xr.yaml"),
		Composition: filepath.Join(root, "apis", "composition.yaml"),
		Functions:   filepath.Join(root, "examples", "functions.yaml"),
		Required:    required,
	})
	if err == nil {
		t.Fatalf("rendered, want a refusal:\n%s", out)
	}
	for _, want := range []string{"spec.model.cacheRef.name: ModelCache llama-3-1-8b keeps its weights in volume claim llama-3-1-8b-cache", "controlled by nobody", "kubectl delete -n team-a pvc/llama-3-1-8b-cache"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("the refusal does not say %q:\n%v", want, err)
		}
	}
}
