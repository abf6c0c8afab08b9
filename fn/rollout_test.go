package fn

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"github.com/google/go-cmp/cmp"
	"github.com/inferno-ai/function-inferno/internal/plan"
	"github.com/inferno-ai/function-inferno/internal/reason"
	"github.com/inferno-ai/function-inferno/internal/render"
	"github.com/inferno-ai/function-inferno/internal/resolve"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/intstr"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
)

// A small Deployment controller for the make-before-break tests: each
// call of the function is followed by one sync of every Deployment it
// returns, so a walk shows every moment of a rollout, and the tests hold
// the function to its rules at each of them.

// pod is one server pod of the simulated cluster.
type pod struct {
	template string // the pod template it was made from (its JSON)
	labels   map[string]string
	ready    bool
	born     int // the sync that made it
}

// podCluster simulates the Deployment controller: a rollout (maxSurge,
// maxUnavailable as the Deployment says), scaling, pods that become ready
// one sync after they start.
type podCluster struct {
	sync int
	pods map[string][]*pod // by Deployment name
	spec map[string]string // the last spec seen, to bump generations
	gen  map[string]int64
	// notReady are the Deployment names whose new pods never get ready.
	notReady map[string]bool
}

func newPodCluster(notReady map[string]bool) *podCluster {
	return &podCluster{pods: map[string][]*pod{}, spec: map[string]string{}, gen: map[string]int64{}, notReady: notReady}
}

// apply syncs every Deployment rsp desires, replicas (for one without
// spec.replicas) being its autoscaler's floor, and deletes the pods of
// every Deployment it no longer desires.
func (c *podCluster) apply(t testing.TB, rsp *fnv1.RunFunctionResponse) {
	t.Helper()
	c.sync++
	desired := map[string]bool{}
	for _, name := range desiredNames(rsp) {
		m := desiredMap(t, rsp, name)
		if m["kind"] != "Deployment" {
			continue
		}
		d := desiredObject[appsv1.Deployment](t, rsp, name)
		replicas := int32(hpaFloor(rsp, m))
		if d.Spec.Replicas != nil {
			replicas = *d.Spec.Replicas
		}
		desired[d.Name] = true
		c.syncDeployment(t, d, replicas)
	}
	for name := range c.pods {
		if !desired[name] {
			delete(c.pods, name)
		}
	}
}

func (c *podCluster) syncDeployment(t testing.TB, d *appsv1.Deployment, replicas int32) {
	t.Helper()
	tb, err := json.Marshal(d.Spec.Template)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := string(tb)
	if spec := fmt.Sprintf("%d/%s", replicas, tmpl); c.spec[d.Name] != spec {
		c.spec[d.Name] = spec
		c.gen[d.Name]++
	}
	pods := c.pods[d.Name]
	for _, p := range pods {
		if p.born < c.sync && !(c.notReady[d.Name] && p.template == tmpl) {
			p.ready = true
		}
	}
	surge, unavailable := int32(1), int32(0)
	if ru := d.Spec.Strategy.RollingUpdate; ru != nil {
		s, _ := intstr.GetScaledValueFromIntOrPercent(ru.MaxSurge, int(replicas), true)
		u, _ := intstr.GetScaledValueFromIntOrPercent(ru.MaxUnavailable, int(replicas), false)
		surge, unavailable = int32(s), int32(u)
	}
	isNew := func(p *pod) bool { return p.template == tmpl }
	count := func(f func(*pod) bool) int32 {
		n := int32(0)
		for _, p := range pods {
			if f(p) {
				n++
			}
		}
		return n
	}
	ready := func(p *pod) bool { return p.ready }
	remove := func(p *pod) { pods = slices.DeleteFunc(pods, func(q *pod) bool { return q == p }) }
	if count(func(p *pod) bool { return !isNew(p) }) > 0 {
		// A rollout: old pods that are not ready go first, ready ones as
		// long as maxUnavailable allows.
		for _, p := range slices.Clone(pods) {
			if !isNew(p) && !p.ready {
				remove(p)
			}
		}
		for _, p := range slices.Clone(pods) {
			if !isNew(p) && count(ready)-1 >= replicas-unavailable {
				remove(p)
			}
		}
		for int32(len(pods)) < replicas+surge && count(isNew) < replicas {
			pods = append(pods, &pod{template: tmpl, labels: d.Spec.Template.Labels, born: c.sync})
		}
	} else {
		// Scaling: at once, the pods that are not ready first.
		for int32(len(pods)) > replicas {
			victim := pods[len(pods)-1]
			for _, p := range pods {
				if !p.ready {
					victim = p
				}
			}
			remove(victim)
		}
		for int32(len(pods)) < replicas {
			pods = append(pods, &pod{template: tmpl, labels: d.Spec.Template.Labels, born: c.sync})
		}
	}
	c.pods[d.Name] = pods
}

