//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/inferno-ai/function-inferno/test/e2e/kube"
)

// --- 08 stress --------------------------------------------------------------

func (s *infernoSuite) stress(t *testing.T) {
	ctx := context.Background()
	n := *flagStress
	sc := env.summary.start(t, fmt.Sprintf("08 stress (%d claims)", n))
	const ns = "team-stress"
	if err := env.createTeamNamespace(ctx, ns); err != nil {
		t.Fatal(err)
	}
	names := make([]string, n)
	for i := range names {
		names[i] = fmt.Sprintf("s-%03d", i)
	}
	cpuBefore := cpuByProcess()
	if *flagProfile {
		go profileAPIServer(t, 30*time.Second, filepath.Join(env.logDir(), "kube-apiserver-stress.pprof"))
	}
	breakerBefore := readBreaker(t)
	start := time.Now()
	applyAll(ctx, t, ns, names, "")
	sc.note("applied in %.1fs", time.Since(start).Seconds())
	timeout := 3*time.Minute + time.Duration(n)*time.Second
	waitClaimsReady(ctx, t, ns, names, timeout)
	took := time.Since(start)
	// The goal (50 in under 60 s) is a measurement, not a pass mark:
	// on two shared cores it sits right at the edge, and the API server
	// serving Crossplane's server-side applies and status updates is what
	// saturates them (see -profile). The test fails only on a real stall.
	goal := "met"
	if took > time.Duration(n)*1200*time.Millisecond {
		goal = "MISSED"
	}
	sc.note("all %d Ready in %.1fs (goal %.0f s: %s)", n, took.Seconds(), float64(n)*1.2, goal)
	sc.note("CPU seconds meanwhile: %s", cpuSpent(cpuBefore, cpuByProcess()))
	sc.note("Crossplane's XR circuit breaker meanwhile, over the %d composites: %s", n, readBreaker(t).minus(breakerBefore))

	// Delete them all and wait for the garbage collector, so the namespace
	// is clean and nothing leaks into the security scan's totals.
	start = time.Now()
	for _, name := range names {
		if err := env.admin.Delete(ctx, claimGVK, ns, name); err != nil {
			t.Error(err)
		}
	}
	err := kube.Eventually(ctx, timeout, time.Second, "stress claims' objects gone", func(ctx context.Context) (bool, string, error) {
		pods, err := env.admin.Typed.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, "", err
		}
		deps, err := env.admin.Typed.AppsV1().Deployments(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, "", err
		}
		pvcs, err := env.admin.Typed.CoreV1().PersistentVolumeClaims(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, "", err
		}
		return len(pods.Items)+len(deps.Items)+len(pvcs.Items) == 0,
			fmt.Sprintf("%d pods, %d Deployments, %d PVCs left", len(pods.Items), len(deps.Items), len(pvcs.Items)), nil
	})
	if err != nil {
		t.Error(err)
	} else {
		sc.note("all deleted in %.1fs", time.Since(start).Seconds())
	}
}
