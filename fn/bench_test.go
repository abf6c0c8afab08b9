package fn

import (
	"context"
	"fmt"
	"testing"
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
