package fn

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"github.com/google/go-cmp/cmp"
	"github.com/inferno-ai/function-inferno/internal/reason"
	"github.com/inferno-ai/function-inferno/internal/render"
	"github.com/inferno-ai/function-inferno/internal/resolve"
	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/intstr"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
)

// The canary example and its weights.
const (
	canaryV1URI = "hf://meta-llama/Llama-3.1-8B-Instruct"
	canaryV2URI = "hf://meta-llama/Llama-3.2-3B-Instruct"
)

// world is how the cluster's controllers answer the objects a call
// desires: which pulls fail, whether the servers come up, whether a
// gateway controller accepts routes.
type world struct {
	FailPull    map[string]bool // by model URI
	PullRunning bool            // pull Jobs never finish
	NotReady    map[string]bool // Deployment names whose servers never get ready
	RouteState  string          // "" (no gateway controller), "accepted" or "rejected"
	PoolState   string          // the same, of InferencePools
}

// settle walks a claim to where the world lets it go: each call observes
// what the previous one desired, with the status the world gives it, until
// the desired objects stop changing. It starts from start (may be nil).
//
// required, if any, are the ModelCache claims Crossplane fetched for the
// function's requirement.
func settle(t testing.TB, xr, input map[string]any, w world, start []observedObject, required ...map[string]any) (*fnv1.RunFunctionResponse, []observedObject) {
	t.Helper()
	obs := start
	for range 8 {
		req := newRequest(t, xr, input, obs...)
		if required != nil {
			req = withRequired(t, req, required...)
		}
		rsp := run(t, req)
		if msg := fatalMessage(rsp); msg != "" {
			t.Fatalf("fatal: %s", msg)
		}
		next := observeAll(t, rsp, w)
		if slices.Equal(namesOf(obs), namesOf(next)) && cmp.Equal(obs, next) {
			return rsp, obs
		}
		obs = next
	}
	t.Fatal("the composition did not settle in 8 calls")
	return nil, nil
}

func namesOf(obs []observedObject) []string {
	var n []string
	for _, o := range obs {
		n = append(n, o.Name)
	}
	return n
}

// observeAll observes every desired object of rsp with the world's status.
func observeAll(t testing.TB, rsp *fnv1.RunFunctionResponse, w world) []observedObject {
	t.Helper()
	var out []observedObject
	for _, name := range desiredNames(rsp) {
		obj := rsp.GetDesired().GetResources()[name].GetResource().AsMap()
		kind, _ := obj["kind"].(string)
		var status map[string]any
		switch kind {
		case "PersistentVolumeClaim":
			status = boundPVC()
		case "Job":
			uri, _ := nested(obj, "metadata", "annotations", resolve.AnnotationModelURI)
			switch {
			case w.FailPull[uri.(string)]:
				status = jobFailedStatus()
			case w.PullRunning:
				status = jobRunningStatus()
			default:
				status = jobCompleteStatus()
			}
		case "Deployment":
			n := 1
			if r, ok := nestedInt(obj, "spec", "replicas"); ok {
				n = r
			}
			ready := n
			dn, _ := nested(obj, "metadata", "name")
			if w.NotReady[dn.(string)] {
				ready = 0
			}
			status = deploymentStatus(n, ready)
			if n == 0 {
				// No servers wanted: the controller reports the minimum available.
				status["conditions"] = []any{map[string]any{"type": "Available", "status": "True"}}
			}
		case "Service":
			status = map[string]any{}
		case "HorizontalPodAutoscaler":
			status = map[string]any{"conditions": []any{jobCondition("AbleToScale"), jobCondition("ScalingActive")}}
		case "HTTPRoute":
			status = routeStatus(obj, w.RouteState)
		case "InferencePool":
			status = poolStatus(w.PoolState)
		}
		o := observedFrom(t, rsp, name, status)
		if kind == "Deployment" {
			setPath(o.Object, 1, "metadata", "generation")
			if _, ok := nested(o.Object, "spec", "replicas"); !ok {
				// The API server defaults it; an autoscaler then sets it to its floor.
				setPath(o.Object, hpaFloor(rsp, obj), "spec", "replicas")
				st := deploymentStatus(hpaFloor(rsp, obj), hpaFloor(rsp, obj))
				o.Object["status"] = st
			}
		}
		out = append(out, o)
	}
	return out
}

// hpaFloor is the minReplicas of the desired autoscaler of a Deployment.
func hpaFloor(rsp *fnv1.RunFunctionResponse, deployment map[string]any) int {
	name, _ := nested(deployment, "metadata", "name")
	for _, r := range rsp.GetDesired().GetResources() {
		m := r.GetResource().AsMap()
		if m["kind"] != "HorizontalPodAutoscaler" {
			continue
		}
		if target, _ := nested(m, "spec", "scaleTargetRef", "name"); target == name {
			n, _ := nestedInt(m, "spec", "minReplicas")
			return n
		}
	}
	return 1
}

func routeStatus(route map[string]any, state string) map[string]any {
	if state == "" {
		return map[string]any{"parents": []any{}}
	}
	refs, _ := nested(route, "spec", "parentRefs")
	parent := refs.([]any)[0]
	accepted := map[string]any{"type": "Accepted", "status": "True", "reason": "Accepted", "message": "", "lastTransitionTime": "2026-12-01T10:00:00Z"}
	resolved := map[string]any{"type": "ResolvedRefs", "status": "True", "reason": "ResolvedRefs", "message": "", "lastTransitionTime": "2026-12-01T10:00:00Z"}
	if state == "rejected" {
		accepted = map[string]any{"type": "Accepted", "status": "False", "reason": "NotAllowedByListeners", "message": "no listener allows routes from namespace team-a", "lastTransitionTime": "2026-12-01T10:00:00Z"}
	}
	return map[string]any{"parents": []any{map[string]any{
		"parentRef": parent, "controllerName": "example.com/gateway-controller",
		"conditions": []any{accepted, resolved},
	}}}
}