// status is the Deployment's status as the controller writes it.
func (c *podCluster) status(t testing.TB, d *appsv1.Deployment, replicas int32) map[string]any {
	t.Helper()
	tb, _ := json.Marshal(d.Spec.Template)
	var updated, ready int
	for _, p := range c.pods[d.Name] {
		if p.template == string(tb) {
			updated++
		}
		if p.ready {
			ready++
		}
	}
	avail := "False"
	if int32(ready) >= replicas || ready > 0 && int32(ready) >= replicas-1 {
		avail = "True"
	}
	return map[string]any{
		"observedGeneration": c.gen[d.Name], "replicas": len(c.pods[d.Name]), "updatedReplicas": updated,
		"readyReplicas": ready, "availableReplicas": ready,
		"conditions": []any{map[string]any{"type": "Available", "status": avail}, map[string]any{"type": "Progressing", "status": "True"}},
	}
}

// readyBehind counts the ready pods a selector selects.
func (c *podCluster) readyBehind(selector map[string]string) int {
	n := 0
	for _, pods := range c.pods {
		for _, p := range pods {
			if p.ready && labels.SelectorFromSet(selector).Matches(labels.Set(p.labels)) {
				n++
			}
		}
	}
	return n
}

// readyOfVersion counts the ready pods of a version label.
func (c *podCluster) readyOfVersion(version string) int {
	return c.readyBehind(map[string]string{resolve.LabelVersion: version})
}

// snapshot counts ready pods by version label.
func (c *podCluster) snapshot() map[string]int {
	out := map[string]int{}
	for _, pods := range c.pods {
		for _, p := range pods {
			if p.ready {
				out[p.labels[resolve.LabelVersion]]++
			}
		}
	}
	return out
}

// seed starts the cluster from observed Deployments: each with its
// replicas, all ready.
func (c *podCluster) seed(t testing.TB, obs []observedObject) {
	t.Helper()
	for _, o := range obs {
		if o.Object["kind"] != "Deployment" {
			continue
		}
		b, _ := json.Marshal(o.Object)
		d := &appsv1.Deployment{}
		if err := json.Unmarshal(b, d); err != nil {
			t.Fatal(err)
		}
		tb, _ := json.Marshal(d.Spec.Template)
		n := int32(1)
		if d.Spec.Replicas != nil {
			n = *d.Spec.Replicas
		}
		c.gen[d.Name] = 1
		c.spec[d.Name] = fmt.Sprintf("%d/%s", n, tb)
		for range n {
			c.pods[d.Name] = append(c.pods[d.Name], &pod{template: string(tb), labels: d.Spec.Template.Labels, ready: true})
		}
	}
}

// walkStep is one call of a walk and the cluster it saw.
type walkStep struct {
	rsp *fnv1.RunFunctionResponse
	// before are the ready pods by version when the call was made, after
	// those when the cluster had applied its response.
	before, after map[string]int
	// selected counts, for each Service the call returns, its ready pods
	// when the cluster had applied the response.
	selected map[string]int
}

