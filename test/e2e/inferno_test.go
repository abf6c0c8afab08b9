//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/inferno-ai/function-inferno/test/e2e/controlplane"
	"github.com/inferno-ai/function-inferno/test/e2e/kube"
)

var (
	claimGVK = schema.GroupVersionKind{Group: "inference.inferno.io", Version: "v1alpha1", Kind: "InferenceService"}
	xrGVK    = schema.GroupVersionKind{Group: "inference.inferno.io", Version: "v1alpha1", Kind: "XInferenceService"}
)

const (
	xrdName = "xinferenceservices.inference.inferno.io"
	// cacheXRDName is the ModelCache XRD, shipped in the same package.
	cacheXRDName = "xmodelcaches.inference.inferno.io"
	// failMarker in a model URI makes kwok fail the pull Job's pods (see
	// testdata/kwok/pod.yaml).
	failMarker = "e2e-pull-fails"
	// instanceLabel is set on every composed object to the claim's name.
	instanceLabel = "app.kubernetes.io/instance"
	// weightsAnnotation on the server pod template names the weights the
	// servers mount.
	weightsAnnotation = "inference.inferno.io/weights"
)

// TestInferno runs the scenarios against the real function,
// installed as a package. The scenarios share one cluster and run in order;
// a scenario whose prerequisite failed is skipped rather than piling up
// confusing failures.
func TestInferno(t *testing.T) {
	if env.mode != "real" {
		t.Skip("the real function is not in the repository yet (main.go, package/, apis/xrd.yaml, apis/composition.yaml)")
	}
	ctx := context.Background()
	s := &infernoSuite{}

	if !t.Run("01-install", s.install) {
		t.Fatal("install failed; nothing else can run")
	}
	if !t.Run("01b-configuration", s.configuration) {
		t.Fatal("the Configurations did not install; nothing else can run")
	}
	t.Run("11-rbac", s.rbac)
	s.selfServiceOK = t.Run("02-self-service", s.selfService)
	s.servingOK = t.Run("03-serving", s.serving)
	// The failing claim went in with 02; its Job's retries take over a
	// minute, so the scenarios that do not need it run first.
	t.Run("07-isolation", s.isolation)
	t.Run("05-update", s.update)
	t.Run("06-delete", s.deleteClaim)
	t.Run("09-fault", s.fault)
	t.Run("12-canary", s.canary)
	t.Run("14-cache", s.cache)
	// Only with -scale=N (make scale): hundreds of claims at once.
	t.Run("15-scale", s.scale)
	t.Run("04-failure", s.failure)
	t.Run("08-stress", s.stress)
	t.Run("10-security", s.security)
	t.Run("13-namespaced", s.namespaced)
	t.Run("16-tenancy", s.tenancy)
	// Last: it takes a permission away from Crossplane for a while.
	t.Run("11b-rbac-missing-permission", s.rbacMissing)
	_ = ctx
}

type infernoSuite struct {
	selfServiceOK, servingOK bool
	// llama is the main claim's lifecycle as observed by the test.
	llama *lifecycle
	// broken is the claim whose pull fails, applied early so the Job's
	// retries (backoff 10 s, 20 s, 40 s) overlap other scenarios.
	brokenApplied time.Time
	// fnMetrics is the function's Prometheus endpoint.
	fnMetrics string
}

// --- 01 install -------------------------------------------------------------

func (s *infernoSuite) install(t *testing.T) {
	ctx := context.Background()
	sc := env.summary.start(t, "01 install")
	start := time.Now()
	metricsPort, err := controlplane.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	installFunction(ctx, t, RealFunctionName, repoRoot(), ".", "package", "examples",
		fmt.Sprintf("--metrics-address=127.0.0.1:%d", metricsPort))
	s.fnMetrics = fmt.Sprintf("http://127.0.0.1:%d/metrics", metricsPort)
	sc.note("package built+pushed+installed, revision Healthy in %.1fs", time.Since(start).Seconds())

	// The XRDs and Compositions come in the Configuration packages
	// (01b-configuration); the ClusterRole cannot be packaged.
	if _, err := env.admin.ApplyFile(ctx, filepath.Join(repoRoot(), "apis", "rbac.yaml")); err != nil {
		t.Fatal(err)
	}
	// The shipped ClusterRole must have been aggregated into Crossplane's
	// (by the real clusterrole-aggregation controller).
	if err := kube.Eventually(ctx, 30*time.Second, 200*time.Millisecond, "ClusterRole crossplane aggregates batch/jobs", func(ctx context.Context) (bool, string, error) {
		cr, err := env.admin.Typed.RbacV1().ClusterRoles().Get(ctx, "crossplane", metav1.GetOptions{})
		if err != nil {
			return false, "", err
		}
		for _, r := range cr.Rules {
			if contains(r.APIGroups, "batch") && contains(r.Resources, "jobs") {
				return true, "", nil
			}
		}
		return false, fmt.Sprintf("%d rules, none for batch/jobs", len(cr.Rules)), nil
	}); err != nil {
		t.Error(err)
	}
}

