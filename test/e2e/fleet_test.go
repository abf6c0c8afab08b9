//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/inferno-ai/function-inferno/test/e2e/kube"
)

// --- 37 fleet (issue 29) ------------------------------------------------------

// fleetProbeGVK is the smoke step's remote object on workload-a: a kind of
// the test's own whose Ready condition the test sets, so the step proves
// what provider-kubernetes' DeriveFromObject reads without depending on
// the function.
var fleetProbeGVK = schema.GroupVersionKind{Group: "e2e.inferno.io", Version: "v1alpha1", Kind: "FleetProbe"}

const fleetProbeCRD = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: fleetprobes.e2e.inferno.io
spec:
  group: e2e.inferno.io
  scope: Namespaced
  names: {kind: FleetProbe, plural: fleetprobes, singular: fleetprobe}
  versions:
  - name: v1alpha1
    served: true
    storage: true
    subresources: {status: {}}
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec: {type: object, x-kubernetes-preserve-unknown-fields: true}
          status: {type: object, x-kubernetes-preserve-unknown-fields: true}
`

// fleetScenarios are the fleet's steps on one hub, started by the first of
// them. 37c runs right after 37a: it cuts workload-a's path under 37a's
// serving claim. The hub stops as the group ends (and with the env, if
// the group is cut short), and today's cluster is left as the fleet found
// it: no remote composites, the packaged namespaced Composition's Input.
func (s *infernoSuite) fleetScenarios(t *testing.T) {
	if env.node == nil {
		t.Skip("no real node (-real-node=false): workload-a serves on it")
	}
	t.Cleanup(func() {
		if env.fleet == nil {
			return
		}
		s.fleetCleanup(t)
		env.fleet.stop()
		env.fleet = nil
	})
	if !t.Run("37-provider-kubernetes-smoke", s.fleetSmoke) {
		t.Fatal("provider-kubernetes does not do what the fleet scenarios rely on")
	}
	aOK := t.Run("37a-serve-on-workload-a", s.fleetServe)
	t.Run("37c-cluster-unreachable", func(t *testing.T) {
		if !aOK {
			t.Skip("37a's claim is not serving")
		}
		s.fleetUnreachable(t)
	})
	t.Run("37b-drain-moves-make-before-break", s.fleetDrain)
	t.Run("37d-unmapped-refused", s.fleetUnmapped)
}

// fleetCleanup deletes every hub claim and waits until their remote
// composites are gone from today's cluster (22-at-rest counts its writes).
func (s *infernoSuite) fleetCleanup(t *testing.T) {
	f := env.fleet
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	for _, ns := range []string{fleetClaimNS, fleetUnmappedNS} {
		claims, _ := f.admin.List(ctx, claimGVK, ns, "")
		for _, c := range claims {
			_ = f.admin.Delete(ctx, claimGVK, ns, c.GetName())
		}
	}
	if err := kube.Eventually(ctx, 3*time.Minute, 500*time.Millisecond, "the fleet's remote composites gone from today's cluster", func(ctx context.Context) (bool, string, error) {
		l, err := env.admin.List(ctx, namespacedGVK, fleetNS, "")
		if err != nil {
			return false, "", err
		}
		return len(l) == 0, fmt.Sprintf("%d left", len(l)), nil
	}); err != nil {
		t.Error(err)
	}
	_ = env.admin.Delete(ctx, crdGVK, "", "fleetprobes.e2e.inferno.io")
}

// --- 37 smoke: what provider-kubernetes v1.2.1 does ---------------------------

// fleetSmoke proves provider-kubernetes on the paths the function relies
// on, with objects of the test's own on workload-a: a ConfigMap lands;
// DeriveFromObject follows a remote Ready condition (and how fast); with
// the path cut the Objects go Synced=False and nothing is deleted on
// either side, even an Object deleted meanwhile; restored, it converges.
// What it saw goes into the summary (docs/fleet.md keeps the figures).
func (s *infernoSuite) fleetSmoke(t *testing.T) {
	f := s.fleet(t)
	ctx := context.Background()
	sc := env.summary.start(t, "37 provider-kubernetes smoke")
	sc.note("hub (control plane, Crossplane, function, provider-kubernetes %s) up in %.1fs", "v1.2.1", f.setup.Seconds())
	applyCRD(ctx, t, "the FleetProbe CRD", []byte(fleetProbeCRD))

	cm := smokeObject("smoke-cm", map[string]any{
		"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": "smoke", "namespace": fleetSmokeNS},
		"data":     map[string]any{"from": "the hub"},
	}, "")
	probe := smokeObject("smoke-probe", map[string]any{
		"apiVersion": fleetProbeGVK.GroupVersion().String(), "kind": fleetProbeGVK.Kind,
		"metadata": map[string]any{"name": "probe", "namespace": fleetSmokeNS},
		"spec":     map[string]any{"what": "readiness"},
	}, "DeriveFromObject")
	start := time.Now()
	for _, o := range []*unstructured.Unstructured{cm, probe} {
		if _, err := f.admin.Apply(ctx, o); err != nil {
			t.Fatal(err)
		}
	}
	waitFor(ctx, t, time.Minute, "the ConfigMap on workload-a", func(ctx context.Context) (bool, string, error) {
		_, err := env.admin.Typed.CoreV1().ConfigMaps(fleetSmokeNS).Get(ctx, "smoke", metav1.GetOptions{})
		return err == nil, fmt.Sprint(err), nil
	})
	landed := time.Since(start)
	waitObject(ctx, t, f, "smoke-cm", time.Minute, func(o *unstructured.Unstructured) bool {
		return objCond(o, "Ready") == "True" && objCond(o, "Synced") == "True"
	})
	sc.note("ConfigMap on workload-a %.1fs after apply, its Object Ready+Synced %.1fs (SuccessfulCreate)", landed.Seconds(), time.Since(start).Seconds())
	o := waitObject(ctx, t, f, "smoke-probe", time.Minute, func(o *unstructured.Unstructured) bool { return objCond(o, "Synced") == "True" })
	_, reason, msg := kube.Condition(o, "Ready")
	sc.note("DeriveFromObject on an object with no Ready condition: Ready=%s reason %q message %q", objCond(o, "Ready"), reason, msg)

	// Readiness follows the remote Ready condition, each way, a few times.
	var lat []time.Duration
	for i, want := range []string{"True", "False", "True", "False", "True"} {
		at := setProbeReady(ctx, t, want, fmt.Sprintf("sample %d", i))
		o := waitObject(ctx, t, f, "smoke-probe", 2*time.Minute, func(o *unstructured.Unstructured) bool { return objCond(o, "Ready") == want })
		lat = append(lat, time.Since(at))
		if got := remoteReadyInAtProvider(o); got != want {
			t.Errorf("status.atProvider.manifest shows the probe's Ready=%q, want %q", got, want)
		}
	}
	sc.note("remote Ready → Object Ready (DeriveFromObject), 5 samples (True, False, True, False, True): %s", durations(lat))

	// Cut the path: workload-a is gone, as far as the hub can tell.
	f.proxyA.Cut()
	cutAt := time.Now()
	// Whatever fails below, the next scenario gets its path back.
	defer func() { _ = f.proxyA.Restore() }()
	for _, name := range []string{"smoke-cm", "smoke-probe"} {
		o := waitObject(ctx, t, f, name, 2*time.Minute, func(o *unstructured.Unstructured) bool { return objCond(o, "Synced") == "False" })
		_, reason, msg := kube.Condition(o, "Synced")
		sc.note("cut: %s Synced=False %.1fs after the cut, reason %q, message %q; Ready stays %s", name, time.Since(cutAt).Seconds(), reason, truncate(msg, 200), objCond(o, "Ready"))
	}
	// An Object deleted while its cluster is away stays, finalizer held,
	// and takes nothing with it.
	if err := f.admin.Delete(ctx, objectGVK, "", "smoke-cm"); err != nil {
		t.Fatal(err)
	}
	time.Sleep(20 * time.Second)
	if o, err := f.admin.Get(ctx, objectGVK, "", "smoke-cm"); err != nil {
		t.Errorf("the Object deleted while workload-a was away is gone from the hub: %v", err)
	} else {
		sc.note("cut: Object deleted meanwhile: still on the hub 20s later (deletionTimestamp %v, finalizers %v, %s)", o.GetDeletionTimestamp() != nil, o.GetFinalizers(), kube.ConditionsSummary(o))
	}
	if _, err := env.admin.Typed.CoreV1().ConfigMaps(fleetSmokeNS).Get(ctx, "smoke", metav1.GetOptions{}); err != nil {
		t.Errorf("the ConfigMap on workload-a is gone while the path was cut: %v", err)
	}
	if _, err := env.admin.Get(ctx, fleetProbeGVK, fleetSmokeNS, "probe"); err != nil {
		t.Errorf("the probe on workload-a is gone while the path was cut: %v", err)
	}
	if p, err := f.admin.Get(ctx, objectGVK, "", "smoke-probe"); err != nil || p.GetDeletionTimestamp() != nil {
		t.Errorf("the probe's Object on the hub: %v (deleting: %v)", err, p != nil && p.GetDeletionTimestamp() != nil)
	}

	// Restore: it converges, and the deletion asked for meanwhile happens.
	if err := f.proxyA.Restore(); err != nil {
		t.Fatal(err)
	}
	restoredAt := time.Now()
	waitObject(ctx, t, f, "smoke-probe", 3*time.Minute, func(o *unstructured.Unstructured) bool { return objCond(o, "Synced") == "True" })
	synced := time.Since(restoredAt)
	waitFor(ctx, t, 3*time.Minute, "the Object deleted during the cut, and its ConfigMap, gone", func(ctx context.Context) (bool, string, error) {
		_, oerr := f.admin.Get(ctx, objectGVK, "", "smoke-cm")
		_, cerr := env.admin.Typed.CoreV1().ConfigMaps(fleetSmokeNS).Get(ctx, "smoke", metav1.GetOptions{})
		return apierrors.IsNotFound(oerr) && apierrors.IsNotFound(cerr), fmt.Sprint(oerr, cerr), nil
	})
	sc.note("restored: probe's Object Synced=True %.1fs after; the deleted Object and its ConfigMap gone %.1fs after", synced.Seconds(), time.Since(restoredAt).Seconds())

	// A plain delete takes the remote object with it.
	start = time.Now()
	if err := f.admin.Delete(ctx, objectGVK, "", "smoke-probe"); err != nil {
		t.Fatal(err)
	}
	waitFor(ctx, t, 2*time.Minute, "the probe gone from workload-a with its Object", func(ctx context.Context) (bool, string, error) {
		_, oerr := f.admin.Get(ctx, objectGVK, "", "smoke-probe")
		_, perr := env.admin.Get(ctx, fleetProbeGVK, fleetSmokeNS, "probe")
		return apierrors.IsNotFound(oerr) && apierrors.IsNotFound(perr), fmt.Sprint(oerr, perr), nil
	})
	sc.note("delete: Object and remote object gone %.1fs after", time.Since(start).Seconds())
}

// smokeObject is a cluster-scoped Object on workload-a-smoke.
func smokeObject(name string, manifest map[string]any, readiness string) *unstructured.Unstructured {
	o := &unstructured.Unstructured{}
	o.SetGroupVersionKind(objectGVK)
	o.SetName(name)
	setField(o, manifest, "spec", "forProvider", "manifest")
	setField(o, map[string]any{"name": smokeProviderConfig}, "spec", "providerConfigRef")
	if readiness != "" {
		setField(o, map[string]any{"policy": readiness}, "spec", "readiness")
	}
	return o
}

// setProbeReady writes the probe's Ready condition on workload-a, as its
// controller would, and returns when.
func setProbeReady(ctx context.Context, t *testing.T, status, why string) time.Time {
	t.Helper()
	ri, err := env.admin.Resource(fleetProbeGVK, fleetSmokeNS)
	if err != nil {
		t.Fatal(err)
	}
	p, err := ri.Get(ctx, "probe", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	setField(p, []any{map[string]any{
		"type": "Ready", "status": status, "reason": "E2E", "message": why,
		"lastTransitionTime": time.Now().UTC().Format(time.RFC3339),
	}}, "status", "conditions")
	if _, err := ri.UpdateStatus(ctx, p, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	return time.Now()
}

// remoteReadyInAtProvider is the Ready status of the remote object as the
// Object's status.atProvider.manifest shows it.
func remoteReadyInAtProvider(o *unstructured.Unstructured) string {
	m, _, _ := unstructured.NestedMap(o.Object, "status", "atProvider", "manifest")
	return kubeCondStatus(&unstructured.Unstructured{Object: m}, "Ready")
}

func kubeCondStatus(o *unstructured.Unstructured, typ string) string {
	s, _, _ := kube.Condition(o, typ)
	return s
}

func objCond(o *unstructured.Unstructured, typ string) string { return kubeCondStatus(o, typ) }

// waitObject waits until the hub's Object name satisfies ok, and returns it.
func waitObject(ctx context.Context, t *testing.T, f *fleetEnv, name string, timeout time.Duration, ok func(*unstructured.Unstructured) bool) *unstructured.Unstructured {
	t.Helper()
	var got *unstructured.Unstructured
	waitFor(ctx, t, timeout, "Object "+name+" on the hub", func(ctx context.Context) (bool, string, error) {
		o, err := f.admin.Get(ctx, objectGVK, "", name)
		if err != nil {
			return false, err.Error(), nil
		}
		got = o
		return ok(o), kube.ConditionsSummary(o), nil
	})
	return got
}

// durations renders samples with their spread.
func durations(ds []time.Duration) string {
	if len(ds) == 0 {
		return "none"
	}
	sorted := append([]time.Duration(nil), ds...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i] < sorted[j] })
	var parts []string
	for _, d := range ds {
		parts = append(parts, fmt.Sprintf("%.1fs", d.Seconds()))
	}
	return fmt.Sprintf("%s (min %.1fs, median %.1fs, max %.1fs)", strings.Join(parts, ", "), sorted[0].Seconds(), sorted[len(sorted)/2].Seconds(), sorted[len(sorted)-1].Seconds())
}

// --- the claims -----------------------------------------------------------------

// fleetClaim is a small fake-framework claim on the hub whose weights the
// origin serves, placed as placement says.
func fleetClaim(t *testing.T, ns, name, uri string, placement map[string]any) *unstructured.Unstructured {
	c := smallClaim(t, ns, name)
	setField(c, map[string]any{"uri": uri, "version": "1", "framework": "fake"}, "spec", "model")
	setField(c, map[string]any{"min": int64(1), "max": int64(1)}, "spec", "replicas")
	setField(c, map[string]any{"cpu": "50m", "memory": "64Mi", "gpu": int64(0)}, "spec", "resources")
	unstructured.RemoveNestedField(c.Object, "spec", "storage")
	setField(c, placement, "spec", "placement")
	return c
}

// placedObjects are the hub's Objects whose manifest is the remote
// composite of claim name, by the ProviderConfig (cluster) they use.
func placedObjects(ctx context.Context, f *fleetEnv, name string) (map[string]*unstructured.Unstructured, error) {
	l, err := f.admin.List(ctx, objectGVK, "", "")
	if err != nil {
		return nil, err
	}
	out := map[string]*unstructured.Unstructured{}
	for i := range l {
		m, _, _ := unstructured.NestedMap(l[i].Object, "spec", "forProvider", "manifest")
		mo := &unstructured.Unstructured{Object: m}
		if mo.GetName() != name || mo.GetKind() != namespacedGVK.Kind {
			continue
		}
		pc, _, _ := unstructured.NestedString(l[i].Object, "spec", "providerConfigRef", "name")
		out[pc] = &l[i]
	}
	return out, nil
}

// clusterStatus is one entry of the hub claim's status.clusters.
type clusterStatus struct {
	Name, Phase, URL string
	ReadyReplicas    int64
}

func hubClaimClusters(c *unstructured.Unstructured) map[string]clusterStatus {
	out := map[string]clusterStatus{}
	l, _, _ := unstructured.NestedSlice(c.Object, "status", "clusters")
	for _, e := range l {
		m, _ := e.(map[string]any)
		cs := clusterStatus{}
		cs.Name, _ = m["name"].(string)
		cs.Phase, _ = m["phase"].(string)
		cs.URL, _ = m["url"].(string)
		switch v := m["readyReplicas"].(type) {
		case int64:
			cs.ReadyReplicas = v
		case float64:
			cs.ReadyReplicas = int64(v)
		}
		out[cs.Name] = cs
	}
	return out
}

func hubClaimSummary(c *unstructured.Unstructured) string {
	phase, _, _ := unstructured.NestedString(c.Object, "status", "phase")
	return fmt.Sprintf("phase %q clusters %v %s", phase, hubClaimClusters(c), kube.ConditionsSummary(c))
}

// waitHubClaim waits until the hub claim satisfies ok, and returns it.
func waitHubClaim(ctx context.Context, t *testing.T, f *fleetEnv, ns, name, what string, timeout time.Duration, ok func(*unstructured.Unstructured) bool) *unstructured.Unstructured {
	t.Helper()
	var got *unstructured.Unstructured
	waitFor(ctx, t, timeout, "hub claim "+ns+"/"+name+": "+what, func(ctx context.Context) (bool, string, error) {
		c, err := f.admin.Get(ctx, claimGVK, ns, name)
		if err != nil {
			return false, err.Error(), nil
		}
		got = c
		return ok(c), hubClaimSummary(c), nil
	})
	return got
}

// writesDelta is the hub's writes between two hubWrites, less kwok's node
// heartbeats (node status and leases), which come whatever the claims do.
func writesDelta(before, after map[string]float64) (float64, string) {
	var total float64
	var parts []string
	for k, v := range after {
		if k == "nodes/status" || k == "leases" {
			continue
		}
		if d := v - before[k]; d > 0 {
			total += d
			parts = append(parts, fmt.Sprintf("%s %.0f", k, d))
		}
	}
	sort.Strings(parts)
	return total, strings.Join(parts, ", ")
}

// --- 37a ----------------------------------------------------------------------

const fleetServeClaim = "fleet-chat"

// fleetServe: a claim on the hub placed on workload-a is one Object there
// whose manifest is our namespaced composite in the mapped namespace;
// workload-a's own Crossplane and function compose it onto the real node,
// which answers a request with the text only those weights produce; the
// hub claim shows Serving, the ready replicas and the URL. Then a few
// replica changes measure how far the hub's status lags workload-a's.
func (s *infernoSuite) fleetServe(t *testing.T) {
	f := s.fleet(t)
	ctx := context.Background()
	sc := env.summary.start(t, "37a fleet: serve on workload-a")
	sc.onRealNode(false)
	w := publishWeights(t, "fleet-v1", "inferno fleet v1")
	before, err := f.hubWrites(ctx)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	claim := fleetClaim(t, fleetClaimNS, fleetServeClaim, w.URI, map[string]any{"clusters": []any{clusterA}})
	if _, err := f.admin.Apply(ctx, claim); err != nil {
		t.Fatal(err)
	}

	var objs map[string]*unstructured.Unstructured
	waitFor(ctx, t, time.Minute, "one Object for workload-a on the hub", func(ctx context.Context) (bool, string, error) {
		var err error
		objs, err = placedObjects(ctx, f, fleetServeClaim)
		return err == nil && objs[clusterA] != nil, fmt.Sprintf("%d Objects", len(objs)), err
	})
	if len(objs) != 1 {
		t.Errorf("Objects for the claim: %v, want only workload-a's", keys(objs))
	}
	obj := objs[clusterA]
	xr := ""
	if c, err := f.admin.Get(ctx, claimGVK, fleetClaimNS, fleetServeClaim); err == nil {
		xr, _, _ = unstructured.NestedString(c.Object, "spec", "resourceRef", "name")
	}
	if want := xr + "-" + clusterA; obj.GetName() != want || obj.GetNamespace() != "" {
		t.Errorf("the Object is %q (namespace %q), want cluster-scoped %q", obj.GetName(), obj.GetNamespace(), want)
	}
	if p, _, _ := unstructured.NestedString(obj.Object, "spec", "readiness", "policy"); p != "DeriveFromObject" {
		t.Errorf("the Object's readiness policy is %q, want DeriveFromObject", p)
	}
	m, _, _ := unstructured.NestedMap(obj.Object, "spec", "forProvider", "manifest")
	mo := &unstructured.Unstructured{Object: m}
	if mo.GetAPIVersion() != namespacedGVK.GroupVersion().String() || mo.GetNamespace() != fleetNS {
		t.Errorf("the manifest is a %s in %q, want %s in %s", mo.GetAPIVersion(), mo.GetNamespace(), namespacedGVK.GroupVersion(), fleetNS)
	}
	if _, found, _ := unstructured.NestedFieldNoCopy(m, "spec", "placement"); found {
		t.Errorf("the manifest carries spec.placement: %v", m["spec"])
	}

	var remoteAt time.Duration
	waitFor(ctx, t, time.Minute, "the remote composite on workload-a", func(ctx context.Context) (bool, string, error) {
		_, err := env.admin.Get(ctx, namespacedGVK, fleetNS, fleetServeClaim)
		return err == nil, fmt.Sprint(err), nil
	})
	remoteAt = time.Since(start)
	waitPullComplete(ctx, t, fleetNS, fleetServeClaim)
	base := waitServiceURL(ctx, t, fleetNS, fleetServeClaim, time.Minute)
	got, at := firstAnswer(ctx, t, base, fleetServeClaim, 3*time.Minute)
	if want := oracle(t, w); got.Text != want {
		t.Errorf("workload-a answered %q, want %q: the text of the weights published as fleet-v1", got.Text, want)
	}
	pods := claimServerPods(ctx, t, fleetNS, fleetServeClaim)
	if len(pods) != 1 || pods[0].Spec.NodeName != RealNodeName {
		t.Errorf("server pods %d, want 1 on the real node", len(pods))
	}
	var remoteReady time.Time
	waitFor(ctx, t, 2*time.Minute, "the remote composite Ready", func(ctx context.Context) (bool, string, error) {
		r, err := env.admin.Get(ctx, namespacedGVK, fleetNS, fleetServeClaim)
		if err != nil {
			return false, err.Error(), nil
		}
		remoteReady = time.Now()
		return objCond(r, "Ready") == "True", conditionsOf(r), nil
	})
	c := waitHubClaim(ctx, t, f, fleetClaimNS, fleetServeClaim, "Serving on workload-a", 3*time.Minute, func(c *unstructured.Unstructured) bool {
		p, _, _ := unstructured.NestedString(c.Object, "status", "phase")
		cs := hubClaimClusters(c)[clusterA]
		return p == "Serving" && cs.Phase == "Serving" && cs.ReadyReplicas == 1
	})
	serving := time.Now()
	cs := hubClaimClusters(c)[clusterA]
	if want := fmt.Sprintf("http://%s.%s.svc.cluster.local:80", fleetServeClaim, fleetNS); cs.URL != want {
		t.Errorf("status.clusters[%s].url %q, want %s", clusterA, cs.URL, want)
	}
	after, err := f.hubWrites(ctx)
	if err != nil {
		t.Fatal(err)
	}
	n, by := writesDelta(before, after)
	sc.note("apply → Object → remote composite %.1fs → first answer %.1fs → hub Serving %.1fs (remote Ready → hub Serving %.1fs)",
		remoteAt.Seconds(), at.Sub(start).Seconds(), serving.Sub(start).Seconds(), serving.Sub(remoteReady).Seconds())
	sc.note("hub, apply → Serving: %d Object(s), %.0f API writes (%s)", len(objs), n, by)

	// hub ← workload: the time from workload-a's composite showing a
	// replica count to the hub claim showing it, a few times.
	var lat []time.Duration
	for _, want := range []int64{2, 1, 2, 1} {
		setField(claim, map[string]any{"min": want, "max": want}, "spec", "replicas")
		if _, err := f.admin.Apply(ctx, claim); err != nil {
			t.Fatal(err)
		}
		var remoteAt time.Time
		waitFor(ctx, t, 2*time.Minute, fmt.Sprintf("the remote composite at %d ready replicas", want), func(ctx context.Context) (bool, string, error) {
			r, err := env.admin.Get(ctx, namespacedGVK, fleetNS, fleetServeClaim)
			if err != nil {
				return false, err.Error(), nil
			}
			n, _, _ := unstructured.NestedInt64(r.Object, "status", "readyReplicas")
			remoteAt = time.Now()
			return n == want && objCond(r, "Ready") == "True", conditionsOf(r), nil
		})
		waitHubClaim(ctx, t, f, fleetClaimNS, fleetServeClaim, fmt.Sprintf("%d ready replicas on workload-a", want), 2*time.Minute, func(c *unstructured.Unstructured) bool {
			return hubClaimClusters(c)[clusterA].ReadyReplicas == want
		})
		lat = append(lat, time.Since(remoteAt))
	}
	sc.note("hub ← workload-a status latency (ready replicas 2, 1, 2, 1): %s", durations(lat))
}

func keys[V any](m map[string]V) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// --- 37c ----------------------------------------------------------------------

// fleetUnreachable cuts workload-a's path under 37a's serving claim: the
// hub claim says ClusterUnreachable and names workload-a, nothing is
// deleted on either side and workload-a goes on answering (it is only the
// hub that lost it); with the path back the condition clears. Then the
// claim's deletion takes the remote composite with it.
func (s *infernoSuite) fleetUnreachable(t *testing.T) {
	f := s.fleet(t)
	ctx := context.Background()
	sc := env.summary.start(t, "37c fleet: workload-a unreachable")
	sc.onRealNode(false)
	base := serviceURL(ctx, t, fleetNS, fleetServeClaim)
	load := startFleetLoad(ctx, base, fleetServeClaim, 5*time.Minute)
	defer load.stop()

	f.proxyA.Cut()
	cutAt := time.Now()
	restored := false
	defer func() {
		if !restored {
			_ = f.proxyA.Restore()
		}
	}()
	c := waitHubClaim(ctx, t, f, fleetClaimNS, fleetServeClaim, "a ClusterUnreachable condition naming workload-a", 3*time.Minute, func(c *unstructured.Unstructured) bool {
		_, ok := unreachableCondition(c)
		return ok
	})
	cond, _ := unreachableCondition(c)
	sc.note("cut → hub claim %s=%s ClusterUnreachable %.1fs after: %q; clusters %v", cond["type"], cond["status"], time.Since(cutAt).Seconds(), truncate(fmt.Sprint(cond["message"]), 200), hubClaimClusters(c))
	time.Sleep(15 * time.Second)
	objs, err := placedObjects(ctx, f, fleetServeClaim)
	if err != nil || objs[clusterA] == nil || objs[clusterA].GetDeletionTimestamp() != nil {
		t.Errorf("workload-a's Object on the hub during the cut: %v (%v)", keys(objs), err)
	}
	if r, err := env.admin.Get(ctx, namespacedGVK, fleetNS, fleetServeClaim); err != nil || r.GetDeletionTimestamp() != nil {
		t.Errorf("the remote composite on workload-a during the cut: %v", err)
	}
	if pods := claimServerPods(ctx, t, fleetNS, fleetServeClaim); len(pods) != 1 {
		t.Errorf("%d server pods on workload-a during the cut, want 1", len(pods))
	}

	if err := f.proxyA.Restore(); err != nil {
		t.Fatal(err)
	}
	restored = true
	restoredAt := time.Now()
	waitHubClaim(ctx, t, f, fleetClaimNS, fleetServeClaim, "no ClusterUnreachable, Serving on workload-a", 3*time.Minute, func(c *unstructured.Unstructured) bool {
		_, ok := unreachableCondition(c)
		p, _, _ := unstructured.NestedString(c.Object, "status", "phase")
		return !ok && p == "Serving" && hubClaimClusters(c)[clusterA].Phase == "Serving"
	})
	sc.note("restored → hub claim Serving, no ClusterUnreachable, %.1fs after", time.Since(restoredAt).Seconds())
	sent, failed, errs := load.stop()
	if failed > 0 {
		t.Errorf("workload-a failed %d of %d requests while the hub could not reach it: %v", failed, sent, errs)
	}
	sc.note("workload-a answered %d of %d requests sent through the cut (%d failed)", sent-failed, sent, failed)

	start := time.Now()
	if err := f.admin.Delete(ctx, claimGVK, fleetClaimNS, fleetServeClaim); err != nil {
		t.Fatal(err)
	}
	waitFor(ctx, t, 3*time.Minute, "the claim's Object and remote composite gone", func(ctx context.Context) (bool, string, error) {
		objs, err := placedObjects(ctx, f, fleetServeClaim)
		if err != nil {
			return false, "", err
		}
		_, rerr := env.admin.Get(ctx, namespacedGVK, fleetNS, fleetServeClaim)
		return len(objs) == 0 && apierrors.IsNotFound(rerr), fmt.Sprintf("%d Objects, remote: %v", len(objs), rerr), nil
	})
	sc.note("delete the hub claim → Object and remote composite gone %.1fs after", time.Since(start).Seconds())
}

// unreachableCondition is the claim's condition with reason
// ClusterUnreachable that names workload-a, if any (status True).
func unreachableCondition(c *unstructured.Unstructured) (map[string]any, bool) {
	conds, _, _ := unstructured.NestedSlice(c.Object, "status", "conditions")
	for _, e := range conds {
		m, _ := e.(map[string]any)
		if m["reason"] == "ClusterUnreachable" && strings.Contains(fmt.Sprint(m["message"]), clusterA) {
			return m, true
		}
	}
	return nil, false
}

// fleetLoad sends completions to one base URL every 100 ms until stopped
// or its time is up: bounded in count (at most max/100ms) and time.
type fleetLoad struct {
	once         sync.Once
	cancel       context.CancelFunc
	done         chan struct{}
	sent, failed int
	errs         []string
}

func startFleetLoad(ctx context.Context, base, model string, max time.Duration) *fleetLoad {
	ctx, cancel := context.WithTimeout(ctx, max)
	l := &fleetLoad{cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(l.done)
		tick := time.NewTicker(100 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
			l.sent++
			if _, err := complete(ctx, base, model); err != nil && ctx.Err() == nil {
				l.failed++
				if len(l.errs) < 5 {
					l.errs = append(l.errs, err.Error())
				}
			}
		}
	}()
	return l
}

func (l *fleetLoad) stop() (sent, failed int, errs []string) {
	l.once.Do(func() { l.cancel(); <-l.done })
	return l.sent, l.failed, l.errs
}

// --- 37b ----------------------------------------------------------------------

const fleetMoveClaim = "fleet-move"

// fleetDrain: first a claim spread over both clusters (count 2, spread by
// region) is one Object per cluster and two entries in the hub's status.
// Then a claim on hub-local alone (workload-a draining) is moved by
// draining hub-local instead: workload-a's Object comes, serves, and only
// then does hub-local's go (make before break); requests to workload-a,
// from its first answer on, are all answered while hub-local is removed.
func (s *infernoSuite) fleetDrain(t *testing.T) {
	f := s.fleet(t)
	ctx := context.Background()
	sc := env.summary.start(t, "37b fleet: spread, and a move by draining")
	sc.onRealNode(true)
	w := publishWeights(t, "fleet-v2", "inferno fleet v2")

	// Spread.
	const spread = "fleet-spread"
	start := time.Now()
	if _, err := f.admin.Apply(ctx, fleetClaim(t, fleetClaimNS, spread, w.URI, map[string]any{"count": int64(2), "spreadBy": "region"})); err != nil {
		t.Fatal(err)
	}
	waitFor(ctx, t, time.Minute, "an Object for each cluster", func(ctx context.Context) (bool, string, error) {
		objs, err := placedObjects(ctx, f, spread)
		return err == nil && objs[clusterA] != nil && objs[clusterHub] != nil, fmt.Sprint(keys(objs)), err
	})
	waitHubClaim(ctx, t, f, fleetClaimNS, spread, "Serving on both clusters", 4*time.Minute, func(c *unstructured.Unstructured) bool {
		cs := hubClaimClusters(c)
		return len(cs) == 2 && cs[clusterA].Phase == "Serving" && cs[clusterHub].Phase == "Serving"
	})
	sc.note("spread (count 2 by region): an Object per cluster, both Serving on the hub %.1fs after apply", time.Since(start).Seconds())
	if err := f.admin.Delete(ctx, claimGVK, fleetClaimNS, spread); err != nil {
		t.Fatal(err)
	}

	// A move: on hub-local while workload-a drains, then the other way.
	if err := f.setInput(ctx, fleetInput(map[string]bool{clusterA: true})); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = f.setInput(context.Background(), fleetInput(nil)) }()
	if _, err := f.admin.Apply(ctx, fleetClaim(t, fleetClaimNS, fleetMoveClaim, w.URI, map[string]any{"count": int64(1)})); err != nil {
		t.Fatal(err)
	}
	waitHubClaim(ctx, t, f, fleetClaimNS, fleetMoveClaim, "Serving on hub-local", 3*time.Minute, func(c *unstructured.Unstructured) bool {
		cs := hubClaimClusters(c)
		return cs[clusterHub].Phase == "Serving"
	})
	if objs, _ := placedObjects(ctx, f, fleetMoveClaim); len(objs) != 1 || objs[clusterHub] == nil {
		t.Fatalf("with workload-a draining, the claim's Objects are %v, want hub-local's only", keys(objs))
	}

	drainAt := time.Now()
	if err := f.setInput(ctx, fleetInput(map[string]bool{clusterHub: true})); err != nil {
		t.Fatal(err)
	}
	// Watch the move: hub-local's Object must outlive the moment
	// workload-a's is Ready and serving.
	var (
		aReady, aServes, hubGone time.Time
		load                     *fleetLoad
		broke                    []string
	)
	defer func() {
		if load != nil {
			load.stop()
		}
	}()
	waitFor(ctx, t, 4*time.Minute, "the move: workload-a serving, hub-local's Object and remote composite gone", func(ctx context.Context) (bool, string, error) {
		objs, err := placedObjects(ctx, f, fleetMoveClaim)
		if err != nil {
			return false, "", err
		}
		a := objs[clusterA]
		if aReady.IsZero() && a != nil && objCond(a, "Ready") == "True" {
			aReady = time.Now()
		}
		if aServes.IsZero() && a != nil {
			if svc, err := env.admin.Typed.CoreV1().Services(fleetNS).Get(ctx, fleetMoveClaim, metav1.GetOptions{}); err == nil {
				base := fmt.Sprintf("http://%s:%d", svc.Spec.ClusterIP, svc.Spec.Ports[0].Port)
				if _, err := complete(ctx, base, fleetMoveClaim); err == nil {
					aServes = time.Now()
					load = startFleetLoad(context.Background(), base, fleetMoveClaim, 4*time.Minute)
				}
			}
		}
		_, herr := f.admin.Get(ctx, namespacedGVK, fleetNS, fleetMoveClaim)
		if objs[clusterHub] == nil && hubGone.IsZero() {
			hubGone = time.Now()
			if aReady.IsZero() || aServes.IsZero() {
				broke = append(broke, fmt.Sprintf("hub-local's Object gone %.1fs after the drain while workload-a's was Ready=%v, serving=%v", time.Since(drainAt).Seconds(), !aReady.IsZero(), !aServes.IsZero()))
			}
		}
		done := !hubGone.IsZero() && apierrors.IsNotFound(herr) && !aServes.IsZero()
		return done, fmt.Sprintf("Objects %v, hub-local's remote composite: %v", keys(objs), herr), nil
	})
	for _, b := range broke {
		t.Errorf("break before make: %s", b)
	}
	time.Sleep(5 * time.Second)
	sent, failed, errs := load.stop()
	if failed > 0 {
		t.Errorf("workload-a failed %d of %d requests during the move: %v", failed, sent, errs)
	}
	sc.note("drain hub-local → workload-a's Object Ready %.1fs, first answer %.1fs, hub-local's Object gone %.1fs after the Input change; %d requests to workload-a from its first answer, %d failed",
		aReady.Sub(drainAt).Seconds(), aServes.Sub(drainAt).Seconds(), hubGone.Sub(drainAt).Seconds(), sent, failed)
	if err := f.admin.Delete(ctx, claimGVK, fleetClaimNS, fleetMoveClaim); err != nil {
		t.Fatal(err)
	}
}

// --- 37d ----------------------------------------------------------------------

// fleetUnmapped: a claim that asks for a cluster the platform did not
// list, and one in a namespace it did not map, are each refused with a
// message that names what is wrong, and make no Object.
func (s *infernoSuite) fleetUnmapped(t *testing.T) {
	f := s.fleet(t)
	ctx := context.Background()
	sc := env.summary.start(t, "37d fleet: unmapped cluster or namespace refused")
	for _, tc := range []struct {
		ns, name string
		clusters []any
		want     []string
	}{
		{fleetClaimNS, "fleet-nowhere", []any{"nowhere"}, []string{"spec.placement.clusters", "nowhere"}},
		{fleetUnmappedNS, "fleet-unmapped", []any{clusterA}, []string{"spec.placement", fleetUnmappedNS}},
	} {
		if _, err := f.admin.Apply(ctx, fleetClaim(t, tc.ns, tc.name, "http://127.0.0.1/unused", map[string]any{"clusters": tc.clusters})); err != nil {
			t.Fatal(err)
		}
		// The refusal is the composite's Synced=False (a Fatal result, as
		// every refused claim here); the claim itself reads Waiting.
		var msg string
		waitFor(ctx, t, 90*time.Second, fmt.Sprintf("%s/%s refused naming %s", tc.ns, tc.name, strings.Join(tc.want, " and ")), func(ctx context.Context) (bool, string, error) {
			xrs, err := f.admin.List(ctx, xrGVK, "", "crossplane.io/claim-name="+tc.name+",crossplane.io/claim-namespace="+tc.ns)
			if err != nil || len(xrs) == 0 {
				return false, "no composite yet", err
			}
			st, reason, text := kube.Condition(&xrs[0], "Synced")
			all := st == "False"
			for _, w := range tc.want {
				all = all && strings.Contains(text, w)
			}
			msg = fmt.Sprintf("Synced=%s %s: %s", st, reason, text)
			return all, kube.ConditionsSummary(&xrs[0]), nil
		})
		if objs, _ := placedObjects(ctx, f, tc.name); len(objs) != 0 {
			t.Errorf("%s/%s made Objects %v", tc.ns, tc.name, keys(objs))
		}
		sc.note("%s/%s: %s", tc.ns, tc.name, truncate(msg, 220))
		_ = f.admin.Delete(ctx, claimGVK, tc.ns, tc.name)
	}
}