// walk runs a claim from start (a settled state) with a rolling cluster:
// each call observes the cluster as the previous one left it. It stops
// once the desired objects and the cluster no longer change.
func walk(t testing.TB, xr, input map[string]any, w world, start []observedObject) []walkStep {
	t.Helper()
	c := newPodCluster(w.NotReady)
	c.seed(t, start)
	obs := start
	var steps []walkStep
	for range 40 {
		before := c.snapshot()
		rsp := run(t, newRequest(t, xr, input, obs...))
		if msg := fatalMessage(rsp); msg != "" {
			t.Fatalf("fatal: %s", msg)
		}
		c.apply(t, rsp)
		st := walkStep{rsp: rsp, before: before, after: c.snapshot(), selected: map[string]int{}}
		for _, name := range desiredNames(rsp) {
			if desiredMap(t, rsp, name)["kind"] == "Service" {
				svc := desiredObject[corev1.Service](t, rsp, name)
				st.selected[svc.Name] = c.readyBehind(svc.Spec.Selector)
			}
		}
		steps = append(steps, st)
		next := observeAll(t, rsp, world{FailPull: w.FailPull, RouteState: w.RouteState})
		for i, o := range next {
			if o.Object["kind"] != "Deployment" {
				continue
			}
			d := desiredObject[appsv1.Deployment](t, rsp, o.Name)
			replicas := int32(hpaFloor(rsp, desiredMap(t, rsp, o.Name)))
			if d.Spec.Replicas != nil {
				replicas = *d.Spec.Replicas
			}
			setPath(next[i].Object, c.gen[d.Name], "metadata", "generation")
			setPath(next[i].Object, int64(replicas), "spec", "replicas")
			next[i].Object["status"] = c.status(t, d, replicas)
		}
		if len(steps) > 1 && cmp.Equal(obs, next) && cmp.Equal(before, st.after) {
			return steps
		}
		obs = next
	}
	t.Fatal("the walk did not settle in 40 calls")
	return nil
}

// routeOf is the desired HTTPRoute's backends, nil without one.
func routeOf(t testing.TB, rsp *fnv1.RunFunctionResponse) []render.RouteBackend {
	t.Helper()
	if _, ok := rsp.GetDesired().GetResources()[render.ResourceRoute]; !ok {
		return nil
	}
	r := desiredObject[gatewayv1.HTTPRoute](t, rsp, render.ResourceRoute)
	var out []render.RouteBackend
	for _, b := range r.Spec.Rules[0].BackendRefs {
		out = append(out, render.RouteBackend{Service: string(b.Name), Weight: *b.Weight})
	}
	return out
}

// checkRoute holds each step's route to readiness: its weights sum to
// 100, and every backend given weight has a ready server when the call
// was made and still once the cluster applied the call's response.
func checkRoute(t *testing.T, steps []walkStep) {
	t.Helper()
	for i, st := range steps {
		backends := routeOf(t, st.rsp)
		if backends == nil {
			continue
		}
		sum := int32(0)
		for _, b := range backends {
			sum += b.Weight
			if b.Weight > 0 && st.selected[b.Service] == 0 {
				t.Errorf("step %d: the route gives %s weight %d with no ready server behind it (route %v, ready %v)", i, b.Service, b.Weight, backends, st.after)
			}
		}
		if sum != 100 {
			t.Errorf("step %d: route weights %v sum to %d", i, backends, sum)
		}
	}
}

// trafficReason is the TrafficSplit condition's reason, "" without one.
func trafficReason(rsp *fnv1.RunFunctionResponse) string {
	for _, c := range rsp.GetConditions() {
		if c.GetType() == reason.ConditionTrafficSplit {
			return c.GetReason()
		}
	}
	return ""
}

// canaryAt is the canary example with the given weights of versions 1 and 2.
func canaryAt(t testing.TB, w1, w2 int) map[string]any {
	t.Helper()
	xr := canaryXR(t)
	setPath(xr, []any{map[string]any{"version": "1", "weight": w1}, map[string]any{"version": "2", "weight": w2, "uri": canaryV2URI}}, "spec", "traffic")
	return xr
}

// promoted is the canary example with version 2 promoted; with traffic
// false spec.traffic is dropped.
func promoted(t testing.TB, traffic bool) map[string]any {
	t.Helper()
	xr := canaryXR(t)
	spec := xr["spec"].(map[string]any)
	spec["model"].(map[string]any)["uri"] = canaryV2URI
	spec["model"].(map[string]any)["version"] = "2"
	if traffic {
		spec["traffic"] = []any{map[string]any{"version": "2", "weight": 100}}
	} else {
		delete(spec, "traffic")
	}
	return xr
}

