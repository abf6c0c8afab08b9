package fn

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/inferno-ai/function-inferno/internal/structcodec"
	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// The codec must agree with apimachinery's converter, which is what the
// SDK's helpers use: these tests hold it to that on every object the
// function renders and every object it observes.

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
