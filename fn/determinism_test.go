package fn

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"github.com/google/go-cmp/cmp"
	"google.golang.org/protobuf/proto"
)

// variants is how many perturbed requests TestDeterministic renders per
// example request.
const variants = 16

// exampleCase is one request of the examples, as the golden tests render
// it: an XR, the Composition's Input, the observed composed resources and,
// for a service on a ModelCache, the ModelCache claims Crossplane fetched.
type exampleCase struct {
	name     string
	xr       map[string]any
	input    map[string]any
	observed []observedObject
	// required are the fetched ModelCache claims; nil with resolved false
	// when nothing was required.
	required []map[string]any
	resolved bool
}

// exampleCases are every example at every stage the golden tests render:
// the claim and each framework, the namespaced composite, the canary (at
// rest and in the middle of a shift and a promotion), the LoRA adapters,
// the ModelCache and a service on it, the locked-down Input, and scale to
// zero.
func exampleCases(t testing.TB) []exampleCase {
	t.Helper()
	input := compositionInput(t)
	var out []exampleCase
	examples, err := filepath.Glob("../examples/frameworks/*.yaml")
	if err != nil {
		t.Fatal(err)
	}
	examples = append([]string{"../examples/xr.yaml", namespacedXR}, examples...)
	for _, path := range examples {
		xr := readYAML(t, path)
		name := strings.TrimSuffix(filepath.Base(path), ".yaml")
		if path == namespacedXR {
			name = "namespaced"
		}
		out = append(out, exampleCase{name: name + "/fresh", xr: xr, input: input})
		for _, stage := range stages {
			observed, ok := stageObserved(t, xr, input, stage)
			if !ok {
				continue
			}
			out = append(out, exampleCase{name: name + "/" + stage, xr: xr, input: input, observed: observed})
		}
	}

	out = append(out, exampleCase{name: "canary/fresh", xr: canaryXR(t), input: input})
	for _, st := range canaryStages() {
		fixture := filepath.Join("..", "examples", "canary", "observed", st.name+".yaml")
		out = append(out, exampleCase{name: "canary/" + st.name, xr: st.xr(t), input: st.input(t), observed: readObserved(t, fixture)})
	}

	for _, tr := range canaryTransitions() {
		out = append(out, exampleCase{name: "canary/" + tr.name, xr: tr.xr(t), input: tr.input(t), observed: readObserved(t, tr.observed)})
	}

	out = append(out, exampleCase{name: "lora/fresh", xr: loraXR(t), input: input})
	for _, st := range loraStages {
		fixture := filepath.Join("..", "examples", "lora", "observed", st.name+".yaml")
		out = append(out, exampleCase{name: "lora/" + st.name, xr: loraXR(t), input: input, observed: readObserved(t, fixture)})
	}
	out = append(out, exampleCase{name: "lora/added", xr: loraAddedXR(t), input: input, observed: readObserved(t, filepath.Join("..", "examples", "lora", "observed", "serving.yaml"))})

	cache, svc := readYAML(t, cacheXRPath), readYAML(t, onCacheXRPath)
	out = append(out,
		exampleCase{name: "modelcache/fresh", xr: cache, input: input},
		exampleCase{name: "modelcache-service/missing", xr: svc, input: input, resolved: true},
		exampleCase{name: "modelcache-service/unresolved", xr: svc, input: input},
	)
	for _, st := range cacheStages {
		fixture := filepath.Join("..", "examples", "modelcache", "observed", st.name+".yaml")
		out = append(out, exampleCase{name: "modelcache/" + st.name, xr: cache, input: input, observed: readObserved(t, fixture)})
		claim := readYAML(t, filepath.Join("..", "examples", "modelcache", "required", st.name+".yaml"))
		var start []observedObject
		if st.name == "ready" {
			_, start = settle(t, svc, input, world{}, nil, claim)
		}
		out = append(out, exampleCase{name: "modelcache-service/" + st.name, xr: svc, input: input, observed: start, required: []map[string]any{claim}, resolved: true})
	}

	locked := lockedDownInput(t)
	lxr := readYAML(t, filepath.Join(lockedDownDir, "xr.yaml"))
	out = append(out,
		exampleCase{name: "locked-down/fresh", xr: lxr, input: locked},
		exampleCase{name: "locked-down/serving", xr: lxr, input: locked, observed: readObserved(t, filepath.Join(lockedDownDir, "observed", "serving.yaml"))},
		exampleCase{name: "locked-down/refused", xr: readYAML(t, filepath.Join(lockedDownDir, "refused.yaml")), input: locked},
	)

	keda := exampleInput(t, filepath.Join(scaleToZeroDir, "composition.yaml"))
	zxr := readYAML(t, filepath.Join(scaleToZeroDir, "xr.yaml"))
	out = append(out,
		exampleCase{name: "scale-to-zero/fresh", xr: zxr, input: keda},
		exampleCase{name: "scale-to-zero/serving", xr: zxr, input: keda, observed: readObserved(t, filepath.Join(scaleToZeroDir, "observed", "serving.yaml"))},
		exampleCase{name: "scale-to-zero/idle", xr: zxr, input: keda, observed: readObserved(t, filepath.Join(scaleToZeroDir, "observed", "idle.yaml"))},
		exampleCase{name: "scale-to-zero/refused", xr: zxr, input: input},
	)
	return out
}