// TestMakeBeforeBreakShift moves weight between two versions of 4
// servers and back: 90/10 to 10/90 (3 + 1 to 1 + 3) and a standby canary
// to all of it (100/0 to 0/100). At every moment the version losing weight
// keeps the servers it had until the other has its new share ready, then
// steps down; the total never falls below 4; the route's weights follow
// readiness; the autoscalers' floors are held the same way.
func TestMakeBeforeBreakShift(t *testing.T) {
	for _, tc := range []struct {
		name                 string
		from, to             [2]int
		gain, keeps          int // the gaining version's share, the losing one's
		gateway, autoscaling bool
		wantRoute            []render.RouteBackend
	}{
		{name: "90-10To10-90", from: [2]int{90, 10}, to: [2]int{10, 90}, gain: 3, keeps: 1},
		{name: "90-10To10-90Routed", from: [2]int{90, 10}, to: [2]int{10, 90}, gain: 3, keeps: 1, gateway: true, wantRoute: []render.RouteBackend{{Service: "llama-1", Weight: 10}, {Service: "llama-2", Weight: 90}}},
		{name: "90-10To10-90Autoscaled", from: [2]int{90, 10}, to: [2]int{10, 90}, gain: 3, keeps: 1, autoscaling: true},
		{name: "StandbyToAll", from: [2]int{100, 0}, to: [2]int{0, 100}, gain: 4, keeps: 0},
		{name: "StandbyToAllRouted", from: [2]int{100, 0}, to: [2]int{0, 100}, gain: 4, keeps: 0, gateway: true, wantRoute: []render.RouteBackend{{Service: "llama-1", Weight: 0}, {Service: "llama-2", Weight: 100}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var in map[string]any
			w := world{}
			if tc.gateway {
				in, w = gatewayInput(t), world{RouteState: "accepted"}
			}
			at := func(w [2]int) map[string]any {
				xr := canaryAt(t, w[0], w[1])
				if tc.autoscaling {
					setPath(xr, map[string]any{"min": 4, "max": 8}, "spec", "replicas")
					setPath(xr, map[string]any{"enabled": true}, "spec", "autoscaling")
				}
				return xr
			}
			_, start := settle(t, at(tc.from), in, w, nil)
			steps := walk(t, at(tc.to), in, w, start)
			checkShift(t, steps, "1", "2", tc.gain, tc.keeps)
			if tc.gateway {
				checkRoute(t, steps)
			}
			last := steps[len(steps)-1]
			if got := last.after; got["1"] != tc.keeps || got["2"] != tc.gain {
				t.Errorf("after the shift %v ready by version, want %d and %d", got, tc.keeps, tc.gain)
			}
			if tc.wantRoute != nil {
				if diff := cmp.Diff(tc.wantRoute, routeOf(t, last.rsp)); diff != "" {
					t.Errorf("settled route (-want +got):\n%s", diff)
				}
			}

			// And back: the rollback follows the same rule in reverse.
			back := walk(t, at(tc.from), in, w, observeAll(t, last.rsp, w))
			checkShift(t, back, "2", "1", 4-tc.keeps, 4-tc.gain)
			if tc.gateway {
				checkRoute(t, back)
			}
		})
	}
}