// --- 11 RBAC ----------------------------------------------------------------

// rbac asserts Crossplane's identity holds what it needs (through its chart
// role and the aggregated role we ship) and nothing like cluster-admin. The
// scenarios then prove the same thing the hard way: every object the
// function composes is created by that identity.
func (s *infernoSuite) rbac(t *testing.T) {
	ctx := context.Background()
	sc := env.summary.start(t, "11 rbac")
	allowed := []struct{ group, resource, verb string }{
		{"", "persistentvolumeclaims", "create"},
		{"batch", "jobs", "create"},
		{"apps", "deployments", "update"},
		{"", "services", "create"},
		{"autoscaling", "horizontalpodautoscalers", "create"},
		{"gateway.networking.k8s.io", "httproutes", "create"},
		{"inference.inferno.io", "inferenceservices", "update"},
	}
	for _, a := range allowed {
		if ok, why := can(ctx, t, controlplane.Crossplane, a.verb, a.group, a.resource, "team-a"); !ok {
			t.Errorf("crossplane cannot %s %s.%s in team-a: %s", a.verb, a.resource, a.group, why)
		}
	}
	denied := []struct{ group, resource, verb, ns string }{
		{"*", "*", "*", ""}, // cluster-admin
		{"rbac.authorization.k8s.io", "clusterrolebindings", "create", ""},
		{"", "nodes", "delete", ""},
		{"", "pods", "create", "team-a"},
		{"", "namespaces", "delete", ""},
	}
	for _, d := range denied {
		if ok, _ := can(ctx, t, controlplane.Crossplane, d.verb, d.group, d.resource, d.ns); ok {
			t.Errorf("crossplane may %s %s.%s (ns %q): it must not hold more than its chart role and ours", d.verb, d.resource, d.group, d.ns)
		}
	}
	for _, g := range controlplane.Crossplane.Groups {
		if g == "system:masters" {
			t.Error("crossplane runs as system:masters")
		}
	}
	sc.note("%d permissions granted, %d denied as expected", len(allowed), len(denied))
}

