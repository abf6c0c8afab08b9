//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/inferno-ai/function-inferno/test/e2e/kube"
	"github.com/inferno-ai/function-inferno/test/e2e/traffic"
)

// --- 18 restart ------------------------------------------------------------

// restart kills one server pod of a 2-replica service under load: the
// other answers meanwhile, and the killed one drains before it stops.
func (s *infernoSuite) restart(t *testing.T) {
	if !s.realServeOK {
		t.Skip("16 serve did not pass")
	}
	ctx := context.Background()
	sc := env.summary.start(t, "18 restart (real node)")
	sc.onRealNode(false)
	const name = "chat"
	uri := s.chat.URI
	version := "1"
	if s.realUpgradeOK {
		uri, version = env.origin.URL+"/chat-v2/model.markov", "2"
	}
	// 16 and 17 left the claim at one server: scale it to two, and time
	// it to the claim's Ready (Crossplane's breaker once held it 57 s).
	breaker := breakerStep(ctx, t, sc, realNS, name, "scale 1 → 2")
	scaled := time.Now()
	applyClaim(ctx, t, realClaim(t, name, uri, version, 2))
	if err := kube.Eventually(ctx, 2*time.Minute, 250*time.Millisecond, "2 servers ready, the claim Ready", func(ctx context.Context) (bool, string, error) {
		if !deploymentSettled(ctx, realNS, name) || len(claimServerPods(ctx, t, realNS, name)) != 2 {
			return false, "servers not settled", nil
		}
		c, err := env.admin.Get(ctx, claimGVK, realNS, name)
		if err != nil {
			return false, "", err
		}
		ready, _, _ := kube.Condition(c, "Ready")
		readyReplicas, _, _ := unstructured.NestedInt64(c.Object, "status", "readyReplicas")
		return ready == "True" && readyReplicas == 2, fmt.Sprintf("claim Ready %s, readyReplicas %d", ready, readyReplicas), nil
	}); err != nil {
		t.Fatal(err)
	}
	sc.note("scaled 1 → 2 servers, claim Ready with 2 in %.1fs", time.Since(scaled).Seconds())
	breaker()
	base := serviceURL(ctx, t, realNS, name)
	loop := traffic.Start(traffic.Options{URL: base + "/v1/completions", Body: completionBody(name), Rate: 20, Max: 20 * 120, MaxDuration: 2 * time.Minute})
	time.Sleep(2 * time.Second)
	victim := claimServerPods(ctx, t, realNS, name)[0].Name
	start := time.Now()
	if err := env.admin.Typed.CoreV1().Pods(realNS).Delete(ctx, victim, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	err := kube.Eventually(ctx, 90*time.Second, 250*time.Millisecond, "the killed server replaced and gone", func(ctx context.Context) (bool, string, error) {
		_, gone := env.admin.Typed.CoreV1().Pods(realNS).Get(ctx, victim, metav1.GetOptions{})
		pods := claimServerPods(ctx, t, realNS, name)
		ready := 0
		for i := range pods {
			if podReady(&pods[i]) {
				ready++
			}
		}
		return gone != nil && ready == 2, fmt.Sprintf("%d ready", ready), nil
	})
	replaced := time.Since(start)
	time.Sleep(2 * time.Second)
	rep := loop.Stop()
	if err != nil {
		t.Fatal(err)
	}
	sc.note("pod deleted under 20 req/s: sent %d, failed %d, answered by %d pods; replaced and the old one gone in %.1fs", rep.Sent(), rep.Failed, len(rep.ByPod), replaced.Seconds())
	if rep.Failed != 0 {
		t.Errorf("%d of %d requests failed while a server pod was deleted: %s", rep.Failed, rep.Sent(), rep.Failures(5))
	}
}

func ptrTo[T any](v T) *T { return &v }
