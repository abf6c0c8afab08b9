package structcodec

import (
	"errors"
	"math"
	"os"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/protobuf/types/known/structpb"
	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/yaml"
)

// TestEncode checks the encoder on the cases where it once differed from
// the standard path, or easily could: each want is what the standard path
// makes, and the test checks that too, so the wants cannot drift from it.
func TestEncode(t *testing.T) {
	cases := map[string]struct {
		obj  any
		want map[string]any
	}{
		"OmittedFieldsLeftOut": {
			obj:  &corev1.ConfigMap{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"}, ObjectMeta: metav1.ObjectMeta{Name: "x"}},
			want: map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "x"}},
		},
		"EmptyDirKeepsItsSource": {
			// An empty object is kept: the volume is an emptyDir.
			obj:  &corev1.Volume{Name: "v", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}},
			want: map[string]any{"name": "v", "emptyDir": map[string]any{}},
		},
		"EmptyStructWithoutOmitemptyKept": {
			obj:  &corev1.Service{Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeClusterIP}},
			want: map[string]any{"metadata": map[string]any{}, "spec": map[string]any{"type": "ClusterIP"}, "status": map[string]any{"loadBalancer": map[string]any{}}},
		},
		"NilSliceWithoutOmitemptyIsNull": {
			obj:  &autoscalingv2.HorizontalPodAutoscalerStatus{},
			want: map[string]any{"currentMetrics": nil, "desiredReplicas": float64(0)},
		},
		"EmptySliceWithoutOmitemptyIsAnEmptyList": {
			obj:  &autoscalingv2.HorizontalPodAutoscalerStatus{CurrentMetrics: []autoscalingv2.MetricStatus{}},
			want: map[string]any{"currentMetrics": []any{}, "desiredReplicas": float64(0)},
		},
		"EmptyStringValuesInMapsKept": {
			obj:  &corev1.ConfigMap{Data: map[string]string{"k": ""}},
			want: map[string]any{"metadata": map[string]any{}, "data": map[string]any{"k": ""}},
		},
		"EmptyMapWithoutOmitemptyKept": {
			obj:  &struct{ M map[string]string }{M: map[string]string{}},
			want: map[string]any{"M": map[string]any{}},
		},
		"ZeroScalarsWithoutOmitemptyKept": {
			obj:  &corev1.ContainerPort{ContainerPort: 0},
			want: map[string]any{"containerPort": float64(0)},
		},
		"IntOrStringString": {
			obj:  &corev1.HTTPGetAction{Port: intstr.FromString("http")},
			want: map[string]any{"port": "http"},
		},
		"IntOrStringNumber": {
			obj:  &corev1.HTTPGetAction{Port: intstr.FromInt32(8080)},
			want: map[string]any{"port": float64(8080)},
		},
		"IntOrStringMendsUTF8": {
			// As its MarshalJSON does, where a plain string fails.
			obj:  &corev1.HTTPGetAction{Port: intstr.FromString("a\xffb")},
			want: map[string]any{"port": "a\ufffdb"},
		},
		"QuantitiesInMaps": {
			obj:  &corev1.ResourceRequirements{Limits: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("16Gi")}},
			want: map[string]any{"limits": map[string]any{"memory": "16Gi"}},
		},
		"Time": {
			obj:  &metav1.ObjectMeta{CreationTimestamp: metav1.NewTime(time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC))},
			want: map[string]any{"creationTimestamp": "2026-12-01T10:00:00Z"},
		},
		"ZeroTimeWithoutOmitemptyIsNull": {
			obj:  &struct{ T metav1.Time }{},
			want: map[string]any{"T": nil},
		},
		"MicroTime": {
			obj:  &struct{ T, Zero metav1.MicroTime }{T: metav1.NewMicroTime(time.Date(2026, 12, 1, 10, 0, 0, 1000, time.UTC))},
			want: map[string]any{"T": "2026-12-01T10:00:00.000001Z", "Zero": nil},
		},
		"Bytes": {
			obj:  &corev1.Secret{Data: map[string][]byte{"k": []byte("hi"), "empty": {}, "nil": nil}},
			want: map[string]any{"metadata": map[string]any{}, "data": map[string]any{"k": "aGk=", "empty": "", "nil": nil}},
		},
		"EmptyListElementKeepsItsPlace": {
			obj:  &corev1.Container{Name: "c", EnvFrom: []corev1.EnvFromSource{{}, {Prefix: "B_"}}, Resources: corev1.ResourceRequirements{}},
			want: map[string]any{"name": "c", "envFrom": []any{map[string]any{}, map[string]any{"prefix": "B_"}}, "resources": map[string]any{}},
		},
		"NilPointersInListsAndMapsAreNull": {
			obj: &struct {
				L []*int
				M map[string]*int
			}{L: []*int{nil}, M: map[string]*int{"k": nil}},
			want: map[string]any{"L": []any{nil}, "M": map[string]any{"k": nil}},
		},
		"MarshalJSON": {
			// Any type's own MarshalJSON, not only the special cases.
			obj: &struct {
				D metav1.Duration
				R runtime.RawExtension
				P *metav1.Duration
			}{D: metav1.Duration{Duration: 90 * time.Second}, R: runtime.RawExtension{Raw: []byte(`{"a":[1,"b"]}`)}},
			want: map[string]any{"D": "1m30s", "R": map[string]any{"a": []any{float64(1), "b"}}, "P": nil},
		},
		"InlineAndEmbedded": {
			obj: &struct {
				metav1.TypeMeta `json:",inline"`
				Embedded        `json:""`
				*Pointer
				Named Embedded `json:",inline"`
			}{TypeMeta: metav1.TypeMeta{Kind: "K"}, Embedded: Embedded{A: "a"}},
			want: map[string]any{"kind": "K", "a": "a", "Named": map[string]any{"a": ""}},
		},
		"OmitZero": {
			obj: &struct {
				Z, N metav1.Time `json:",omitzero"`
			}{N: metav1.NewTime(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))},
			want: map[string]any{"N": "2026-01-01T00:00:00Z"},
		},
		"NothingIsAnEmptyStruct": {
			obj:  &struct{}{},
			want: map[string]any{},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			std, err := standardStruct(tc.obj)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, std.AsMap()); diff != "" {
				t.Errorf("the standard path is not what the test says (-want +standard):\n%s", diff)
			}
			got, err := Encode(tc.obj)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got.AsMap()); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// Embedded and Pointer are embedded in TestEncode's InlineAndEmbedded.
