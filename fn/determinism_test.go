package fn

import (
	"bytes"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"github.com/google/go-cmp/cmp"
	"google.golang.org/protobuf/proto"
)

// renders is how often TestDeterministic renders each example.
const renders = 1000

// TestDeterministic renders every example at every stage again and again,
// with the observed objects inserted in a different order each time, and
// requires byte-identical responses: no clock, no randomness, no map order
// in the output.
func TestDeterministic(t *testing.T) {
	input := compositionInput(t)
	examples, err := filepath.Glob("../examples/frameworks/*.yaml")
	if err != nil {
		t.Fatal(err)
	}
	examples = append([]string{"../examples/xr.yaml"}, examples...)
	marshal := proto.MarshalOptions{Deterministic: true}
	rng := rand.New(rand.NewPCG(1, 2)) // The order varies; the test does not.

	for _, path := range examples {
		xr := readYAML(t, path)
		name := strings.TrimSuffix(filepath.Base(path), ".yaml")
		for _, stage := range append([]string{"fresh"}, stages...) {
			var observed []observedObject
			if stage != "fresh" {
				var ok bool
				if observed, ok = stageObserved(t, xr, input, stage); !ok {
					continue
				}
			}
			n := renders / 10
			if stage == "serving" {
				n = renders // the stage with the most objects
			}
			t.Run(name+"/"+stage, func(t *testing.T) {
				req := newRequest(t, xr, input, observed...)
				want, err := marshal.Marshal(run(t, req))
				if err != nil {
					t.Fatal(err)
				}
				names := make([]string, 0, len(req.GetObserved().GetResources()))
				for n := range req.GetObserved().GetResources() {
					names = append(names, n)
				}
				for i := range n {
					// A new request each time, its observed map filled in
					// another order.
					again := proto.Clone(req).(*fnv1.RunFunctionRequest)
					if len(names) > 0 {
						again.Observed.Resources = map[string]*fnv1.Resource{}
						rng.Shuffle(len(names), func(a, b int) { names[a], names[b] = names[b], names[a] })
						for _, n := range names {
							again.Observed.Resources[n] = req.Observed.Resources[n]
						}
					}
					got, err := marshal.Marshal(run(t, again))
					if err != nil {
						t.Fatal(err)
					}
					if !bytes.Equal(want, got) {
						t.Fatalf("render %d differs from the first:\n%s", i, cmp.Diff(string(want), string(got)))
					}
				}
			})
		}
	}
}
