package fn

import (
	"context"
	"slices"
	"testing"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"google.golang.org/protobuf/types/known/structpb"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/yaml"
)

// Helpers shared by the tests of this package.

// testXR is a minimal valid XR for a claim team-a/llama; tests edit its
// spec through the returned map.
func testXR() map[string]any {
	return mustYAML(`
apiVersion: inference.inferno.io/v1alpha1
kind: XInferenceService
metadata:
  name: llama-abcde
  labels:
    crossplane.io/claim-name: llama
    crossplane.io/claim-namespace: team-a
spec:
  model:
    uri: hf://meta-llama/Llama-3.1-8B-Instruct
    framework: vllm
  resources:
    gpu: 1
`)
}

func mustYAML(s string) map[string]any {
	m := map[string]any{}
	if err := yaml.Unmarshal([]byte(s), &m); err != nil {
		panic(err)
	}
	return m
}

// setPath sets a value at a dotted path in an object, creating maps on the way.
func setPath(obj map[string]any, value any, path ...string) {
	cur := obj
	for _, p := range path[:len(path)-1] {
		next, ok := cur[p].(map[string]any)
		if !ok {
			next = map[string]any{}
			cur[p] = next
		}
		cur = next
	}
	cur[path[len(path)-1]] = value
}

// observedObject is a composed resource Crossplane observed.
type observedObject struct {
	Name   string         // composition resource name
	Object map[string]any // its content
}

// newRequest builds a RunFunctionRequest for an XR, observed composed
// resources and an optional Input (nil for none).
func newRequest(t testing.TB, xr map[string]any, input map[string]any, observed ...observedObject) *fnv1.RunFunctionRequest {
	t.Helper()
	req := &fnv1.RunFunctionRequest{
		Meta:     &fnv1.RequestMeta{Tag: "test"},
		Observed: &fnv1.State{Composite: &fnv1.Resource{Resource: mustStruct(t, xr)}},
	}
	if input != nil {
		req.Input = mustStruct(t, input)
	}
	if len(observed) > 0 {
		req.Observed.Resources = map[string]*fnv1.Resource{}
		for _, o := range observed {
			req.Observed.Resources[o.Name] = &fnv1.Resource{Resource: mustStruct(t, o.Object)}
		}
	}
	return req
}

func mustStruct(t testing.TB, m map[string]any) *structpb.Struct {
	t.Helper()
	// Round-trip through YAML so typed values (int32, []string) become the
	// JSON types structpb accepts.
	b, err := yaml.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	clean := map[string]any{}
	if err := yaml.Unmarshal(b, &clean); err != nil {
		t.Fatal(err)
	}
	s, err := structpb.NewStruct(clean)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// run calls RunFunction and fails the test on a transport error.
func run(t testing.TB, req *fnv1.RunFunctionRequest) *fnv1.RunFunctionResponse {
	t.Helper()
	rsp, err := (&Function{}).RunFunction(context.Background(), req)
	if err != nil {
		t.Fatalf("RunFunction returned a gRPC error: %v", err)
	}
	return rsp
}

// fatalMessage returns the message of the response's Fatal result, or "".
func fatalMessage(rsp *fnv1.RunFunctionResponse) string {
	for _, r := range rsp.GetResults() {
		if r.GetSeverity() == fnv1.Severity_SEVERITY_FATAL {
			return r.GetMessage()
		}
	}
	return ""
}

// desiredObject decodes a desired composed resource into a typed object.
func desiredObject[T any](t testing.TB, rsp *fnv1.RunFunctionResponse, name string) *T {
	t.Helper()
	r, ok := rsp.GetDesired().GetResources()[name]
	if !ok {
		t.Fatalf("no desired resource %q; have %v", name, desiredNames(rsp))
	}
	obj := new(T)
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(r.GetResource().AsMap(), obj); err != nil {
		t.Fatal(err)
	}
	return obj
}

// desiredNames lists the desired composed resources' names.
func desiredNames(rsp *fnv1.RunFunctionResponse) []string {
	var names []string
	for n := range rsp.GetDesired().GetResources() {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// observedFrom turns a desired resource of a response into an observed one
// with the given status merged in, as Crossplane would observe it after
// applying it.
func observedFrom(t testing.TB, rsp *fnv1.RunFunctionResponse, name string, status map[string]any) observedObject {
	t.Helper()
	r, ok := rsp.GetDesired().GetResources()[name]
	if !ok {
		t.Fatalf("no desired resource %q; have %v", name, desiredNames(rsp))
	}
	obj := r.GetResource().AsMap()
	setPath(obj, name, "metadata", "annotations", "crossplane.io/composition-resource-name")
	if status != nil {
		obj["status"] = status
	}
	return observedObject{Name: name, Object: obj}
}

func readiness(rsp *fnv1.RunFunctionResponse, name string) fnv1.Ready {
	return rsp.GetDesired().GetResources()[name].GetReady()
}

// nested reads a value at a path of an unstructured object.
func nested(obj map[string]any, fields ...string) (any, bool) {
	var cur any = obj
	for _, f := range fields {
		m, ok := cur.(map[string]any)
		if !ok {
			return nil, false
		}
		if cur, ok = m[f]; !ok {
			return nil, false
		}
	}
	return cur, true
}

// conditionReason is the reason of the response's condition of that type.
func conditionReason(rsp *fnv1.RunFunctionResponse, typ string) string {
	for _, c := range rsp.GetConditions() {
		if c.GetType() == typ {
			return c.GetReason()
		}
	}
	return ""
}