// gatewayInput is the Input of examples/canary/composition-gateway.yaml.
func gatewayInput(t testing.TB) map[string]any {
	t.Helper()
	comp := readYAML(t, "../examples/canary/composition-gateway.yaml")
	steps, _ := nested(comp, "spec", "pipeline")
	in, _ := steps.([]any)[0].(map[string]any)["input"].(map[string]any)
	return in
}

// canaryStage is one state of the canary example, rendered to a golden
// file and, for the render tests, to an observed-resources fixture.
type canaryStage struct {
	name    string
	example string // the XR's path, for the fixture's header
	xr      func(t testing.TB) map[string]any
	input   func(t testing.TB) map[string]any
	world   world
}

func canaryXR(t testing.TB) map[string]any { return readYAML(t, "../examples/canary/xr.yaml") }

func canaryStages() []canaryStage {
	plain := func(t testing.TB) map[string]any { return compositionInput(t) }
	return []canaryStage{
		{name: "serving", example: "examples/canary/xr.yaml", xr: canaryXR, input: plain},
		{name: "canary-failed", example: "examples/canary/xr.yaml", xr: canaryXR, input: plain, world: world{FailPull: map[string]bool{canaryV2URI: true}}},
		{name: "route", example: "examples/canary/xr.yaml", xr: canaryXR, input: gatewayInput, world: world{RouteState: "accepted"}},
		{name: "weight-zero", example: "examples/canary/weight-zero.yaml", xr: func(t testing.TB) map[string]any { return readYAML(t, "../examples/canary/weight-zero.yaml") }, input: plain},
	}
}

// TestCanaryGolden renders the canary example fresh and at each stage and
// compares the responses with fn/testdata/golden/canary-*.yaml. With
// -update it rewrites them and examples/canary/observed/.
func TestCanaryGolden(t *testing.T) {
	t.Run("fresh", func(t *testing.T) {
		compareGolden(t, "canary-fresh", run(t, newRequest(t, canaryXR(t), compositionInput(t))))
	})
	for _, st := range canaryStages() {
		t.Run(st.name, func(t *testing.T) {
			xr, in := st.xr(t), st.input(t)
			_, obs := settle(t, xr, in, st.world, nil)
			fixture := filepath.Join("..", "examples", "canary", "observed", st.name+".yaml")
			if *update {
				writeObserved(t, fixture, st.example, st.name, obs)
			}
			compareGolden(t, "canary-"+st.name, run(t, newRequest(t, xr, in, readObserved(t, fixture)...)))
		})
	}
	for _, tr := range canaryTransitions() {
		t.Run(tr.name, func(t *testing.T) {
			compareGolden(t, "canary-"+tr.name, run(t, newRequest(t, tr.xr(t), tr.input(t), readObserved(t, tr.observed)...)))
		})
	}
}

// canaryTransition is the first call of a change to the canary example at
// rest: a spec edited over a stage's observed objects.
type canaryTransition struct {
	name     string
	xr       func(t testing.TB) map[string]any
	input    func(t testing.TB) map[string]any
	observed string // the stage's fixture
}

func canaryTransitions() []canaryTransition {
	plain := func(t testing.TB) map[string]any { return compositionInput(t) }
	example := func(name string) func(t testing.TB) map[string]any {
		return func(t testing.TB) map[string]any { return readYAML(t, "../examples/canary/"+name) }
	}
	fixture := func(stage string) string { return filepath.Join("..", "examples", "canary", "observed", stage+".yaml") }
	return []canaryTransition{
		{name: "shifting", xr: example("shifted.yaml"), input: plain, observed: fixture("serving")},
		{name: "promoting", xr: example("promoted.yaml"), input: plain, observed: fixture("serving")},
		{name: "promoting-route", xr: example("promoted.yaml"), input: gatewayInput, observed: fixture("route")},
	}
}

