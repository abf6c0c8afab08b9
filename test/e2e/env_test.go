//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/inferno-ai/function-inferno/test/e2e/controlplane"
	"github.com/inferno-ai/function-inferno/test/e2e/crossplanecore"
	"github.com/inferno-ai/function-inferno/test/e2e/fnpackage"
	"github.com/inferno-ai/function-inferno/test/e2e/kube"
	"github.com/inferno-ai/function-inferno/test/e2e/netns"
	"github.com/inferno-ai/function-inferno/test/e2e/realnode"
)

// Names the test gives things in the cluster.
const (
	// FakeNodeName is the kwok-managed GPU node every pod lands on.
	FakeNodeName = "gpu-node-1"
	// StorageClassName is the default class: WaitForFirstConsumer, served
	// by kwok's stand-in provisioner.
	StorageClassName = "local-path"
	// StandinFunctionName is the Function of testdata/standin.
	StandinFunctionName = "function-standin"
	// RealFunctionName is the Function the real Composition references.
	RealFunctionName = "function-inferno"
)

type environment struct {
	workDir   string
	cp        *controlplane.ControlPlane
	admin     *kube.Client
	core      *crossplanecore.Core
	registry  *fnpackage.Registry
	setupTime time.Duration
	summary   *summary
	// functions maps a Function name to its runner, for the fault scenario.
	functions map[string]*fnpackage.Runner
	// mode is "real" or "standin".
	mode string
	// node is the real node (nil with -real-node=false), origin its model
	// origin, nodeSetup how long both took to start.
	node   *realnode.Node
	origin *origin
	// apiForward forwards the API server's advertised address on the
	// bridge to 127.0.0.1, for pods.
	apiForward net.Listener
	nodeSetup  time.Duration
	// fakeServer is the fake model server's binary, also run here as the
	// weights writer and the answers' oracle.
	fakeServer string
	// teardownErr is what stopping left wrong (the real node's leftovers).
	teardownErr error
	// fleet is the hub of the fleet scenarios (37), nil until the first
	// of them starts it.
	fleet *fleetEnv
}

// stderrf prints a line of the harness's own to stderr.
func stderrf(format string, args ...any) { fmt.Fprintf(os.Stderr, format+"\n", args...) }

func (e *environment) logDir() string { return filepath.Join(e.workDir, "logs") }