// checkShift: the version losing servers keeps its ready servers until the
// gaining one has its share (had) ready and then ends with keeps, the
// total never falls below 4, and the condition says Shifting (or, while
// the gaining version has no server, VersionsNotReady) while it holds.
func checkShift(t *testing.T, steps []walkStep, losing, gaining string, had, keeps int) {
	t.Helper()
	shifted := false
	for i, st := range steps {
		for _, snap := range []map[string]int{st.before, st.after} {
			if total := snap["1"] + snap["2"]; total < 4 {
				t.Errorf("step %d: %d servers ready (%v), want at least 4", i, total, snap)
			}
		}
		if st.before[gaining] < had {
			if st.after[losing] < st.before[losing] {
				t.Errorf("step %d: version %s went from %d to %d ready servers while version %s had %d of %d", i, losing, st.before[losing], st.after[losing], gaining, st.before[gaining], had)
			}
			if i > 0 && trafficReason(st.rsp) != reason.Shifting.String() && trafficReason(st.rsp) != reason.VersionsNotReady.String() {
				t.Errorf("step %d: TrafficSplit %s while version %s waits for its servers", i, trafficReason(st.rsp), gaining)
			}
		} else {
			shifted = true
		}
	}
	if !shifted {
		t.Errorf("version %s never got its %d servers", gaining, had)
	}
	if got := steps[len(steps)-1].after[losing]; got != keeps {
		t.Errorf("version %s ends with %d servers, want %d", losing, got, keeps)
	}
}

// TestMakeBeforeBreakAddCanary: adding a canary at 90/10 to a primary of 4
// keeps the primary's 4 until the canary's server is ready, then 3 + 1;
// a canary that never gets ready leaves the primary at 4.
func TestMakeBeforeBreakAddCanary(t *testing.T) {
	plain := canaryXR(t)
	delete(plain["spec"].(map[string]any), "traffic")
	_, start := settle(t, plain, nil, world{}, nil)

	steps := walk(t, canaryAt(t, 90, 10), nil, world{}, start)
	for i, st := range steps {
		if st.before["2"] < 1 && st.after["1"] < 4 {
			t.Errorf("step %d: the primary has %d ready servers before the canary's is ready, want 4", i, st.after["1"])
		}
	}
	if got := steps[len(steps)-1].after; got["1"] != 3 || got["2"] != 1 {
		t.Errorf("settled at %v ready by version, want 3 and 1", got)
	}

	stuck := walk(t, canaryAt(t, 90, 10), nil, world{NotReady: map[string]bool{"llama-2": true}}, start)
	last := stuck[len(stuck)-1]
	if got := last.after["1"]; got != 4 {
		t.Errorf("the primary has %d ready servers beside a canary that never gets ready, want its 4", got)
	}
	if d := desiredObject[appsv1.Deployment](t, last.rsp, render.ResourceDeployment); *d.Spec.Replicas != 4 {
		t.Errorf("the primary is asked for %d servers, want 4 kept", *d.Spec.Replicas)
	}
	if msg := conditionMessage(last.rsp, reason.ConditionTrafficSplit); !strings.Contains(msg, "Deployment llama (version 1) keeps its servers beyond its share until Deployment llama-2 has its share of servers ready") {
		t.Errorf("TrafficSplit message %q does not say the primary is held", msg)
	}
	if msg, _ := statusOf(last.rsp)["message"].(string); !strings.Contains(msg, "Deployment llama (version 1) keeps 4 servers, its share being 3 until Deployment llama-2 has 0 of 1 servers ready") {
		t.Errorf("status.message %q does not count the servers held", msg)
	}
	// The split reports the shares, which add up to replicas.min.
	list, _ := statusOf(last.rsp)["traffic"].([]any)
	if n := list[0].(map[string]any)["replicas"].(float64) + list[1].(map[string]any)["replicas"].(float64); n != 4 {
		t.Errorf("status.traffic replicas add up to %v, want 4", n)
	}
}

