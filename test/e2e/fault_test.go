//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/inferno-ai/function-inferno/test/e2e/kube"
)

// --- 09 fault ---------------------------------------------------------------

// fault kills the function while claims are mid-flight, restarts it, and
// checks that everything converges with exactly one of each object.
func (s *infernoSuite) fault(t *testing.T) {
	ctx := context.Background()
	sc := env.summary.start(t, "09 fault")
	runner := env.functions[RealFunctionName]
	if runner == nil {
		t.Skip("function not installed")
	}
	const ns = "team-fault"
	if err := env.createTeamNamespace(ctx, ns); err != nil {
		t.Fatal(err)
	}
	names := make([]string, 5)
	for i := range names {
		names[i] = fmt.Sprintf("fault-%d", i)
	}
	start := time.Now()
	for _, n := range names {
		applyClaim(ctx, t, smallClaim(t, ns, n))
	}
	// Let the first reconciles start (PVCs, Jobs), then pull the plug.
	// The precondition is the point of the scenario: if no reconcile has
	// begun, or every claim is already Ready, killing the function tests
	// nothing.
	if err := kube.Eventually(ctx, 20*time.Second, 100*time.Millisecond, "first pull Job in "+ns, func(ctx context.Context) (bool, string, error) {
		l, err := env.admin.Typed.BatchV1().Jobs(ns).List(ctx, metav1.ListOptions{})
		return err == nil && len(l.Items) > 0, "", err
	}); err != nil {
		t.Fatal(err)
	}
	runner.Kill()
	down := time.Now()
	jobs, err := env.admin.Typed.BatchV1().Jobs(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	claims, err := env.admin.List(ctx, claimGVK, ns, "")
	if err != nil {
		t.Fatal(err)
	}
	ready := 0
	for i := range claims {
		if st, _, _ := kube.Condition(&claims[i], "Ready"); st == "True" {
			ready++
		}
	}
	if ready == len(names) {
		t.Fatalf("all %d claims were Ready when the function was killed: the fault hit no reconcile in progress", ready)
	}
	sc.note("function killed with %d of %d pull Jobs created and %d of %d claims Ready", len(jobs.Items), len(names), ready, len(names))
	// The function stays down until Crossplane calls it. A call to a
	// dead function does not fail fast: Crossplane's gRPC client waits,
	// reconnecting, and the reconcile blocks until the function is back
	// (one run saw a reconcile that began before the kill finish 107 s
	// later, with no Synced=False in between). So the proof that the
	// fault hit a call is a connection attempt on the function's port
	// while it is down: a bare listener stands in for it and takes one.
	// Whatever happens, the function is restarted before anything can
	// fail, or every later scenario would run without it.
	attempt := make(chan time.Time, 1)
	ln, lerr := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", runner.Port))
	if lerr == nil {
		go func() {
			if c, err := ln.Accept(); err == nil {
				attempt <- time.Now()
				_ = c.Close()
			}
		}()
	}
	var called time.Time
	select {
	case called = <-attempt:
	case <-time.After(90 * time.Second):
	case <-ctx.Done():
	}
	if ln != nil {
		_ = ln.Close()
	}
	if err := runner.Start(ctx); err != nil {
		t.Fatalf("restart function: %v", err)
	}
	switch {
	case lerr != nil:
		t.Fatalf("cannot stand in for the function on port %d: %v", runner.Port, lerr)
	case called.IsZero():
		t.Fatalf("the function was down 90 s and Crossplane never tried to reach it: the fault hit no call")
	}
	sc.note("Crossplane tried to reach the function %.1fs after the kill", called.Sub(down).Seconds())
	sc.note("function down %.1fs", time.Since(down).Seconds())
	waitClaimsReady(ctx, t, ns, names, 3*time.Minute)
	sc.note("all %d Ready %.1fs after apply", len(names), time.Since(start).Seconds())
	for _, n := range names {
		assertExactlyOneEach(ctx, t, ns, n)
	}
	xrs, err := env.admin.List(ctx, xrGVK, "", "crossplane.io/claim-namespace="+ns)
	if err != nil {
		t.Fatal(err)
	}
	if len(xrs) != len(names) {
		t.Errorf("%d composites for %d claims in %s", len(xrs), len(names), ns)
	}
	// Leave nothing reconciling behind that would load the stress run.
	deleteClaimsAndWait(ctx, t, ns, names)
}

// deleteClaimsAndWait deletes claims and waits until all their composed
// objects are gone.
func deleteClaimsAndWait(ctx context.Context, t *testing.T, ns string, names []string) {
	t.Helper()
	for _, n := range names {
		if err := env.admin.Delete(ctx, claimGVK, ns, n); err != nil {
			t.Error(err)
		}
	}
	// The garbage collector takes about a second per ten claims at scale.
	timeout := 2*time.Minute + time.Duration(len(names))*200*time.Millisecond
	err := kube.Eventually(ctx, timeout, 500*time.Millisecond, fmt.Sprintf("%d claims in %s deleted with everything they composed", len(names), ns), func(ctx context.Context) (bool, string, error) {
		var left []string
		for _, n := range names {
			left = append(left, composedLeft(ctx, ns, n)...)
		}
		return len(left) == 0, strings.Join(left, ", "), nil
	})
	if err != nil {
		t.Error(err)
	}
}

func assertExactlyOneEach(ctx context.Context, t *testing.T, ns, name string) {
	t.Helper()
	sel := metav1.ListOptions{LabelSelector: instanceLabel + "=" + name}
	counts := map[string]int{}
	if l, err := env.admin.Typed.CoreV1().PersistentVolumeClaims(ns).List(ctx, sel); err == nil {
		counts["PVC"] = len(l.Items)
	}
	if l, err := env.admin.Typed.BatchV1().Jobs(ns).List(ctx, sel); err == nil {
		counts["Job"] = len(l.Items)
	}
	if l, err := env.admin.Typed.AppsV1().Deployments(ns).List(ctx, sel); err == nil {
		counts["Deployment"] = len(l.Items)
	}
	if l, err := env.admin.Typed.CoreV1().Services(ns).List(ctx, sel); err == nil {
		counts["Service"] = len(l.Items)
	}
	for kind, n := range counts {
		if n != 1 {
			t.Errorf("%s/%s has %d %s, want exactly 1", ns, name, n, kind)
		}
	}
	if len(counts) != 4 {
		t.Errorf("%s/%s: could not count every kind: %v", ns, name, counts)
	}
}
