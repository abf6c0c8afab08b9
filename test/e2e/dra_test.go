//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/inferno-ai/function-inferno/test/e2e/controlplane"
	"github.com/inferno-ai/function-inferno/test/e2e/traffic"
)

// The DRA scenarios run Kubernetes' own DRA test driver
// (k8s.io/kubernetes test/e2e/dra/test-driver, pinned by tools/e2e/kube)
// on the host as the real node's kubelet plugin, publishing draDevices
// fake devices in a ResourceSlice of the node's pool, and claims on a
// Composition whose Input requests GPUs through DRA from its DeviceClass.
const (
	draDriverName  = "test-driver.cdi.k8s.io"
	draDeviceClass = "inferno-e2e-test-devices"
	draDevices     = 2
	draPool        = "real-dra"
	draComposition = "xinferenceservices-real-node-dra.inference.inferno.io"
)

// draDriverBinary is the test driver: $E2E_DRA_DRIVER, else bin/dra-test-driver.
func draDriverBinary() string {
	if b := os.Getenv("E2E_DRA_DRIVER"); b != "" {
		return b
	}
	return filepath.Join(binDir(), "dra-test-driver")
}

// dra is scenario 38: the driver and the DeviceClass, then a claim that
// gets its device and one that asks for more than exist.
func (s *infernoSuite) dra(t *testing.T) {
	if env.node == nil {
		t.Skip("no real node (-real-node=false)")
	}
	bin := draDriverBinary()
	if _, err := os.Stat(bin); err != nil {
		t.Fatalf("no DRA test driver (%v): `make e2e-tools` builds it into bin/dra-test-driver", err)
	}
	ctx := context.Background()
	if err := env.createTeamNamespace(ctx, realNS); err != nil {
		t.Fatal(err)
	}
	ensureRealCompositions(ctx, t)
	startDRADriver(ctx, t, bin)
	input := realNodeInput()
	input["gpu"] = map[string]any{"dra": map[string]any{"deviceClassName": draDeviceClass}}
	applyComposition(ctx, t, "composition.yaml", draComposition, draPool, input)

	t.Run("38-dra-allocated", s.draAllocated)
	t.Run("38c-dra-upgrade-under-load", s.draUpgradeUnderLoad)
	t.Run("38-dra-unallocatable", s.draUnallocatable)
}

// startDRADriver runs the driver's kubelet plugin for the real node with
// the admin's kubeconfig (in a cluster: a DaemonSet's ServiceAccount that
// may write ResourceSlices), and the DeviceClass of its devices, and waits
// for its ResourceSlice.
func startDRADriver(ctx context.Context, t *testing.T, bin string) {
	t.Helper()
	root := env.node.KubeletRootDir()
	cdi := filepath.Join(env.workDir, "cdi")
	// The plugin binds its socket in a directory of its own under the
	// kubelet's plugins directory, which it does not make (a DaemonSet
	// mounts it from the host, where the kubelet made it).
	for _, d := range []string{filepath.Join(root, "plugins", draDriverName), filepath.Join(root, "plugins_registry"), cdi} {
		if err := os.MkdirAll(d, 0o750); err != nil {
			t.Fatal(err)
		}
	}
	h := startHostController(t, "dra-test-driver", bin, []string{
		"--kubeconfig=" + env.cp.Kubeconfig(controlplane.Admin),
		"--drivername=" + draDriverName,
		"kubelet-plugin",
		"--node-name=" + RealNodeName,
		fmt.Sprintf("--num-devices=%d", draDevices),
		"--plugin-registration-path=" + filepath.Join(root, "plugins_registry"),
		"--datadir=" + filepath.Join(root, "plugins"),
		"--cdi-dir=" + cdi,
	}, nil)
	class := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass",
		"metadata": map[string]any{"name": draDeviceClass},
		"spec": map[string]any{"selectors": []any{map[string]any{"cel": map[string]any{
			"expression": fmt.Sprintf("device.driver == %q", draDriverName),
		}}}},
	}}
	if _, err := env.admin.Apply(ctx, class); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = env.admin.Typed.ResourceV1().DeviceClasses().Delete(context.Background(), draDeviceClass, metav1.DeleteOptions{})
	})
	waitFor(ctx, t, time.Minute, "the driver's ResourceSlice of the real node", func(ctx context.Context) (bool, string, error) {
		select {
		case <-h.exited:
			return false, "", fmt.Errorf("the DRA test driver exited: %s; log: %s", h.cmd.ProcessState, tail(h.log, 10))
		default:
		}
		slices, err := env.admin.Typed.ResourceV1().ResourceSlices().List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, "", err
		}
		for _, sl := range slices.Items {
			if sl.Spec.Driver == draDriverName && sl.Spec.NodeName != nil && *sl.Spec.NodeName == RealNodeName && len(sl.Spec.Devices) == draDevices {
				return true, "", nil
			}
		}
		return false, fmt.Sprintf("%d slices", len(slices.Items)), nil
	})
}

