package structcodec

import (
	"errors"
	"os"
	"testing"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/protobuf/types/known/structpb"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/yaml"
)

// TestRoundTrip decodes what the standard path encodes of a realistic
// object and gets the object back.
func TestRoundTrip(t *testing.T) {
	for name, obj := range map[string]any{"deployment": readDeployment(t), "job": readJob(t)} {
		t.Run(name, func(t *testing.T) {
			s, err := encode(obj)
			if err != nil {
				t.Fatal(err)
			}
			var got any
			switch obj.(type) {
			case *appsv1.Deployment:
				got = &appsv1.Deployment{}
			case *batchv1.Job:
				got = &batchv1.Job{}
			}
			if err := Decode(s, got, ""); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(obj, got); diff != "" {
				t.Errorf("(-original +decoded):\n%s", diff)
			}
		})
	}
}

func TestDecodeErrors(t *testing.T) {
	cases := map[string]struct {
		obj    map[string]any
		prefix string
		want   *PathError
	}{
		"StringForInt": {
			obj:  map[string]any{"spec": map[string]any{"replicas": "two"}},
			want: &PathError{Path: "spec.replicas", Msg: `must be an integer, not the string "two"`},
		},
		"Fraction": {
			obj:  map[string]any{"spec": map[string]any{"replicas": 1.5}},
			want: &PathError{Path: "spec.replicas", Msg: "must be an integer, not 1.5"},
		},
		"Overflow": {
			obj:  map[string]any{"spec": map[string]any{"replicas": 1e12}},
			want: &PathError{Path: "spec.replicas", Msg: "1e+12 is out of range for a 32-bit integer"},
		},
		"ListForObject": {
			obj:  map[string]any{"spec": []any{}},
			want: &PathError{Path: "spec", Msg: "must be an object, not a list"},
		},
		"NumberForString": {
			obj:  map[string]any{"metadata": map[string]any{"name": 3}},
			want: &PathError{Path: "metadata.name", Msg: "must be a string, not the number 3"},
		},
		"BoolForString": {
			obj:  map[string]any{"metadata": map[string]any{"labels": map[string]any{"a": "x", "b": false}}},
			want: &PathError{Path: "metadata.labels.b", Msg: "must be a string, not a boolean"},
		},
		"LongStringTruncated": {
			obj:  map[string]any{"spec": map[string]any{"paused": "0123456789012345678901234567890123456789-and-more"}},
			want: &PathError{Path: "spec.paused", Msg: `must be true or false, not the string "0123456789012345678901234567890123456789…"`},
		},
		"ListIndex": {
			obj:  map[string]any{"spec": map[string]any{"template": map[string]any{"spec": map[string]any{"containers": []any{map[string]any{"name": "a"}, map[string]any{"name": true}}}}}},
			want: &PathError{Path: "spec.template.spec.containers[1].name", Msg: "must be a string, not a boolean"},
		},
		"BadQuantity": {
			obj:  map[string]any{"spec": map[string]any{"template": map[string]any{"spec": map[string]any{"containers": []any{map[string]any{"resources": map[string]any{"limits": map[string]any{"cpu": "lots"}}}}}}}},
			want: &PathError{Path: "spec.template.spec.containers[0].resources.limits.cpu", Msg: `the string "lots" is not a quantity; write it like "500m", "4" or "16Gi"`},
		},
		"BadTime": {
			obj:  map[string]any{"metadata": map[string]any{"creationTimestamp": "yesterday"}},
			want: &PathError{Path: "metadata.creationTimestamp", Msg: `the string "yesterday" is not an RFC 3339 timestamp`},
		},
		"Prefixed": {
			obj:    map[string]any{"replicas": "two"},
			prefix: "spec",
			want:   &PathError{Path: "spec.replicas", Msg: `must be an integer, not the string "two"`},
		},
		"Valid": {
			obj: map[string]any{"metadata": map[string]any{"name": "x"}, "spec": map[string]any{"replicas": 2, "unknown": "ignored"}},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			into := &appsv1.Deployment{}
			if tc.prefix != "" {
				// A prefix names where the Struct sits in a larger object.
				err := Decode(mustStruct(t, tc.obj), &into.Spec, tc.prefix)
				checkPathError(t, tc.want, err)
				return
			}
			checkPathError(t, tc.want, Decode(mustStruct(t, tc.obj), into, ""))
		})
	}
}

