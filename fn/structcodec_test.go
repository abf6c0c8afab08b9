package fn

import (
	"bytes"
	"testing"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"github.com/google/go-cmp/cmp"
	"github.com/inferno-ai/function-inferno/internal/resolve"
	"github.com/inferno-ai/function-inferno/internal/structcodec"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/testing/protocmp"
	"google.golang.org/protobuf/types/known/structpb"
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

// TestEncodeMatchesConverter encodes every object of every example at
// every stage (every composed kind, the foreign ones included, and the
// status) both ways: the encoder must write what the standard path
// writes, byte for byte, and with Desired the same less an empty
// top-level status.
func TestEncodeMatchesConverter(t *testing.T) {
	deterministic := proto.MarshalOptions{Deterministic: true}
	same := func(t *testing.T, what string, want, got *structpb.Struct) {
		t.Helper()
		wb, err := deterministic.Marshal(want)
		if err != nil {
			t.Fatal(err)
		}
		gb, err := deterministic.Marshal(got)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(wb, gb) {
			t.Errorf("%s: the encoder differs from the standard path (-standard +encoder):\n%s", what, cmp.Diff(want, got, protocmp.Transform()))
		}
	}
	kinds := map[string]bool{}
	for _, c := range exampleCases(t) {
		t.Run(c.name, func(t *testing.T) {
			req := c.request(t, nil)
			in, err := resolve.DecodeInput(req.GetInput())
			if err != nil {
				t.Fatal(err)
			}
			rsp := &fnv1.RunFunctionResponse{}
			var comp composition
			if isModelCache(req.GetObserved().GetComposite().GetResource()) {
				comp, _, err = renderModelCache(req, rsp, in)
			} else {
				comp, _, err = renderInferenceService(req, rsp, in)
			}
			if err != nil {
				return // a refusal: nothing to encode
			}
			objects := []any{&comp.Report.Status}
			for _, r := range comp.Resources {
				objects = append(objects, r.Object)
			}
			for i, obj := range objects {
				m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
				if err != nil {
					t.Fatal(err)
				}
				want, err := structpb.NewStruct(m)
				if err != nil {
					t.Fatal(err)
				}
				got, err := (&structcodec.Encoder{}).Struct(obj)
				if err != nil {
					t.Fatal(err)
				}
				kind := want.GetFields()["kind"].GetStringValue()
				kinds[kind] = true
				same(t, kind, want, got)
				if i == 0 {
					continue // the status, which is not a desired object
				}
				if st := want.GetFields()["status"].GetStructValue(); st != nil && len(st.GetFields()) == 0 {
					delete(want.Fields, "status")
				}
				desired, err := (&structcodec.Encoder{Desired: true}).Struct(obj)
				if err != nil {
					t.Fatal(err)
				}
				same(t, kind+" (desired)", want, desired)
			}
		})
	}
	if len(kinds) < 10 {
		t.Errorf("the examples rendered only the kinds %v", kinds)
	}
}
