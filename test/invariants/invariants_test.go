// Package invariants checks, black box, what must hold of every
// composition function-inferno renders whatever the claim and whatever the
// platform turns on together: every example at every lifecycle stage under
// every combination of the Input's features, then random claims and
// Inputs. Only fn.Function's RunFunction, the apis/ and input/ types and
// the examples/ files are used.
package invariants

import (
	"encoding/json"
	"flag"
	"fmt"
	"hash/fnv"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"google.golang.org/protobuf/proto"
)

// The features a platform turns on in its Input, one bit each. KEDA's HTTP
// add-on is a bit of its own that only counts with KEDA (the combination
// of the add-on without KEDA is the combination without either).
const (
	featureProgress = 1 << iota
	featureNetworkPolicy
	featureKEDA
	featureKEDAHTTP
	featurePodMonitor
	featureInferencePool
	featureLockedDown
	featureScheduling
	featureCount = iota
)

var featureNames = []string{"progress", "netpol", "keda", "keda-http", "podmonitor", "pool", "locked", "scheduling"}

// features names a combination.
func features(combo int) string {
	var on []string
	for i, n := range featureNames {
		if combo&(1<<i) != 0 {
			on = append(on, n)
		}
	}
	if on == nil {
		return "none"
	}
	return strings.Join(on, "+")
}

// combinations are every combination of features, the add-on only with
// KEDA.
func combinations() []int {
	var out []int
	for c := 0; c < 1<<featureCount; c++ {
		if c&featureKEDAHTTP != 0 && c&featureKEDA == 0 {
			continue
		}
		out = append(out, c)
	}
	return out
}

// lockedDown is examples/locked-down's Input, whose settings the locked
// feature lays over an example's Input: all of them but its Gateway (the
// pool feature's) and whether NetworkPolicies are on (the netpol
// feature's; its namespaces are kept).
func lockedDown() (map[string]any, error) {
	in, err := compositionInput("../../examples/locked-down/composition.yaml")
	if err != nil {
		return nil, err
	}
	delete(in, "traffic")
	delete(in, "apiVersion")
	delete(in, "kind")
	if np, ok := in["networkPolicy"].(map[string]any); ok {
		delete(np, "enabled")
	}
	return in, nil
}

// withFeatures lays a combination of features over an example's Input. A
// feature left off keeps what the example's own Input says.
func withFeatures(base, locked map[string]any, combo int) map[string]any {
	in := deepCopy(base)
	if combo&featureLockedDown != 0 {
		for k, v := range deepCopy(locked) {
			in[k] = v
		}
	}
	if combo&featureProgress != 0 {
		in["pullProgress"] = map[string]any{"enabled": true, "intervalSeconds": 5}
	}
	if combo&featureNetworkPolicy != 0 {
		// Without a metrics namespace unless the locked-down Input names
		// one: platforms forget it.
		setPath(in, true, "networkPolicy", "enabled")
		if nestedString(in, "networkPolicy", "gatewayNamespace") == "" {
			setPath(in, "gateways", "networkPolicy", "gatewayNamespace")
		}
	} else if np, ok := in["networkPolicy"].(map[string]any); ok {
		np["enabled"] = false
	}
	if combo&featureKEDA != 0 {
		setPath(in, true, "keda", "enabled")
		if nestedString(in, "keda", "prometheusAddress") == "" {
			setPath(in, "http://prometheus.monitoring.svc:9090", "keda", "prometheusAddress")
		}
		if combo&featureKEDAHTTP != 0 {
			setPath(in, true, "keda", "httpAddOn", "enabled")
		}
	}
	if combo&featurePodMonitor != 0 {
		setPath(in, true, "monitoring", "podMonitor", "enabled")
	}
	if combo&featureInferencePool != 0 {
		if nested(in, "traffic", "gateway") == nil {
			setPath(in, map[string]any{"name": "inference", "namespace": "gateways", "domain": "models.example.com"}, "traffic", "gateway")
		}
		setPath(in, true, "traffic", "gateway", "inferenceExtension", "enabled")
	}
	if combo&featureScheduling != 0 {
		in["scheduling"] = map[string]any{
			"nodeSelector": map[string]any{"pool": "inference"},
			"tolerations":  []any{map[string]any{"key": "pool", "operator": "Equal", "value": "inference", "effect": "NoSchedule"}},
		}
	}
	return in
}

// example is a claim of examples/ with the Input of its own Composition.
type example struct {
	Name  string
	XR    map[string]any
	Input map[string]any
	// Required is what a service on a cache is given, by stage: the
	// ModelCache claim, its composite and its volume claim; nil for other
	// claims.
	Required map[string][]map[string]any
}