// TestCanaryObjects checks what a 90/10 split composes once both versions
// serve: one pull Job, Deployment and Service per version, the primary
// under today's names, and the Service <name> selecting every version's
// servers but no pull pods.
func TestCanaryObjects(t *testing.T) {
	rsp, _ := settle(t, canaryXR(t), nil, world{}, nil)
	want := []string{"deployment", "deployment-2", "pull-job-*", "pull-job-*", "service", "service-1", "service-2", "weights-pvc"}
	var got []string
	for _, n := range desiredNames(rsp) {
		if strings.HasPrefix(n, render.ResourceJobPrefix) {
			n = "pull-job-*"
		}
		got = append(got, n)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("desired resources (-want +got):\n%s", diff)
	}
	for _, n := range desiredNames(rsp) {
		if readiness(rsp, n) != fnv1.Ready_READY_TRUE {
			t.Errorf("%s is not ready once everything serves", n)
		}
	}

	primary := desiredObject[appsv1.Deployment](t, rsp, "deployment")
	canary := desiredObject[appsv1.Deployment](t, rsp, "deployment-2")
	if primary.Name != "llama" || canary.Name != "llama-2" {
		t.Errorf("Deployments are named %q and %q, want llama and llama-2", primary.Name, canary.Name)
	}
	// 4 servers at 90/10: 3 and 1 (largest remainder, at least one for a
	// weight above 0), 4 in all.
	if *primary.Spec.Replicas != 3 || *canary.Spec.Replicas != 1 {
		t.Errorf("replicas %d/%d, want 3/1", *primary.Spec.Replicas, *canary.Spec.Replicas)
	}
	if got := envOf(canary, resolve.EnvModelVersion); got != "2" {
		t.Errorf("canary MODEL_VERSION %q, want 2", got)
	}
	if got := envOf(canary, resolve.EnvModelName); got != "llama" {
		t.Errorf("canary MODEL_NAME %q, want the claim's name llama: clients ask every version for the same model", got)
	}
	if w, _ := weightsOf(canary); w.SubPath == "" || w.SubPath == mustWeights(t, primary).SubPath {
		t.Errorf("canary mounts %q, primary %q: each version needs its own weights directory", w.SubPath, mustWeights(t, primary).SubPath)
	}

	main := desiredObject[corev1.Service](t, rsp, "service")
	v1 := desiredObject[corev1.Service](t, rsp, "service-1")
	v2 := desiredObject[corev1.Service](t, rsp, "service-2")
	if v1.Name != "llama-1" || v2.Name != "llama-2" {
		t.Errorf("version Services %q and %q, want llama-1 and llama-2", v1.Name, v2.Name)
	}
	matches := func(sel map[string]string, l map[string]string) bool {
		return labels.SelectorFromSet(sel).Matches(labels.Set(l))
	}
	pods := map[string]map[string]string{
		"primary": primary.Spec.Template.Labels,
		"canary":  canary.Spec.Template.Labels,
	}
	for _, n := range desiredNames(rsp) {
		if strings.HasPrefix(n, render.ResourceJobPrefix) {
			pods["puller "+n] = desiredObject[batchv1.Job](t, rsp, n).Spec.Template.Labels
		}
	}
	for _, tc := range []struct {
		what     string
		selector map[string]string
		pods     []string // the pods it must select; all others it must not
	}{
		{"Service llama", main.Spec.Selector, []string{"primary", "canary"}},
		{"Service llama-1", v1.Spec.Selector, []string{"primary"}},
		{"Service llama-2", v2.Spec.Selector, []string{"canary"}},
		{"Deployment llama", primary.Spec.Selector.MatchLabels, []string{"primary"}},
		{"Deployment llama-2", canary.Spec.Selector.MatchLabels, []string{"canary"}},
	} {
		for pod, l := range pods {
			if want := slices.Contains(tc.pods, pod); matches(tc.selector, l) != want {
				t.Errorf("%s selects the %s pods: %v, want %v (selector %v, labels %v)", tc.what, pod, !want, want, tc.selector, l)
			}
		}
	}
}

func envOf(d *appsv1.Deployment, name string) string {
	for _, e := range d.Spec.Template.Spec.Containers[0].Env {
		if e.Name == name {
			return e.Value
		}
	}
	return ""
}

func mustWeights(t testing.TB, d *appsv1.Deployment) render.Weights {
	t.Helper()
	w, ok := weightsOf(d)
	if !ok {
		t.Fatalf("Deployment %s records no weights", d.Name)
	}
	return w
}

// TestCanaryLeavesThePrimaryAlone: adding a canary to a serving claim, and
// removing it again, never changes the primary's pod template or
// selector, so its servers never restart; only its count follows the
// weights (4 of 4 servers alone, 3 of 4 beside a canary of weight 10),
// and it is the same Deployment again once the canary left.
func TestCanaryLeavesThePrimaryAlone(t *testing.T) {
	plain := canaryXR(t)
	delete(plain["spec"].(map[string]any), "traffic")
	before, obs := settle(t, plain, nil, world{}, nil)
	withCanary, obs2 := settle(t, canaryXR(t), nil, world{}, obs)
	after, _ := settle(t, plain, nil, world{}, obs2)
	d0 := desiredObject[appsv1.Deployment](t, before, render.ResourceDeployment)
	for name, rsp := range map[string]*fnv1.RunFunctionResponse{"with the canary": withCanary, "after removing it": after} {
		d := desiredObject[appsv1.Deployment](t, rsp, render.ResourceDeployment)
		if diff := cmp.Diff(d0.Spec.Template, d.Spec.Template); diff != "" {
			t.Errorf("the primary's pod template changed %s (-before +after):\n%s", name, diff)
		}
		if diff := cmp.Diff(d0.Spec.Selector, d.Spec.Selector); diff != "" {
			t.Errorf("the primary's selector changed %s (-before +after):\n%s", name, diff)
		}
	}
	if got := *desiredObject[appsv1.Deployment](t, withCanary, render.ResourceDeployment).Spec.Replicas; got != 3 {
		t.Errorf("the primary runs %d servers beside the canary, want 3 of replicas.min 4", got)
	}
	if diff := cmp.Diff(desiredMap(t, before, render.ResourceDeployment), desiredMap(t, after, render.ResourceDeployment)); diff != "" {
		t.Errorf("the primary's Deployment differs after the canary left (-before +after):\n%s", diff)
	}
	if _, ok := after.GetDesired().GetResources()["deployment-2"]; ok {
		t.Error("the canary's Deployment is still returned after the canary was removed")
	}
	if diff := cmp.Diff(desiredMap(t, before, render.ResourceService), desiredMap(t, after, render.ResourceService)); diff != "" {
		t.Errorf("the Service llama differs after the canary left (-before +after):\n%s", diff)
	}
}

