//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"math"
	"sync"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/inferno-ai/function-inferno/test/e2e/kube"
	"github.com/inferno-ai/function-inferno/test/e2e/traffic"
)

// --- 24 canary steps under load --------------------------------------------

// canarySteps walks a 4-server claim through every change a canary goes
// through — adding it at 90/10, shifting to 10/90, promoting it, rolling
// back — each under a 20 req/s loop through the main Service, with servers
// that take 4 s to load (so that a server that is not ready yet shows).
// For each step: 0 failed requests; the split of 1,000 requests within 3σ
// of the servers' split; and, from a watch on the Deployments (every
// status change, not samples), the version losing servers never below the
// ready servers it had until the gaining side has its new share ready.
func (s *infernoSuite) canarySteps(t *testing.T) {
	if !s.realServeOK {
		t.Skip("16 serve did not pass")
	}
	ctx := context.Background()
	sc := env.summary.start(t, "24 canary steps under load (real node)")
	sc.onRealNode(false)
	const name = "steps"
	v1 := publishWeights(t, "steps-v1", "inferno steps v1")
	v2 := publishWeights(t, "steps-v2", "inferno steps v2")
	claim := func(uri, version string, traffic []any) *unstructured.Unstructured {
		c := realClaim(t, name, uri, version, 4)
		setField(c, map[string]any{"env": []any{map[string]any{"name": "FAKE_LOAD_DELAY", "value": "4s"}}}, "spec", "serve")
		if traffic != nil {
			setField(c, traffic, "spec", "traffic")
		}
		return c
	}
	split := func(w1, w2 int64) []any {
		return []any{
			map[string]any{"version": "1", "weight": w1},
			map[string]any{"version": "2", "weight": w2, "uri": v2.URI},
		}
	}
	applyClaim(ctx, t, claim(v1.URI, "1", nil))
	waitClaimsReady(ctx, t, realNS, []string{name}, 3*time.Minute)
	rec := recordDeployments(ctx, t, realNS, name)
	base := serviceURL(ctx, t, realNS, name)

	steps := []struct {
		what string
		c    *unstructured.Unstructured
		// losing, gaining: Deployments; gained says the gaining side has
		// its new share ready; want is the servers per version after.
		losing, gaining string
		gained          func(d deploymentState) bool
		want            map[string]int
	}{
		{"add canary 90/10", claim(v1.URI, "1", split(90, 10)), name, name + "-2",
			func(d deploymentState) bool { return d.Ready >= 1 }, map[string]int{"1": 3, "2": 1}},
		{"shift to 10/90", claim(v1.URI, "1", split(10, 90)), name, name + "-2",
			func(d deploymentState) bool { return d.Ready >= 3 }, map[string]int{"1": 1, "2": 3}},
		{"promote version 2", claim(v2.URI, "2", nil), name + "-2", name,
			func(d deploymentState) bool { return d.settled(4) }, map[string]int{"2": 4}},
		{"roll back to version 1", claim(v1.URI, "1", nil), name, name,
			func(d deploymentState) bool { return d.settled(4) }, map[string]int{"1": 4}},
	}
	for _, st := range steps {
		before := rec.current(st.losing)
		mark := rec.mark()
		loop := traffic.Start(traffic.Options{URL: base + "/v1/completions", Body: completionBody(name), Rate: 20, Max: 20 * 240, MaxDuration: 4 * time.Minute})
		time.Sleep(time.Second)
		start := time.Now()
		breaker := breakerStep(ctx, t, sc, realNS, name, st.what)
		applyClaim(ctx, t, st.c)
		err := kube.Eventually(ctx, 3*time.Minute, 250*time.Millisecond, st.what+": servers "+fmt.Sprint(st.want), func(ctx context.Context) (bool, string, error) {
			got := serverPods(ctx, t, realNS, name)
			done := fmt.Sprint(got) == fmt.Sprint(st.want) && deploymentSettled(ctx, realNS, name)
			return done, fmt.Sprintf("ready servers %v", got), nil
		})
		took := time.Since(start)
		if err == nil {
			breaker()
		}
		time.Sleep(2 * time.Second)
		rep := loop.Stop()
		if err != nil {
			t.Fatal(err)
		}
		low := rec.lowestUntil(mark, st.losing, st.gaining, st.gained)
		// The split the servers make, once kube-proxy has them all.
		total := 0
		for _, n := range st.want {
			total += n
		}
		waitServiceProgrammed(ctx, t, realNS, name, total)
		sample := traffic.Start(traffic.Options{URL: base + "/v1/completions", Body: completionBody(name), Max: 1000, MaxDuration: 2 * time.Minute}).Wait()
		var splitNote string
		for v, n := range st.want {
			p := float64(n) / float64(total)
			want, sigma := p*float64(sample.OK), math.Sqrt(float64(sample.OK)*p*(1-p))
			got := float64(sample.ByVersion[v])
			splitNote += fmt.Sprintf(" v%s %d (expect %.0f±%.0f)", v, sample.ByVersion[v], want, 3*sigma)
			if math.Abs(got-want) > 3*sigma+0.5 {
				t.Errorf("%s: version %s answered %.0f of %d, expect %.0f ± %.0f for %d of %d servers", st.what, v, got, sample.OK, want, 3*sigma, n, total)
			}
		}
		sc.note("%s: %.1fs, sent %d, failed %d; %s ready never below %d until %s had its share (had %d); split of 1,000:%s",
			st.what, took.Seconds(), rep.Sent(), rep.Failed, st.losing, low, st.gaining, before.Ready, splitNote)
		if rep.Failed != 0 || sample.Failed != 0 {
			t.Errorf("%s: %d of %d requests failed during the change, %d of the 1,000 after: %s", st.what, rep.Failed, rep.Sent(), sample.Failed, rep.Failures(5))
		}
		if low < int(before.Ready) {
			t.Errorf("%s: %s fell to %d ready servers (from %d) before %s had its new share ready", st.what, st.losing, low, before.Ready, st.gaining)
		}
	}
	deleteClaimsAndWait(ctx, t, realNS, []string{name})
}