// TestMakeBeforeBreakPromotion promotes version 2, keeping spec.traffic
// or dropping it, with and without a Gateway: the canary's warm servers
// and version 1's Service stay until the primary serves version 2's
// weights on all 4 servers; version 2's servers never fall below the
// canary's 1; the route (kept when traffic is dropped) never sends to a
// Service with no ready server.
func TestMakeBeforeBreakPromotion(t *testing.T) {
	for _, tc := range []struct {
		name     string
		traffic  bool
		gateway  bool
		settled  []string // resource names once the promotion settled
		backends []render.RouteBackend
	}{
		{name: "KeepTraffic", traffic: true, settled: []string{"deployment", "pull-job-*", "service", "service-2", "weights-pvc"}},
		{name: "DropTraffic", settled: []string{"deployment", "pull-job-*", "service", "weights-pvc"}},
		{name: "KeepTrafficRouted", traffic: true, gateway: true, settled: []string{"deployment", "pull-job-*", "route", "service", "service-2", "weights-pvc"}, backends: []render.RouteBackend{{Service: "llama-2", Weight: 100}}},
		{name: "DropTrafficRouted", gateway: true, settled: []string{"deployment", "pull-job-*", "route", "service", "weights-pvc"}, backends: []render.RouteBackend{{Service: "llama", Weight: 100}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var in map[string]any
			w := world{}
			if tc.gateway {
				in, w = gatewayInput(t), world{RouteState: "accepted"}
			}
			_, start := settle(t, canaryXR(t), in, w, nil)
			steps := walk(t, promoted(t, tc.traffic), in, w, start)
			if tc.gateway {
				checkRoute(t, steps)
			}
			released := false
			for i, st := range steps {
				names := desiredNames(st.rsp)
				if !released && !slices.Contains(names, "deployment-2") {
					released = true
					if st.before["2"] < 4+1 {
						t.Errorf("step %d: the canary's warm server went with %d servers of version 2 ready, want the primary's 4 besides it", i, st.before["2"])
					}
				}
				if !released && !slices.Contains(names, "service-1") {
					t.Errorf("step %d: version 1's Service went before the primary serves version 2 on its 4 servers", i)
				}
				if st.after["2"] < 1 || st.before["2"] < 1 {
					t.Errorf("step %d: version 2 had %d, then %d ready servers, want at least the canary's 1", i, st.before["2"], st.after["2"])
				}
				if total := st.after["1"] + st.after["2"]; total < 4 {
					t.Errorf("step %d: %d servers ready (%v), want at least 4", i, total, st.after)
				}
				if !slices.Contains(names, "service") {
					t.Errorf("step %d: the Service llama is not returned", i)
				}
				if tc.gateway && !slices.Contains(names, render.ResourceRoute) {
					t.Errorf("step %d: the HTTPRoute is not returned (clients of its hostname would get 404s)", i)
				}
				if phase := statusOf(st.rsp)["phase"]; phase != "Serving" {
					t.Errorf("step %d: phase %v during the promotion, want Serving: %v", i, phase, statusOf(st.rsp)["message"])
				}
			}
			if !released {
				t.Error("the canary's warm servers were never let go")
			}
			last := steps[len(steps)-1]
			var got []string
			for _, n := range desiredNames(last.rsp) {
				if strings.HasPrefix(n, render.ResourceJobPrefix) {
					n = "pull-job-*"
				}
				got = append(got, n)
			}
			if diff := cmp.Diff(tc.settled, got); diff != "" {
				t.Errorf("resources once settled (-want +got):\n%s", diff)
			}
			if tc.backends != nil {
				if diff := cmp.Diff(tc.backends, routeOf(t, last.rsp)); diff != "" {
					t.Errorf("settled route (-want +got):\n%s", diff)
				}
			}
			if got := last.after["2"]; got != 4 {
				t.Errorf("version 2 ends with %d ready servers, want 4", got)
			}
			svc := desiredObject[corev1.Service](t, last.rsp, render.ResourceService)
			if tc.traffic == false && !cmp.Equal(svc.Spec.Selector, map[string]string{resolve.LabelInstance: "llama", resolve.LabelComponent: resolve.ComponentServer}) {
				t.Errorf("the Service llama selects %v once settled, want the primary's servers", svc.Spec.Selector)
			}
		})
	}
}