// TestCanaryPromotion moves spec.model to version 2 and drops version 1.
// The primary's Deployment is updated in place (rolling, never below its
// ready servers) onto the weights the canary already pulled, with no new
// pull; the canary's and version 1's objects stay until it is done.
func TestCanaryPromotion(t *testing.T) {
	serving, obs := settle(t, canaryXR(t), nil, world{}, nil)
	canaryJob := ""
	for _, n := range desiredNames(serving) {
		if strings.HasPrefix(n, render.ResourceJobPrefix) && desiredMap(t, serving, n)["metadata"].(map[string]any)["annotations"].(map[string]any)[resolve.AnnotationModelURI] == canaryV2URI {
			canaryJob = n
		}
	}
	canaryWeights := mustWeights(t, desiredObject[appsv1.Deployment](t, serving, "deployment-2"))

	promoted := canaryXR(t)
	spec := promoted["spec"].(map[string]any)
	spec["model"].(map[string]any)["uri"] = canaryV2URI
	spec["model"].(map[string]any)["version"] = "2"
	spec["traffic"] = []any{map[string]any{"version": "2", "weight": 100}}

	// The first call after the change, before any controller moved.
	rsp := run(t, newRequest(t, promoted, nil, obs...))
	if msg := fatalMessage(rsp); msg != "" {
		t.Fatal(msg)
	}
	// Make before break: the canary's warm servers and version 1's Service
	// stay until the primary serves version 2 on its full count
	// (TestMakeBeforeBreakPromotion walks it to the end).
	names := desiredNames(rsp)
	for _, kept := range []string{"deployment-2", "service-1"} {
		if !slices.Contains(names, kept) {
			t.Errorf("%s is no longer returned on the first call of the promotion", kept)
		}
	}
	if warm := desiredObject[appsv1.Deployment](t, rsp, "deployment-2"); *warm.Spec.Replicas != 1 || mustWeights(t, warm) != canaryWeights {
		t.Errorf("the canary's warm servers run %d servers of %+v, want its 1 of %+v", *warm.Spec.Replicas, mustWeights(t, warm), canaryWeights)
	}
	var jobs []string
	for _, n := range names {
		if strings.HasPrefix(n, render.ResourceJobPrefix) {
			jobs = append(jobs, n)
		}
	}
	if !slices.Equal(jobs, []string{canaryJob}) {
		t.Errorf("pull Jobs %v after the promotion, want only the canary's %s (its weights are there; nothing is pulled again)", jobs, canaryJob)
	}
	if readiness(rsp, canaryJob) != fnv1.Ready_READY_TRUE {
		t.Errorf("the promoted version's pull Job %s is not ready", canaryJob)
	}
	d := desiredObject[appsv1.Deployment](t, rsp, render.ResourceDeployment)
	if d.Name != "llama" {
		t.Errorf("primary Deployment %q, want llama", d.Name)
	}
	if w := mustWeights(t, d); w != canaryWeights {
		t.Errorf("the primary serves %+v, want the canary's weights %+v", w, canaryWeights)
	}
	// The primary rolls onto the canary's weights one new server at a
	// time, never stopping an old one before its replacement is ready.
	zero, one := intstr.FromInt32(0), intstr.FromInt32(1)
	wantStrategy := appsv1.DeploymentStrategy{
		Type:          appsv1.RollingUpdateDeploymentStrategyType,
		RollingUpdate: &appsv1.RollingUpdateDeployment{MaxUnavailable: &zero, MaxSurge: &one},
	}
	if diff := cmp.Diff(wantStrategy, d.Spec.Strategy); diff != "" {
		t.Errorf("the promoted primary's strategy (-want +got):\n%s", diff)
	}
	// The new version's Service takes the version name and selects version
	// 2's servers only, at every moment of the primary's rollout: the
	// promoted primary's new servers and the canary's warm ones, never the
	// primary's old servers of version 1, which still run until the
	// rollout replaced them.
	svc := desiredObject[corev1.Service](t, rsp, "service-2")
	oldPrimary := desiredObject[appsv1.Deployment](t, serving, render.ResourceDeployment).Spec.Template.Labels
	warmCanary := desiredObject[appsv1.Deployment](t, serving, "deployment-2").Spec.Template.Labels
	for pod, tc := range map[string]struct {
		labels map[string]string
		want   bool
	}{
		"the promoted primary's new": {d.Spec.Template.Labels, true},
		"the canary's warm":          {warmCanary, true},
		"the primary's old":          {oldPrimary, false},
	} {
		if got := labels.SelectorFromSet(svc.Spec.Selector).Matches(labels.Set(tc.labels)); got != tc.want {
			t.Errorf("Service llama-2 (%v) selects %s servers (%v): %v, want %v", svc.Spec.Selector, pod, tc.labels, got, tc.want)
		}
	}
	if st := statusOf(rsp); st["phase"] != "Serving" {
		t.Errorf("phase %v during the promotion, want Serving (the old servers answer until the new ones are ready): %v", st["phase"], st["message"])
	}
}