func can(ctx context.Context, t *testing.T, id controlplane.Identity, verb, group, resource, ns string) (bool, string) {
	t.Helper()
	sar := map[string]any{
		"apiVersion": "authorization.k8s.io/v1",
		"kind":       "SubjectAccessReview",
		"spec": map[string]any{
			"user":   id.User,
			"groups": toAny(id.Groups),
			"resourceAttributes": map[string]any{
				"verb": verb, "group": group, "resource": resource, "namespace": ns,
			},
		},
	}
	ri, err := env.admin.Resource(schema.GroupVersionKind{Group: "authorization.k8s.io", Version: "v1", Kind: "SubjectAccessReview"}, "")
	if err != nil {
		t.Fatal(err)
	}
	out, err := ri.Create(ctx, &unstructured.Unstructured{Object: sar}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ok, _, _ := unstructured.NestedBool(out.Object, "status", "allowed")
	reason, _, _ := unstructured.NestedString(out.Object, "status", "reason")
	return ok, reason
}

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

// --- 04 failure -----------------------------------------------------------

func (s *infernoSuite) failure(t *testing.T) {
	if s.brokenApplied.IsZero() {
		t.Skip("the failing claim was not applied")
	}
	ctx := context.Background()
	sc := env.summary.start(t, "04 failure")
	var claim *unstructured.Unstructured
	// backoffLimit 3 and the Job controller's 10 s/20 s/40 s pod backoff
	// put the Job's Failed condition about 75 s after the first pod.
	err := kube.Eventually(ctx, 4*time.Minute, 500*time.Millisecond, "broken claim phase Failed", func(ctx context.Context) (bool, string, error) {
		c, err := env.admin.Get(ctx, claimGVK, "team-a", "broken")
		if err != nil {
			return false, "", err
		}
		claim = c
		phase, _, _ := unstructured.NestedString(c.Object, "status", "phase")
		return phase == "Failed", "phase " + phase + "; " + kube.ConditionsSummary(c), nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sc.note("apply->Failed %.1fs", time.Since(s.brokenApplied).Seconds())
	msg, _, _ := unstructured.NestedString(claim.Object, "status", "message")
	jobs, err := env.admin.Typed.BatchV1().Jobs("team-a").List(ctx, metav1.ListOptions{LabelSelector: instanceLabel + "=broken"})
	if err != nil {
		t.Fatal(err)
	}
	if len(jobs.Items) != 1 {
		t.Fatalf("%d pull Jobs for the broken claim, want 1", len(jobs.Items))
	}
	var jobReason string
	for _, c := range jobs.Items[0].Status.Conditions {
		if c.Type == batchv1.JobFailed && c.Status == corev1.ConditionTrue {
			jobReason = c.Reason
		}
	}
	if jobReason == "" || !strings.Contains(msg, jobReason) {
		t.Errorf("claim message %q does not carry the Job's failure reason %q", msg, jobReason)
	}
	if st, _, _ := kube.Condition(claim, "Ready"); st == "True" {
		t.Error("a claim whose pull failed is Ready")
	}
	if _, err := env.admin.Typed.AppsV1().Deployments("team-a").Get(ctx, "broken", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("a Deployment exists for a claim whose weights never arrived (err %v)", err)
	}
	sc.note("message: %s", msg)
	deleteClaimsAndWait(ctx, t, "team-a", []string{"broken"})
}

// --- 07 isolation -----------------------------------------------------------

func (s *infernoSuite) isolation(t *testing.T) {
	if !s.servingOK {
		t.Skip("serving failed")
	}
	ctx := context.Background()
	sc := env.summary.start(t, "07 isolation")
	if err := env.createTeamNamespace(ctx, "team-b"); err != nil {
		t.Fatal(err)
	}
	createCredentials(ctx, t, "team-b")
	// Same claim name as team-a's: nothing may collide.
	start := time.Now()
	applyClaim(ctx, t, exampleClaim(t, "team-b", "llama"))
	waitClaimsReady(ctx, t, "team-b", []string{"llama"}, 2*time.Minute)
	sc.note("team-b/llama Ready in %.1fs", time.Since(start).Seconds())

	a, err := env.admin.Get(ctx, claimGVK, "team-a", "llama")
	if err != nil {
		t.Fatal(err)
	}
	b, err := env.admin.Get(ctx, claimGVK, "team-b", "llama")
	if err != nil {
		t.Fatal(err)
	}
	xa, _, _ := unstructured.NestedString(a.Object, "spec", "resourceRef", "name")
	xb, _, _ := unstructured.NestedString(b.Object, "spec", "resourceRef", "name")
	if xa == "" || xa == xb {
		t.Errorf("claims team-a/llama and team-b/llama share composite %q/%q", xa, xb)
	}
	for _, ns := range []string{"team-a", "team-b"} {
		d, err := env.admin.Typed.AppsV1().Deployments(ns).Get(ctx, "llama", metav1.GetOptions{})
		if err != nil {
			t.Errorf("%s: %v", ns, err)
			continue
		}
		want := xa
		if ns == "team-b" {
			want = xb
		}
		if owner := controllerName(d.OwnerReferences); owner != want {
			t.Errorf("%s/llama Deployment is controlled by %q, want its own composite %q", ns, owner, want)
		}
		if d.Status.AvailableReplicas < 1 {
			t.Errorf("%s/llama has %d available replicas", ns, d.Status.AvailableReplicas)
		}
	}
	if st, _, _ := kube.Condition(a, "Ready"); st != "True" {
		t.Errorf("team-a/llama is no longer Ready after team-b's claim: %s", kube.ConditionsSummary(a))
	}
}

// --- 05 update --------------------------------------------------------------

func (s *infernoSuite) update(t *testing.T) {
	if !s.servingOK {
		t.Skip("serving failed")
	}
	ctx := context.Background()
	sc := env.summary.start(t, "05 update")
	oldJob := s.llama.snapshot().jobName
	before, err := env.admin.Typed.AppsV1().Deployments("team-a").Get(ctx, "llama", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}

	claim := exampleClaim(t, "team-a", "llama")
	setField(claim, int64(2), "spec", "replicas", "min")
	setField(claim, int64(4), "spec", "replicas", "max")
	setField(claim, "2", "spec", "resources", "cpu")
	setField(claim, "e2e-revision-2", "spec", "model", "revision")
	start := time.Now()
	applyClaim(ctx, t, claim)

	// New revision -> a new pull Job (Jobs are immutable).
	var newJob string
	if err := kube.Eventually(ctx, 60*time.Second, 200*time.Millisecond, "a new pull Job for the new revision", func(ctx context.Context) (bool, string, error) {
		jobs, err := env.admin.Typed.BatchV1().Jobs("team-a").List(ctx, metav1.ListOptions{LabelSelector: instanceLabel + "=llama"})
		if err != nil {
			return false, "", err
		}
		var names []string
		for _, j := range jobs.Items {
			names = append(names, j.Name)
			if j.Name != oldJob && strings.HasPrefix(j.Name, "llama-pull-") {
				newJob = j.Name
			}
		}
		return newJob != "", fmt.Sprintf("jobs %v", names), nil
	}); err != nil {
		t.Error(err)
	} else {
		sc.note("new Job %s after %.1fs", newJob, time.Since(start).Seconds())
	}

	// Deployment follows: CPU request 2; HPA bounds 2..4.
	err = kube.Eventually(ctx, 2*time.Minute, 250*time.Millisecond, "Deployment and HPA updated", func(ctx context.Context) (bool, string, error) {
		d, err := env.admin.Typed.AppsV1().Deployments("team-a").Get(ctx, "llama", metav1.GetOptions{})
		if err != nil {
			return false, "", err
		}
		cpu := serverCPU(d)
		h, err := env.admin.Typed.AutoscalingV2().HorizontalPodAutoscalers("team-a").Get(ctx, "llama", metav1.GetOptions{})
		if err != nil {
			return false, "", err
		}
		minR := int32(0)
		if h.Spec.MinReplicas != nil {
			minR = *h.Spec.MinReplicas
		}
		return cpu == "2" && minR == 2 && h.Spec.MaxReplicas == 4,
			fmt.Sprintf("server cpu request %q, HPA %d..%d", cpu, minR, h.Spec.MaxReplicas), nil
	})
	if err != nil {
		t.Error(err)
	}
	after, err := env.admin.Typed.AppsV1().Deployments("team-a").Get(ctx, "llama", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if after.UID != before.UID {
		t.Errorf("the Deployment was replaced (uid %s -> %s), want it updated in place", before.UID, after.UID)
	}
	if after.Spec.Replicas != nil && before.Spec.Replicas == nil {
		t.Errorf("the Deployment gained spec.replicas=%d while an HPA owns scaling", *after.Spec.Replicas)
	}
	// The servers move to the new weights only once the new Job is done:
	// the pod template's weights annotation changes, the rollout
	// finishes, and the claim is Serving the new revision (not "the
	// previous weights").
	oldWeights := before.Spec.Template.Annotations[weightsAnnotation]
	if oldWeights == "" {
		t.Errorf("Deployment pod template has no %s annotation", weightsAnnotation)
	}
	sawPrevious := false
	err = kube.Eventually(ctx, 2*time.Minute, 250*time.Millisecond, "servers on the new weights, claim Serving and Ready", func(ctx context.Context) (bool, string, error) {
		d, err := env.admin.Typed.AppsV1().Deployments("team-a").Get(ctx, "llama", metav1.GetOptions{})
		if err != nil {
			return false, "", err
		}
		c, err := env.admin.Get(ctx, claimGVK, "team-a", "llama")
		if err != nil {
			return false, "", err
		}
		phase, _, _ := unstructured.NestedString(c.Object, "status", "phase")
		msg, _, _ := unstructured.NestedString(c.Object, "status", "message")
		if strings.Contains(msg, "previous weights") {
			sawPrevious = true
		}
		ready, _, _ := kube.Condition(c, "Ready")
		newWeights := d.Spec.Template.Annotations[weightsAnnotation]
		rolledOut := d.Status.ObservedGeneration >= d.Generation && d.Status.UpdatedReplicas == d.Status.Replicas &&
			d.Status.AvailableReplicas == d.Status.Replicas && d.Status.UnavailableReplicas == 0
		done := newWeights != oldWeights && rolledOut && phase == "Serving" && ready == "True" && !strings.Contains(msg, "previous weights")
		return done, fmt.Sprintf("weights %s->%s, rolled out %v, phase %s, Ready %s, message %q", oldWeights, newWeights, rolledOut, phase, ready, msg), nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if newJob != "" {
		j, err := env.admin.Typed.BatchV1().Jobs("team-a").Get(ctx, newJob, metav1.GetOptions{})
		if err != nil || !jobDone(j, batchv1.JobComplete) {
			t.Errorf("servers moved to the new weights but the new pull Job %s is not Complete (%v)", newJob, err)
		}
	}
	sc.note("new weights served, rolled out, Ready again in %.1fs (reported the previous weights meanwhile: %v)", time.Since(start).Seconds(), sawPrevious)
	// Crossplane v2.4 stops reacting to an XR's watch events for a while
	// when they come too fast (burst 100, refill 1/s); a rollout of two
	// replicas plus a new Job can trip it, and the XR then waits for the
	// next poll (1 min). Say so when it happened.
	if n := countInLog("crossplane.log", "Circuit breaker is open"); n > 0 {
		sc.note("Crossplane's XR circuit breaker opened %d time(s) so far (convergence then waits for the 1 min poll)", n)
	}
}

func serverCPU(d *appsv1.Deployment) string {
	for _, c := range d.Spec.Template.Spec.Containers {
		if q, ok := c.Resources.Requests[corev1.ResourceCPU]; ok {
			return q.String()
		}
	}
	return ""
}

// --- 06 delete --------------------------------------------------------------

func (s *infernoSuite) deleteClaim(t *testing.T) {
	if !s.servingOK {
		t.Skip("serving failed")
	}
	ctx := context.Background()
	sc := env.summary.start(t, "06 delete")
	claim, err := env.admin.Get(ctx, claimGVK, "team-a", "llama")
	if err != nil {
		t.Fatal(err)
	}
	xr, _, _ := unstructured.NestedString(claim.Object, "spec", "resourceRef", "name")
	pvc, err := env.admin.Typed.CoreV1().PersistentVolumeClaims("team-a").Get(ctx, "llama-weights", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("llama-weights PVC before delete: %v", err)
	}
	start := time.Now()
	if err := env.admin.Delete(ctx, claimGVK, "team-a", "llama"); err != nil {
		t.Fatal(err)
	}
	err = kube.Eventually(ctx, 2*time.Minute, 250*time.Millisecond, "everything of team-a/llama gone", func(ctx context.Context) (bool, string, error) {
		left := composedLeft(ctx, "team-a", "llama")
		if _, err := env.admin.Get(ctx, xrGVK, "", xr); !apierrors.IsNotFound(err) {
			left = append(left, "XR "+xr)
		}
		if pvc.Spec.VolumeName != "" {
			if _, err := env.admin.Typed.CoreV1().PersistentVolumes().Get(ctx, pvc.Spec.VolumeName, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
				left = append(left, "PV "+pvc.Spec.VolumeName)
			}
		}
		return len(left) == 0, strings.Join(left, ", "), nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sc.note("claim, XR, PVC, Job, Deployment, Service, HPA, pods and PV gone in %.1fs", time.Since(start).Seconds())
	// team-b's claim of the same name is untouched.
	if b, err := env.admin.Get(ctx, claimGVK, "team-b", "llama"); err != nil {
		t.Errorf("team-b/llama: %v", err)
	} else if st, _, _ := kube.Condition(b, "Ready"); st != "True" {
		t.Errorf("team-b/llama lost Ready when team-a/llama was deleted: %s", kube.ConditionsSummary(b))
	}
}

// composedLeft lists what still exists in ns for a claim: every kind the
// function composes, plus pods.
func composedLeft(ctx context.Context, ns, claim string) []string {
	sel := metav1.ListOptions{LabelSelector: instanceLabel + "=" + claim}
	var left []string
	add := func(kind string, n int, err error) {
		if err != nil {
			left = append(left, kind+": "+err.Error())
		} else if n > 0 {
			left = append(left, fmt.Sprintf("%d %s", n, kind))
		}
	}
	if l, err := env.admin.Typed.CoreV1().PersistentVolumeClaims(ns).List(ctx, sel); err == nil {
		add("PVC", len(l.Items), nil)
	} else {
		add("PVC", 0, err)
	}
	if l, err := env.admin.Typed.BatchV1().Jobs(ns).List(ctx, sel); err == nil {
		add("Job", len(l.Items), nil)
	} else {
		add("Job", 0, err)
	}
	if l, err := env.admin.Typed.AppsV1().Deployments(ns).List(ctx, sel); err == nil {
		add("Deployment", len(l.Items), nil)
	} else {
		add("Deployment", 0, err)
	}
	if l, err := env.admin.Typed.CoreV1().Services(ns).List(ctx, sel); err == nil {
		add("Service", len(l.Items), nil)
	} else {
		add("Service", 0, err)
	}
	if l, err := env.admin.Typed.AutoscalingV2().HorizontalPodAutoscalers(ns).List(ctx, sel); err == nil {
		add("HPA", len(l.Items), nil)
	} else {
		add("HPA", 0, err)
	}
	if l, err := env.admin.Typed.CoreV1().Pods(ns).List(ctx, sel); err == nil {
		add("pod", len(l.Items), nil)
	} else {
		add("pod", 0, err)
	}
	if _, err := env.admin.Get(ctx, claimGVK, ns, claim); !apierrors.IsNotFound(err) {
		left = append(left, "claim")
	}
	return left
}

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
	_ = kube.Eventually(ctx, 20*time.Second, 100*time.Millisecond, "first pull Job in "+ns, func(ctx context.Context) (bool, string, error) {
		l, err := env.admin.Typed.BatchV1().Jobs(ns).List(ctx, metav1.ListOptions{})
		return err == nil && len(l.Items) > 0, "", err
	})
	runner.Kill()
	down := time.Now()
	time.Sleep(5 * time.Second) // Crossplane's calls fail and it backs off
	if err := runner.Start(ctx); err != nil {
		t.Fatalf("restart function: %v", err)
	}
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
	start := time.Now()
	applyAll(ctx, t, ns, names)
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

// --- 10 security ------------------------------------------------------------

// security proves the function rendered nothing that breaks the
// "restricted" Pod Security Standard. Crossplane is the API client that
// created the objects, so the API server's warnings went to Crossplane; the
// test reads the same verdicts from the audit log, where the API server
// records them for namespaces with an audit level
// (pod-security.kubernetes.io/audit-violations), and repeats the
// admission check itself with a server-side dry-run of every rendered
// workload, whose warnings come back to the test.
func (s *infernoSuite) security(t *testing.T) {
	ctx := context.Background()
	sc := env.summary.start(t, "10 security")
	events, err := readAudit(env.cp.AuditLog)
	if err != nil {
		t.Fatal(err)
	}
	seen, violations := 0, []string{}
	for _, e := range events {
		if !strings.HasPrefix(e.ObjectRef.Namespace, "team-") {
			continue
		}
		if e.User.Username != controlplane.Crossplane.User && !isController(e.User.Username) {
			continue
		}
		switch e.ObjectRef.Resource {
		case "deployments", "jobs", "pods", "replicasets":
		default:
			continue
		}
		seen++
		if v := e.Annotations["pod-security.kubernetes.io/audit-violations"]; v != "" {
			violations = append(violations, fmt.Sprintf("%s %s/%s by %s: %s", e.ObjectRef.Resource, e.ObjectRef.Namespace, e.ObjectRef.Name, e.User.Username, v))
		}
	}
	if seen == 0 {
		t.Fatal("the audit log holds no workload writes by Crossplane or the controllers in team namespaces: the check would be vacuous")
	}
	for _, v := range violations {
		t.Errorf("Pod Security violation: %s", v)
	}
	sc.note("%d audited workload writes, %d restricted violations", seen, len(violations))

	// Dry-run every Deployment and Job still present as a fresh object,
	// with a client of its own so that only these requests' warnings count
	// (applying the v1 XRD, for one, draws a deprecation warning).
	dryClient, err := kube.NewClient(env.admin.Config)
	if err != nil {
		t.Fatal(err)
	}
	nsList, err := env.admin.Typed.CoreV1().Namespaces().List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	dry := 0
	for _, n := range nsList.Items {
		ns := n.Name
		if !strings.HasPrefix(ns, "team-") {
			continue
		}
		deps, err := env.admin.Typed.AppsV1().Deployments(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range deps.Items {
			c := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: d.Name + "-dryrun", Namespace: ns, Labels: d.Labels}, Spec: d.Spec}
			if _, err := dryClient.Typed.AppsV1().Deployments(ns).Create(ctx, c, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}}); err != nil {
				t.Errorf("dry-run Deployment %s/%s: %v", ns, d.Name, err)
			}
			dry++
		}
		jobs, err := env.admin.Typed.BatchV1().Jobs(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		for _, j := range jobs.Items {
			spec := j.Spec.DeepCopy()
			spec.Selector, spec.ManualSelector = nil, nil
			delete(spec.Template.Labels, "batch.kubernetes.io/controller-uid")
			delete(spec.Template.Labels, "controller-uid")
			delete(spec.Template.Labels, "batch.kubernetes.io/job-name")
			delete(spec.Template.Labels, "job-name")
			c := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: j.Name + "-dryrun", Namespace: ns}, Spec: *spec}
			if _, err := dryClient.Typed.BatchV1().Jobs(ns).Create(ctx, c, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}}); err != nil {
				t.Errorf("dry-run Job %s/%s: %v", ns, j.Name, err)
			}
			dry++
		}
	}
	if dry == 0 {
		t.Error("no rendered Deployment or Job left to dry-run: the check would be vacuous")
	}
	warnings := dryClient.TakeWarnings()
	for _, w := range warnings {
		t.Errorf("API server warning on a dry-run of a rendered workload: %s", w)
	}
	sc.note("%d dry-runs, %d warnings", dry, len(warnings))
}

func isController(user string) bool {
	return strings.HasPrefix(user, "system:serviceaccount:kube-system:")
}

// --- helpers ----------------------------------------------------------------

// exampleClaim is examples/claim.yaml with another namespace and name: the
// claim an app team would write.
func exampleClaim(t *testing.T, ns, name string) *unstructured.Unstructured {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(repoRoot(), "examples", "claim.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	objs, err := kube.DecodeYAML(b)
	if err != nil || len(objs) != 1 {
		t.Fatalf("examples/claim.yaml: %v (%d objects)", err, len(objs))
	}
	c := objs[0]
	if c.GroupVersionKind() != claimGVK {
		t.Fatalf("examples/claim.yaml is a %s, want %s", c.GroupVersionKind(), claimGVK)
	}
	c.SetNamespace(ns)
	c.SetName(name)
	return c
}

// smallClaim is a CPU-only claim (the node has 8 GPUs; fifty claims must
// fit) without autoscaling, for the fault and stress scenarios. Its
// framework is "fake", the preset meant for tests: a vLLM claim without a
// GPU draws a warning on every reconcile, and Crossplane turns each into
// Events on the composite and the claim, which at fifty claims is API
// server load the scenario is not about.
func smallClaim(t *testing.T, ns, name string) *unstructured.Unstructured {
	c := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": claimGVK.GroupVersion().String(),
		"kind":       claimGVK.Kind,
		"metadata":   map[string]any{"name": name, "namespace": ns},
		"spec": map[string]any{
			"model":     map[string]any{"uri": "hf://e2e/tiny-" + name, "version": "1", "framework": "fake"},
			"replicas":  map[string]any{"min": int64(1), "max": int64(1)},
			"resources": map[string]any{"cpu": "100m", "memory": "256Mi", "gpu": int64(0)},
			"storage":   map[string]any{"size": "1Gi"},
		},
	}}
	return c
}

func setField(o *unstructured.Unstructured, v any, path ...string) {
	if err := unstructured.SetNestedField(o.Object, v, path...); err != nil {
		panic(err)
	}
}

func applyClaim(ctx context.Context, t *testing.T, c *unstructured.Unstructured) {
	t.Helper()
	if _, err := env.admin.Apply(ctx, c); err != nil {
		t.Fatal(err)
	}
}

// createCredentials makes the Secret examples/claim.yaml refers to. kwok
// never reads it, but a real cluster would need it.
func createCredentials(ctx context.Context, t *testing.T, ns string) {
	t.Helper()
	s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "hf-credentials", Namespace: ns}, StringData: map[string]string{"HF_TOKEN": "hf_e2e_not_a_token"}}
	if _, err := env.admin.Typed.CoreV1().Secrets(ns).Create(ctx, s, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
}