// TestMakeBeforeBreakRemoveCanary drops a canary (spec.traffic back to the
// primary alone): the canary keeps its server until the primary has its 4,
// and the route keeps sending only where servers are ready.
func TestMakeBeforeBreakRemoveCanary(t *testing.T) {
	for _, gw := range []bool{false, true} {
		t.Run(map[bool]string{false: "Service", true: "Route"}[gw], func(t *testing.T) {
			var in map[string]any
			w := world{}
			if gw {
				in, w = gatewayInput(t), world{RouteState: "accepted"}
			}
			_, start := settle(t, canaryXR(t), in, w, nil)
			alone := canaryXR(t)
			setPath(alone, []any{map[string]any{"version": "1", "weight": 100}}, "spec", "traffic")
			steps := walk(t, alone, in, w, start)
			if gw {
				checkRoute(t, steps)
			}
			for i, st := range steps {
				if st.before["1"] < 4 && st.after["2"] < 1 {
					t.Errorf("step %d: the canary's server went while the primary had %d of 4", i, st.before["1"])
				}
				if total := st.after["1"] + st.after["2"]; total < 4 {
					t.Errorf("step %d: %d servers ready (%v), want at least 4", i, total, st.after)
				}
			}
			last := steps[len(steps)-1]
			if got := last.after; got["1"] != 4 || got["2"] != 0 {
				t.Errorf("settled at %v ready by version, want 4 and none", got)
			}
			for _, gone := range []string{"deployment-2", "service-2"} {
				if _, ok := last.rsp.GetDesired().GetResources()[gone]; ok {
					t.Errorf("%s is still returned once the primary has its servers", gone)
				}
			}
		})
	}
}

// TestRouteFollowsReadiness weighs a 90/10 route by its versions'
// readiness: scaled by the share of wanted servers that are ready, the
// rest to versions with ready servers, never to one without.
func TestRouteFollowsReadiness(t *testing.T) {
	for name, tc := range map[string]struct {
		cands    []plan.RouteCandidate
		fallback plan.RouteCandidate
		want     []render.RouteBackend
		ok       bool
	}{
		"AllReady": {
			cands: []plan.RouteCandidate{{Service: "a", Weight: 90, Wanted: 3, Ready: 3}, {Service: "b", Weight: 10, Wanted: 1, Ready: 1}},
			want:  []render.RouteBackend{{Service: "a", Weight: 90}, {Service: "b", Weight: 10}}, ok: true,
		},
		"CanaryLoading": {
			cands: []plan.RouteCandidate{{Service: "a", Weight: 90, Wanted: 3, Ready: 3}, {Service: "b", Weight: 10, Wanted: 1, Ready: 0}},
			want:  []render.RouteBackend{{Service: "a", Weight: 100}, {Service: "b", Weight: 0}}, ok: true,
		},
		"PrimaryOfWeight0Empty": {
			// The old behaviour gave the canary's weight to the primary
			// even with no server: now to the ready version only.
			cands: []plan.RouteCandidate{{Service: "a", Weight: 0, Wanted: 0, Ready: 0}, {Service: "b", Weight: 50, Wanted: 1, Ready: 1}, {Service: "c", Weight: 50, Wanted: 1, Ready: 0}},
			want:  []render.RouteBackend{{Service: "a", Weight: 0}, {Service: "b", Weight: 100}, {Service: "c", Weight: 0}}, ok: true,
		},
		"HalfReady": {
			// b's unready quarter goes to the ready servers, a's two and
			// b's one alike: about 33 each.
			cands: []plan.RouteCandidate{{Service: "a", Weight: 50, Wanted: 2, Ready: 2}, {Service: "b", Weight: 50, Wanted: 2, Ready: 1}},
			want:  []render.RouteBackend{{Service: "a", Weight: 67}, {Service: "b", Weight: 33}}, ok: true,
		},
		"ShiftingSpareFirst": {
			// 10/90 of 4 while version a keeps 3 servers (it wants 1) and
			// b has 1 of 3: b gets 30, the rest goes to a's spare servers.
			cands: []plan.RouteCandidate{{Service: "a", Weight: 10, Wanted: 1, Ready: 3}, {Service: "b", Weight: 90, Wanted: 3, Ready: 1}},
			want:  []render.RouteBackend{{Service: "a", Weight: 70}, {Service: "b", Weight: 30}}, ok: true,
		},
		"PromotionToTheMainService": {
			// Version 2 has the canary's warm server of 4 wanted; the
			// primary's 3 old servers answer only behind the Service
			// <name>.
			cands:    []plan.RouteCandidate{{Service: "llama-2", Weight: 100, Wanted: 4, Ready: 1}},
			fallback: plan.RouteCandidate{Service: "llama", Ready: 3},
			want:     []render.RouteBackend{{Service: "llama-2", Weight: 25}, {Service: "llama", Weight: 75}}, ok: true,
		},
		"ThirdsRoundToOneHundred": {
			cands: []plan.RouteCandidate{{Service: "a", Weight: 34, Wanted: 3, Ready: 1}, {Service: "b", Weight: 33, Wanted: 3, Ready: 3}, {Service: "c", Weight: 33, Wanted: 3, Ready: 3}},
			want:  []render.RouteBackend{{Service: "a", Weight: 14}, {Service: "b", Weight: 43}, {Service: "c", Weight: 43}}, ok: true,
		},
		"NothingReady": {
			cands: []plan.RouteCandidate{{Service: "a", Weight: 90, Wanted: 3, Ready: 0}, {Service: "b", Weight: 10, Wanted: 1, Ready: 0}},
		},
	} {
		t.Run(name, func(t *testing.T) {
			got, ok := plan.RouteWeights(tc.cands, tc.fallback)
			if ok != tc.ok {
				t.Fatalf("ok %v, want %v (%v)", ok, tc.ok, got)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("backends (-want +got):\n%s", diff)
			}
		})
	}
}