func checkPathError(t *testing.T, want *PathError, err error) {
	t.Helper()
	var got *PathError
	if err != nil && !errors.As(err, &got) {
		t.Fatalf("got %T %q, want a *PathError", err, err)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if want != nil && err.Error() != want.Path+": "+want.Msg {
		t.Errorf("Error() is %q, want %q", err.Error(), want.Path+": "+want.Msg)
	}
}

func TestDecodeValue(t *testing.T) {
	cases := map[string]struct {
		value *structpb.Value
		into  any
		path  string
		want  any
		err   string
	}{
		"PodTemplate": {
			value: structpb.NewStructValue(mustStruct(t, map[string]any{"metadata": map[string]any{"labels": map[string]any{"app": "x"}}})),
			into:  &corev1.PodTemplateSpec{},
			path:  "spec.template",
			want:  &corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "x"}}},
		},
		"ErrorUnderPath": {
			value: structpb.NewStructValue(mustStruct(t, map[string]any{"spec": map[string]any{"containers": "none"}})),
			into:  &corev1.PodTemplateSpec{},
			path:  "spec.template",
			want:  &corev1.PodTemplateSpec{},
			err:   `spec.template.spec.containers: must be a list, not the string "none"`,
		},
		"ErrorAtTheValue": {
			value: structpb.NewNumberValue(3),
			into:  new(string),
			want:  new(string),
			err:   "must be a string, not the number 3",
		},
		"NullLeavesItAlone": {
			value: structpb.NewNullValue(),
			into:  &[]string{"kept"},
			want:  &[]string{"kept"},
		},
		"IntOrStringNumber": {
			value: structpb.NewNumberValue(8080),
			into:  &intstr.IntOrString{},
			want:  &intstr.IntOrString{IntVal: 8080},
		},
		"Base64": {
			value: structpb.NewStringValue("aGk="),
			into:  &[]byte{},
			want:  &[]byte{'h', 'i'},
		},
		"BadBase64": {
			value: structpb.NewStringValue("!"),
			into:  &[]byte{},
			path:  "data.k",
			want:  &[]byte{},
			err:   "data.k: is not valid base64",
		},
		"NotAPointer": {
			value: structpb.NewStringValue("x"),
			into:  "",
			want:  "",
			err:   "cannot decode into string",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			err := DecodeValue(tc.value, tc.into, tc.path)
			if diff := cmp.Diff(tc.err, errString(err)); diff != "" {
				t.Errorf("error (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.want, tc.into); diff != "" {
				t.Errorf("decoded (-want +got):\n%s", diff)
			}
		})
	}
}

// TestDecodeSkipsManagedFields: objects from a cluster carry large
// managedFields that a function never reads.
func TestDecodeSkipsManagedFields(t *testing.T) {
	obj := map[string]any{"metadata": map[string]any{"name": "x", "managedFields": []any{map[string]any{"manager": "crossplane", "fieldsV1": map[string]any{"f:spec": map[string]any{}}}}}}
	d := &appsv1.Deployment{}
	if err := Decode(mustStruct(t, obj), d, ""); err != nil {
		t.Fatal(err)
	}
	if d.Name != "x" || d.ManagedFields != nil {
		t.Errorf("got name %q and managedFields %v, want x and none", d.Name, d.ManagedFields)
	}
}

// BenchmarkDecode decodes a Deployment and a Job as the API server returns
// them, as a function does with what it observes on every call:
//
//	go test ./internal/structcodec -run '^$' -bench . -benchmem
func BenchmarkDecode(b *testing.B) {
	for name, obj := range map[string]any{"deployment": readDeployment(b), "job": readJob(b)} {
		s, err := encode(obj)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				var into any = &batchv1.Job{}
				if _, ok := obj.(*appsv1.Deployment); ok {
					into = &appsv1.Deployment{}
				}
				if err := Decode(s, into, ""); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func readDeployment(t testing.TB) *appsv1.Deployment {
	d := &appsv1.Deployment{}
	readYAML(t, "testdata/deployment.yaml", d)
	return d
}

func readJob(t testing.TB) *batchv1.Job {
	j := &batchv1.Job{}
	readYAML(t, "testdata/job.yaml", j)
	return j
}

func readYAML(t testing.TB, path string, into any) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.UnmarshalStrict(b, into); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

func mustStruct(t testing.TB, m map[string]any) *structpb.Struct {
	t.Helper()
	s, err := structpb.NewStruct(m)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// encode is the standard path's encoding, which the function uses.
func encode(obj any) (*structpb.Struct, error) {
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		return nil, err
	}
	return structpb.NewStruct(m)
}
