//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/inferno-ai/function-inferno/test/e2e/kube"
	"github.com/inferno-ai/function-inferno/test/e2e/traffic"
)

// --- 17 upgrade under load -----------------------------------------------

// upgradeUnderLoad moves the serving claim to new weights while a bounded
// loop sends 20 requests a second through its Service. Goal: no request
// fails, and no answer comes from the new weights before their pull Job
// completed.
func (s *infernoSuite) upgradeUnderLoad(t *testing.T) {
	if !s.realServeOK {
		t.Skip("16 serve did not pass")
	}
	ctx := context.Background()
	sc := env.summary.start(t, "17 upgrade under load (real node)")
	sc.onRealNode(false)
	const name = "chat"
	v2 := publishWeights(t, "chat-v2", "inferno chat v2")
	base := serviceURL(ctx, t, realNS, name)
	old, err := complete(ctx, base, name)
	if err != nil {
		t.Fatal(err)
	}
	// When the new pull Job completes, from a watch.
	jobDone := watchJobComplete(ctx, t, realNS, name, v2.URI)

	loop := traffic.Start(traffic.Options{URL: base + "/v1/completions", Body: completionBody(name), Rate: 20, Max: 20 * 240, MaxDuration: 4 * time.Minute})
	time.Sleep(2 * time.Second)
	start := time.Now()
	applyClaim(ctx, t, realClaim(t, name, v2.URI, "2", 1))
	newWeights, err := awaitNewWeights(ctx, loop, old.Weights, name, nil)
	time.Sleep(2 * time.Second)
	rep := loop.Stop()
	if err != nil {
		t.Fatal(err)
	}
	first, _ := rep.FirstOK(newWeights)
	pulledAt := jobDone()
	sc.note("sent %d, failed %d, old weights %d, new weights %d; new pull Complete %.1fs after the change, first new answer %.1fs after it; p99 %s",
		rep.Sent(), rep.Failed, rep.ByWeights[old.Weights], rep.ByWeights[newWeights],
		pulledAt.Sub(start).Seconds(), first.Start.Sub(pulledAt).Seconds(), rep.Latency(99).Round(time.Millisecond))
	if rep.Failed != 0 {
		t.Errorf("%d of %d requests failed during the upgrade: %s", rep.Failed, rep.Sent(), rep.Failures(5))
	}
	if pulledAt.IsZero() || first.Start.Before(pulledAt) {
		t.Errorf("an answer from the new weights at %s, before their pull completed (%s)", first.Start.Format(time.StampMilli), pulledAt.Format(time.StampMilli))
	}
	c, err := complete(ctx, base, name)
	if err != nil {
		t.Fatal(err)
	}
	if want := oracle(t, v2); c.Text != want || c.Version != "2" {
		t.Errorf("after the upgrade the server answers %q (version %q), want %q (version 2)", c.Text, c.Version, want)
	}
	s.realUpgradeOK = true
}

// awaitNewWeights waits until the last 20 answers of loop all came, each
// answered, from weights other than oldWeights, and the rollout of
// Deployment name (in realNS) is done; it returns the new weights. look,
// when set, runs on every look.
func awaitNewWeights(ctx context.Context, loop *traffic.Loop, oldWeights, name string, look func()) (string, error) {
	var newWeights string
	err := kube.Eventually(ctx, 3*time.Minute, 250*time.Millisecond, "every answer from the new weights, rollout done", func(ctx context.Context) (bool, string, error) {
		if look != nil {
			look()
		}
		rep := loop.Snapshot()
		last := rep.Results
		if len(last) < 20 {
			return false, "", nil
		}
		last = last[len(last)-20:]
		for _, r := range last {
			if !r.OK() || r.Weights == oldWeights || r.Weights == "" {
				return false, fmt.Sprintf("%d answered by the old weights, %d failed so far", rep.ByWeights[oldWeights], rep.Failed), nil
			}
		}
		newWeights = last[len(last)-1].Weights
		return deploymentSettled(ctx, realNS, name), "waiting for the rollout to finish", nil
	})
	return newWeights, err
}

// watchJobComplete watches a claim's pull Jobs and returns a function that
// tells when the one pulling uri was first seen Complete (zero if never).
func watchJobComplete(ctx context.Context, t *testing.T, ns, claim, uri string) func() time.Time {
	t.Helper()
	w, err := env.admin.Typed.BatchV1().Jobs(ns).Watch(ctx, metav1.ListOptions{LabelSelector: instanceLabel + "=" + claim})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan time.Time, 1)
	go func() {
		defer w.Stop()
		for ev := range w.ResultChan() {
			j, ok := ev.Object.(*batchv1.Job)
			if !ok || j.Annotations["inference.inferno.io/model-uri"] != uri {
				continue
			}
			if jobDone(j, batchv1.JobComplete) {
				done <- time.Now()
				return
			}
		}
	}()
	var at time.Time
	got := false
	t.Cleanup(w.Stop)
	return func() time.Time {
		if !got {
			select {
			case at = <-done:
				got = true
			case <-time.After(5 * time.Second):
			}
		}
		return at
	}
}

// deploymentSettled says whether a claim's primary Deployment has rolled
// out its latest template on every replica, with no old pod left.
func deploymentSettled(ctx context.Context, ns, name string) bool {
	d, err := env.admin.Typed.AppsV1().Deployments(ns).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return false
	}
	want := int32(1)
	if d.Spec.Replicas != nil {
		want = *d.Spec.Replicas
	}
	st := d.Status
	return st.ObservedGeneration == d.Generation && st.UpdatedReplicas == want && st.ReadyReplicas == want && st.Replicas == want && deploymentAvailable(d)
}

func deploymentAvailable(d *appsv1.Deployment) bool {
	for _, c := range d.Status.Conditions {
		if c.Type == appsv1.DeploymentAvailable {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}
