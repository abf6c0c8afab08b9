package fn

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"github.com/google/go-cmp/cmp"
	"github.com/inferno-ai/function-inferno/internal/render"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/structpb"
	"sigs.k8s.io/yaml"

	"github.com/inferno-ai/function-inferno/input/v1beta1"
)

var update = flag.Bool("update", false, "rewrite the golden files and the examples' observed-resource files")

// The lifecycle stages of an InferenceService, each an observed state that
// examples/observed/<stage>.yaml holds for examples/xr.yaml.
var stages = []string{"pulling", "failed", "starting", "serving", "degraded"}

// TestGolden renders every example in-process, fresh and at each stage,
// and compares the response with fn/testdata/golden. With -update it
// rewrites the golden files and examples/observed from the renders.
func TestGolden(t *testing.T) {
	input := compositionInput(t)
	examples, err := filepath.Glob("../examples/frameworks/*.yaml")
	if err != nil {
		t.Fatal(err)
	}
	examples = append([]string{"../examples/xr.yaml"}, examples...)

	for _, path := range examples {
		xr := readYAML(t, path)
		name := strings.TrimSuffix(filepath.Base(path), ".yaml")
		t.Run(name+"/fresh", func(t *testing.T) {
			compareGolden(t, name+"-fresh", run(t, newRequest(t, xr, input)))
		})
		for _, stage := range stages {
			t.Run(name+"/"+stage, func(t *testing.T) {
				observed, ok := stageObserved(t, xr, input, stage)
				if !ok {
					t.Skipf("%s mounts its weights: it has no %s stage", name, stage)
				}
				if name == "xr" {
					fixture := filepath.Join("..", "examples", "observed", stage+".yaml")
					if *update {
						writeObserved(t, fixture, "examples/xr.yaml", stage, observed)
					}
					// The checked-in fixture is what `make render STAGE=…`
					// and the render tests use: render from it, not from
					// the in-memory state, so a stale fixture fails here.
					observed = readObserved(t, fixture)
				}
				compareGolden(t, name+"-"+stage, run(t, newRequest(t, xr, input, observed...)))
			})
		}
	}
}

// stageObserved walks a claim through its life up to stage: each step
// observes what the previous render desired, with the statuses the
// Kubernetes controllers would have written by then.
func stageObserved(t testing.TB, xr, input map[string]any, stage string) ([]observedObject, bool) {
	t.Helper()
	fresh := run(t, newRequest(t, xr, input))
	if msg := fatalMessage(fresh); msg != "" {
		t.Fatalf("example does not render: %s", msg)
	}
	pvc, job := render.ResourcePVC, ""
	for _, n := range desiredNames(fresh) {
		if strings.HasPrefix(n, render.ResourceJobPrefix) {
			job = n
		}
	}
	pulled := job != ""
	var weights []observedObject
	if pulled {
		switch stage {
		case "pulling":
			return []observedObject{
				observedFrom(t, fresh, pvc, map[string]any{"phase": "Pending"}),
				observedFrom(t, fresh, job, map[string]any{"active": 1, "startTime": "2026-12-01T10:00:00Z"}),
			}, true
		case "failed":
			return []observedObject{
				observedFrom(t, fresh, pvc, boundPVC()),
				observedFrom(t, fresh, job, map[string]any{"failed": 4, "startTime": "2026-12-01T10:00:00Z", "conditions": []any{
					map[string]any{"type": "FailureTarget", "status": "True", "reason": "BackoffLimitExceeded", "message": "Job has reached the specified backoff limit"},
					map[string]any{"type": "Failed", "status": "True", "reason": "BackoffLimitExceeded", "message": "Job has reached the specified backoff limit"},
				}}),
			}, true
		}
		weights = []observedObject{
			observedFrom(t, fresh, pvc, boundPVC()),
			observedFrom(t, fresh, job, map[string]any{"succeeded": 1, "startTime": "2026-12-01T10:00:00Z", "completionTime": "2026-12-01T10:20:00Z", "conditions": []any{
				map[string]any{"type": "SuccessCriteriaMet", "status": "True"},
				map[string]any{"type": "Complete", "status": "True"},
			}}),
		}
	}
	if stage == "pulling" || stage == "failed" {
		// pvc:// models are not pulled: the first render already starts
		// the servers.
		return nil, false
	}

	servers := run(t, newRequest(t, xr, input, weights...))
	replicas, ready := 1, 0
	switch stage {
	case "serving":
		ready = 1
	case "degraded":
		replicas, ready = 3, 1
	}
	if r := desiredObject[map[string]any](t, servers, render.ResourceDeployment); r != nil {
		if n, ok := nestedInt((*r), "spec", "replicas"); ok {
			replicas = n
			if stage == "serving" {
				ready = n
			} else if stage == "degraded" {
				ready = n - 1
			}
		}
	}
	available := "False"
	if ready == replicas {
		available = "True"
	}
	deploy := observedFrom(t, servers, render.ResourceDeployment, map[string]any{
		"observedGeneration": 1, "replicas": replicas, "updatedReplicas": replicas,
		"readyReplicas": ready, "availableReplicas": ready, "unavailableReplicas": replicas - ready,
		"conditions": []any{
			map[string]any{"type": "Available", "status": available, "reason": map[bool]string{true: "MinimumReplicasAvailable", false: "MinimumReplicasUnavailable"}[available == "True"]},
			map[string]any{"type": "Progressing", "status": "True", "reason": "NewReplicaSetAvailable"},
		},
	})
	setPath(deploy.Object, int64(1), "metadata", "generation")
	setPath(deploy.Object, int64(replicas), "spec", "replicas")
	out := append(weights, deploy, observedFrom(t, servers, render.ResourceService, nil))
	if _, ok := servers.GetDesired().GetResources()[render.ResourceHPA]; ok {
		active := map[string]any{"type": "ScalingActive", "status": "True", "reason": "ValidMetricFound"}
		if stage == "starting" {
			active = map[string]any{"type": "ScalingActive", "status": "False", "reason": "FailedGetPodsMetric", "message": "the HPA was unable to compute the replica count: no metrics returned from custom metrics API"}
		}
		out = append(out, observedFrom(t, servers, render.ResourceHPA, map[string]any{
			"currentReplicas": replicas, "desiredReplicas": replicas,
			"conditions": []any{map[string]any{"type": "AbleToScale", "status": "True", "reason": "ReadyForNewScale"}, active},
		}))
	}
	return out, true
}