func setUp(ctx context.Context) (*environment, error) {
	start := time.Now()
	e := &environment{summary: &summary{}, functions: map[string]*fnpackage.Runner{}}
	e.workDir = filepath.Join(repoRoot(), "test", "e2e", "_work", "run")
	// Up front, before a minute of building and starting: Crossplane's RBAC
	// manager cannot move off its port.
	if err := crossplanecore.CheckRBACManagerPort(); err != nil {
		return nil, err
	}
	// One run's leftovers at a time: a failed run's logs stay until the
	// next run starts. A killed run's real node is cleaned up first: its
	// mounts would keep the directory.
	if err := realnode.CleanStale(ctx, e.nodeDir(), stderrf); err != nil {
		return nil, err
	}
	// The first `ip netns add` turns /run/netns into a shared bind mount of
	// itself. Made after the real node's pods have their network
	// namespaces there (a fleet scenario's hub, after the real-node
	// scenarios), it hides their nsfs mounts, and containerd cannot remove
	// them when the pods go ("unlinkat … device or resource busy"). Made
	// first, once, it holds them.
	if ns, err := netns.Create(ctx, "inferno-e2e-first"); err != nil {
		return nil, err
	} else if err := ns.Delete(ctx); err != nil {
		return nil, err
	}
	if err := os.RemoveAll(e.workDir); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(e.logDir(), 0o755); err != nil {
		return nil, err
	}
	e.mode = *flagFunction
	if e.mode == "auto" {
		e.mode = "standin"
		if realFunctionPresent() {
			e.mode = "real"
		}
	}

	testdata, err := filepath.Abs("testdata")
	if err != nil {
		return nil, err
	}
	var extra []controlplane.Identity
	advertise := ""
	if *flagRealNode {
		extra = realNodeIdentities()
		advertise = realBridgeIP()
	}
	e.cp, err = controlplane.Start(ctx, controlplane.Options{
		Binaries:        controlplane.BinariesIn(binDir()),
		WorkDir:         e.workDir,
		ExtraIdentities: extra,
		// Pods of the real node reach the API server at the bridge
		// address (startRealNode forwards it): pull pods report progress.
		AdvertiseAddress: advertise,
		KwokConfigs: []string{
			filepath.Join(testdata, "kwok", "node.yaml"),
			filepath.Join(testdata, "kwok", "pod.yaml"),
			filepath.Join(testdata, "kwok", "volume.yaml"),
		},
	})
	if err != nil {
		return e, err
	}
	adminCfg, err := e.cp.RESTConfig(controlplane.Admin)
	if err != nil {
		return e, err
	}
	if e.admin, err = kube.NewClient(adminCfg); err != nil {
		return e, err
	}
	if err := e.createFakeNode(ctx, FakeNodeName, ""); err != nil {
		return e, err
	}
	if err := e.createStorageClass(ctx); err != nil {
		return e, err
	}
	if *flagRealNode {
		if err := e.startRealNode(ctx); err != nil {
			return e, fmt.Errorf("real node: %w", err)
		}
	}

	moduleDir, err := crossplanecore.ModuleDir(ctx, filepath.Join(repoRoot(), "tools", "e2e", "crossplane"))
	if err != nil {
		return e, err
	}
	e.core, err = crossplanecore.Install(ctx, e.cp, e.admin, crossplanecore.Options{
		Binary:    filepath.Join(binDir(), "crossplane-core"),
		ModuleDir: moduleDir,
		WorkDir:   e.workDir,
		ExtraArgs: strings.Fields(*flagCoreArgs),
	})
	if err != nil {
		return e, err
	}

	regLog, err := os.Create(filepath.Join(e.logDir(), "registry.log"))
	if err != nil {
		return e, err
	}
	if e.registry, err = fnpackage.StartRegistry(regLog); err != nil {
		return e, err
	}
	e.setupTime = time.Since(start)
	return e, nil
}

func (e *environment) tearDown() {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if e.registry != nil {
		_ = e.registry.Stop(ctx)
	}
	if e.fleet != nil {
		e.fleet.stop()
	}
	if e.apiForward != nil {
		_ = e.apiForward.Close()
	}
	if e.origin != nil {
		e.origin.stop()
	}
	// The node goes before the control plane: kube-proxy's clean-up and
	// the sandboxes' removal need nothing of it, but a kubelet that loses
	// its API server only retries.
	if e.node != nil {
		e.teardownErr = e.node.Stop()
	}
	if e.cp != nil {
		e.cp.Stop()
	}
	if !*flagKeep {
		// Keep the logs (small, and what one reads after a failure); drop
		// etcd's data and the build products.
		for _, d := range []string{"etcd", "xpkg-cache", "function", "runtime.tar", "function.xpkg"} {
			_ = os.RemoveAll(filepath.Join(e.workDir, d))
		}
	}
}

// createFakeNode registers a node kwok manages: 8 GPUs, plenty of CPU
// and memory, no taints, so the function's pods schedule as they would on
// a real GPU node. The run starts with one (FakeNodeName); a scenario that
// needs more GPUs adds its own and deletes them. A podCIDR, when given,
// is where kwok takes the node's pod addresses from.
func (e *environment) createFakeNode(ctx context.Context, name, podCIDR string) error {
	return createFakeNodeOn(ctx, e.admin, name, podCIDR)
}

