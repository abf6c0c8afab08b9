package structcodec

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/testing/protocmp"
	"google.golang.org/protobuf/types/known/structpb"
	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
	"sigs.k8s.io/yaml"

	"github.com/inferno-ai/function-inferno/apis/inference/v1alpha1"
)

// FuzzDecode holds the decoder to the standard path (structpb.AsMap and
// apimachinery's converter) on every object the function observes or
// renders, and on whatever the fuzzer makes of them. Each input is a Go
// type (one of fuzzTypes, by index) and an object as JSON; where both
// decode it, they must give the same object, but for
// metadata.managedFields, which the decoder skips on purpose. (Where they
// differ in what they accept, the decoder is the stricter: it refuses a
// fraction or an overflow in an integer field, which the converter
// truncates or wraps, and names the field.)
//
// The seed corpus is every rendered object of fn/testdata/golden (every
// example at every stage, the status objects included), every observed
// and required object under examples/, and every example claim, with a
// few hand-made edge cases. `go test` runs the seeds; to fuzz:
//
//	go test ./internal/structcodec -run '^$' -fuzz FuzzDecode -fuzztime 60s
func FuzzDecode(f *testing.F) {
	for _, s := range fuzzSeeds(f) {
		f.Add(s.typ, s.json)
	}
	f.Fuzz(func(t *testing.T, typ uint8, data []byte) {
		ft := fuzzTypes[int(typ)%len(fuzzTypes)]
		var m map[string]any
		if err := json.Unmarshal(data, &m); err != nil || m == nil {
			return
		}
		s, err := structpb.NewStruct(m)
		if err != nil {
			return
		}
		std, codec := ft.new(), ft.new()
		stdErr := runtime.DefaultUnstructuredConverter.FromUnstructured(s.AsMap(), std)
		codecErr := Decode(s, codec, "")
		if stdErr != nil || codecErr != nil {
			return
		}
		if a, err := meta.Accessor(std); err == nil {
			a.SetManagedFields(nil)
		}
		if diff := cmp.Diff(std, codec); diff != "" {
			t.Errorf("%s: Decode differs from the converter (-converter +codec):\n%s", ft.name, diff)
		}
	})
}

// FuzzEncode holds the encoder to the standard path (apimachinery's
// converter, then structpb.NewStruct) on every object the function
// renders or observes, and on whatever the fuzzer makes of them: each input
// is decoded into its Go type the standard way (a failed decoding leaves a
// partly decoded object, still an object to encode), and the encoder must
// then give the same bytes (proto's deterministic encoding) or fail where
// the standard path fails; with Desired, the same less an empty top-level
// status. Same seed corpus as FuzzDecode; to fuzz:
//
//	go test ./internal/structcodec -run '^$' -fuzz FuzzEncode -fuzztime 60s
func FuzzEncode(f *testing.F) {
	for _, s := range fuzzSeeds(f) {
		f.Add(s.typ, s.json)
	}
	f.Fuzz(func(t *testing.T, typ uint8, data []byte) {
		ft := fuzzTypes[int(typ)%len(fuzzTypes)]
		var m map[string]any
		if err := json.Unmarshal(data, &m); err != nil || m == nil {
			return
		}
		obj := ft.new()
		_ = runtime.DefaultUnstructuredConverter.FromUnstructured(m, obj)
		checkEncode(t, ft.name, obj, false)
		checkEncode(t, ft.name, obj, true)
	})
}

// checkEncode requires the Encoder to encode obj as the standard path
// does, less an empty top-level status when desired.
func checkEncode(t *testing.T, name string, obj any, desired bool) {
	t.Helper()
	want, wantErr := standardStruct(obj)
	got, gotErr := (&Encoder{Desired: desired}).Struct(obj)
	if (wantErr != nil) != (gotErr != nil) {
		t.Fatalf("%s: the standard path's error is %v, the encoder's %v", name, wantErr, gotErr)
	}
	if wantErr != nil {
		return
	}
	if st := want.GetFields()["status"].GetStructValue(); desired && st != nil && len(st.GetFields()) == 0 {
		delete(want.Fields, "status")
	}
	deterministic := proto.MarshalOptions{Deterministic: true}
	wb, err := deterministic.Marshal(want)
	if err != nil {
		t.Fatal(err)
	}
	gb, err := deterministic.Marshal(got)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(wb, gb) {
		t.Errorf("%s (desired %t): the encoder differs from the standard path (-standard +encoder):\n%s", name, desired, cmp.Diff(want, got, protocmp.Transform()))
	}
}

// fuzzType is a Go type the function encodes or decodes.
type fuzzType struct {
	name string
	new  func() any
}

// fuzzTypes are every type the function renders, observes or reports in.
// Append only: a corpus entry names its type by index.
var fuzzTypes = []fuzzType{
	{"PersistentVolumeClaim", func() any { return &corev1.PersistentVolumeClaim{} }},
	{"Job", func() any { return &batchv1.Job{} }},
	{"Deployment", func() any { return &appsv1.Deployment{} }},
	{"Service", func() any { return &corev1.Service{} }},
	{"HorizontalPodAutoscaler", func() any { return &autoscalingv2.HorizontalPodAutoscaler{} }},
	{"NetworkPolicy", func() any { return &networkingv1.NetworkPolicy{} }},
	{"HTTPRoute", func() any { return &gatewayv1.HTTPRoute{} }},
	{"XInferenceService", func() any { return &v1alpha1.XInferenceService{} }},
	{"XModelCache", func() any { return &v1alpha1.XModelCache{} }},
	{"InferenceServiceStatus", func() any { return &v1alpha1.InferenceServiceStatus{} }},
	{"ModelCacheStatus", func() any { return &v1alpha1.ModelCacheStatus{} }},
	{"PodTemplateSpec", func() any { return &corev1.PodTemplateSpec{} }},
}

