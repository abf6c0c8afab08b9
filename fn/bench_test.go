package fn

import (
	"context"
	"fmt"
	"testing"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"google.golang.org/protobuf/proto"
)

// Benchmarks of RunFunction in-process, one per lifecycle stage. Crossplane
// calls the function on every reconcile of every claim, so these bound how
// many InferenceServices one control plane carries.
//
//	go test ./fn -run '^$' -bench . -benchmem
func BenchmarkRunFunction(b *testing.B) {
	input := compositionInput(b)
	xr := readYAML(b, "../examples/xr.yaml")

	large := readYAML(b, "../examples/xr.yaml")
	var env []any
	var args []any
	for i := range 100 {
		env = append(env, map[string]any{"name": fmt.Sprintf("EXTRA_%03d", i), "value": fmt.Sprintf("value-%d", i)})
		args = append(args, fmt.Sprintf("--flag-%03d=%d", i, i))
	}
	setPath(large, map[string]any{"env": env, "args": args}, "spec", "serve")

	for _, bc := range []struct {
		name     string
		xr       map[string]any
		observed string
	}{
		{name: "fresh", xr: xr},
		{name: "pulling", xr: xr, observed: "pulling"},
		{name: "serving", xr: xr, observed: "serving"},
		{name: "large-serving", xr: large, observed: "serving"},
	} {
		b.Run(bc.name, func(b *testing.B) {
			var observed []observedObject
			if bc.observed != "" {
				observed = readObserved(b, "../examples/observed/"+bc.observed+".yaml")
			}
			req := newRequest(b, bc.xr, input, observed...)
			f := &Function{}
			ctx := context.Background()
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				rsp, err := f.RunFunction(ctx, req)
				if err != nil || fatalMessage(rsp) != "" {
					b.Fatalf("err %v, fatal %q", err, fatalMessage(rsp))
				}
			}
		})
	}
}

// BenchmarkWire measures what the protobuf encoding of a serving-stage
// call costs outside the function: the server decodes the request and
// encodes the response, and the client decodes the response. The floor
// function pays the first and almost nothing for the rest, which is what
// separates the two in `make bench`'s gRPC measurements.
func BenchmarkWire(b *testing.B) {
	req := newRequest(b, readYAML(b, "../examples/xr.yaml"), compositionInput(b), readObserved(b, "../examples/observed/serving.yaml")...)
	rsp := run(b, req)
	reqBytes, err := proto.Marshal(req)
	if err != nil {
		b.Fatal(err)
	}
	rspBytes, err := proto.Marshal(rsp)
	if err != nil {
		b.Fatal(err)
	}
	b.Logf("request %d bytes, response %d bytes", len(reqBytes), len(rspBytes))
	b.Run("unmarshal-request", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if err := proto.Unmarshal(reqBytes, &fnv1.RunFunctionRequest{}); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("marshal-response", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := proto.Marshal(rsp); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("unmarshal-response", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if err := proto.Unmarshal(rspBytes, &fnv1.RunFunctionResponse{}); err != nil {
				b.Fatal(err)
			}
		}
	})
}