// TestCanaryStatus checks the phase, the TrafficSplit condition and
// status.traffic at each stage of the canary example.
func TestCanaryStatus(t *testing.T) {
	type version struct {
		Version                 string
		Weight, Replicas, Ready int
		Phase                   string
	}
	cases := map[string]struct {
		world    world
		input    func(testing.TB) map[string]any
		phase    string
		reason   string // TrafficSplit
		message  string // a fragment of status.message
		versions []version
		routeURL string
		warning  string
	}{
		"BothServing": {
			phase: "Serving", reason: "Approximate", message: "the split is approximate, by servers: version 1 75% (3 of 4 servers, asked 90%), version 2 25% (1 of 4 servers, asked 10%)",
			versions: []version{{"1", 90, 3, 3, "Serving"}, {"2", 10, 1, 1, "Serving"}},
		},
		"CanaryPullFailed": {
			world: world{FailPull: map[string]bool{canaryV2URI: true}},
			phase: "Degraded", reason: "VersionFailed", message: "version 2 is Failed: pull Job llama-pull-",
			versions: []version{{"1", 90, 3, 3, "Serving"}, {"2", 10, 1, 0, "Failed"}},
		},
		"CanaryNeverReady": {
			world: world{NotReady: map[string]bool{"llama-2": true}},
			phase: "Serving", reason: "VersionsNotReady", message: "serving hf://meta-llama/Llama-3.1-8B-Instruct",
			versions: []version{{"1", 90, 3, 3, "Serving"}, {"2", 10, 1, 0, "Starting"}},
		},
		"PrimaryPullFailed": {
			world: world{FailPull: map[string]bool{canaryV1URI: true}},
			phase: "Failed", reason: "VersionFailed", message: "pull Job llama-pull-",
			versions: []version{{"1", 90, 3, 0, "Failed"}, {"2", 10, 1, 1, "Serving"}},
		},
		"Routed": {
			input: gatewayInput, world: world{RouteState: "accepted"},
			phase: "Serving", reason: "Routed", message: "splits requests exactly: llama-1 90%, llama-2 10%",
			versions: []version{{"1", 90, 3, 3, "Serving"}, {"2", 10, 1, 1, "Serving"}},
			routeURL: "http://llama.team-a.models.example.com",
		},
		"RouteWithoutController": {
			input: gatewayInput,
			phase: "Serving", reason: "RoutePending", message: "no gateway controller has reported on HTTPRoute llama",
			versions: []version{{"1", 90, 3, 3, "Serving"}, {"2", 10, 1, 1, "Serving"}},
			routeURL: "http://llama.team-a.models.example.com",
			warning:  "input.traffic.gateway: no gateway controller has reported",
		},
		"RouteRejected": {
			input: gatewayInput, world: world{RouteState: "rejected"},
			phase: "Serving", reason: "RouteNotAccepted", message: "serving hf://",
			versions: []version{{"1", 90, 3, 3, "Serving"}, {"2", 10, 1, 1, "Serving"}},
			routeURL: "http://llama.team-a.models.example.com",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			var in map[string]any
			if tc.input != nil {
				in = tc.input(t)
			}
			rsp, _ := settle(t, canaryXR(t), in, tc.world, nil)
			st := statusOf(rsp)
			if st["phase"] != tc.phase {
				t.Errorf("phase %v, want %s (message %v)", st["phase"], tc.phase, st["message"])
			}
			if msg, _ := st["message"].(string); !strings.Contains(msg, tc.message) {
				t.Errorf("message %q does not contain %q", msg, tc.message)
			}
			var split *cond
			for _, c := range conditionsOf(rsp) {
				if c.Type == reason.ConditionTrafficSplit {
					split = &c
				}
			}
			if split == nil || split.Reason != tc.reason {
				t.Errorf("TrafficSplit condition %+v, want reason %s (%s)", split, tc.reason, conditionMessage(rsp, reason.ConditionTrafficSplit))
			}
			var got []version
			list, _ := st["traffic"].([]any)
			for _, e := range list {
				m := e.(map[string]any)
				got = append(got, version{m["version"].(string), int(m["weight"].(float64)), int(m["replicas"].(float64)), int(m["readyReplicas"].(float64)), m["phase"].(string)})
			}
			if diff := cmp.Diff(tc.versions, got); diff != "" {
				t.Errorf("status.traffic (-want +got):\n%s", diff)
			}
			if url, _ := st["routeURL"].(string); url != tc.routeURL {
				t.Errorf("status.routeURL %q, want %q", url, tc.routeURL)
			}
			if tc.warning != "" {
				if _, ok := warningWith(rsp, tc.warning); !ok {
					t.Errorf("no warning with %q; have %v", tc.warning, warningsOf(rsp))
				}
			}
		})
	}
}

// TestCanaryRoute checks the HTTPRoute: attached to the Input's Gateway,
// weighted backends to the versions' Services that exist, and a canary's
// weight on the primary until the canary has a ready server.
func TestCanaryRoute(t *testing.T) {
	in := gatewayInput(t)
	for name, tc := range map[string]struct {
		world world
		want  []render.RouteBackend
		ready fnv1.Ready
	}{
		"CanaryReady":    {world: world{RouteState: "accepted"}, want: []render.RouteBackend{{Service: "llama-1", Weight: 90}, {Service: "llama-2", Weight: 10}}, ready: fnv1.Ready_READY_TRUE},
		"CanaryNotReady": {world: world{RouteState: "accepted", NotReady: map[string]bool{"llama-2": true}}, want: []render.RouteBackend{{Service: "llama-1", Weight: 100}, {Service: "llama-2", Weight: 0}}, ready: fnv1.Ready_READY_TRUE},
		// No Service of the canary yet: the route names none, or the
		// gateway would refuse its references.
		"CanaryPullFailed":    {world: world{RouteState: "accepted", FailPull: map[string]bool{canaryV2URI: true}}, want: []render.RouteBackend{{Service: "llama-1", Weight: 100}}, ready: fnv1.Ready_READY_TRUE},
		"NoGatewayController": {want: []render.RouteBackend{{Service: "llama-1", Weight: 90}, {Service: "llama-2", Weight: 10}}, ready: fnv1.Ready_READY_FALSE},
		"Rejected":            {world: world{RouteState: "rejected"}, want: []render.RouteBackend{{Service: "llama-1", Weight: 90}, {Service: "llama-2", Weight: 10}}, ready: fnv1.Ready_READY_FALSE},
	} {
		t.Run(name, func(t *testing.T) {
			rsp, _ := settle(t, canaryXR(t), in, tc.world, nil)
			r := desiredObject[gatewayv1.HTTPRoute](t, rsp, render.ResourceRoute)
			if r.Name != "llama" || r.Namespace != "team-a" {
				t.Errorf("route %s/%s, want team-a/llama", r.Namespace, r.Name)
			}
			p := r.Spec.ParentRefs[0]
			if p.Name != "inference" || p.Namespace == nil || *p.Namespace != "gateways" || p.SectionName == nil || *p.SectionName != "http" {
				t.Errorf("parentRef %+v, want gateways/inference section http", p)
			}
			if diff := cmp.Diff([]gatewayv1.Hostname{"llama.team-a.models.example.com"}, r.Spec.Hostnames); diff != "" {
				t.Errorf("hostnames (-want +got):\n%s", diff)
			}
			var got []render.RouteBackend
			for _, b := range r.Spec.Rules[0].BackendRefs {
				if *b.Port != gatewayv1.PortNumber(render.ServicePort) {
					t.Errorf("backend %s port %d, want %d", b.Name, *b.Port, render.ServicePort)
				}
				got = append(got, render.RouteBackend{Service: string(b.Name), Weight: *b.Weight})
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("backends (-want +got):\n%s", diff)
			}
			if r := readiness(rsp, render.ResourceRoute); r != tc.ready {
				t.Errorf("route readiness %v, want %v", r, tc.ready)
			}
		})
	}
	// Without spec.traffic the Gateway is not used: nothing to split.
	plain := canaryXR(t)
	delete(plain["spec"].(map[string]any), "traffic")
	rsp, _ := settle(t, plain, in, world{}, nil)
	if _, ok := rsp.GetDesired().GetResources()[render.ResourceRoute]; ok {
		t.Error("an HTTPRoute is returned for a claim without spec.traffic")
	}
}

