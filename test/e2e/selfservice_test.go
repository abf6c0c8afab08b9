//go:build e2e

package e2e

import (
	"context"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/inferno-ai/function-inferno/test/e2e/kube"
)

// --- 02 self-service and 03 serving -----------------------------------------

func (s *infernoSuite) selfService(t *testing.T) {
	ctx := context.Background()
	sc := env.summary.start(t, "02 self-service: pulling")
	if err := env.createTeamNamespace(ctx, "team-a"); err != nil {
		t.Fatal(err)
	}
	createCredentials(ctx, t, "team-a")

	// The failing claim goes in now; scenario 04 checks it (its Job's
	// retries take over a minute).
	broken := exampleClaim(t, "team-a", "broken")
	setField(broken, "hf://e2e/"+failMarker, "spec", "model", "uri")
	applyClaim(ctx, t, broken)
	s.brokenApplied = time.Now()

	claim := exampleClaim(t, "team-a", "llama")
	s.llama = watchLifecycle(ctx, "team-a", "llama")
	applyClaim(ctx, t, claim)
	s.llama.applied(time.Now())

	// PVC and pull Job first; no Deployment until the Job is Complete.
	if err := s.llama.waitFor(60*time.Second, func(l *lifecycleState) bool { return l.pvc > 0 && l.job > 0 }); err != nil {
		t.Fatalf("PVC and pull Job: %v", err)
	}
	st := s.llama.snapshot()
	sc.note("apply->PVC %.1fs, apply->Job %.1fs", st.pvc.Seconds(), st.job.Seconds())
	if !strings.HasPrefix(st.jobName, "llama-pull-") || len(st.jobName) != len("llama-pull-")+8 {
		t.Errorf("pull Job is named %q, want llama-pull-<8 hex>", st.jobName)
	}
	if err := s.llama.waitFor(30*time.Second, func(l *lifecycleState) bool { return l.phases["Pulling"] > 0 || l.jobComplete > 0 }); err != nil {
		t.Error(err)
	}
	st = s.llama.snapshot()
	if st.phases["Pulling"] == 0 {
		t.Errorf("claim never showed phase Pulling (phases seen: %v)", st.phaseOrder)
	} else {
		sc.note("apply->phase Pulling %.1fs", st.phases["Pulling"].Seconds())
	}
	if st.deployment > 0 && (st.jobComplete == 0 || st.deployment < st.jobComplete) {
		t.Errorf("Deployment appeared at %.1fs, before the pull Job completed (%.1fs)", st.deployment.Seconds(), st.jobComplete.Seconds())
	}
}

func (s *infernoSuite) serving(t *testing.T) {
	if !s.selfServiceOK {
		t.Skip("self-service failed")
	}
	ctx := context.Background()
	sc := env.summary.start(t, "03 serving")
	if err := s.llama.waitFor(2*time.Minute, func(l *lifecycleState) bool { return l.ready > 0 }); err != nil {
		t.Fatalf("claim Ready: %v", err)
	}
	st := s.llama.snapshot()
	sc.note("apply->first objects %.1fs, apply->Job Complete %.1fs, Job Complete->Deployment %.1fs, apply->Deployment Available %.1fs, apply->HPA AbleToScale %.1fs, apply->Ready %.1fs (phases %v)",
		minDur(st.pvc, st.job).Seconds(), st.jobComplete.Seconds(), (st.deployment - st.jobComplete).Seconds(),
		st.available.Seconds(), st.hpaAble.Seconds(), st.ready.Seconds(), st.phaseOrder)

	// Deployment created after the Job completed, judged by the API
	// server's own timestamps too (not only by when the test saw them).
	job, err := env.admin.Typed.BatchV1().Jobs("team-a").Get(ctx, st.jobName, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	dep, err := env.admin.Typed.AppsV1().Deployments("team-a").Get(ctx, "llama", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if job.Status.CompletionTime == nil || dep.CreationTimestamp.Before(job.Status.CompletionTime) {
		t.Errorf("Deployment created %v, pull Job completed %v: the server must wait for the weights", dep.CreationTimestamp, job.Status.CompletionTime)
	}
	for _, kind := range []struct {
		what string
		get  func() error
	}{
		{"Service llama", func() error {
			_, err := env.admin.Typed.CoreV1().Services("team-a").Get(ctx, "llama", metav1.GetOptions{})
			return err
		}},
		{"HorizontalPodAutoscaler llama", func() error {
			_, err := env.admin.Typed.AutoscalingV2().HorizontalPodAutoscalers("team-a").Get(ctx, "llama", metav1.GetOptions{})
			return err
		}},
	} {
		if err := kind.get(); err != nil {
			t.Errorf("%s: %v", kind.what, err)
		}
	}

	claim, err := env.admin.Get(ctx, claimGVK, "team-a", "llama")
	if err != nil {
		t.Fatal(err)
	}
	phase, _, _ := unstructured.NestedString(claim.Object, "status", "phase")
	url, _, _ := unstructured.NestedString(claim.Object, "status", "url")
	ready, _, _ := unstructured.NestedInt64(claim.Object, "status", "readyReplicas")
	if phase != "Serving" {
		t.Errorf("claim phase %q, want Serving (%s)", phase, kube.ConditionsSummary(claim))
	}
	if want := "http://llama.team-a.svc.cluster.local"; !strings.HasPrefix(url, want) {
		t.Errorf("claim status.url %q, want %s[:port]", url, want)
	}
	if ready < 1 {
		t.Errorf("claim status.readyReplicas %d, want >= 1", ready)
	}
	for _, c := range []string{"WeightsReady", "ServerReady"} {
		if st, reason, msg := kube.Condition(claim, c); st != "True" {
			t.Errorf("claim condition %s=%q (%s: %s), want True", c, st, reason, msg)
		}
	}

	// Printer columns, the way kubectl asks for them.
	table, err := getTable(ctx, "/apis/inference.inferno.io/v1alpha1/namespaces/team-a/inferenceservices/llama")
	if err != nil {
		t.Fatal(err)
	}
	cols := table.column("Phase", "URL", "READY", "SYNCED")
	if cols["Phase"] != "Serving" || !strings.HasPrefix(cols["URL"], "http://llama.team-a.svc") || cols["READY"] != "True" {
		t.Errorf("kubectl get inferenceservice shows %v, want Phase=Serving, URL=http://llama.team-a.svc…, READY=True", table.rowMaps())
	} else {
		sc.note("kubectl columns %s", table.render())
	}
}
