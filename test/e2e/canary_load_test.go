//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"math"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/inferno-ai/function-inferno/test/e2e/kube"
	"github.com/inferno-ai/function-inferno/test/e2e/traffic"
)

// --- 19 canary under load ---------------------------------------------------

// canaryUnderLoad splits a 10-server claim 90/10 and sends 1,000 requests
// through its main Service, which spreads them over the servers of both
// versions (kube-proxy picks an endpoint at random per connection, and
// every request opens its own). The measured split is held to the replica
// split within three standard deviations of a binomial draw. Then the
// canary is promoted under a 20 req/s loop; failures there are measured and
// reported (the goal of none is the next issue's work).
func (s *infernoSuite) canaryUnderLoad(t *testing.T) {
	if !s.realServeOK {
		t.Skip("16 serve did not pass")
	}
	ctx := context.Background()
	sc := env.summary.start(t, "19 canary under load (real node)")
	sc.onRealNode(false)
	const name = "split"
	v1 := publishWeights(t, "split-v1", "inferno split v1")
	v2 := publishWeights(t, "split-v2", "inferno split v2")
	claim := realClaim(t, name, v1.URI, "1", 10)
	setField(claim, []any{
		map[string]any{"version": "1", "weight": int64(90)},
		map[string]any{"version": "2", "weight": int64(10), "uri": v2.URI},
	}, "spec", "traffic")
	start := time.Now()
	applyClaim(ctx, t, claim)
	var replicas map[string]int
	if err := kube.Eventually(ctx, 5*time.Minute, 250*time.Millisecond, "both versions serving", func(ctx context.Context) (bool, string, error) {
		c, err := env.admin.Get(ctx, claimGVK, realNS, name)
		if err != nil {
			return false, "", err
		}
		replicas = serverPods(ctx, t, realNS, name)
		ready, _, _ := kube.Condition(c, "Ready")
		return trafficPhases(c) == "1=Serving,2=Serving" && ready == "True", fmt.Sprintf("traffic %s, ready servers %v", trafficPhases(c), replicas), nil
	}); err != nil {
		t.Fatal(err)
	}
	sc.note("90/10 over 10 servers: %d+%d ready in %.1fs", replicas["1"], replicas["2"], time.Since(start).Seconds())

	waitServiceProgrammed(ctx, t, realNS, name, replicas["1"]+replicas["2"])
	base := serviceURL(ctx, t, realNS, name)
	const n = 1000
	rep := traffic.Start(traffic.Options{URL: base + "/v1/completions", Body: completionBody(name), Max: n, MaxDuration: 3 * time.Minute, Concurrency: 8}).Wait()
	if rep.Failed != 0 || rep.Sent() != n {
		t.Errorf("sent %d of %d, %d failed: %s", rep.Sent(), n, rep.Failed, rep.Failures(5))
	}
	total := replicas["1"] + replicas["2"]
	p := float64(replicas["2"]) / float64(total)
	want := p * float64(rep.OK)
	sigma := math.Sqrt(float64(rep.OK) * p * (1 - p))
	got := float64(rep.ByVersion["2"])
	sc.note("%d requests: version 1 answered %d, version 2 %d (%.1f%%); replicas %d:%d → expected %.0f ± %.0f (3σ)",
		rep.Sent(), rep.ByVersion["1"], rep.ByVersion["2"], 100*got/float64(max(rep.OK, 1)), replicas["1"], replicas["2"], want, 3*sigma)
	if math.Abs(got-want) > 3*sigma {
		t.Errorf("version 2 answered %.0f of %d requests; with %d of %d servers expect %.0f ± %.0f", got, rep.OK, replicas["2"], total, want, 3*sigma)
	}
	if c, err := complete(ctx, serviceURL(ctx, t, realNS, name+"-2"), name); err != nil || c.Text != oracle(t, v2) {
		t.Errorf("the Service of version 2 alone answered %q (%v), want the v2 weights' %q", c.Text, err, oracle(t, v2))
	}

	// Promotion under load: version 2 becomes the model, the split goes.
	loop := traffic.Start(traffic.Options{URL: base + "/v1/completions", Body: completionBody(name), Rate: 20, Max: 20 * 300, MaxDuration: 5 * time.Minute})
	time.Sleep(2 * time.Second)
	promoted := realClaim(t, name, v2.URI, "2", 10)
	start = time.Now()
	applyClaim(ctx, t, promoted)
	err := kube.Eventually(ctx, 4*time.Minute, 250*time.Millisecond, "only version 2 serving, its canary objects gone", func(ctx context.Context) (bool, string, error) {
		pods := serverPods(ctx, t, realNS, name)
		_, canary := env.admin.Typed.AppsV1().Deployments(realNS).Get(ctx, name+"-2", metav1.GetOptions{})
		last := loop.Snapshot().Results
		if len(last) > 20 {
			last = last[len(last)-20:]
		}
		allNew := len(last) == 20
		for _, r := range last {
			allNew = allNew && r.OK() && r.Version == "2"
		}
		return pods["1"] == 0 && pods["2"] == 10 && canary != nil && deploymentSettled(ctx, realNS, name) && allNew,
			fmt.Sprintf("ready servers %v, canary Deployment gone %v", pods, canary != nil), nil
	})
	took := time.Since(start)
	time.Sleep(2 * time.Second)
	prep := loop.Stop()
	if err != nil {
		t.Fatal(err)
	}
	sc.note("promotion under 20 req/s: sent %d, failed %d, answered by version 1 %d, version 2 %d; done in %.1fs",
		prep.Sent(), prep.Failed, prep.ByVersion["1"], prep.ByVersion["2"], took.Seconds())
	if prep.Failed != 0 {
		// Measured, not held: promotion that never fails a request is the
		// next issue's.
		t.Logf("promotion failed %d requests: %s", prep.Failed, prep.Failures(5))
	}
	deleteClaimsAndWait(ctx, t, realNS, []string{name})
}