type (
	Embedded struct {
		A string `json:"a"`
	}
	Pointer struct {
		B string `json:"b"`
	}
)

// TestEncodeErrors: the encoder fails where the standard path fails.
func TestEncodeErrors(t *testing.T) {
	cases := map[string]struct {
		obj  any
		want string
	}{
		"NotAPointer":      {obj: corev1.ConfigMap{}, want: "v1.ConfigMap does not encode to an object"},
		"NilPointer":       {obj: (*corev1.ConfigMap)(nil), want: "*v1.ConfigMap does not encode to an object"},
		"NotAnObject":      {obj: &[]string{"a"}, want: "[]string does not encode to an object"},
		"NestedIntKey":     {obj: &struct{ M map[int]int }{M: map[int]int{1: 1}}, want: "cannot encode map[int]int: keys are not strings"},
		"Unencodable":      {obj: &struct{ C chan int }{C: make(chan int)}, want: "cannot encode chan int: the converter encodes no chan"},
		"Array":            {obj: &struct{ A [1]int }{}, want: "cannot encode [1]int: the converter encodes no array"},
		"InvalidUTF8":      {obj: &corev1.ConfigMap{Data: map[string]string{"k": "a\xff"}}, want: `cannot encode string: "a\xff" is not valid UTF-8`},
		"InvalidUTF8Field": {obj: &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "a\xff"}}, want: `cannot encode string: "a\xff" is not valid UTF-8`},
		"InvalidUTF8Key":   {obj: &corev1.ConfigMap{Data: map[string]string{"\xff": ""}}, want: `cannot encode map[string]string: key "\xff" is not valid UTF-8`},
		"UintOverflow":     {obj: &struct{ U []uint64 }{U: []uint64{math.MaxUint64}}, want: "cannot encode uint64: 18446744073709551615 is out of range for an int64"},
		"MarshalJSONFails": {obj: &struct{ I intstr.IntOrString }{I: intstr.IntOrString{Type: 7}}, want: "cannot encode intstr.IntOrString: impossible IntOrString.Type"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if _, err := standardStruct(tc.obj); err == nil {
				t.Errorf("the standard path encodes %#v; the case is no error case", tc.obj)
			}
			_, err := Encode(tc.obj)
			if diff := cmp.Diff(tc.want, errString(err)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// TestRoundTrip decodes what Encode made of a realistic object and gets
// the object back.
func TestRoundTrip(t *testing.T) {
	for name, obj := range map[string]any{"deployment": readDeployment(t), "job": readJob(t)} {
		t.Run(name, func(t *testing.T) {
			s, err := Encode(obj)
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

// Benchmarks on a Deployment and a Job as the API server returns them. A
// function encodes what it renders and decodes what it observes on every
// call:
//
//	go test ./internal/structcodec -run '^$' -bench . -benchmem
func BenchmarkEncode(b *testing.B) {
	for name, obj := range map[string]any{"deployment": readDeployment(b), "job": readJob(b)} {
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := (&Encoder{}).Struct(obj); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkDecode(b *testing.B) {
	for name, obj := range map[string]any{"deployment": readDeployment(b), "job": readJob(b)} {
		s, err := Encode(obj)
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