// createFakeNodeOn is createFakeNode on the cluster of client c (the
// fleet's hub has kwok nodes of its own).
func createFakeNodeOn(ctx context.Context, c *kube.Client, name, podCIDR string) error {
	res := corev1.ResourceList{
		// Room for the stress scenario's hundreds of pods; the GPUs are
		// the scarce resource, as on a real node.
		corev1.ResourceCPU:    resource.MustParse("1000"),
		corev1.ResourceMemory: resource.MustParse("4Ti"),
		corev1.ResourcePods:   resource.MustParse("1000"),
		"nvidia.com/gpu":      resource.MustParse("8"),
	}
	node := &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{
			Name:        name,
			Annotations: map[string]string{"kwok.x-k8s.io/node": "fake", "node.alpha.kubernetes.io/ttl": "0"},
			Labels: map[string]string{
				"kubernetes.io/hostname": name,
				"kubernetes.io/os":       "linux",
				"kubernetes.io/arch":     "amd64",
				"type":                   "kwok",
				"nvidia.com/gpu.present": "true",
				"node.kubernetes.io/exclude-from-external-load-balancers": "true",
			},
		},
		Spec:   corev1.NodeSpec{PodCIDR: podCIDR},
		Status: corev1.NodeStatus{Allocatable: res, Capacity: res},
	}
	if podCIDR != "" {
		node.Spec.PodCIDRs = []string{podCIDR}
	}
	if _, err := c.Typed.CoreV1().Nodes().Create(ctx, node, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("create fake node: %w", err)
	}
	return kube.Eventually(ctx, 60*time.Second, 200*time.Millisecond, "fake node "+name+" Ready (kwok)", func(ctx context.Context) (bool, string, error) {
		n, err := c.Typed.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, "", err
		}
		for _, c := range n.Status.Conditions {
			if c.Type == corev1.NodeReady {
				gpus := n.Status.Allocatable["nvidia.com/gpu"]
				return c.Status == corev1.ConditionTrue && gpus.Value() == 8, fmt.Sprintf("Ready=%s gpus=%s", c.Status, gpus.String()), nil
			}
		}
		return false, "no Ready condition yet", nil
	})
}

// createStorageClass makes the default StorageClass. Its provisioner is the
// kwok Stage in testdata/kwok/volume.yaml; WaitForFirstConsumer as most
// node-local classes (local-path) are, so a PVC stays Pending until the
// pull Job's pod is scheduled.
func (e *environment) createStorageClass(ctx context.Context) error {
	return createStorageClassOn(ctx, e.admin)
}

func createStorageClassOn(ctx context.Context, c *kube.Client) error {
	mode := storagev1.VolumeBindingWaitForFirstConsumer
	reclaim := corev1.PersistentVolumeReclaimDelete
	sc := &storagev1.StorageClass{
		ObjectMeta: metav1.ObjectMeta{
			Name:        StorageClassName,
			Annotations: map[string]string{"storageclass.kubernetes.io/is-default-class": "true"},
		},
		Provisioner:       "kwok.x-k8s.io/volume",
		ReclaimPolicy:     &reclaim,
		VolumeBindingMode: &mode,
	}
	if _, err := c.Typed.StorageV1().StorageClasses().Create(ctx, sc, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("create storage class: %w", err)
	}
	return nil
}

// createTeamNamespace makes an app team's namespace with Pod Security
// "restricted" enforced (the ReplicaSet controller's pods are refused if
// the template breaks it), warned (warnings to the client) and audited
// (annotations in the audit log, which the security scenario reads).
func (e *environment) createTeamNamespace(ctx context.Context, name string) error {
	return createTeamNamespaceOn(ctx, e.admin, name)
}

func createTeamNamespaceOn(ctx context.Context, c *kube.Client, name string) error {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{
		"pod-security.kubernetes.io/enforce":         "restricted",
		"pod-security.kubernetes.io/enforce-version": "latest",
		"pod-security.kubernetes.io/warn":            "restricted",
		"pod-security.kubernetes.io/warn-version":    "latest",
		"pod-security.kubernetes.io/audit":           "restricted",
		"pod-security.kubernetes.io/audit-version":   "latest",
	}}}
	if _, err := c.Typed.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return err
	}
	// Pods need the namespace's default ServiceAccount, which the
	// controller manager creates; wait so the first ReplicaSet sync does
	// not back off on its absence.
	return kube.Eventually(ctx, 30*time.Second, 100*time.Millisecond, "default ServiceAccount in "+name, func(ctx context.Context) (bool, string, error) {
		_, err := c.Typed.CoreV1().ServiceAccounts(name).Get(ctx, "default", metav1.GetOptions{})
		return err == nil, "", err
	})
}

// realFunctionPresent says whether the repository has the real function and
// its package yet.
func realFunctionPresent() bool {
	for _, p := range []string{"main.go", "package/crossplane.yaml", "apis/xrd.yaml", "apis/composition.yaml"} {
		if _, err := os.Stat(filepath.Join(repoRoot(), p)); err != nil {
			return false
		}
	}
	return true
}