// waitClaimsReady waits until every named claim in ns is Ready=True.
func waitClaimsReady(ctx context.Context, t *testing.T, ns string, names []string, timeout time.Duration) {
	t.Helper()
	err := kube.Eventually(ctx, timeout, 500*time.Millisecond, fmt.Sprintf("%d claims in %s Ready", len(names), ns), func(ctx context.Context) (bool, string, error) {
		claims, err := env.admin.List(ctx, claimGVK, ns, "")
		if err != nil {
			return false, "", err
		}
		ready := map[string]bool{}
		var example string
		for i := range claims {
			if st, _, _ := kube.Condition(&claims[i], "Ready"); st == "True" {
				ready[claims[i].GetName()] = true
			} else if example == "" {
				phase, _, _ := unstructured.NestedString(claims[i].Object, "status", "phase")
				example = fmt.Sprintf("e.g. %s: phase %q %s", claims[i].GetName(), phase, kube.ConditionsSummary(&claims[i]))
			}
		}
		n := 0
		for _, name := range names {
			if ready[name] {
				n++
			}
		}
		return n == len(names), fmt.Sprintf("%d/%d Ready; %s", n, len(names), example), nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func controllerName(refs []metav1.OwnerReference) string {
	for _, r := range refs {
		if r.Controller != nil && *r.Controller {
			return r.Name
		}
	}
	return ""
}

func contains(list []string, s string) bool {
	for _, e := range list {
		if e == s || e == "*" {
			return true
		}
	}
	return false
}

func toAny(s []string) []any {
	out := make([]any, len(s))
	for i, v := range s {
		out[i] = v
	}
	return out
}

func minDur(a, b time.Duration) time.Duration {
	if a < b {
		return a
	}
	return b
}

// cpuByProcess snapshots the CPU time of every process the test started.
func cpuByProcess() map[string]float64 {
	out := map[string]float64{}
	for _, p := range env.cp.Processes() {
		out[p.Name] += p.CPUSeconds()
	}
	return out
}

// cpuSpent renders the CPU seconds each process used between two
// snapshots, biggest first.
func cpuSpent(before, after map[string]float64) string {
	type use struct {
		name string
		sec  float64
	}
	var uses []use
	for name, a := range after {
		if d := a - before[name]; d >= 0.5 {
			uses = append(uses, use{name, d})
		}
	}
	sort.Slice(uses, func(i, j int) bool { return uses[i].sec > uses[j].sec })
	var parts []string
	for _, u := range uses {
		parts = append(parts, fmt.Sprintf("%s %.0f", u.name, u.sec))
	}
	return strings.Join(parts, ", ")
}

// profileAPIServer saves a CPU profile of the API server, for -profile.
func profileAPIServer(t *testing.T, d time.Duration, path string) {
	c, err := env.cp.HTTPClient(controlplane.Admin)
	if err != nil {
		t.Log(err)
		return
	}
	resp, err := c.Get(fmt.Sprintf("%s/debug/pprof/profile?seconds=%d", env.cp.URL, int(d.Seconds())))
	if err != nil {
		t.Log(err)
		return
	}
	defer resp.Body.Close()
	f, err := os.Create(path)
	if err != nil {
		t.Log(err)
		return
	}
	defer f.Close()
	if _, err := io.Copy(f, resp.Body); err != nil {
		t.Log(err)
		return
	}
	t.Logf("API server CPU profile: %s (go tool pprof -top %s)", path, path)
}

// rbacMissing shows the RBAC scenario has teeth: without the ClusterRole we
// ship, Crossplane (holding only its chart role) cannot create the pull Job
// or the PVC, and the claim says so; with it back, the claim recovers.
func (s *infernoSuite) rbacMissing(t *testing.T) {
	ctx := context.Background()
	sc := env.summary.start(t, "11b rbac: a missing permission is caught")
	shipped, err := kube.DecodeYAML(mustRead(t, filepath.Join(repoRoot(), "apis", "rbac.yaml")))
	if err != nil || len(shipped) == 0 {
		t.Fatalf("apis/rbac.yaml: %v", err)
	}
	for _, o := range shipped {
		if err := env.admin.Delete(ctx, o.GroupVersionKind(), o.GetNamespace(), o.GetName()); err != nil {
			t.Fatal(err)
		}
	}
	if err := kube.Eventually(ctx, 30*time.Second, 200*time.Millisecond, "Crossplane's aggregated role to lose batch/jobs", func(ctx context.Context) (bool, string, error) {
		ok, why := can(ctx, t, controlplane.Crossplane, "create", "batch", "jobs", "team-rbac")
		return !ok, why, nil
	}); err != nil {
		t.Fatal(err)
	}
	const ns = "team-rbac"
	if err := env.createTeamNamespace(ctx, ns); err != nil {
		t.Fatal(err)
	}
	applyClaim(ctx, t, smallClaim(t, ns, "norbac"))
	var seen string
	err = kube.Eventually(ctx, 60*time.Second, 250*time.Millisecond, "the composite to report the missing permission", func(ctx context.Context) (bool, string, error) {
		xrs, err := env.admin.List(ctx, xrGVK, "", "crossplane.io/claim-name=norbac")
		if err != nil || len(xrs) == 0 {
			return false, "no composite yet", err
		}
		st, _, msg := kube.Condition(&xrs[0], "Synced")
		seen = msg
		return st == "False" && strings.Contains(msg, "forbidden"), kube.ConditionsSummary(&xrs[0]), nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sc.note("without apis/rbac.yaml: Synced=False, %q", truncate(seen, 160))
	start := time.Now()
	if _, err := env.admin.ApplyFile(ctx, filepath.Join(repoRoot(), "apis", "rbac.yaml")); err != nil {
		t.Fatal(err)
	}
	waitClaimsReady(ctx, t, ns, []string{"norbac"}, 3*time.Minute)
	sc.note("RBAC restored -> claim Ready in %.1fs", time.Since(start).Seconds())
}

func mustRead(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

// countInLog counts the lines of a log under the run's log directory that
// contain substr.
func countInLog(name, substr string) int {
	b, err := os.ReadFile(filepath.Join(env.logDir(), name))
	if err != nil {
		return 0
	}
	return strings.Count(string(b), substr)
}