// TestApportion: servers follow the weights by largest remainder; the
// total is n, or the number of versions of weight above 0 when that is
// more, and each of those gets at least one.
func TestApportion(t *testing.T) {
	for _, tc := range []struct {
		n       int32
		weights []int32
		want    []int32
	}{
		{4, []int32{90, 10}, []int32{3, 1}}, // round(3.6)+round(0.4) would be 5
		{10, []int32{90, 10}, []int32{9, 1}},
		{4, []int32{10, 90}, []int32{1, 3}},
		{1, []int32{90, 10}, []int32{1, 1}}, // two versions need two servers
		{2, []int32{90, 10}, []int32{1, 1}},
		{3, []int32{50, 50}, []int32{2, 1}}, // a tie goes to the earlier
		{3, []int32{50, 25, 25}, []int32{1, 1, 1}},
		{7, []int32{100}, []int32{7}},
		{5, []int32{100, 0}, []int32{5, 0}},
		{0, []int32{50, 50}, []int32{0, 0}}, // replicas.min 0 runs none
		{1, []int32{13, 13, 13, 13, 12, 12, 12, 12}, []int32{1, 1, 1, 1, 1, 1, 1, 1}},
		{8, []int32{93, 1, 1, 1, 1, 1, 1, 1}, []int32{1, 1, 1, 1, 1, 1, 1, 1}},
		{10, []int32{97, 1, 1, 1}, []int32{7, 1, 1, 1}},
		{100, []int32{33, 33, 34}, []int32{33, 33, 34}},
		{10, []int32{33, 33, 34}, []int32{3, 3, 4}},
		{5, []int32{60, 0, 40}, []int32{3, 0, 2}},
		{4, []int32{60, 50}, []int32{2, 2}}, // refused weights do not panic
		{4, []int32{-10, 110}, []int32{0, 0}},
	} {
		got := resolve.Apportion(tc.n, tc.weights)
		if diff := cmp.Diff(tc.want, got); diff != "" {
			t.Errorf("apportion(%d, %v) (-want +got):\n%s", tc.n, tc.weights, diff)
		}
	}
	// Over every split of 100 into two and three weights and every n up to
	// 12: the total is max(n, versions of weight above 0), each of those
	// has a server and none of weight 0 has one.
	for n := int32(0); n <= 12; n++ {
		for a := int32(0); a <= 100; a++ {
			for b := int32(0); a+b <= 100; b++ {
				weights := []int32{a, b, 100 - a - b}
				got := resolve.Apportion(n, weights)
				positive, total := int32(0), int32(0)
				for i, w := range weights {
					total += got[i]
					if w > 0 {
						positive++
					}
					if (w > 0) != (got[i] > 0) && n > 0 {
						t.Fatalf("apportion(%d, %v) = %v: version %d of weight %d has %d servers", n, weights, got, i, w, got[i])
					}
				}
				if want := max(n, positive); n > 0 && total != want {
					t.Fatalf("apportion(%d, %v) = %v adds up to %d, want %d", n, weights, got, total, want)
				}
			}
		}
	}
}