// examples reads every claim of examples/ that a Composition renders: the
// XRs beside each Composition, the frameworks, the ModelCache and a
// service on it.
func examples(t testing.TB) []example {
	t.Helper()
	must := func(m map[string]any, err error) map[string]any {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	plain := must(compositionInput("../../apis/composition.yaml"))
	cacheInput := must(compositionInput("../../apis/modelcache-composition.yaml"))
	var out []example
	add := func(name, xr string, in map[string]any) {
		out = append(out, example{Name: name, XR: must(readYAML("../../examples/" + xr)), Input: in})
	}
	add("xr", "xr.yaml", plain)
	fws, err := filepath.Glob("../../examples/frameworks/*.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range fws {
		add("frameworks/"+strings.TrimSuffix(filepath.Base(f), ".yaml"), "frameworks/"+filepath.Base(f), plain)
	}
	for _, dir := range []string{"canary", "inference-pool", "locked-down", "oci", "scale-to-zero"} {
		comp := "../../examples/" + dir + "/composition.yaml"
		if dir == "canary" {
			comp = "../../examples/" + dir + "/composition-gateway.yaml"
		}
		add(dir, dir+"/xr.yaml", must(compositionInput(comp)))
	}
	add("canary/weight-zero", "canary/weight-zero.yaml", must(compositionInput("../../examples/canary/composition-gateway.yaml")))
	add("progress", "xr.yaml", must(compositionInput("../../examples/progress/composition.yaml")))
	add("lora", "lora/xr.yaml", plain)
	add("multi-node", "multi-node/xr.yaml", must(compositionInput("../../examples/multi-node/composition.yaml")))
	add("namespaced", "namespaced/xr.yaml", plain)
	add("modelcache", "modelcache/xr.yaml", cacheInput)
	add("modelcache/service", "modelcache/service-xr.yaml", plain)
	svc := &out[len(out)-1]
	svc.Required = map[string][]map[string]any{}
	for _, st := range []string{"pulling", "failed", "ready"} {
		docs, err := readYAMLDocs("../../examples/modelcache/required/" + st + ".yaml")
		if err != nil {
			t.Fatal(err)
		}
		svc.Required[st] = docs
	}
	return out
}

// requiredAt is what a service on a cache is given at a stage: pulling
// and failed as named, ready from then on.
func (e example) requiredAt(stage string) []map[string]any {
	if e.Required == nil {
		return nil
	}
	switch stage {
	case stagePulling, stageFailed:
		return e.Required[stage]
	}
	return e.Required["ready"]
}

// cacheClaimAt is the ModelCache claim among what a service on a cache is
// given at a stage; nil for other claims.
func (e example) cacheClaimAt(stage string) map[string]any {
	for _, o := range e.requiredAt(stage) {
		if o["kind"] == "ModelCache" {
			return o
		}
	}
	return nil
}

// failures collects violations across many renders, grouped by check and
// rule, keeping a few instances of each.
type failures struct {
	mu     sync.Mutex
	groups map[string]*failureGroup
}

type failureGroup struct {
	Count    int
	Examples []string
}

const keptInstances = 3

func (f *failures) add(checkName string, v violation, where string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.groups == nil {
		f.groups = map[string]*failureGroup{}
	}
	k := checkName + ": " + v.Rule
	g := f.groups[k]
	if g == nil {
		g = &failureGroup{}
		f.groups[k] = g
	}
	g.Count++
	if len(g.Examples) < keptInstances {
		g.Examples = append(g.Examples, where+": "+v.Detail)
	}
}

// report fails t once per group.
func (f *failures) report(t *testing.T) {
	keys := make([]string, 0, len(f.groups))
	for k := range f.groups {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		g := f.groups[k]
		t.Errorf("%s (%d renders), e.g.:\n    %s", k, g.Count, strings.Join(g.Examples, "\n    "))
	}
}

// checkRenders runs every check on every render of a walk.
func checkRenders(renders []render, xr, input map[string]any, required func(string) map[string]any, where string, f *failures) error {
	seen := map[string]bool{}
	for _, r := range renders {
		if fatal(r.Rsp) != "" {
			continue
		}
		// Renders that desire the same objects as an earlier one of the
		// walk, by resource name and content size, are checked once.
		fp := shape(r.Rsp)
		if seen[fp] {
			continue
		}
		seen[fp] = true
		c, err := newComposition(r.Rsp, xr, input, required(r.Stage))
		if err != nil {
			return err
		}
		for _, ch := range checks {
			vs, err := ch.Run(c)
			if err != nil {
				return fmt.Errorf("%s: %s: %w", where, ch.Name, err)
			}
			for _, v := range vs {
				f.add(ch.Name, v, where+" "+r.Stage)
			}
		}
	}
	return nil
}

// shape identifies what the checks read of a response, cheaply: its
// desired objects' names and encoded sizes, and its conditions.
func shape(rsp *fnv1.RunFunctionResponse) string {
	var b strings.Builder
	names := make([]string, 0, len(rsp.GetDesired().GetResources()))
	for n := range rsp.GetDesired().GetResources() {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(&b, "%s:%d;", n, proto.Size(rsp.GetDesired().GetResources()[n].GetResource()))
	}
	for _, c := range rsp.GetConditions() {
		b.WriteString(c.GetType() + c.GetReason() + c.GetMessage())
	}
	return b.String()
}

// fullMatrix renders every example under every combination even with the
// race detector on.
var fullMatrix = flag.Bool("invariants.full", false, "render every example under every combination of features even under -race")

// matrixShare is the share of the examples each combination renders: all
// of them normally; under the race detector (about eight times slower
// here) one in raceShare, picked by sampled, every render at every stage;
// the default run (no -race) covers every pair, and -invariants.full
// makes a -race run do so too.
func matrixShare() int {
	if raceEnabled && !*fullMatrix {
		return raceShare
	}
	return 1
}

const raceShare = 8

// sampled says the matrix renders example ei under combination ci: always
// but under -race, where a hash of the pair picks one in matrixShare, so
// that each example still meets every feature on and off.
func sampled(ei, ci int) bool {
	share := matrixShare()
	if share == 1 {
		return true
	}
	h := fnv.New32a()
	fmt.Fprintf(h, "%d/%d", ei, ci)
	return h.Sum32()%uint32(share) == 0
}

// TestInvariants renders every example at every stage under every
// combination of features, once each, and checks every invariant.
func TestInvariants(t *testing.T) {
	exs := examples(t)
	locked, err := lockedDown()
	if err != nil {
		t.Fatal(err)
	}
	combos := combinations()
	type job struct {
		ex    example
		combo int
		input map[string]any
	}
	jobs := make(chan job)
	var f failures
	var mu sync.Mutex
	rendered := map[string]int{} // example → combinations it rendered under
	renders := 0
	start := time.Now()
	var wg sync.WaitGroup
	var firstErr error
	for range runtime.GOMAXPROCS(0) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range jobs {
				in := j.input
				where := j.ex.Name + " [" + features(j.combo) + "]"
				rs, err := walkExample(j.ex, in)
				if err == nil {
					err = checkRenders(rs, j.ex.XR, in, j.ex.cacheClaimAt, where, &f)
				}
				mu.Lock()
				if err != nil && firstErr == nil {
					firstErr = fmt.Errorf("%s: %w", where, err)
				}
				renders += len(rs)
				if len(rs) > 1 {
					rendered[j.ex.Name]++
				}
				mu.Unlock()
			}
		}()
	}
	// A combination that gives a claim the Input another gave it (a
	// feature its example's Input has on already, or another example of
	// the same claim) is rendered once.
	seen := map[string]bool{}
	distinct := 0
	for ei, ex := range exs {
		xr, err := json.Marshal(ex.XR)
		if err != nil {
			t.Fatal(err)
		}
		for ci, c := range combos {
			if !sampled(ei, ci) {
				continue
			}
			in := withFeatures(ex.Input, locked, c)
			b, err := json.Marshal(in)
			if err != nil {
				t.Fatal(err)
			}
			if k := string(xr) + string(b); !seen[k] {
				seen[k] = true
				distinct++
				jobs <- job{ex, c, in}
			}
		}
	}
	close(jobs)
	wg.Wait()
	if firstErr != nil {
		t.Fatal(firstErr)
	}
	t.Logf("%d examples × %d combinations (1 in %d under -race): %d distinct claims and Inputs, %d renders in %s", len(exs), len(combos), matrixShare(), distinct, renders, time.Since(start).Round(time.Millisecond))
	// A claim every combination refuses checks nothing.
	for _, ex := range exs {
		if rendered[ex.Name] == 0 {
			t.Errorf("%s is refused under every combination of features", ex.Name)
		}
	}
	f.report(t)
}

// walkExample renders an example under an Input at every stage.
func walkExample(ex example, input map[string]any) ([]render, error) {
	xr, err := toStruct(ex.XR)
	if err != nil {
		return nil, err
	}
	in, err := toStruct(input)
	if err != nil {
		return nil, err
	}
	r := &renderer{xr: xr, input: in}
	if ex.Required != nil {
		required := map[string]map[string]*fnv1.Resources{}
		for _, st := range []string{stageFresh, stagePulling, stageFailed, stageServing} {
			s, err := requiredResources(ex.requiredAt(st))
			if err != nil {
				return nil, err
			}
			required[st] = s
		}
		r.required = func(stage string) map[string]*fnv1.Resources {
			if s, ok := required[stage]; ok {
				return s
			}
			return required[stageServing]
		}
	}
	return walk(r)
}
