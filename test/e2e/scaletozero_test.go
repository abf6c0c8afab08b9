//go:build e2e

package e2e

import (
	"archive/zip"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/inferno-ai/function-inferno/test/e2e/kube"
)

// KEDA's CRDs come from its Go module at a pinned version. The module is
// not required in test/e2e/go.mod: its go.mod asks for Go 1.27.4, which
// would raise this module's toolchain, so the test downloads the pinned
// version with `go mod download` (which fetches and hashes the zip before
// it reports that Go version) and checks the hash below.
// The HTTP add-on's CRD comes the same way from
// github.com/kedacore/http-add-on v0.12.0, the version whose operator,
// scaler and interceptor scenario 26c runs (tools/e2e/httpaddon).
var (
	kedaCRD = moduleCRD{
		Module: "github.com/kedacore/keda/v2", Version: "v2.21.1",
		Sum: "h1:AoPpnkEeuSYUb1dAqQO5Pud9BpCPiOqurnKtnKobl6Q=", Path: "config/crd/bases/keda.sh_scaledobjects.yaml",
	}
	httpAddOnCRD = moduleCRD{
		Module: "github.com/kedacore/http-add-on", Version: "v0.12.0",
		Sum: "h1:81Us4SmQfhwYfZf5rO/Thg/XC4GELVMjzvnP2IDXxcw=", Path: "config/crd/bases/http.keda.sh_httpscaledobjects.yaml",
	}
)

// moduleCRD is a CRD file in a Go module at a pinned version and hash.
type moduleCRD struct{ Module, Version, Sum, Path string }

var (
	scaledObjectGVK     = schema.GroupVersionKind{Group: "keda.sh", Version: "v1alpha1", Kind: "ScaledObject"}
	httpScaledObjectGVK = schema.GroupVersionKind{Group: "http.keda.sh", Version: "v1alpha1", Kind: "HTTPScaledObject"}
)

const (
	// kedaComposition is examples/scale-to-zero/composition.yaml; claims
	// choose it by autoscalerLabel.
	autoscalerLabel = "inference.inferno.io/autoscaler"
)

// --- 26 scale to zero ---------------------------------------------------------