// deploymentState is one observed status of a Deployment.
type deploymentState struct {
	At                               time.Time
	Name                             string
	Deleted                          bool
	Generation, ObservedGeneration   int64
	Replicas, Ready, Updated, Wanted int32
}

func (d deploymentState) settled(n int32) bool {
	return !d.Deleted && d.ObservedGeneration == d.Generation && d.Wanted == n && d.Updated == n && d.Ready == n && d.Replicas == n
}

// deploymentRecorder keeps every status change of a claim's Deployments,
// in the order the watch delivered them.
type deploymentRecorder struct {
	mu     sync.Mutex
	events []deploymentState
}

func recordDeployments(ctx context.Context, t *testing.T, ns, claim string) *deploymentRecorder {
	t.Helper()
	r := &deploymentRecorder{}
	record := func(d *appsv1.Deployment, deleted bool) {
		st := deploymentState{At: time.Now(), Name: d.Name, Deleted: deleted,
			Generation: d.Generation, ObservedGeneration: d.Status.ObservedGeneration,
			Replicas: d.Status.Replicas, Ready: d.Status.ReadyReplicas, Updated: d.Status.UpdatedReplicas, Wanted: 1}
		if d.Spec.Replicas != nil {
			st.Wanted = *d.Spec.Replicas
		}
		if st.Deleted {
			st.Ready = 0
		}
		r.mu.Lock()
		r.events = append(r.events, st)
		r.mu.Unlock()
	}
	// List, then watch from the list's resourceVersion: the recorder has
	// the current state when it returns, and misses no change after it.
	opts := metav1.ListOptions{LabelSelector: instanceLabel + "=" + claim}
	l, err := env.admin.Typed.AppsV1().Deployments(ns).List(ctx, opts)
	if err != nil {
		t.Fatal(err)
	}
	for i := range l.Items {
		record(&l.Items[i], false)
	}
	opts.ResourceVersion = l.ResourceVersion
	w, err := env.admin.Typed.AppsV1().Deployments(ns).Watch(ctx, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(w.Stop)
	go func() {
		for ev := range w.ResultChan() {
			if d, ok := ev.Object.(*appsv1.Deployment); ok {
				record(d, ev.Type == watch.Deleted)
			}
		}
	}()
	return r
}

func (r *deploymentRecorder) mark() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.events)
}

// current is the latest state of a Deployment.
func (r *deploymentRecorder) current(name string) deploymentState {
	r.mu.Lock()
	defer r.mu.Unlock()
	for i := len(r.events) - 1; i >= 0; i-- {
		if r.events[i].Name == name {
			return r.events[i]
		}
	}
	return deploymentState{Name: name}
}

// lowestUntil is the fewest ready servers losing had, from event from on,
// until gaining's state first satisfied gained (or to the end).
func (r *deploymentRecorder) lowestUntil(from int, losing, gaining string, gained func(deploymentState) bool) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	low := math.MaxInt
	cur := int32(-1)
	for i := len(r.events[:from]) - 1; i >= 0; i-- {
		if r.events[i].Name == losing {
			cur = r.events[i].Ready
			break
		}
	}
	if cur >= 0 {
		low = int(cur)
	}
	for _, e := range r.events[from:] {
		if e.Name == gaining && gained(e) {
			break
		}
		if e.Name == losing {
			low = min(low, int(e.Ready))
		}
	}
	if low == math.MaxInt {
		return 0
	}
	return low
}