// TestSpreadByWeight checks how servers and autoscaler bounds follow the
// weights (apportion): at least one server for a weight above 0, none for
// 0, and the floors add up to replicas.min.
func TestSpreadByWeight(t *testing.T) {
	xr := canaryXR(t)
	setPath(xr, map[string]any{"min": 2, "max": 10}, "spec", "replicas")
	setPath(xr, map[string]any{"enabled": true}, "spec", "autoscaling")
	rsp, _ := settle(t, xr, nil, world{}, nil)
	for _, tc := range []struct {
		resource, target string
		min, max         int32
	}{
		// min 2 over 90/10 is 1 and 1; max 10 is 9 and 1.
		{render.ResourceHPA, "llama", 1, 9},
		{"hpa-2", "llama-2", 1, 1},
	} {
		h := desiredObject[autoscalingv2.HorizontalPodAutoscaler](t, rsp, tc.resource)
		if h.Spec.ScaleTargetRef.Name != tc.target || *h.Spec.MinReplicas != tc.min || h.Spec.MaxReplicas != tc.max {
			t.Errorf("%s targets %s %d..%d, want %s %d..%d", tc.resource, h.Spec.ScaleTargetRef.Name, *h.Spec.MinReplicas, h.Spec.MaxReplicas, tc.target, tc.min, tc.max)
		}
		d := desiredObject[appsv1.Deployment](t, rsp, map[string]string{render.ResourceHPA: render.ResourceDeployment, "hpa-2": "deployment-2"}[tc.resource])
		if d.Spec.Replicas != nil {
			t.Errorf("Deployment %s sets replicas %d while an autoscaler owns them", d.Name, *d.Spec.Replicas)
		}
	}

	// Weight 0: the version keeps its Job and Deployment at 0 servers, no
	// autoscaler, and reads Standby.
	zero := readYAML(t, "../examples/canary/weight-zero.yaml")
	setPath(zero, map[string]any{"enabled": true}, "spec", "autoscaling")
	setPath(zero, map[string]any{"min": 2, "max": 4}, "spec", "replicas")
	rsp, _ = settle(t, zero, nil, world{}, nil)
	if _, ok := rsp.GetDesired().GetResources()["hpa-2"]; ok {
		t.Error("a version of weight 0 has an autoscaler")
	}
	if d := desiredObject[appsv1.Deployment](t, rsp, "deployment-2"); d.Spec.Replicas == nil || *d.Spec.Replicas != 0 {
		t.Errorf("the weight-0 Deployment has replicas %v, want 0", d.Spec.Replicas)
	}
	st := statusOf(rsp)
	if st["phase"] != "Serving" {
		t.Errorf("phase %v with a weight-0 canary, want Serving: %v", st["phase"], st["message"])
	}
	list, _ := st["traffic"].([]any)
	if len(list) != 2 || list[1].(map[string]any)["phase"] != "Standby" {
		t.Errorf("status.traffic %v, want version 2 Standby", list)
	}
}

// TestCanaryObjectNames: every object of a split has a valid name, and a
// version name that would make an invalid one is refused (see the
// bad-input catalogue).
func TestCanaryObjectNames(t *testing.T) {
	rsp, _ := settle(t, canaryXR(t), gatewayInput(t), world{RouteState: "accepted"}, nil)
	seen := map[string]string{}
	for _, n := range desiredNames(rsp) {
		m := desiredMap(t, rsp, n)
		key := fmt.Sprintf("%s/%v", m["kind"], m["metadata"].(map[string]any)["name"])
		if other, dup := seen[key]; dup {
			t.Errorf("%s and %s both render %s", other, n, key)
		}
		seen[key] = n
	}
}

// TestCredentialsPerSource: a version of a split pulls with its own
// credentials, or with spec.model's only when it pulls from the same
// source (scheme and organisation, bucket or host); otherwise with none,
// and a warning says so. Plain http:// gets credentials only from a host
// the platform lists.
func TestCredentialsPerSource(t *testing.T) {
	type creds struct {
		Secrets []string // env name <- secret/key, or envFrom <- secret
		Warned  bool
	}
	for name, tc := range map[string]struct {
		canary map[string]any
		in     map[string]any
		want   creds
	}{
		"SameOrganisation":  {canary: map[string]any{"uri": "hf://meta-llama/Llama-3.2-3B-Instruct"}, want: creds{Secrets: []string{"HF_TOKEN <- hf-credentials/HF_TOKEN"}}},
		"OtherOrganisation": {canary: map[string]any{"uri": "hf://mistralai/Mistral-7B-v0.3"}, want: creds{Warned: true}},
		// The leak: HF_TOKEN renamed to the http puller's
		// BEARER_TOKEN and sent to a mirror.
		"OtherScheme": {canary: map[string]any{"uri": "https://mirror.example.com/llama.gguf"}, want: creds{Warned: true}},
		"OwnSecret": {
			canary: map[string]any{"uri": "https://mirror.example.com/llama.gguf", "credentialsSecretRef": map[string]any{"name": "mirror-token", "key": "TOKEN"}},
			want:   creds{Secrets: []string{"BEARER_TOKEN <- mirror-token/TOKEN"}},
		},
		"OwnSecretEveryKey": {
			canary: map[string]any{"uri": "s3://models/llama-v2", "credentialsSecretRef": map[string]any{"name": "aws"}},
			want:   creds{Secrets: []string{"AWS_ACCESS_KEY_ID <- aws/AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY <- aws/AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN <- aws/AWS_SESSION_TOKEN"}},
		},
		"PlainHTTPListedHost": {
			canary: map[string]any{"uri": "http://Mirror.Internal/llama.gguf", "credentialsSecretRef": map[string]any{"name": "mirror-token", "key": "TOKEN"}},
			in:     map[string]any{"policy": map[string]any{"plainHTTPCredentialHosts": []any{"mirror.internal"}}},
			want:   creds{Secrets: []string{"BEARER_TOKEN <- mirror-token/TOKEN"}},
		},
	} {
		t.Run(name, func(t *testing.T) {
			xr := canaryXR(t)
			entry := map[string]any{"version": "2", "weight": 10}
			for k, v := range tc.canary {
				entry[k] = v
			}
			setPath(xr, []any{map[string]any{"version": "1", "weight": 90}, entry}, "spec", "traffic")
			rsp := run(t, newRequest(t, xr, tc.in))
			if msg := fatalMessage(rsp); msg != "" {
				t.Fatalf("fatal: %s", msg)
			}
			var got creds
			for _, n := range desiredNames(rsp) {
				if !strings.HasPrefix(n, render.ResourceJobPrefix) {
					continue
				}
				j := desiredObject[batchv1.Job](t, rsp, n)
				if j.Annotations[resolve.AnnotationModelURI] != tc.canary["uri"] {
					continue
				}
				c := j.Spec.Template.Spec.Containers[0]
				for _, e := range c.Env {
					if r := e.ValueFrom; r != nil && r.SecretKeyRef != nil {
						got.Secrets = append(got.Secrets, fmt.Sprintf("%s <- %s/%s", e.Name, r.SecretKeyRef.Name, r.SecretKeyRef.Key))
					}
				}
				for _, e := range c.EnvFrom {
					if e.SecretRef != nil {
						got.Secrets = append(got.Secrets, "envFrom <- "+e.SecretRef.Name)
					}
				}
			}
			_, got.Warned = warningWith(rsp, "spec.traffic[1].credentialsSecretRef: ")
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("the canary's pull Job credentials (-want +got):\n%s", diff)
			}
		})
	}
}