func boundPVC() map[string]any {
	return map[string]any{"phase": "Bound", "accessModes": []any{"ReadWriteMany"}, "capacity": map[string]any{"storage": "40Gi"}}
}

func nestedInt(m map[string]any, path ...string) (int, bool) {
	v, ok := nested(m, path...)
	if !ok {
		return 0, false
	}
	switch n := v.(type) {
	case int64:
		return int(n), true
	case float64:
		return int(n), true
	}
	return 0, false
}

// compositionInput is the Input of the generated Composition's one step.
func compositionInput(t testing.TB) map[string]any {
	t.Helper()
	comp := readYAML(t, "../apis/composition.yaml")
	pipeline, _ := nested(comp, "spec", "pipeline")
	steps, _ := pipeline.([]any)
	if len(steps) != 1 {
		t.Fatalf("the Composition has %d steps, want 1", len(steps))
	}
	in, _ := steps[0].(map[string]any)["input"].(map[string]any)
	return in
}

func readYAML(t testing.TB, path string) map[string]any {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	m := map[string]any{}
	if err := yaml.Unmarshal(b, &m); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return m
}

// writeObserved writes the observed composed resources of the example at
// one stage, the fixture `crossplane render --observed-resources` reads.
func writeObserved(t *testing.T, path, example, stage string, objs []observedObject) {
	t.Helper()
	var buf bytes.Buffer
	buf.WriteString("# Observed composed resources of " + example + " at the " + stage + " stage, for\n")
	buf.WriteString("# `crossplane render --observed-resources`. Generated by `go test ./fn -run Golden -update`.\n")
	for _, o := range objs {
		b, err := yaml.Marshal(o.Object)
		if err != nil {
			t.Fatal(err)
		}
		buf.WriteString("---\n")
		buf.Write(b)
	}
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

func readObserved(t testing.TB, path string) []observedObject {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []observedObject
	for _, doc := range strings.Split(string(b), "\n---\n") {
		m := map[string]any{}
		if err := yaml.Unmarshal([]byte(doc), &m); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		if len(m) == 0 {
			continue
		}
		name, _ := nested(m, "metadata", "annotations", "crossplane.io/composition-resource-name")
		n, _ := name.(string)
		if n == "" {
			t.Fatalf("%s: an object has no crossplane.io/composition-resource-name annotation", path)
		}
		out = append(out, observedObject{Name: n, Object: m})
	}
	return out
}

// renderYAML is a response as stable, readable YAML.
func renderYAML(t *testing.T, rsp *fnv1.RunFunctionResponse) []byte {
	t.Helper()
	j, err := protojson.MarshalOptions{UseProtoNames: false}.Marshal(rsp)
	if err != nil {
		t.Fatal(err)
	}
	y, err := yaml.JSONToYAML(j)
	if err != nil {
		t.Fatal(err)
	}
	return y
}

func compareGolden(t *testing.T, name string, rsp *fnv1.RunFunctionResponse) {
	t.Helper()
	got := renderYAML(t, withScriptTokens(rsp))
	path := filepath.Join("testdata", "golden", name+".yaml")
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run: go test ./fn -run TestGolden -update)", err)
	}
	if diff := cmp.Diff(string(want), string(got)); diff != "" {
		t.Errorf("%s differs from the golden file (-want +got); if the change is intended run: go test ./fn -run TestGolden -update\n%s", path, diff)
	}
}

// withScriptTokens returns a copy of rsp in which a built-in pull script's
// text, wherever a desired object carries it, is the script's token
// (v1beta1.PullScript.Token: its file and digest). A script edit then
// changes one line of each golden, and the script is reviewed once, in
// input/v1beta1/scripts.
func withScriptTokens(rsp *fnv1.RunFunctionResponse) *fnv1.RunFunctionResponse {
	rsp = proto.Clone(rsp).(*fnv1.RunFunctionResponse)
	scripts := append(v1beta1.PullScripts(), v1beta1.ServeScripts()...)
	var walk func(v *structpb.Value)
	walk = func(v *structpb.Value) {
		switch k := v.GetKind().(type) {
		case *structpb.Value_StringValue:
			for _, s := range scripts {
				k.StringValue = strings.ReplaceAll(k.StringValue, s.Text, s.Token())
			}
		case *structpb.Value_StructValue:
			for _, f := range k.StructValue.GetFields() {
				walk(f)
			}
		case *structpb.Value_ListValue:
			for _, e := range k.ListValue.GetValues() {
				walk(e)
			}
		}
	}
	objects := []*fnv1.Resource{rsp.GetDesired().GetComposite()}
	for _, r := range rsp.GetDesired().GetResources() {
		objects = append(objects, r)
	}
	for _, r := range objects {
		if r.GetResource() != nil {
			walk(structpb.NewStructValue(r.GetResource()))
		}
	}
	return rsp
}