// scaleToZero runs a claim that scales to zero on the KEDA-enabled
// Composition of examples/scale-to-zero as it is (HTTP add-on included),
// with KEDA's ScaledObject CRD of v2.21.1 and the add-on's CRD installed
// from their pinned modules. Neither operator runs in this scenario (26b
// runs KEDA's, v2.17.0, without the add-on, and 26c both on the real
// node), so the test plays them: it writes the
// ScaledObject's status conditions as KEDA does and scales the Deployment
// through its scale subresource as KEDA does at zero. It shows the
// ScaledObject accepted by the real API server with none of the
// function's fields pruned (and the rendered object accepted by a strict
// server-side apply), the claim Serving on its first server, Idle and
// Ready with the Deployment at 0 once "KEDA" scaled it there, the
// Deployment left at 0 by later reconciles, and woken again.
func (s *infernoSuite) scaleToZero(t *testing.T) {
	ctx := context.Background()
	sc := env.summary.start(t, "26 scale to zero")
	for _, m := range []moduleCRD{kedaCRD, httpAddOnCRD} {
		crd := installModuleCRD(ctx, t, m)
		defer func() {
			if err := env.admin.Delete(ctx, schema.GroupVersionKind{Group: "apiextensions.k8s.io", Version: "v1", Kind: "CustomResourceDefinition"}, "", crd); err != nil {
				t.Logf("deleting CRD %s: %v", crd, err)
			}
		}()
	}
	if _, err := env.admin.ApplyFile(ctx, filepath.Join(repoRoot(), "examples", "scale-to-zero", "composition.yaml")); err != nil {
		t.Fatal(err)
	}
	const ns, name = "team-zero", "sleepy"
	if err := env.createTeamNamespace(ctx, ns); err != nil {
		t.Fatal(err)
	}

	// The rendered ScaledObject of the example, as the golden file has
	// it, passes a strict server-side apply (dry run): no unknown field.
	strictGolden(ctx, t, ns, "scaledobject", scaledObjectGVK)
	strictGolden(ctx, t, ns, "httpscaledobject", httpScaledObjectGVK)

	claim := smallClaim(t, ns, name)
	setField(claim, map[string]any{"matchLabels": map[string]any{autoscalerLabel: "keda"}}, "spec", "compositionSelector")
	setField(claim, map[string]any{"min": int64(0), "max": int64(2)}, "spec", "replicas")
	setField(claim, map[string]any{"enabled": true, "targetConcurrency": int64(2)}, "spec", "autoscaling")
	start := time.Now()
	applyClaim(ctx, t, claim)

	// First server up; the ScaledObject exists, KEDA has not spoken: the
	// claim serves but is not Ready.
	var so *unstructured.Unstructured
	err := kube.Eventually(ctx, 2*time.Minute, 250*time.Millisecond, "the ScaledObject rendered, the first server serving", func(ctx context.Context) (bool, string, error) {
		c, err := env.admin.Get(ctx, claimGVK, ns, name)
		if err != nil {
			return false, "", err
		}
		so, err = env.admin.Get(ctx, scaledObjectGVK, ns, name)
		if err != nil {
			return false, "no ScaledObject yet", nil
		}
		phase, _, _ := unstructured.NestedString(c.Object, "status", "phase")
		ready, _, _ := kube.Condition(c, "Ready")
		return phase == "Serving" && ready != "True", fmt.Sprintf("phase %s, Ready %s", phase, ready), nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sc.note("claim → ScaledObject and first server Serving in %.1fs", time.Since(start).Seconds())
	checkScaledObject(t, so, ns, name)
	if _, err := env.admin.Get(ctx, schema.GroupVersionKind{Group: "autoscaling", Version: "v2", Kind: "HorizontalPodAutoscaler"}, ns, name); err == nil {
		t.Errorf("an HPA %s/%s exists beside the ScaledObject", ns, name)
	}

	// KEDA accepts it: Ready, not Active; the add-on registers the hosts.
	// The claim is Ready.
	if _, err := env.admin.Get(ctx, httpScaledObjectGVK, ns, name); err != nil {
		t.Fatalf("no HTTPScaledObject: %v", err)
	}
	start = time.Now()
	writeKEDAStatus(ctx, t, ns, name, "False")
	writeHTTPAddOnStatus(ctx, t, ns, name)
	waitClaimsReady(ctx, t, ns, []string{name}, time.Minute)
	sc.note("ScaledObject Ready=True → claim Ready in %.1fs", time.Since(start).Seconds())

	// The cooldown passes: KEDA scales the Deployment to 0.
	start = time.Now()
	scaleDeployment(ctx, t, ns, name, 0)
	idle := waitPhase(ctx, t, ns, name, "Idle", "True")
	url, _, _ := unstructured.NestedString(idle.Object, "status", "url")
	if url != fmt.Sprintf("http://%s.%s.svc.cluster.local:80", name, ns) {
		t.Errorf("idle: status.url %q", url)
	}
	if n := serverPods(ctx, t, ns, name); sum(n) != 0 {
		t.Errorf("idle: %v server pods, want none", n)
	}
	sc.note("scaled to 0 → phase Idle, Ready, %s in %.1fs", url, time.Since(start).Seconds())

	// Later reconciles leave KEDA's 0 alone: a change of the claim that
	// changes the Deployment (its memory) makes Crossplane apply the
	// function's new Deployment; its replicas stay KEDA's.
	d0, err := env.admin.Typed.AppsV1().Deployments(ns).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	start = time.Now()
	setField(claim, "320Mi", "spec", "resources", "memory")
	applyClaim(ctx, t, claim)
	var d1 *appsv1.Deployment
	err = kube.Eventually(ctx, time.Minute, 250*time.Millisecond, "the Deployment re-applied with the new memory", func(ctx context.Context) (bool, string, error) {
		d1, err = env.admin.Typed.AppsV1().Deployments(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, "", err
		}
		mem := d1.Spec.Template.Spec.Containers[0].Resources.Requests.Memory().String()
		return d1.Generation > d0.Generation && mem == "320Mi", fmt.Sprintf("generation %d, memory %s", d1.Generation, mem), nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if d1.Spec.Replicas == nil || *d1.Spec.Replicas != 0 {
		t.Errorf("after the function's Deployment was applied it asks for %v servers; KEDA's 0 was reverted", d1.Spec.Replicas)
	}
	for _, f := range d1.ManagedFields {
		if f.Subresource == "" && f.FieldsV1 != nil && strings.Contains(string(f.FieldsV1.Raw), `"f:replicas"`) {
			t.Errorf("field manager %s owns the Deployment's spec.replicas; it would fight KEDA", f.Manager)
		}
	}
	waitPhase(ctx, t, ns, name, "Idle", "True")
	sc.note("claim changed at zero: Deployment re-applied (generation %d → %d) in %.1fs, replicas still 0, still Idle", d0.Generation, d1.Generation, time.Since(start).Seconds())

	// A request arrives: KEDA goes Active and scales to 1.
	start = time.Now()
	writeKEDAStatus(ctx, t, ns, name, "True")
	scaleDeployment(ctx, t, ns, name, 1)
	waitPhase(ctx, t, ns, name, "Serving", "True")
	sc.note("woken: Active, scaled to 1 → Serving, Ready in %.1fs", time.Since(start).Seconds())

	deleteClaimsAndWait(ctx, t, ns, []string{name})
	if err := kube.Eventually(ctx, time.Minute, 250*time.Millisecond, "the ScaledObject and HTTPScaledObject garbage-collected with their claim", func(ctx context.Context) (bool, string, error) {
		_, err := env.admin.Get(ctx, scaledObjectGVK, ns, name)
		_, herr := env.admin.Get(ctx, httpScaledObjectGVK, ns, name)
		gone := func(err error) bool { return err != nil && strings.Contains(err.Error(), "not found") }
		return gone(err) && gone(herr), fmt.Sprint(err, herr), nil
	}); err != nil {
		t.Error(err)
	}
}

func sum(m map[string]int) int {
	n := 0
	for _, v := range m {
		n += v
	}
	return n
}

// waitPhase waits for the claim's phase and Ready condition.
func waitPhase(ctx context.Context, t *testing.T, ns, name, phase, ready string) *unstructured.Unstructured {
	t.Helper()
	var c *unstructured.Unstructured
	err := kube.Eventually(ctx, 2*time.Minute, 250*time.Millisecond, fmt.Sprintf("claim %s/%s %s, Ready=%s", ns, name, phase, ready), func(ctx context.Context) (bool, string, error) {
		var err error
		c, err = env.admin.Get(ctx, claimGVK, ns, name)
		if err != nil {
			return false, "", err
		}
		p, _, _ := unstructured.NestedString(c.Object, "status", "phase")
		msg, _, _ := unstructured.NestedString(c.Object, "status", "message")
		r, _, _ := kube.Condition(c, "Ready")
		return p == phase && r == ready, fmt.Sprintf("phase %s (%s), Ready %s", p, msg, r), nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// checkScaledObject asserts the ScaledObject as the API server stored it
// keeps every field the function writes: a field the CRD does not know
// would have been pruned.
func checkScaledObject(t *testing.T, so *unstructured.Unstructured, ns, name string) {
	t.Helper()
	for _, path := range [][]string{
		{"spec", "scaleTargetRef", "name"}, {"spec", "scaleTargetRef", "kind"}, {"spec", "scaleTargetRef", "apiVersion"},
		{"spec", "pollingInterval"}, {"spec", "cooldownPeriod"}, {"spec", "idleReplicaCount"},
		{"spec", "minReplicaCount"}, {"spec", "maxReplicaCount"},
		{"spec", "fallback", "failureThreshold"}, {"spec", "fallback", "replicas"},
	} {
		if _, ok, _ := unstructured.NestedFieldNoCopy(so.Object, path...); !ok {
			t.Errorf("the stored ScaledObject lacks %s", strings.Join(path, "."))
		}
	}
	triggers, _, _ := unstructured.NestedSlice(so.Object, "spec", "triggers")
	if len(triggers) != 2 {
		t.Fatalf("ScaledObject triggers %v, want prometheus and the HTTP add-on's external-push", triggers)
	}
	if push, _ := triggers[1].(map[string]any); push["type"] != "external-push" {
		t.Errorf("second trigger %v, want external-push", push)
	}
	tr := triggers[0].(map[string]any)
	md, _ := tr["metadata"].(map[string]any)
	want := fmt.Sprintf(`sum(inferno_fake_requests_running{namespace="%s",pod=~"%s-[a-z0-9]{1,10}-?[a-z0-9]{5}"})`, ns, name)
	if tr["type"] != "prometheus" || tr["name"] != "concurrency" || tr["metricType"] != "AverageValue" || md["query"] != want || md["threshold"] != "2" || md["serverAddress"] == nil {
		t.Errorf("ScaledObject trigger %v", tr)
	}
}

// writeKEDAStatus writes the ScaledObject's status as KEDA's operator
// does: Ready (its scalers answer), Active (a trigger wants servers),
// Fallback and Paused.
func writeKEDAStatus(ctx context.Context, t *testing.T, ns, name, active string) {
	t.Helper()
	so, err := env.admin.Get(ctx, scaledObjectGVK, ns, name)
	if err != nil {
		t.Fatal(err)
	}
	activeReason := map[string]string{"True": "ScalerActive", "False": "ScalerNotActive"}[active]
	setField(so, map[string]any{
		"scaleTargetKind":      "apps/v1.Deployment",
		"scaleTargetGVKR":      map[string]any{"group": "apps", "version": "v1", "kind": "Deployment", "resource": "deployments"},
		"originalReplicaCount": int64(1),
		"externalMetricNames":  []any{"s0-prometheus"},
		"conditions": []any{
			map[string]any{"type": "Ready", "status": "True", "reason": "ScaledObjectReady", "message": "ScaledObject is defined correctly and is ready for scaling"},
			map[string]any{"type": "Active", "status": active, "reason": activeReason, "message": "Scaling is performed because triggers are active"},
			map[string]any{"type": "Fallback", "status": "False", "reason": "NoFallbackFound", "message": "No fallbacks are active on this scaled object"},
			map[string]any{"type": "Paused", "status": "False", "reason": "ScaledObjectUnpaused", "message": "pause annotation removed for ScaledObject"},
		},
	}, "status")
	res, err := env.admin.Resource(scaledObjectGVK, ns)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := res.UpdateStatus(ctx, so, metav1.UpdateOptions{FieldValidation: "Strict"}); err != nil {
		t.Fatalf("writing the ScaledObject's status as KEDA would: %v", err)
	}
}

// scaleDeployment sets the Deployment's replicas through its scale
// subresource, as KEDA's scale loop does at and from zero.
func scaleDeployment(ctx context.Context, t *testing.T, ns, name string, replicas int32) {
	t.Helper()
	scale := &autoscalingv1.Scale{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}, Spec: autoscalingv1.ScaleSpec{Replicas: replicas}}
	if _, err := env.admin.Typed.AppsV1().Deployments(ns).UpdateScale(ctx, name, scale, metav1.UpdateOptions{FieldManager: "e2e-keda"}); err != nil {
		t.Fatalf("scaling Deployment %s/%s to %d as KEDA would: %v", ns, name, replicas, err)
	}
}

// strictGolden applies the object of that composition resource name from
// fn's golden render of examples/scale-to-zero (idle stage) into ns as a
// dry run with strict field validation: the API server refuses any field
// the CRD lacks.
func strictGolden(ctx context.Context, t *testing.T, ns, resource string, gvk schema.GroupVersionKind) {
	t.Helper()
	for _, g := range goldenObjects(t, "scale-to-zero-idle.yaml", ns) {
		if g.Resource != resource {
			continue
		}
		if g.Object.GroupVersionKind() != gvk {
			t.Fatalf("the golden render's %s is a %s, not a %s", resource, g.Object.GroupVersionKind(), gvk)
		}
		if err := applyDryRun(ctx, env.admin, g.Object); err != nil {
			t.Fatalf("strict server-side apply of the rendered %s: %v", gvk.Kind, err)
		}
		return
	}
	t.Fatalf("the golden render has no %s", resource)
}

// writeHTTPAddOnStatus writes the HTTPScaledObject's status as the
// add-on's operator does once it skipped creating its own ScaledObject
// (operator/controllers/http, v0.12.0: a metav1.Condition).
func writeHTTPAddOnStatus(ctx context.Context, t *testing.T, ns, name string) {
	t.Helper()
	o, err := env.admin.Get(ctx, httpScaledObjectGVK, ns, name)
	if err != nil {
		t.Fatal(err)
	}
	setField(o, map[string]any{
		"targetWorkload": "apps/v1/Deployment/" + name,
		"targetService":  name + ":80",
		"conditions": []any{
			map[string]any{"type": "Ready", "status": "True", "reason": "Reconciled", "message": "ScaledObject created and configured",
				"observedGeneration": o.GetGeneration(), "lastTransitionTime": time.Now().UTC().Format(time.RFC3339)},
		},
	}, "status")
	res, err := env.admin.Resource(httpScaledObjectGVK, ns)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := res.UpdateStatus(ctx, o, metav1.UpdateOptions{FieldValidation: "Strict"}); err != nil {
		t.Fatalf("writing the HTTPScaledObject's status as the add-on would: %v", err)
	}
}

// installModuleCRD applies a CRD from its pinned module and waits until
// it is established.
func installModuleCRD(ctx context.Context, t *testing.T, m moduleCRD) string {
	t.Helper()
	cmd := exec.Command("go", "mod", "download", "-json", m.Module+"@"+m.Version)
	cmd.Dir = t.TempDir()
	out, _ := cmd.Output() // keda exits 1 over its Go version, after the download
	var info struct{ Zip, Sum, Error string }
	if err := json.Unmarshal(out, &info); err != nil || info.Zip == "" {
		t.Fatalf("go mod download %s@%s: %v %s", m.Module, m.Version, err, out)
	}
	if info.Sum != m.Sum {
		t.Fatalf("%s@%s has hash %s, want %s", m.Module, m.Version, info.Sum, m.Sum)
	}
	z, err := zip.OpenReader(info.Zip)
	if err != nil {
		t.Fatal(err)
	}
	defer z.Close()
	var data []byte
	for _, f := range z.File {
		if f.Name != m.Module+"@"+m.Version+"/"+m.Path {
			continue
		}
		r, err := f.Open()
		if err != nil {
			t.Fatal(err)
		}
		data, err = io.ReadAll(r)
		r.Close()
		if err != nil {
			t.Fatal(err)
		}
	}
	if len(data) == 0 {
		t.Fatalf("%s not in %s", m.Path, info.Zip)
	}
	return applyCRD(ctx, t, m.Module+"@"+m.Version+"/"+m.Path, data)
}

// --- 26b scale to zero with KEDA's operator -------------------------------

// liveKEDALabel is the autoscaler label of the Composition scenario 26b
// derives from examples/scale-to-zero (the test's Prometheus, no HTTP
// add-on, short cooldown).
const liveKEDALabel = "keda-live"

// scaleToZeroLive runs a claim that scales to zero under KEDA's real
// operator (v2.17.0, liveKEDA) and a Prometheus the test plays
// (fakePrometheus), on the Composition of examples/scale-to-zero with the
// Input pointed at that Prometheus, a 30 s cooldown (the least the
// function takes), 2 s polls, and no HTTP add-on (its external-push
// trigger would need the add-on's scaler answering: with nothing there
// KEDA reports a partial trigger error and, the ScaledObject having a
// fallback, freezes at its replicas):
//  1. with the concurrency query answering 1, the claim serves; KEDA
//     writes the ScaledObject's Ready and Active, creates its own HPA
//     (keda-hpa-<name>, none of the function's), and asks the Prometheus
//     exactly the query the function rendered;
//  2. the query answers 0: after the cooldown KEDA scales the Deployment
//     to 0; the claim is Idle, Ready, its URL kept;
//  3. a change of the claim at zero re-applies the Deployment; KEDA's 0
//     stays;
//  4. the query answers 3: KEDA scales to 1 and the claim is Serving;
//  5. deleting the claim deletes the ScaledObject (KEDA's finalizer) and
//     KEDA's HPA; the API server refused the operator nothing.
func (s *infernoSuite) scaleToZeroLive(t *testing.T) {
	ctx := context.Background()
	sc := env.summary.start(t, "26b scale to zero (KEDA's operator v2.17.0)")
	prom := startFakePrometheus(t)
	at := time.Now()
	keda := startKEDA(ctx, t)
	sc.note("KEDA's operator v2.17.0 and its 6 CRDs up in %.1fs", time.Since(at).Seconds())

	comp := liveKEDAComposition(t, prom.URL)
	if _, err := env.admin.Apply(ctx, comp); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = env.admin.Delete(context.Background(), comp.GroupVersionKind(), "", comp.GetName()) })

	const ns, name = "team-zero-live", "wakeful"
	if err := env.createTeamNamespace(ctx, ns); err != nil {
		t.Fatal(err)
	}
	// A ScaledObject that was never active is scaled to 0 on its first
	// poll: the claim starts with a request in flight.
	prom.set(1)
	claim := smallClaim(t, ns, name)
	setField(claim, map[string]any{"matchLabels": map[string]any{autoscalerLabel: liveKEDALabel}}, "spec", "compositionSelector")
	setField(claim, map[string]any{"min": int64(0), "max": int64(2)}, "spec", "replicas")
	setField(claim, map[string]any{"enabled": true, "targetConcurrency": int64(2)}, "spec", "autoscaling")
	start := time.Now()
	applyClaim(ctx, t, claim)
	t.Cleanup(func() { _ = env.admin.Delete(context.Background(), claimGVK, ns, name) })

	// 1. Serving, KEDA's conditions written by KEDA.
	waitPhase(ctx, t, ns, name, "Serving", "True")
	sc.note("claim → Serving and Ready in %.1fs", time.Since(start).Seconds())
	var so *unstructured.Unstructured
	waitFor(ctx, t, time.Minute, "KEDA: the ScaledObject Ready and Active", func(ctx context.Context) (bool, string, error) {
		var err error
		if so, err = env.admin.Get(ctx, scaledObjectGVK, ns, name); err != nil {
			return false, "", err
		}
		ready, _, _ := kube.Condition(so, "Ready")
		active, _, _ := kube.Condition(so, "Active")
		return ready == "True" && active == "True", kube.ConditionsSummary(so), nil
	})
	sc.note("KEDA wrote Ready=True, Active=True %.1fs after the claim", time.Since(start).Seconds())
	hpa := "keda-hpa-" + name
	if _, err := env.admin.Typed.AutoscalingV2().HorizontalPodAutoscalers(ns).Get(ctx, hpa, metav1.GetOptions{}); err != nil {
		t.Errorf("KEDA's HPA %s: %v", hpa, err)
	}
	if _, err := env.admin.Typed.AutoscalingV2().HorizontalPodAutoscalers(ns).Get(ctx, name, metav1.GetOptions{}); err == nil {
		t.Errorf("the function's HPA %s/%s exists beside the ScaledObject", ns, name)
	}
	triggers, _, _ := unstructured.NestedSlice(so.Object, "spec", "triggers")
	if len(triggers) != 1 {
		t.Fatalf("ScaledObject triggers %v, want the prometheus one alone (no HTTP add-on)", triggers)
	}
	query, _, _ := unstructured.NestedString(triggers[0].(map[string]any), "metadata", "query")
	if prom.asked(query) == 0 {
		t.Errorf("KEDA never asked the rendered query %q; it asked %q", query, prom.others(query))
	}
	if o := prom.others(query); len(o) > 0 {
		t.Errorf("KEDA asked queries the function did not render: %q", o)
	}

	// 2. Quiet: after the cooldown, 0.
	prom.set(0)
	start = time.Now()
	waitReplicas(ctx, t, ns, name, 0, 2*time.Minute)
	zeroAfter := time.Since(start)
	idle := waitPhase(ctx, t, ns, name, "Idle", "True")
	url, _, _ := unstructured.NestedString(idle.Object, "status", "url")
	if url != fmt.Sprintf("http://%s.%s.svc.cluster.local:80", name, ns) {
		t.Errorf("idle: status.url %q", url)
	}
	sc.note("query 0 → KEDA scaled to 0 after %.1fs (cooldown 30 s) → Idle, Ready, %s %.1fs later", zeroAfter.Seconds(), url, time.Since(start).Seconds()-zeroAfter.Seconds())

	// 3. A claim change at zero keeps KEDA's 0.
	d0, err := env.admin.Typed.AppsV1().Deployments(ns).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// Every version of the Deployment from here on, from a watch: a revert
	// of KEDA's 0 that KEDA undid at its next poll shows there too.
	replicaWatch, err := env.admin.Typed.AppsV1().Deployments(ns).Watch(ctx, metav1.ListOptions{
		FieldSelector: "metadata.name=" + name, ResourceVersion: d0.ResourceVersion,
	})
	if err != nil {
		t.Fatal(err)
	}
	var (
		replicasMu   sync.Mutex
		replicasSeen []string // every spec.replicas other than 0
	)
	go func() {
		for ev := range replicaWatch.ResultChan() {
			if d, ok := ev.Object.(*appsv1.Deployment); ok && (d.Spec.Replicas == nil || *d.Spec.Replicas != 0) {
				replicasMu.Lock()
				replicasSeen = append(replicasSeen, fmt.Sprintf("generation %d: %v", d.Generation, d.Spec.Replicas))
				replicasMu.Unlock()
			}
		}
	}()
	setField(claim, "320Mi", "spec", "resources", "memory")
	applyClaim(ctx, t, claim)
	waitFor(ctx, t, time.Minute, "the Deployment re-applied with the new memory", func(ctx context.Context) (bool, string, error) {
		d, err := env.admin.Typed.AppsV1().Deployments(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, "", err
		}
		mem := d.Spec.Template.Spec.Containers[0].Resources.Requests.Memory().String()
		return d.Generation > d0.Generation && mem == "320Mi", fmt.Sprintf("generation %d, memory %s", d.Generation, mem), nil
	})
	// Two more of KEDA's polls: KEDA has looked at the re-applied
	// Deployment and left it at 0.
	polls := prom.asked(query)
	waitFor(ctx, t, time.Minute, "two more of KEDA's polls", func(context.Context) (bool, string, error) {
		n := prom.asked(query) - polls
		return n >= 2, fmt.Sprintf("%d polls", n), nil
	})
	if d, err := env.admin.Typed.AppsV1().Deployments(ns).Get(ctx, name, metav1.GetOptions{}); err != nil || d.Spec.Replicas == nil || *d.Spec.Replicas != 0 {
		t.Errorf("after the claim changed at zero the Deployment asks for %v servers (%v); KEDA's 0 was reverted", d.Spec.Replicas, err)
	}
	replicaWatch.Stop()
	replicasMu.Lock()
	if len(replicasSeen) > 0 {
		t.Errorf("after the claim changed at zero the Deployment asked for servers at times (%s); KEDA's 0 was reverted", strings.Join(replicasSeen, ", "))
	}
	replicasMu.Unlock()
	waitPhase(ctx, t, ns, name, "Idle", "True")
	sc.note("claim changed at zero: Deployment re-applied, replicas still 0, Idle")

	// 4. A request: KEDA wakes it.
	prom.set(3)
	start = time.Now()
	waitReplicas(ctx, t, ns, name, 1, time.Minute)
	upAfter := time.Since(start)
	waitPhase(ctx, t, ns, name, "Serving", "True")
	sc.note("query 3 → KEDA scaled to 1 after %.1fs (polls every 2 s) → Serving, Ready %.1fs later", upAfter.Seconds(), time.Since(start).Seconds()-upAfter.Seconds())

	// 5. Deleted with its claim, while the operator runs (its finalizer).
	deleteClaimsAndWait(ctx, t, ns, []string{name})
	waitFor(ctx, t, time.Minute, "the ScaledObject and KEDA's HPA gone with the claim", func(ctx context.Context) (bool, string, error) {
		_, err := env.admin.Get(ctx, scaledObjectGVK, ns, name)
		_, herr := env.admin.Typed.AutoscalingV2().HorizontalPodAutoscalers(ns).Get(ctx, hpa, metav1.GetOptions{})
		return apierrors.IsNotFound(err) && apierrors.IsNotFound(herr), fmt.Sprint(err, herr), nil
	})
	if r := keda.refusals(); len(r) > 0 {
		t.Errorf("the API server refused KEDA's operator (its ClusterRole) %d times, first: %s", len(r), r[0])
	}
}

// liveKEDAComposition is examples/scale-to-zero/composition.yaml for
// scenario 26b: its own name and autoscaler label, KEDA pointed at the
// test's Prometheus, a 30 s cooldown and 2 s polls, no HTTP add-on.
func liveKEDAComposition(t *testing.T, prometheus string) *unstructured.Unstructured {
	t.Helper()
	objs, err := kube.DecodeYAML(mustRead(t, filepath.Join(repoRoot(), "examples", "scale-to-zero", "composition.yaml")))
	if err != nil || len(objs) != 1 {
		t.Fatalf("examples/scale-to-zero/composition.yaml: %v", err)
	}
	c := objs[0]
	c.SetName("xinferenceservices-keda-live.inference.inferno.io")
	labels := c.GetLabels()
	labels[autoscalerLabel] = liveKEDALabel
	c.SetLabels(labels)
	steps, _, _ := unstructured.NestedSlice(c.Object, "spec", "pipeline")
	if len(steps) != 1 {
		t.Fatalf("examples/scale-to-zero/composition.yaml: %d pipeline steps, want 1", len(steps))
	}
	step := steps[0].(map[string]any)
	keda, ok, _ := unstructured.NestedMap(step, "input", "keda")
	if !ok {
		t.Fatal("examples/scale-to-zero/composition.yaml: no input.keda")
	}
	keda["prometheusAddress"] = prometheus
	keda["cooldownPeriod"] = int64(30)
	keda["pollingInterval"] = int64(2)
	delete(keda, "httpAddOn")
	if err := unstructured.SetNestedMap(step, keda, "input", "keda"); err != nil {
		t.Fatal(err)
	}
	if err := unstructured.SetNestedSlice(c.Object, steps, "spec", "pipeline"); err != nil {
		t.Fatal(err)
	}
	return c
}

// waitReplicas waits until the Deployment of the claim asks for n servers.
func waitReplicas(ctx context.Context, t *testing.T, ns, name string, n int32, timeout time.Duration) {
	t.Helper()
	waitFor(ctx, t, timeout, fmt.Sprintf("Deployment %s/%s at %d replicas", ns, name, n), func(ctx context.Context) (bool, string, error) {
		d, err := env.admin.Typed.AppsV1().Deployments(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, "", err
		}
		if d.Spec.Replicas == nil {
			return false, "replicas unset", nil
		}
		return *d.Spec.Replicas == n, fmt.Sprintf("replicas %d", *d.Spec.Replicas), nil
	})
}