// TestTrafficReplicasAddUp: status.traffic[].replicas are the apportioned
// servers (the autoscalers' floors with autoscaling) and add up to
// replicas.min, or to the number of versions of weight above 0 when that
// is more.
func TestTrafficReplicasAddUp(t *testing.T) {
	v := func(version string, weight int, uri string) map[string]any {
		m := map[string]any{"version": version, "weight": weight}
		if uri != "" {
			m["uri"] = uri
		}
		return m
	}
	for name, tc := range map[string]struct {
		replicas    map[string]any
		autoscaling bool
		traffic     []any
		want        []int
	}{
		"Min4At90-10":         {replicas: map[string]any{"min": 4}, traffic: []any{v("1", 90, ""), v("2", 10, canaryV2URI)}, want: []int{3, 1}},
		"Min1ThreeVersions":   {replicas: map[string]any{"min": 1}, traffic: []any{v("1", 80, ""), v("2", 10, canaryV2URI), v("3", 10, "hf://org/v3")}, want: []int{1, 1, 1}},
		"Min10At10-90":        {replicas: map[string]any{"min": 10}, traffic: []any{v("1", 10, ""), v("2", 90, canaryV2URI)}, want: []int{1, 9}},
		"Standby":             {replicas: map[string]any{"min": 4}, traffic: []any{v("1", 100, ""), v("2", 0, canaryV2URI)}, want: []int{4, 0}},
		"AutoscaledMin2Max10": {replicas: map[string]any{"min": 2, "max": 10}, autoscaling: true, traffic: []any{v("1", 90, ""), v("2", 10, canaryV2URI)}, want: []int{1, 1}},
	} {
		t.Run(name, func(t *testing.T) {
			xr := canaryXR(t)
			setPath(xr, tc.replicas, "spec", "replicas")
			setPath(xr, tc.traffic, "spec", "traffic")
			if tc.autoscaling {
				setPath(xr, map[string]any{"enabled": true}, "spec", "autoscaling")
			}
			rsp := run(t, newRequest(t, xr, nil))
			if msg := fatalMessage(rsp); msg != "" {
				t.Fatal(msg)
			}
			var got []int
			list, _ := statusOf(rsp)["traffic"].([]any)
			for _, e := range list {
				got = append(got, int(e.(map[string]any)["replicas"].(float64)))
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("status.traffic[].replicas (-want +got):\n%s", diff)
			}
		})
	}
}

// TestSharedGatewayHostnames renders claims of two namespaces, and two
// claims of one, on one shared Gateway (a split's route and a route to an
// InferencePool alike): each route has one hostname, its own, so no two
// claims' routes match the same requests. The claims carry the same
// model, so only their names and namespaces tell them apart.
func TestSharedGatewayHostnames(t *testing.T) {
	claim := func(t testing.TB, name, namespace string) map[string]any {
		xr := canaryXR(t)
		setPath(xr, name, "metadata", "labels", "crossplane.io/claim-name")
		setPath(xr, namespace, "metadata", "labels", "crossplane.io/claim-namespace")
		setPath(xr, name+"-x1y2z", "metadata", "name")
		return xr
	}
	claims := [][2]string{{"llama", "team-a"}, {"llama", "team-b"}, {"chat", "team-a"}}
	for mode, in := range map[string]func(testing.TB) map[string]any{
		"split": gatewayInput,
		"pool":  func(testing.TB) map[string]any { return poolInput(nil, nil) },
	} {
		t.Run(mode, func(t *testing.T) {
			owner := map[string]string{}
			for _, c := range claims {
				rsp, _ := settle(t, claim(t, c[0], c[1]), in(t), world{RouteState: "accepted"}, nil)
				if msg := fatalMessage(rsp); msg != "" {
					t.Fatalf("%s/%s: %s", c[1], c[0], msg)
				}
				r := desiredObject[gatewayv1.HTTPRoute](t, rsp, render.ResourceRoute)
				if r == nil {
					t.Fatalf("%s/%s: no HTTPRoute; desired %v", c[1], c[0], desiredNames(rsp))
				}
				if p := r.Spec.ParentRefs; len(p) != 1 || p[0].Namespace == nil || *p[0].Namespace != "gateways" {
					t.Errorf("%s/%s: parentRefs %+v, want the shared Gateway in gateways", c[1], c[0], p)
				}
				if len(r.Spec.Hostnames) != 1 {
					t.Fatalf("%s/%s: hostnames %v, want one of its own", c[1], c[0], r.Spec.Hostnames)
				}
				h := string(r.Spec.Hostnames[0])
				if want := c[0] + "." + c[1] + ".models.example.com"; h != want {
					t.Errorf("%s/%s: hostname %q, want %q", c[1], c[0], h, want)
				}
				if o, taken := owner[h]; taken {
					t.Errorf("%s/%s and %s both route hostname %q", c[1], c[0], o, h)
				}
				owner[h] = c[1] + "/" + c[0]
			}
		})
	}
}
