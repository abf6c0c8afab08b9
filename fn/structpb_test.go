package fn

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// The codec must agree with apimachinery's converter, which is what the
// SDK's helpers use: these tests hold it to that on every object the
// function renders and every object it observes.

// pruned is the reference the encoder is held to: the apimachinery
// converter's output without nulls and empty objects and lists.
func pruned(t *testing.T, obj runtime.Object) map[string]any {
	t.Helper()
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		t.Fatal(err)
	}
	var prune func(v any) bool
	prune = func(v any) bool {
		switch x := v.(type) {
		case nil:
			return true
		case map[string]any:
			for k, e := range x {
				if prune(e) {
					delete(x, k)
				}
			}
			return len(x) == 0
		case []any:
			for i, e := range x {
				if m, ok := e.(map[string]any); ok {
					prune(m)
				} else if e == nil {
					x[i] = map[string]any{}
				}
			}
			return len(x) == 0
		}
		return false
	}
	prune(m)
	// The converter writes integers as int64; protobuf numbers are float64.
	return mustStruct(t, m).AsMap()
}

func TestEncodeMatchesConverter(t *testing.T) {
	input := compositionInput(t)
	for _, stage := range []string{"pulling", "serving"} {
		for _, xr := range []map[string]any{readYAML(t, "../examples/xr.yaml"), readYAML(t, "../examples/frameworks/fake.yaml")} {
			observed, _ := stageObserved(t, xr, input, stage)
			s, _, err := resolveXR(t, xr, input)
			if err != nil {
				t.Fatal(err)
			}
			c, err := compose(s, newRequest(t, xr, input, observed...).GetObserved().GetResources())
			if err != nil {
				t.Fatal(err)
			}
			for _, r := range c.Resources {
				got, err := encodeStruct(r.Object)
				if err != nil {
					t.Fatal(err)
				}
				if diff := cmp.Diff(pruned(t, r.Object), got.AsMap()); diff != "" {
					t.Errorf("%s/%s: encodeStruct differs from the converter (-converter +codec):\n%s", stage, r.Name, diff)
				}
			}
		}
	}
}

func TestEncodeStruct(t *testing.T) {
	cases := map[string]struct {
		obj  any
		want map[string]any
	}{
		"EmptiesDropped": {
			obj:  &corev1.ConfigMap{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"}, ObjectMeta: metav1.ObjectMeta{Name: "x"}},
			want: map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "x"}},
		},
		"EmptyStringValuesInMapsKept": {
			obj:  &corev1.ConfigMap{Data: map[string]string{"k": ""}},
			want: map[string]any{"data": map[string]any{"k": ""}},
		},
		"ZeroScalarsWithoutOmitemptyKept": {
			obj:  &corev1.ContainerPort{ContainerPort: 0},
			want: map[string]any{"containerPort": float64(0)},
		},
		"SpecialTypes": {
			obj:  &corev1.HTTPGetAction{Port: intstr.FromString("http")},
			want: map[string]any{"port": "http"},
		},
		"IntOrStringNumber": {
			obj:  &corev1.HTTPGetAction{Port: intstr.FromInt32(8080)},
			want: map[string]any{"port": float64(8080)},
		},
		"QuantitiesInMaps": {
			obj:  &corev1.ResourceRequirements{Limits: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("16Gi")}},
			want: map[string]any{"limits": map[string]any{"memory": "16Gi"}},
		},
		"Time": {
			obj:  &metav1.ObjectMeta{CreationTimestamp: metav1.NewTime(time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC))},
			want: map[string]any{"creationTimestamp": "2026-12-01T10:00:00Z"},
		},
		"EmptyDirWithoutLimitIsDropped": {
			// Why every emptyDir the function renders carries a size limit.
			obj:  &corev1.Volume{Name: "v", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}},
			want: map[string]any{"name": "v"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := encodeStruct(tc.obj)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got.AsMap()); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// TestDecodeMatchesConverter decodes every observed fixture both ways.
func TestDecodeMatchesConverter(t *testing.T) {
	for _, stage := range stages {
		for _, o := range readObserved(t, "../examples/observed/"+stage+".yaml") {
			s := mustStruct(t, o.Object)
			var want, got runtime.Object
			switch o.Object["kind"] {
			case "PersistentVolumeClaim":
				want, got = &corev1.PersistentVolumeClaim{}, &corev1.PersistentVolumeClaim{}
			case "Job":
				want, got = &batchv1.Job{}, &batchv1.Job{}
			case "Deployment":
				want, got = &appsv1.Deployment{}, &appsv1.Deployment{}
			case "Service":
				want, got = &corev1.Service{}, &corev1.Service{}
			case "HorizontalPodAutoscaler":
				want, got = &autoscalingv2.HorizontalPodAutoscaler{}, &autoscalingv2.HorizontalPodAutoscaler{}
			default:
				t.Fatalf("unexpected kind %v", o.Object["kind"])
			}
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(s.AsMap(), want); err != nil {
				t.Fatal(err)
			}
			if err := decodeStruct(s, got, ""); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("%s %s: decodeStruct differs from the converter (-converter +codec):\n%s", stage, o.Name, diff)
			}
		}
	}
}

func TestDecodeStructErrors(t *testing.T) {
	cases := map[string]struct {
		obj  map[string]any
		want string
	}{
		"StringForInt":    {obj: map[string]any{"spec": map[string]any{"replicas": "two"}}, want: `spec.replicas: must be an integer, not the string "two"`},
		"Fraction":        {obj: map[string]any{"spec": map[string]any{"replicas": 1.5}}, want: "spec.replicas: must be an integer, not 1.5"},
		"Overflow":        {obj: map[string]any{"spec": map[string]any{"replicas": 1e12}}, want: "spec.replicas: 1e+12 is out of range for a 32-bit integer"},
		"ListForObject":   {obj: map[string]any{"spec": []any{}}, want: "spec: must be an object, not a list"},
		"NumberForString": {obj: map[string]any{"metadata": map[string]any{"name": 3}}, want: "metadata.name: must be a string, not the number 3"},
		"ListIndex": {
			obj:  map[string]any{"spec": map[string]any{"template": map[string]any{"spec": map[string]any{"containers": []any{map[string]any{"name": "a"}, map[string]any{"name": true}}}}}},
			want: "spec.template.spec.containers[1].name: must be a string, not a boolean",
		},
		"BadQuantity": {
			obj:  map[string]any{"spec": map[string]any{"template": map[string]any{"spec": map[string]any{"containers": []any{map[string]any{"resources": map[string]any{"limits": map[string]any{"cpu": "lots"}}}}}}}},
			want: `spec.template.spec.containers[0].resources.limits.cpu: the string "lots" is not a quantity; write it like "500m", "4" or "16Gi"`,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			err := decodeStruct(mustStruct(t, tc.obj), &appsv1.Deployment{}, "")
			got := ""
			if err != nil {
				got = err.Error()
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// TestDecodeSkipsManagedFields: observed objects from a cluster carry large
// managedFields the function never reads.
func TestDecodeSkipsManagedFields(t *testing.T) {
	obj := map[string]any{"metadata": map[string]any{"name": "x", "managedFields": []any{map[string]any{"manager": "crossplane", "fieldsV1": map[string]any{"f:spec": map[string]any{}}}}}}
	d := &appsv1.Deployment{}
	if err := decodeStruct(mustStruct(t, obj), d, ""); err != nil {
		t.Fatal(err)
	}
	if d.Name != "x" || d.ManagedFields != nil {
		t.Errorf("got name %q and managedFields %v, want x and none", d.Name, d.ManagedFields)
	}
}
