package fn

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/inferno-ai/function-inferno/internal/structcodec"
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
			c, err := compose(s, nil, newRequest(t, xr, input, observed...).GetObserved().GetResources())
			if err != nil {
				t.Fatal(err)
			}
			for _, r := range c.Resources {
				got, err := structcodec.Encode(r.Object)
				if err != nil {
					t.Fatal(err)
				}
				if diff := cmp.Diff(pruned(t, r.Object), got.AsMap()); diff != "" {
					t.Errorf("%s/%s: structcodec.Encode differs from the converter (-converter +codec):\n%s", stage, r.Name, diff)
				}
			}
		}
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
			if err := structcodec.Decode(s, got, ""); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("%s %s: structcodec.Decode differs from the converter (-converter +codec):\n%s", stage, o.Name, diff)
			}
		}
	}
}