// request builds the case's request, each object passed through vary
// first (nil for none).
func (c exampleCase) request(t testing.TB, vary func(map[string]any) map[string]any) *fnv1.RunFunctionRequest {
	t.Helper()
	if vary == nil {
		vary = func(m map[string]any) map[string]any { return m }
	}
	observed := make([]observedObject, len(c.observed))
	for i, o := range c.observed {
		observed[i] = observedObject{Name: o.Name, Object: vary(o.Object)}
	}
	req := newRequest(t, vary(c.xr), c.input, observed...)
	if c.resolved {
		required := make([]map[string]any, len(c.required))
		for i, r := range c.required {
			required[i] = vary(r)
		}
		req = withRequired(t, req, required...)
	}
	return req
}

// TestDeterministic renders every example at every stage again and again
// and requires byte-identical responses, however the request varies in
// what carries no meaning:
//   - the order of the conditions of every observed object (Job,
//     Deployment, autoscaler, the composite and the ModelCache claim), of
//     an HTTPRoute's parents and a ModelCache's revisions: controllers
//     write them in whatever order they like;
//   - the metadata the API server adds and changes on every write
//     (resourceVersion, uid, creationTimestamp, managedFields): a status
//     update of an unchanged claim must not change what the function
//     returns, or every reconcile would write again;
//   - the order in which the request's map of observed resources is
//     filled.
//
// No clock, no randomness, no map order and nothing the API server
// rewrites may reach the output.
func TestDeterministic(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2)) // The requests vary; the test does not.
	for _, c := range exampleCases(t) {
		t.Run(c.name, func(t *testing.T) {
			want := marshalResponse(t, run(t, c.request(t, nil)))
			for i := range variants {
				req := c.request(t, func(m map[string]any) map[string]any { return perturbed(rng, m, i) })
				refill(rng, req)
				if got := marshalResponse(t, run(t, req)); !bytes.Equal(want, got) {
					t.Fatalf("variant %d renders differently (-first +variant):\n%s", i, cmp.Diff(string(want), string(got)))
				}
			}
		})
	}
}

// TestPerturbedChangesRequests guards TestDeterministic against varying
// nothing: the perturbed requests differ from the originals.
func TestPerturbedChangesRequests(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	changed := 0
	for _, c := range exampleCases(t) {
		if len(c.observed) == 0 {
			continue
		}
		a := c.request(t, nil)
		b := c.request(t, func(m map[string]any) map[string]any { return perturbed(rng, m, 1) })
		if !proto.Equal(a, b) {
			changed++
		} else {
			t.Errorf("%s: the perturbed request equals the original", c.name)
		}
	}
	if changed == 0 {
		t.Fatal("no request was perturbed")
	}
}

func marshalResponse(t testing.TB, rsp *fnv1.RunFunctionResponse) []byte {
	t.Helper()
	// Deterministic marshalling sorts map keys.
	b, err := proto.MarshalOptions{Deterministic: true}.Marshal(rsp)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// perturbed is a deep copy of obj with the lists that carry no order
// shuffled and the API server's metadata set to values of variant i.
func perturbed(rng *rand.Rand, obj map[string]any, i int) map[string]any {
	out := shuffled(rng, obj, "").(map[string]any)
	meta, _ := out["metadata"].(map[string]any)
	if meta == nil {
		meta = map[string]any{}
		out["metadata"] = meta
	}
	meta["resourceVersion"] = fmt.Sprint(1000 + i)
	meta["uid"] = fmt.Sprintf("00000000-0000-4000-8000-%012d", i)
	meta["creationTimestamp"] = fmt.Sprintf("2026-12-01T10:%02d:00Z", i%60)
	meta["managedFields"] = []any{map[string]any{
		"manager": "crossplane", "operation": "Apply", "apiVersion": "v1",
		"time": fmt.Sprintf("2026-12-01T11:%02d:00Z", i%60), "fieldsType": "FieldsV1",
		"fieldsV1": map[string]any{fmt.Sprintf("f:v%d", i): map[string]any{}},
	}}
	return out
}

// unordered are the lists whose order carries no meaning.
var unordered = map[string]bool{"conditions": true, "parents": true, "revisions": true}

// shuffled deep-copies v, shuffling every list held under a key in
// unordered (a status's revisions, not a spec's, which the user orders).
func shuffled(rng *rand.Rand, v any, path string) any {
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = shuffled(rng, e, path+"."+k)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = shuffled(rng, e, path)
		}
		key := path[strings.LastIndex(path, ".")+1:]
		if unordered[key] && (key != "revisions" || strings.HasPrefix(path, ".status")) {
			rng.Shuffle(len(out), func(a, b int) { out[a], out[b] = out[b], out[a] })
		}
		return out
	}
	return v
}

// refill fills the request's map of observed resources again, in another
// order.
func refill(rng *rand.Rand, req *fnv1.RunFunctionRequest) {
	res := req.GetObserved().GetResources()
	if len(res) == 0 {
		return
	}
	names := make([]string, 0, len(res))
	for n := range res {
		names = append(names, n)
	}
	rng.Shuffle(len(names), func(a, b int) { names[a], names[b] = names[b], names[a] })
	again := make(map[string]*fnv1.Resource, len(names))
	for _, n := range names {
		again[n] = res[n]
	}
	req.Observed.Resources = again
}