// TestRouteKeepsLastWeights: when no version has a ready server the route
// keeps the weights it was observed with, and TrafficSplit says why.
func TestRouteKeepsLastWeights(t *testing.T) {
	in := gatewayInput(t)
	_, obs := settle(t, canaryXR(t), in, world{RouteState: "accepted"}, nil)
	var down []observedObject
	for _, o := range obs {
		if o.Object["kind"] == "Deployment" {
			o = observedObject{Name: o.Name, Object: cloneMap(o.Object)}
			n, _ := nestedInt(o.Object, "spec", "replicas")
			o.Object["status"] = deploymentStatus(n, 0)
		}
		down = append(down, o)
	}
	rsp := run(t, newRequest(t, canaryXR(t), in, down...))
	if diff := cmp.Diff([]render.RouteBackend{{Service: "llama-1", Weight: 90}, {Service: "llama-2", Weight: 10}}, routeOf(t, rsp)); diff != "" {
		t.Errorf("route with no ready server (-want +got):\n%s", diff)
	}
	if got := trafficReason(rsp); got != reason.RouteHeld.String() {
		t.Errorf("TrafficSplit %s, want RouteHeld (%s)", got, conditionMessage(rsp, reason.ConditionTrafficSplit))
	}
	if msg := conditionMessage(rsp, reason.ConditionTrafficSplit); !strings.Contains(msg, "keeps its last weights (llama-1 90%, llama-2 10%)") {
		t.Errorf("TrafficSplit message %q", msg)
	}
}

// TestRouteDeletedWithoutGateway: a route stays when spec.traffic goes,
// and goes only when the Input no longer names a Gateway.
func TestRouteDeletedWithoutGateway(t *testing.T) {
	in := gatewayInput(t)
	_, obs := settle(t, canaryXR(t), in, world{RouteState: "accepted"}, nil)
	plain := canaryXR(t)
	delete(plain["spec"].(map[string]any), "traffic")
	rsp, obs2 := settle(t, plain, in, world{RouteState: "accepted"}, obs)
	if diff := cmp.Diff([]render.RouteBackend{{Service: "llama", Weight: 100}}, routeOf(t, rsp)); diff != "" {
		t.Errorf("the route without spec.traffic (-want +got):\n%s", diff)
	}
	if st := statusOf(rsp); st["routeURL"] != "http://llama.team-a.models.example.com" {
		t.Errorf("status.routeURL %v with the route kept", st["routeURL"])
	}
	rsp, _ = settle(t, plain, nil, world{}, obs2)
	if _, ok := rsp.GetDesired().GetResources()[render.ResourceRoute]; ok {
		t.Error("the route is still returned once the Input names no Gateway")
	}
}

func cloneMap(m map[string]any) map[string]any {
	b, _ := json.Marshal(m)
	out := map[string]any{}
	_ = json.Unmarshal(b, &out)
	return out
}