// draClaim is a fake-framework claim on the DRA Composition asking for
// gpu devices per server.
func draClaim(t *testing.T, name, uri string, gpu int64) *unstructured.Unstructured {
	return draClaimVersion(t, name, uri, "1", gpu)
}

// draClaimVersion is draClaim of a model version.
func draClaimVersion(t *testing.T, name, uri, version string, gpu int64) *unstructured.Unstructured {
	c := realClaim(t, name, uri, version, 1)
	setField(c, gpu, "spec", "resources", "gpu")
	setField(c, map[string]any{"matchLabels": map[string]any{poolLabel: draPool}}, "spec", "compositionSelector")
	return c
}

// draAllocated: a claim asking for 1 device serves; its server's pod has
// a ResourceClaim of its own, allocated one of the driver's devices on the
// real node and reserved for the pod; the driver prepared it (its CDI
// spec for the claim sets claim_<claim>_gpu=true).
func (s *infernoSuite) draAllocated(t *testing.T) {
	ctx := context.Background()
	sc := env.summary.start(t, "38 DRA device allocated (real node, Kubernetes' DRA test driver)")
	sc.onRealNode(false)
	const name = "dra-one"
	w := publishWeights(t, name, "dra-1")
	start := time.Now()
	applyClaim(ctx, t, draClaim(t, name, w.URI, 1))
	t.Cleanup(func() { deleteClaimsAndWait(context.Background(), t, realNS, []string{name}) })
	waitPhase(ctx, t, realNS, name, "Serving", "True")
	served := time.Since(start)

	pods, err := env.admin.Typed.CoreV1().Pods(realNS).List(ctx, metav1.ListOptions{LabelSelector: "app.kubernetes.io/instance=" + name + ",app.kubernetes.io/component=model-server"})
	if err != nil || len(pods.Items) != 1 {
		t.Fatalf("server pods: %v, %v", pods, err)
	}
	pod := pods.Items[0]
	if len(pod.Status.ResourceClaimStatuses) != 1 || pod.Status.ResourceClaimStatuses[0].ResourceClaimName == nil {
		t.Fatalf("pod %s claims %v: want one ResourceClaim made from its template", pod.Name, pod.Status.ResourceClaimStatuses)
	}
	rc, err := env.admin.Typed.ResourceV1().ResourceClaims(realNS).Get(ctx, *pod.Status.ResourceClaimStatuses[0].ResourceClaimName, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	a := rc.Status.Allocation
	if a == nil || len(a.Devices.Results) != 1 {
		t.Fatalf("ResourceClaim %s allocation %+v: want one device", rc.Name, a)
	}
	dev := a.Devices.Results[0]
	if dev.Driver != draDriverName || dev.Pool != RealNodeName || !strings.HasPrefix(dev.Device, "device-") {
		t.Errorf("allocated %s/%s/%s, want a device of %s in the real node's pool", dev.Driver, dev.Pool, dev.Device, draDriverName)
	}
	reserved := false
	for _, r := range rc.Status.ReservedFor {
		reserved = reserved || r.UID == pod.UID
	}
	if !reserved || pod.Spec.NodeName != RealNodeName {
		t.Errorf("claim reserved for %v, pod on %q: want the server's pod, on the real node", rc.Status.ReservedFor, pod.Spec.NodeName)
	}
	// The driver's side of the injection: a CDI spec for the claim with
	// its variable. containerd applies CDI specs from 1.7 on; the real
	// node's 1.6 does not, so the container's environment is noted, not
	// asserted.
	// The driver names it claim_<claim>_<request>, every character but
	// letters and digits made an underscore.
	want := regexp.MustCompile(`[^a-zA-Z0-9]`).ReplaceAllString("claim_"+rc.Name+"_gpu", "_") + "=true"
	specs, _ := filepath.Glob(filepath.Join(env.workDir, "cdi", "*.json"))
	found := false
	for _, f := range specs {
		b, _ := os.ReadFile(f)
		found = found || strings.Contains(string(b), want)
	}
	if !found {
		t.Errorf("no CDI spec of the driver in %v sets %s", specs, want)
	}
	environ, _ := os.ReadFile(fmt.Sprintf("/proc/%d/environ", containerPID(t, &pod)))
	inContainer := strings.Contains(string(environ), want)
	sc.note("apply → Serving %.1fs; pod %s claimed %s of %d (%s), reserved; the driver's CDI spec sets %s; in the container: %v",
		served.Seconds(), pod.Name, dev.Device, draDevices, dev.Driver, want, inContainer)
}

// draUnallocatable: a claim asking for more devices per server than the
// node has stays Starting; its pod stays Pending, the scheduler says why
// on it, and the claim's message says what the server claims and where to
// look.
func (s *infernoSuite) draUnallocatable(t *testing.T) {
	ctx := context.Background()
	sc := env.summary.start(t, "38 DRA more devices than exist (real node)")
	sc.onRealNode(false)
	const name = "dra-many"
	w := publishWeights(t, name, "dra-2")
	applyClaim(ctx, t, draClaim(t, name, w.URI, draDevices+1))
	t.Cleanup(func() { deleteClaimsAndWait(context.Background(), t, realNS, []string{name}) })
	waitPullComplete(ctx, t, realNS, name)

	var why string
	waitFor(ctx, t, 2*time.Minute, "the server's pod Pending, unschedulable", func(ctx context.Context) (bool, string, error) {
		pods, err := env.admin.Typed.CoreV1().Pods(realNS).List(ctx, metav1.ListOptions{LabelSelector: "app.kubernetes.io/instance=" + name + ",app.kubernetes.io/component=model-server"})
		if err != nil || len(pods.Items) == 0 {
			return false, "no pod yet", err
		}
		p := pods.Items[0]
		for _, c := range p.Status.Conditions {
			if c.Type == corev1.PodScheduled && c.Status == corev1.ConditionFalse && c.Reason == corev1.PodReasonUnschedulable {
				why = c.Message
				return p.Status.Phase == corev1.PodPending, "", nil
			}
		}
		return false, fmt.Sprintf("pod %s %s", p.Name, p.Status.Phase), nil
	})
	if !strings.Contains(why, "cannot allocate all claims") {
		t.Errorf("the scheduler says %q: want it to say it cannot allocate the claim", why)
	}
	c := waitPhase(ctx, t, realNS, name, "Starting", "False")
	msg, _, _ := unstructured.NestedString(c.Object, "status", "message")
	if want := fmt.Sprintf("claims %d devices of DeviceClass %s", draDevices+1, draDeviceClass); !strings.Contains(msg, want) || !strings.Contains(msg, "Pending") {
		t.Errorf("status.message %q: want it to say the server %s and stays Pending", msg, want)
	}
	// Still Starting a while later: nothing gives up or pretends.
	time.Sleep(5 * time.Second)
	waitPhase(ctx, t, realNS, name, "Starting", "False")
	claims, err := env.admin.Typed.ResourceV1().ResourceClaims(realNS).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, rc := range claims.Items {
		if strings.HasPrefix(rc.Name, name+"-") && rc.Status.Allocation != nil {
			t.Errorf("ResourceClaim %s allocated %v with %d devices on the node", rc.Name, rc.Status.Allocation.Devices.Results, draDevices)
		}
	}
	sc.note("pod Pending: %q; claim Starting: %q", why, msg)
}

// draUpgradeUnderLoad: a claim whose server holds one of the two devices
// moves to new weights while a bounded loop sends 20 requests a second
// through its Service. The new server (maxSurge 1) gets the other device
// while the old one still holds its own, so no request fails; once the
// rollout is done, the old pod's ResourceClaim is gone with it and one
// device is claimed again.
func (s *infernoSuite) draUpgradeUnderLoad(t *testing.T) {
	ctx := context.Background()
	sc := env.summary.start(t, "38c DRA upgrade under load (real node)")
	sc.onRealNode(false)
	const name = "dra-up"
	v1 := publishWeights(t, name, "dra-up-1")
	applyClaim(ctx, t, draClaimVersion(t, name, v1.URI, "1", 1))
	t.Cleanup(func() { deleteClaimsAndWait(context.Background(), t, realNS, []string{name}) })
	waitPhase(ctx, t, realNS, name, "Serving", "True")
	base := serviceURL(ctx, t, realNS, name)
	// Serving is the pods' readiness; the Service answers once kube-proxy
	// has programmed it.
	old, _ := firstAnswer(ctx, t, base, name, time.Minute)
	v2 := publishWeights(t, name+"-v2", "dra-up-2")
	jobDone := watchJobComplete(ctx, t, realNS, name, v2.URI)
	loop := traffic.Start(traffic.Options{URL: base + "/v1/completions", Body: completionBody(name), Rate: 20, Max: 20 * 240, MaxDuration: 4 * time.Minute})
	time.Sleep(2 * time.Second)
	start := time.Now()
	applyClaim(ctx, t, draClaimVersion(t, name, v2.URI, "2", 1))
	// The most devices the claim's pods held at once, from the
	// ResourceClaims allocated to them.
	most := 0
	newWeights, err := awaitNewWeights(ctx, loop, old.Weights, name, func() { most = max(most, allocatedClaims(ctx, t, name)) })
	time.Sleep(2 * time.Second)
	rep := loop.Stop()
	if err != nil {
		t.Fatal(err)
	}
	pulledAt := jobDone()
	first, _ := rep.FirstOK(newWeights)
	if rep.Failed != 0 {
		t.Errorf("%d of %d requests failed during the upgrade: %s", rep.Failed, rep.Sent(), rep.Failures(5))
	}
	if pulledAt.IsZero() || first.Start.Before(pulledAt) {
		t.Errorf("an answer from the new weights at %s, before their pull completed (%s)", first.Start.Format(time.StampMilli), pulledAt.Format(time.StampMilli))
	}
	// The old pod's claim goes with it (the pod's ResourceClaim is made
	// from the template and owned by the pod).
	var after int
	waitFor(ctx, t, time.Minute, "one allocated ResourceClaim left", func(ctx context.Context) (bool, string, error) {
		after = allocatedClaims(ctx, t, name)
		return after == 1, fmt.Sprintf("%d allocated", after), nil
	})
	if most < 2 {
		t.Logf("the old and the new server were never seen holding a device each at once (most %d): the surge was quicker than the 250 ms look", most)
	}
	sc.note("sent %d, failed %d, old weights %d, new weights %d; new pull Complete %.1fs after the change, first new answer %.1fs after it; at most %d of %d devices claimed at once, %d after; p99 %s",
		rep.Sent(), rep.Failed, rep.ByWeights[old.Weights], rep.ByWeights[newWeights],
		pulledAt.Sub(start).Seconds(), first.Start.Sub(pulledAt).Seconds(), most, draDevices, after, rep.Latency(99).Round(time.Millisecond))
}

// allocatedClaims counts the ResourceClaims of a claim's server pods that
// hold an allocation.
func allocatedClaims(ctx context.Context, t *testing.T, name string) int {
	t.Helper()
	claims, err := env.admin.Typed.ResourceV1().ResourceClaims(realNS).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, rc := range claims.Items {
		if strings.HasPrefix(rc.Name, name+"-") && rc.Status.Allocation != nil {
			n++
		}
	}
	return n
}