// typeForKind is the fuzzTypes index of an object's kind; claims and
// namespaced XRs decode into their composite's type.
func typeForKind(kind string) (uint8, bool) {
	switch kind {
	case "InferenceService":
		kind = "XInferenceService"
	case "ModelCache":
		kind = "XModelCache"
	}
	i := slices.IndexFunc(fuzzTypes, func(ft fuzzType) bool { return ft.name == kind })
	return uint8(i), i >= 0
}

type fuzzSeed struct {
	typ  uint8
	json []byte
}

// fuzzSeeds reads the seed corpus and checks it covers every type.
func fuzzSeeds(t testing.TB) []fuzzSeed {
	t.Helper()
	var seeds []fuzzSeed
	add := func(typ uint8, obj any) {
		b, err := json.Marshal(obj)
		if err != nil {
			t.Fatal(err)
		}
		seeds = append(seeds, fuzzSeed{typ: typ, json: b})
	}
	addObject := func(path string, obj map[string]any) {
		kind, _ := obj["kind"].(string)
		typ, ok := typeForKind(kind)
		if !ok {
			return // a Composition, a Function
		}
		add(typ, obj)
		if kind == "Deployment" || kind == "Job" {
			spec, _ := obj["spec"].(map[string]any)
			if tmpl, ok := spec["template"].(map[string]any); ok {
				pts, _ := typeForKind("PodTemplateSpec")
				add(pts, tmpl)
			}
		}
	}

	// Rendered: the goldens are RunFunctionResponses as YAML.
	goldens, err := filepath.Glob("../../fn/testdata/golden/*.yaml")
	if err != nil || len(goldens) == 0 {
		t.Fatalf("no goldens in ../../fn/testdata/golden (%v)", err)
	}
	for _, path := range goldens {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		var rsp struct {
			Desired struct {
				Composite struct {
					Resource map[string]any
				}
				Resources map[string]struct {
					Resource map[string]any
				}
			}
		}
		if err := yaml.Unmarshal(b, &rsp); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		for _, r := range rsp.Desired.Resources {
			addObject(path, r.Resource)
		}
		if st, ok := rsp.Desired.Composite.Resource["status"].(map[string]any); ok {
			// Which status it is depends on the composite; both take it.
			for _, kind := range []string{"InferenceServiceStatus", "ModelCacheStatus"} {
				typ, _ := typeForKind(kind)
				add(typ, st)
			}
		}
	}

	// Observed and required objects, and the example claims and XRs.
	var files []string
	for _, pattern := range []string{"../../examples/*.yaml", "../../examples/*/*.yaml", "../../examples/*/observed/*.yaml", "../../examples/*/required/*.yaml", "../../examples/observed/*.yaml"} {
		m, err := filepath.Glob(pattern)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, m...)
	}
	for _, path := range files {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		d := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(b), 4096)
		for {
			var obj map[string]any
			if err := d.Decode(&obj); errors.Is(err, io.EOF) {
				break
			} else if err != nil {
				t.Fatalf("%s: %v", path, err)
			}
			if obj != nil {
				addObject(path, obj)
			}
		}
	}

	// What no example has yet, and the codec once got wrong.
	for _, s := range []struct{ kind, json string }{
		{"Deployment", `{"spec":{"template":{"spec":{"volumes":[{"name":"tmp","emptyDir":{}}],"containers":[{"name":"c","args":[],"env":[{"name":"A","value":""}],"resources":{}}]}}}}`},
		{"Job", `{"spec":{"template":{"spec":{"initContainers":[{}],"tolerations":[]}}},"status":{"conditions":null}}`},
		{"Service", `{"metadata":{"labels":{},"annotations":{"a":""}},"spec":{"ports":[{"port":80,"targetPort":"http"},{"port":81,"targetPort":8081}]}}`},
		{"HorizontalPodAutoscaler", `{"spec":{"metrics":[{"type":"Pods","pods":{"metric":{"name":"m"},"target":{"type":"AverageValue","averageValue":"8"}}}]},"status":{"currentMetrics":[]}}`},
		{"XInferenceService", `{"metadata":{"creationTimestamp":"2026-12-01T10:00:00Z","managedFields":[{"manager":"m","fieldsV1":{"f:spec":{}}}]},"spec":{"traffic":[]}}`},
		{"PersistentVolumeClaim", `{"spec":{"resources":{"requests":{"storage":"40Gi"}}},"status":{"capacity":{"storage":" 4 "}}}`},
	} {
		typ, ok := typeForKind(s.kind)
		if !ok {
			t.Fatalf("no fuzz type %s", s.kind)
		}
		seeds = append(seeds, fuzzSeed{typ: typ, json: []byte(s.json)})
	}

	seen := map[uint8]int{}
	for _, s := range seeds {
		seen[s.typ]++
	}
	var missing []string
	for i, ft := range fuzzTypes {
		if seen[uint8(i)] == 0 {
			missing = append(missing, ft.name)
		}
	}
	if len(missing) > 0 {
		t.Fatalf("the seed corpus has no %s: have the examples moved?", strings.Join(missing, ", "))
	}
	return seeds
}

// TestFuzzSeedsCoverExamples guards the corpus from silently shrinking:
// every golden and every observed file contributes.
func TestFuzzSeedsCoverExamples(t *testing.T) {
	seeds := fuzzSeeds(t)
	if len(seeds) < 500 {
		t.Errorf("the seed corpus has %d objects; the goldens and examples hold more than 500", len(seeds))
	}
}
