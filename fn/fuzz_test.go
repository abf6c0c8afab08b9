package fn

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"google.golang.org/protobuf/types/known/structpb"
)

// FuzzRunFunction feeds RunFunction mutated XRs, observed composed objects
// and Inputs, as JSON. It must never panic, never return a gRPC error, and
// answer each request either with a Fatal result or with well-formed
// desired objects.
//
//	go test ./fn -run '^$' -fuzz FuzzRunFunction -fuzztime 10m
func FuzzRunFunction(f *testing.F) {
	input := compositionInput(f)
	in, _ := json.Marshal(input)
	for _, path := range []string{"../examples/xr.yaml", "../examples/frameworks/fake.yaml", "../examples/frameworks/tgi.yaml"} {
		xr := readYAML(f, path)
		x, _ := json.Marshal(xr)
		f.Add(x, []byte("{}"), in)
		for _, stage := range stages {
			observed, ok := stageObserved(f, xr, input, stage)
			if !ok {
				continue
			}
			m := map[string]any{}
			for _, o := range observed {
				m[o.Name] = o.Object
			}
			ob, _ := json.Marshal(m)
			f.Add(x, ob, in)
		}
	}
	// Shapes the examples do not have.
	f.Add([]byte(`{"metadata":{"name":"x"},"spec":{"model":{"uri":"ftp://x"}}}`), []byte(`null`), []byte(`{"namespace":"ns","builtinPresets":false}`))
	f.Add([]byte(`{"metadata":{"labels":{"crossplane.io/claim-name":"a","crossplane.io/claim-namespace":"b"}},"spec":{"model":{"uri":"hf://a/b"},"replicas":{"min":-1,"max":1e300},"resources":{"cpu":"1e400","memory":-5}}}`), []byte(`{"deployment":{"status":null},"hpa":{"status":{"conditions":[]}}}`), []byte(`{"pullBackoffLimit":"3"}`))
	f.Add([]byte(`{"spec":{"model":{"uri":"pvc://`+strings.Repeat("a", 300)+`/../x"}}}`), []byte(`{"weights-pvc":[]}`), []byte(`[]`))

	f.Fuzz(func(t *testing.T, xrJSON, observedJSON, inputJSON []byte) {
		req := &fnv1.RunFunctionRequest{Observed: &fnv1.State{}}
		if s := asStruct(xrJSON); s != nil {
			req.Observed.Composite = &fnv1.Resource{Resource: s}
		}
		if s := asStruct(observedJSON); s != nil {
			req.Observed.Resources = map[string]*fnv1.Resource{}
			for name, v := range s.GetFields() {
				req.Observed.Resources[name] = &fnv1.Resource{Resource: v.GetStructValue()}
			}
		}
		req.Input = asStruct(inputJSON)

		rsp, err := (&Function{}).RunFunction(context.Background(), req)
		if err != nil {
			t.Fatalf("RunFunction returned a gRPC error: %v", err)
		}
		if fatalMessage(rsp) != "" {
			return
		}
		for name, r := range rsp.GetDesired().GetResources() {
			fields := r.GetResource().GetFields()
			meta := fields["metadata"].GetStructValue().GetFields()
			for _, k := range []string{"apiVersion", "kind"} {
				if fields[k].GetStringValue() == "" {
					t.Errorf("desired %s has no %s", name, k)
				}
			}
			if meta["name"].GetStringValue() == "" || meta["namespace"].GetStringValue() == "" {
				t.Errorf("desired %s has no name or namespace: %v", name, meta)
			}
			if r.GetReady() == fnv1.Ready_READY_UNSPECIFIED {
				t.Errorf("desired %s has unspecified readiness", name)
			}
		}
		if rsp.GetDesired().GetComposite().GetResource().GetFields()["status"].GetStructValue().GetFields()["phase"].GetStringValue() == "" {
			t.Errorf("a response without a Fatal result sets no status.phase")
		}
	})
}

// asStruct parses JSON into a Struct, or returns nil when it is not a JSON
// object (the fuzzer then exercises a missing part of the request).
func asStruct(b []byte) *structpb.Struct {
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil || m == nil {
		return nil
	}
	s, err := structpb.NewStruct(m)
	if err != nil {
		return nil
	}
	return s
}
