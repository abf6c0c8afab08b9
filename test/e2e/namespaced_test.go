//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/inferno-ai/function-inferno/test/e2e/kube"
)

var namespacedGVK = schema.GroupVersionKind{Group: "inference.inferno.dev", Version: "v1alpha1", Kind: "InferenceService"}

const (
	// namespacedXRDName is the v2 XRD of apis/namespaced.
	namespacedXRDName = "inferenceservices.inference.inferno.dev"
	// namespacedTeam is the namespace of the namespaced scenario: a team
	// of its own, so its llama shares a name with team-a's claim and
	// nothing else.
	namespacedTeam = "team-v2"
)

// --- 13 namespaced ----------------------------------------------------------

// namespaced applies examples/namespaced/xr.yaml — a Crossplane v2
// namespaced InferenceService, no claim — in a team namespace and follows
// it through the installed Configuration and function to Ready: its
// objects are in its own namespace, named after it, controlled by it, and
// gone when it is deleted.
func (s *infernoSuite) namespaced(t *testing.T) {
	ctx := context.Background()
	sc := env.summary.start(t, "13 namespaced")
	if err := env.createTeamNamespace(ctx, namespacedTeam); err != nil {
		t.Fatal(err)
	}
	createCredentials(ctx, t, namespacedTeam)

	xr := exampleNamespacedXR(t, namespacedTeam)
	name := xr.GetName()
	l := &lifecycle{gvk: namespacedGVK, ns: namespacedTeam, name: name, st: lifecycleState{phases: map[string]time.Duration{}}}
	applyClaim(ctx, t, xr)
	l.applied(time.Now())
	if err := l.waitFor(3*time.Minute, func(l *lifecycleState) bool { return l.ready > 0 }); err != nil {
		got, _ := env.admin.Get(ctx, namespacedGVK, namespacedTeam, name)
		t.Fatalf("namespaced XR Ready: %v (%s)", err, conditionsOf(got))
	}
	st := l.snapshot()
	sc.note("apply->first objects %.1fs, apply->Job Complete %.1fs, apply->Deployment %.1fs, apply->Ready %.1fs (phases %v)",
		minDur(st.pvc, st.job).Seconds(), st.jobComplete.Seconds(), st.deployment.Seconds(), st.ready.Seconds(), st.phaseOrder)

	got, err := env.admin.Get(ctx, namespacedGVK, namespacedTeam, name)
	if err != nil {
		t.Fatal(err)
	}
	phase, _, _ := unstructured.NestedString(got.Object, "status", "phase")
	url, _, _ := unstructured.NestedString(got.Object, "status", "url")
	if phase != "Serving" {
		t.Errorf("phase %q, want Serving (%s)", phase, kube.ConditionsSummary(got))
	}
	if want := fmt.Sprintf("http://%s.%s.svc.cluster.local:80", name, namespacedTeam); url != want {
		t.Errorf("status.url %q, want %s", url, want)
	}
	for _, c := range []string{"WeightsReady", "ServerReady"} {
		if st, reason, msg := kube.Condition(got, c); st != "True" {
			t.Errorf("condition %s=%q (%s: %s), want True", c, st, reason, msg)
		}
	}

	// Everything it composed, wherever it is: in its namespace, named
	// after it, with it as the controller.
	owned := ownedBy(ctx, t, got.GetUID())
	var kinds []string
	for _, o := range owned {
		kinds = append(kinds, o.kind)
		if o.namespace != namespacedTeam {
			t.Errorf("%s %s/%s is outside the XR's namespace %s", o.kind, o.namespace, o.name, namespacedTeam)
		}
		if o.name != name && !strings.HasPrefix(o.name, name+"-") {
			t.Errorf("%s %s is not named after the XR %s", o.kind, o.name, name)
		}
	}
	slices.Sort(kinds)
	if want := []string{"Deployment", "HorizontalPodAutoscaler", "Job", "PersistentVolumeClaim", "Service"}; !slices.Equal(kinds, want) {
		t.Errorf("objects controlled by the XR: %v, want one each of %v", kinds, want)
	}

	// Printer columns, the way kubectl asks for them.
	table, err := getTable(ctx, fmt.Sprintf("/apis/%s/namespaces/%s/inferenceservices/%s", namespacedGVK.GroupVersion(), namespacedTeam, name))
	if err != nil {
		t.Fatal(err)
	}
	cols := table.column("Phase", "URL", "READY")
	if cols["Phase"] != "Serving" || cols["URL"] != url || cols["READY"] != "True" {
		t.Errorf("kubectl get %s shows %v, want Phase=Serving, URL=%s, READY=True", namespacedGVK.GroupKind(), table.rowMaps(), url)
	} else {
		sc.note("kubectl columns %s", table.render())
	}

	// Deleting it deletes everything it composed.
	start := time.Now()
	if err := env.admin.Delete(ctx, namespacedGVK, namespacedTeam, name); err != nil {
		t.Fatal(err)
	}
	err = kube.Eventually(ctx, 2*time.Minute, 250*time.Millisecond, "everything of "+namespacedTeam+"/"+name+" gone", func(ctx context.Context) (bool, string, error) {
		left := composedLeft(ctx, namespacedTeam, name)
		if _, err := env.admin.Get(ctx, namespacedGVK, namespacedTeam, name); !apierrors.IsNotFound(err) {
			left = append(left, "the XR")
		}
		return len(left) == 0, strings.Join(left, ", "), nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sc.note("XR and %d composed objects gone %.1fs after delete", len(owned), time.Since(start).Seconds())
}

// exampleNamespacedXR is examples/namespaced/xr.yaml in namespace ns.
func exampleNamespacedXR(t *testing.T, ns string) *unstructured.Unstructured {
	t.Helper()
	path := filepath.Join(repoRoot(), "examples", "namespaced", "xr.yaml")
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	objs, err := kube.DecodeYAML(b)
	if err != nil || len(objs) != 1 {
		t.Fatalf("%s: %v (%d objects)", path, err, len(objs))
	}
	xr := objs[0]
	if xr.GroupVersionKind() != namespacedGVK {
		t.Fatalf("%s is a %s, want %s", path, xr.GroupVersionKind(), namespacedGVK)
	}
	xr.SetNamespace(ns)
	return xr
}

// ownedObject is a composed object, by kind and place.
type ownedObject struct{ kind, namespace, name string }

// ownedBy lists, across all namespaces, the objects of every kind the
// function composes whose controller is the object with uid.
func ownedBy(ctx context.Context, t *testing.T, uid types.UID) []ownedObject {
	t.Helper()
	var out []ownedObject
	add := func(kind string, metas []metav1.ObjectMeta) {
		for _, m := range metas {
			if c := metav1.GetControllerOfNoCopy(&m); c != nil && c.UID == uid {
				out = append(out, ownedObject{kind, m.Namespace, m.Name})
			}
		}
	}
	all := metav1.ListOptions{}
	c := env.admin.Typed
	pvcs, err := c.CoreV1().PersistentVolumeClaims("").List(ctx, all)
	if err != nil {
		t.Fatal(err)
	}
	var metas []metav1.ObjectMeta
	for _, o := range pvcs.Items {
		metas = append(metas, o.ObjectMeta)
	}
	add("PersistentVolumeClaim", metas)
	jobs, err := c.BatchV1().Jobs("").List(ctx, all)
	if err != nil {
		t.Fatal(err)
	}
	metas = nil
	for _, o := range jobs.Items {
		metas = append(metas, o.ObjectMeta)
	}
	add("Job", metas)
	deps, err := c.AppsV1().Deployments("").List(ctx, all)
	if err != nil {
		t.Fatal(err)
	}
	metas = nil
	for _, o := range deps.Items {
		metas = append(metas, o.ObjectMeta)
	}
	add("Deployment", metas)
	svcs, err := c.CoreV1().Services("").List(ctx, all)
	if err != nil {
		t.Fatal(err)
	}
	metas = nil
	for _, o := range svcs.Items {
		metas = append(metas, o.ObjectMeta)
	}
	add("Service", metas)
	hpas, err := c.AutoscalingV2().HorizontalPodAutoscalers("").List(ctx, all)
	if err != nil {
		t.Fatal(err)
	}
	metas = nil
	for _, o := range hpas.Items {
		metas = append(metas, o.ObjectMeta)
	}
	add("HorizontalPodAutoscaler", metas)
	return out
}

// conditionsOf summarises an object's conditions, or says it is missing.
func conditionsOf(o *unstructured.Unstructured) string {
	if o == nil {
		return "not found"
	}
	phase, _, _ := unstructured.NestedString(o.Object, "status", "phase")
	msg, _, _ := unstructured.NestedString(o.Object, "status", "message")
	return fmt.Sprintf("phase %q %s: %s", phase, kube.ConditionsSummary(o), msg)
}
