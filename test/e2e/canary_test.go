//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/inferno-ai/function-inferno/test/e2e/kube"
)

// canary runs a version split through the real control plane: a serving
// claim gains a 90/10 canary without its primary's servers restarting, the
// Service <name> reaches the pods of both versions, and the canary is
// promoted without the primary's ready servers ever dropping; afterwards
// the old version's objects are gone.
func (s *infernoSuite) canary(t *testing.T) {
	ctx := context.Background()
	sc := env.summary.start(t, "12 canary")
	const ns, name = "team-canary", "canary"
	if err := env.createTeamNamespace(ctx, ns); err != nil {
		t.Fatal(err)
	}
	// Four servers: 90/10 apportions them 3 and 1 (largest remainder, at
	// least one for any weight above 0), and the servers roll with
	// maxUnavailable 0, so none goes before its successor is ready.
	claim := smallClaim(t, ns, name)
	setField(claim, "hf://e2e/canary-v1", "spec", "model", "uri")
	setField(claim, map[string]any{"min": int64(4), "max": int64(4)}, "spec", "replicas")
	start := time.Now()
	applyClaim(ctx, t, claim)
	breaker := breakerStep(ctx, t, sc, ns, name, "first pull and start")
	waitClaimsReady(ctx, t, ns, []string{name}, 2*time.Minute)
	sc.note("primary alone Ready in %.1fs", time.Since(start).Seconds())
	breaker()
	primaryRS := replicaSets(ctx, t, ns, name)

	// Add the canary.
	setField(claim, []any{
		map[string]any{"version": "1", "weight": int64(90)},
		map[string]any{"version": "2", "weight": int64(10), "uri": "hf://e2e/canary-v2"},
	}, "spec", "traffic")
	start = time.Now()
	breaker = breakerStep(ctx, t, sc, ns, name, "canary add")
	applyClaim(ctx, t, claim)
	// With Crossplane's default XR circuit breaker this can wait out two
	// or three 1-minute polls (see docs/testing.md); the time is reported.
	err := kube.Eventually(ctx, 4*time.Minute, 250*time.Millisecond, "both versions serving, claim Ready", func(ctx context.Context) (bool, string, error) {
		c, err := env.admin.Get(ctx, claimGVK, ns, name)
		if err != nil {
			return false, "", err
		}
		phases := trafficPhases(c)
		ready, _, _ := kube.Condition(c, "Ready")
		return phases == "1=Serving,2=Serving" && ready == "True", fmt.Sprintf("traffic %s, Ready %s; %s", phases, ready, kube.ConditionsSummary(c)), nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sc.note("canary added -> both versions Serving, Ready in %.1fs", time.Since(start).Seconds())
	breaker()

	pods := serverPods(ctx, t, ns, name)
	if pods["1"] != 3 || pods["2"] != 1 {
		t.Errorf("ready server pods per version %v, want 1:3 and 2:1", pods)
	}
	if after := replicaSets(ctx, t, ns, name); !sameStrings(primaryRS, after) {
		t.Errorf("the primary's ReplicaSets went from %v to %v: adding a canary restarted its servers", primaryRS, after)
	}
	for _, svc := range []string{name, name + "-1", name + "-2"} {
		if _, err := env.admin.Typed.CoreV1().Services(ns).Get(ctx, svc, metav1.GetOptions{}); err != nil {
			t.Errorf("Service %s: %v", svc, err)
		}
	}
	// The Service <name>'s endpoints cover the servers of both versions,
	// and nothing else (no pull pods).
	var endpoints map[string]int
	err = kube.Eventually(ctx, time.Minute, 250*time.Millisecond, "Service "+name+" endpoints on both versions", func(ctx context.Context) (bool, string, error) {
		endpoints, err = serviceEndpointVersions(ctx, ns, name)
		return err == nil && endpoints["1"] == 3 && endpoints["2"] == 1 && len(endpoints) == 2, fmt.Sprintf("ready endpoints by version %v", endpoints), err
	})
	if err != nil {
		t.Error(err)
	} else {
		sc.note("Service %s endpoints by version %v (asked 90/10; split by servers, approximate)", name, endpoints)
	}

	// Shift to 10/90 and back: the servers go 1 and 3, then 3 and 1 again,
	// each version keeping its ready servers until the other has its
	// share (make before break); each step is timed to the claim Ready on
	// the new split.
	for _, st := range []struct {
		w1, w2       int64
		want1, want2 int
	}{{10, 90, 1, 3}, {90, 10, 3, 1}} {
		setField(claim, []any{
			map[string]any{"version": "1", "weight": st.w1},
			map[string]any{"version": "2", "weight": st.w2, "uri": "hf://e2e/canary-v2"},
		}, "spec", "traffic")
		what := fmt.Sprintf("shift to %d/%d", st.w1, st.w2)
		start = time.Now()
		breaker = breakerStep(ctx, t, sc, ns, name, what)
		applyClaim(ctx, t, claim)
		waitSplit(ctx, t, ns, name, map[string]int{"1": st.want1, "2": st.want2})
		sc.note("%s -> servers %d and %d, Ready in %.1fs", what, st.want1, st.want2, time.Since(start).Seconds())
		breaker()
	}

	// Promote: spec.model moves to version 2, version 1 leaves the split.
	// Meanwhile watch the primary's ready servers.
	primary, err := env.admin.Typed.AppsV1().Deployments(ns).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	floor := primary.Status.ReadyReplicas
	// Every status the API server sends for the primary, from a watch.
	rec := recordDeployments(ctx, t, ns, name)
	mark := rec.mark()
	setField(claim, "hf://e2e/canary-v2", "spec", "model", "uri")
	setField(claim, "2", "spec", "model", "version")
	setField(claim, []any{map[string]any{"version": "2", "weight": int64(100)}}, "spec", "traffic")
	start = time.Now()
	breaker = breakerStep(ctx, t, sc, ns, name, "promotion")
	applyClaim(ctx, t, claim)
	err = kube.Eventually(ctx, 4*time.Minute, 250*time.Millisecond, "promoted: the primary serves version 2, the old objects are gone", func(ctx context.Context) (bool, string, error) {
		d, err := env.admin.Typed.AppsV1().Deployments(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, "", err
		}
		c, err := env.admin.Get(ctx, claimGVK, ns, name)
		if err != nil {
			return false, "", err
		}
		var left []string
		if _, err := env.admin.Typed.AppsV1().Deployments(ns).Get(ctx, name+"-2", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			left = append(left, "Deployment "+name+"-2")
		}
		if _, err := env.admin.Typed.CoreV1().Services(ns).Get(ctx, name+"-1", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			left = append(left, "Service "+name+"-1")
		}
		jobs, err := env.admin.Typed.BatchV1().Jobs(ns).List(ctx, metav1.ListOptions{LabelSelector: instanceLabel + "=" + name})
		if err != nil {
			return false, "", err
		}
		for _, j := range jobs.Items {
			if j.Annotations["inference.inferno.io/model-uri"] == "hf://e2e/canary-v1" {
				left = append(left, "Job "+j.Name+" (version 1)")
			}
		}
		version := d.Spec.Template.Labels["app.kubernetes.io/version"]
		rolledOut := d.Status.ObservedGeneration >= d.Generation && d.Status.UpdatedReplicas == d.Status.Replicas &&
			d.Status.AvailableReplicas == d.Status.Replicas && d.Status.Replicas == 4
		ready, _, _ := kube.Condition(c, "Ready")
		phase, _, _ := unstructured.NestedString(c.Object, "status", "phase")
		done := version == "2" && rolledOut && len(left) == 0 && ready == "True" && phase == "Serving"
		return done, fmt.Sprintf("primary on version %q, rolled out %v, left %v, phase %s, Ready %s", version, rolledOut, left, phase, ready), nil
	})
	low := int32(rec.lowestUntil(mark, name, "", func(deploymentState) bool { return false }))
	if err != nil {
		t.Fatal(err)
	}
	sc.note("promotion done in %.1fs; the primary's ready servers never fell below %d (lowest seen %d)", time.Since(start).Seconds(), floor, low)
	breaker()
	if low < floor {
		t.Errorf("the primary's ready servers dropped to %d during the promotion, below the %d it had", low, floor)
	}
	if after := replicaSets(ctx, t, ns, name); len(after) < 2 {
		t.Errorf("the primary's ReplicaSets %v: the promotion should roll the servers to the new weights", after)
	}
	jobs, err := env.admin.Typed.BatchV1().Jobs(ns).List(ctx, metav1.ListOptions{LabelSelector: instanceLabel + "=" + name})
	if err != nil {
		t.Fatal(err)
	}
	if len(jobs.Items) != 1 {
		t.Errorf("%d pull Jobs after the promotion, want the one that pulled version 2", len(jobs.Items))
	}

	// Roll back: spec.model back to version 1, a single version again.
	setField(claim, "hf://e2e/canary-v1", "spec", "model", "uri")
	setField(claim, "1", "spec", "model", "version")
	unstructured.RemoveNestedField(claim.Object, "spec", "traffic")
	start = time.Now()
	breaker = breakerStep(ctx, t, sc, ns, name, "roll back")
	applyClaim(ctx, t, claim)
	waitSplit(ctx, t, ns, name, map[string]int{"1": 4})
	sc.note("rolled back to version 1 -> 4 servers on it, Ready in %.1fs", time.Since(start).Seconds())
	breaker()
	deleteClaimsAndWait(ctx, t, ns, []string{name})
}

// waitSplit waits until claim ns/name is Ready and Serving with exactly
// the ready servers per version in want, every Deployment of it settled
// (rolled out, all ready) and nothing more held by make before break (no TrafficSplit reason
// Shifting or VersionsNotReady).
func waitSplit(ctx context.Context, t *testing.T, ns, name string, want map[string]int) {
	t.Helper()
	err := kube.Eventually(ctx, 4*time.Minute, 250*time.Millisecond, fmt.Sprintf("claim %s/%s Ready on servers %v", ns, name, want), func(ctx context.Context) (bool, string, error) {
		c, err := env.admin.Get(ctx, claimGVK, ns, name)
		if err != nil {
			return false, "", err
		}
		ready, _, _ := kube.Condition(c, "Ready")
		phase, _, _ := unstructured.NestedString(c.Object, "status", "phase")
		_, split, _ := kube.Condition(c, "TrafficSplit")
		pods := serverPods(ctx, t, ns, name)
		ds, err := env.admin.Typed.AppsV1().Deployments(ns).List(ctx, metav1.ListOptions{LabelSelector: instanceLabel + "=" + name})
		if err != nil {
			return false, "", err
		}
		settled := true
		for _, d := range ds.Items {
			settled = settled && deploymentSettled(ctx, ns, d.Name)
		}
		held := split == "Shifting" || split == "VersionsNotReady"
		done := ready == "True" && phase == "Serving" && !held && settled && fmt.Sprint(pods) == fmt.Sprint(want)
		return done, fmt.Sprintf("Ready %s, phase %s, TrafficSplit %q, servers %v, settled %v", ready, phase, split, pods, settled), nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// trafficPhases writes a claim's status.traffic as version=phase pairs.
func trafficPhases(c *unstructured.Unstructured) string {
	list, _, _ := unstructured.NestedSlice(c.Object, "status", "traffic")
	var out []string
	for _, e := range list {
		m, _ := e.(map[string]any)
		out = append(out, fmt.Sprintf("%v=%v", m["version"], m["phase"]))
	}
	return strings.Join(out, ",")
}

// replicaSets lists the primary Deployment's ReplicaSets by name.
func replicaSets(ctx context.Context, t *testing.T, ns, deployment string) []string {
	t.Helper()
	l, err := env.admin.Typed.AppsV1().ReplicaSets(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, rs := range l.Items {
		if controllerName(rs.OwnerReferences) == deployment {
			out = append(out, rs.Name)
		}
	}
	sort.Strings(out)
	return out
}

func sameStrings(a, b []string) bool {
	return strings.Join(a, ",") == strings.Join(b, ",")
}

// serverPods counts a claim's ready server pods by version label.
func serverPods(ctx context.Context, t *testing.T, ns, claim string) map[string]int {
	t.Helper()
	l, err := env.admin.Typed.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: instanceLabel + "=" + claim})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]int{}
	for _, p := range l.Items {
		if p.Labels["app.kubernetes.io/component"] == "model-puller" || p.DeletionTimestamp != nil || !podReady(&p) {
			continue
		}
		out[p.Labels["app.kubernetes.io/version"]]++
	}
	return out
}

func podReady(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// serviceEndpointVersions counts the ready endpoints of a Service's
// EndpointSlices by the version label of the pod behind each. The Service
// is named after the claim; a pod that is not one of its servers counts
// under "not a server".
func serviceEndpointVersions(ctx context.Context, ns, svc string) (map[string]int, error) {
	slices, err := env.admin.Typed.DiscoveryV1().EndpointSlices(ns).List(ctx, metav1.ListOptions{LabelSelector: "kubernetes.io/service-name=" + svc})
	if err != nil {
		return nil, err
	}
	out := map[string]int{}
	for _, s := range slices.Items {
		for _, e := range s.Endpoints {
			if e.Conditions.Ready != nil && !*e.Conditions.Ready || e.TargetRef == nil {
				continue
			}
			p, err := env.admin.Typed.CoreV1().Pods(ns).Get(ctx, e.TargetRef.Name, metav1.GetOptions{})
			if err != nil {
				return nil, err
			}
			if p.Labels[instanceLabel] != svc || !strings.HasPrefix(p.Labels["app.kubernetes.io/component"], "model-server") {
				out["not a server"]++
				continue
			}
			out[p.Labels["app.kubernetes.io/version"]]++
		}
	}
	return out, nil
}
