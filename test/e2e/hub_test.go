//go:build e2e

package e2e

import (
	"bytes"
	"context"
	"encoding/base64"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/inferno-ai/function-inferno/test/e2e/controlplane"
	"github.com/inferno-ai/function-inferno/test/e2e/crossplanecore"
	"github.com/inferno-ai/function-inferno/test/e2e/fnpackage"
	"github.com/inferno-ai/function-inferno/test/e2e/kube"
	"github.com/inferno-ai/function-inferno/test/e2e/netns"
)

// The fleet of issue 29: a hub (management) cluster whose claims are
// composed into provider-kubernetes Objects, one per placed cluster, and two
// workload clusters that compose what those Objects put there:
//   - workload-a is today's cluster, the one with the real node, reached
//     from the hub through a TCP proxy the test owns (fleetEnv.proxyA) and
//     as an identity that may manage only InferenceServices
//     (inference.inferno.dev) in the mapped namespace;
//   - hub-local is the hub itself, whose kwok node makes it a second
//     workload cluster.
const (
	providerKubernetesModuleDir = "tools/e2e/provider-kubernetes"
	providerKubernetesModule    = "github.com/crossplane-contrib/provider-kubernetes"
	// hubNetNS holds provider-kubernetes and hubRBACNetNS the hub's RBAC
	// manager (see package netns for why): one each, since both bind :8080.
	hubNetNS     = "inferno-e2e-hub"
	hubRBACNetNS = "inferno-e2e-hub-rbac"
	// fleetClaimNS is the app team's namespace on the hub; fleetNS where
	// the platform maps it on every workload cluster (input.fleet.namespaces).
	fleetClaimNS = "team-a"
	fleetNS      = "fleet-a"
	// fleetUnmappedNS is a hub namespace the platform did not map.
	fleetUnmappedNS = "team-b"
	clusterA        = "workload-a"
	clusterHub      = "hub-local"
	// fleetSmokeNS and smokeProviderConfig are the smoke step's own: a
	// ConfigMap and a probe object on workload-a, under an identity of
	// their own, so workload-a's stays InferenceServices only.
	fleetSmokeNS        = "fleet-smoke"
	smokeProviderConfig = "workload-a-smoke"
	// fleetSystemNS holds, on today's cluster, the ServiceAccounts the
	// hub acts as there.
	fleetSystemNS = "inferno-fleet"
	hubFakeNode   = "hub-gpu-1"
	// providerPoll is provider-kubernetes' --poll: how often it looks at a
	// Ready Object's remote object. Its default (10m) would leave the hub's
	// status ten minutes behind a workload cluster; an Object that is not
	// Ready is polled every 30 s whatever this says (hard-coded in v1.2.1).
	// No --enable-watches: its watches list and watch the remote kind in
	// every namespace, which the least-privilege identities here may not.
	providerPoll = 15 * time.Second
)

var (
	objectGVK                = schema.GroupVersionKind{Group: "kubernetes.crossplane.io", Version: "v1alpha2", Kind: "Object"}
	providerConfigGVK        = schema.GroupVersionKind{Group: "kubernetes.crossplane.io", Version: "v1alpha1", Kind: "ProviderConfig"}
	clusterProviderConfigGVK = schema.GroupVersionKind{Group: "kubernetes.m.crossplane.io", Version: "v1alpha1", Kind: "ClusterProviderConfig"}
)

// fleetEnv is the hub and what connects it to the workload clusters. It
// starts on the first fleet scenario (startFleet), so a run of other
// scenarios never pays for it, and stops with the env.
type fleetEnv struct {
	dir   string
	cp    *controlplane.ControlPlane
	admin *kube.Client
	core  *crossplanecore.Core
	// ns holds provider-kubernetes, rbacNS the RBAC manager.
	ns, rbacNS *netns.NS
	// rbacAPIIn is the hub's API server inside rbacNS.
	rbacAPIIn *netns.Proxy
	// apiIn is the hub's API server as seen from inside hubNetNS, always
	// on; proxyA is today's API server as seen from there: workload-a's
	// path, which 37c cuts. Cutting it is, from the hub, exactly a cluster
	// that went away; stopping today's API server instead would break
	// every other scenario (and the real node) with it.
	apiIn, proxyA *netns.Proxy
	// webhookOut carries the hub API server's conversion calls into the
	// namespace, to provider-kubernetes' webhook server.
	webhookOut *netns.Proxy
	provider   *controlplane.Process
	// providerHealth is its health probe, inside the namespace.
	providerHealth string
	fn             *fnpackage.Runner
	setup          time.Duration
	// input is the hub Composition's function Input as last applied.
	input map[string]any
	// todayPipeline is today's namespaced Composition's pipeline before the
	// fleet gave it the real node's Input; restored as the fleet stops.
	todayPipeline []any
}

func (f *fleetEnv) stop() {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if f.todayPipeline != nil {
		if err := setNamespacedPipeline(ctx, f.todayPipeline); err != nil {
			stderrf("e2e: restoring today's namespaced Composition: %v", err)
		}
		f.todayPipeline = nil
	}
	if f.cp != nil {
		f.cp.Stop()
		f.cp = nil
	}
	for _, p := range []*netns.Proxy{f.apiIn, f.proxyA, f.webhookOut, f.rbacAPIIn} {
		if p != nil {
			p.Close()
		}
	}
	for _, n := range []*netns.NS{f.ns, f.rbacNS} {
		if n != nil {
			if err := n.Delete(ctx); err != nil {
				stderrf("e2e: %v", err)
			}
		}
	}
	f.ns, f.rbacNS = nil, nil
	if !*flagKeep {
		for _, d := range []string{"etcd", "xpkg-cache"} {
			_ = os.RemoveAll(filepath.Join(f.dir, d))
		}
	}
}

// fleet returns the running fleet, starting it on first use. A start that
// failed fails every later fleet scenario at once rather than retrying.
func (s *infernoSuite) fleet(t *testing.T) *fleetEnv {
	t.Helper()
	if s.fleetErr != nil {
		t.Fatalf("the fleet did not start: %v", s.fleetErr)
	}
	if env.fleet != nil {
		return env.fleet
	}
	if env.node == nil {
		t.Skip("no real node (-real-node=false): workload-a serves on it")
	}
	start := time.Now()
	f, err := startFleet(context.Background(), t)
	if f != nil {
		env.fleet = f
	}
	if err != nil {
		s.fleetErr = err
		t.Fatalf("starting the fleet: %v (hub logs in %s)", err, filepath.Join(env.workDir, "hub", "logs"))
	}
	f.setup = time.Since(start)
	return f
}

func startFleet(ctx context.Context, t *testing.T) (*fleetEnv, error) {
	f := &fleetEnv{dir: filepath.Join(env.workDir, "hub")}
	if err := os.MkdirAll(f.dir, 0o755); err != nil {
		return nil, err
	}
	var err error
	if f.ns, err = netns.Create(ctx, hubNetNS); err != nil {
		return f, err
	}
	if f.rbacNS, err = netns.Create(ctx, hubRBACNetNS); err != nil {
		return f, err
	}
	testdata, err := filepath.Abs("testdata")
	if err != nil {
		return f, err
	}
	f.cp, err = controlplane.Start(ctx, controlplane.Options{
		Binaries: controlplane.BinariesIn(binDir()),
		WorkDir:  f.dir,
		KwokConfigs: []string{
			filepath.Join(testdata, "kwok", "node.yaml"),
			filepath.Join(testdata, "kwok", "pod.yaml"),
			filepath.Join(testdata, "kwok", "volume.yaml"),
		},
	})
	if err != nil {
		return f, fmt.Errorf("hub control plane: %w", err)
	}
	cfg, err := f.cp.RESTConfig(controlplane.Admin)
	if err != nil {
		return f, err
	}
	if f.admin, err = kube.NewClient(cfg); err != nil {
		return f, err
	}
	// The same address inside the namespace as on the host, so every
	// kubeconfig the control plane wrote works unchanged in there.
	hubAddr := fmt.Sprintf("127.0.0.1:%d", f.cp.APIPort)
	if f.apiIn, err = f.ns.ProxyIn(hubAddr, hubAddr); err != nil {
		return f, fmt.Errorf("hub API server inside %s: %w", hubNetNS, err)
	}
	if f.rbacAPIIn, err = f.rbacNS.ProxyIn(hubAddr, hubAddr); err != nil {
		return f, fmt.Errorf("hub API server inside %s: %w", hubRBACNetNS, err)
	}
	todayAddr := fmt.Sprintf("127.0.0.1:%d", env.cp.APIPort)
	if f.proxyA, err = f.ns.ProxyIn(todayAddr, todayAddr); err != nil {
		return f, fmt.Errorf("workload-a's proxy: %w", err)
	}
	if err := createFakeNodeOn(ctx, f.admin, hubFakeNode, ""); err != nil {
		return f, err
	}
	if err := createStorageClassOn(ctx, f.admin); err != nil {
		return f, err
	}

	moduleDir, err := crossplanecore.ModuleDir(ctx, filepath.Join(repoRoot(), "tools", "e2e", "crossplane"))
	if err != nil {
		return f, err
	}
	f.core, err = crossplanecore.Install(ctx, f.cp, f.admin, crossplanecore.Options{
		Binary:    filepath.Join(binDir(), "crossplane-core"),
		ModuleDir: moduleDir,
		WorkDir:   f.dir,
		// The RBAC manager (it aggregates the XRDs' roles into
		// Crossplane's) is the real one, in the namespace where :8080 is
		// free; granting what it would aggregate by hand instead would
		// test our copy of its rules, not Crossplane as a platform runs it.
		RBACManagerCommand: f.rbacNS.Command,
	})
	if err != nil {
		return f, fmt.Errorf("hub crossplane: %w", err)
	}

	// The function, from the package 01-install pushed, run as the
	// External runtime runs it (as on today's cluster).
	ref, err := fnpackage.FunctionPackage(ctx, env.admin, RealFunctionName)
	if err != nil {
		return f, fmt.Errorf("function-inferno's package on today's cluster (01-install): %w", err)
	}
	today := env.functions[RealFunctionName]
	if today == nil {
		return f, fmt.Errorf("function-inferno was not installed by 01-install in this run")
	}
	metricsPort, err := controlplane.FreePort()
	if err != nil {
		return f, err
	}
	if f.fn, err = fnpackage.Install(ctx, f.cp, f.admin, fnpackage.InstallOptions{
		Name: RealFunctionName, Ref: ref, Binary: today.Binary, WorkDir: mkdir(t, filepath.Join(f.dir, RealFunctionName)), Debug: *flagDebug,
		// Off the default :8080, which the first RBAC manager holds.
		ExtraArgs: []string{fmt.Sprintf("--metrics-address=127.0.0.1:%d", metricsPort)},
	}); err != nil {
		return f, fmt.Errorf("function on the hub: %w", err)
	}
	// hub-local composes PVCs, Jobs, HPAs… as any workload cluster.
	if _, err := f.admin.ApplyFile(ctx, filepath.Join(repoRoot(), "apis", "rbac.yaml")); err != nil {
		return f, err
	}
	if err := f.startProvider(ctx, t); err != nil {
		return f, fmt.Errorf("provider-kubernetes: %w", err)
	}

	// The claim's XRD and Composition (with the fleet Input), and the
	// namespaced ones hub-local composes the remote composites with, as
	// README's "Install on a cluster" applies them.
	for _, x := range []struct{ file, name string }{{"xrd.yaml", xrdName}, {"namespaced/xrd.yaml", namespacedXRDName}} {
		if _, err := f.admin.ApplyFile(ctx, filepath.Join(repoRoot(), "apis", x.file)); err != nil {
			return f, err
		}
		if err := waitXRDOn(ctx, f.admin, x.name, x.name == xrdName); err != nil {
			return f, err
		}
	}
	if _, err := f.admin.ApplyFile(ctx, filepath.Join(repoRoot(), "apis", "namespaced", "composition.yaml")); err != nil {
		return f, err
	}
	if err := f.setInput(ctx, fleetInput(nil)); err != nil {
		return f, err
	}

	for _, ns := range []string{fleetClaimNS, fleetUnmappedNS} {
		if _, err := f.admin.Typed.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			return f, err
		}
	}
	if err := createTeamNamespaceOn(ctx, f.admin, fleetNS); err != nil {
		return f, err
	}
	if err := env.createTeamNamespace(ctx, fleetNS); err != nil {
		return f, err
	}
	if err := f.providerConfigs(ctx); err != nil {
		return f, err
	}
	if err := f.placeTodayOnRealNode(ctx, t); err != nil {
		return f, err
	}
	return f, nil
}

// fleetInput is the hub Composition's Input: both clusters and the one
// mapped namespace; draining names the clusters being drained.
func fleetInput(draining map[string]bool) map[string]any {
	cluster := func(name, region string) map[string]any {
		return map[string]any{
			"name": name, "providerConfigName": name,
			"labels":   map[string]any{"region": region},
			"capacity": map[string]any{"gpus": int64(8)},
			"draining": draining[name],
		}
	}
	return map[string]any{
		"apiVersion": "fn.inferno.io/v1beta1",
		"kind":       "Input",
		"fleet": map[string]any{
			"clusters":   []any{cluster(clusterA, "east"), cluster(clusterHub, "west")},
			"namespaces": []any{map[string]any{"claimNamespace": fleetClaimNS, "namespace": fleetNS}},
		},
	}
}

// setInput applies the packaged claim Composition on the hub with input
// as its function's Input (the Composition's default name, so claims
// need no selector).
func (f *fleetEnv) setInput(ctx context.Context, input map[string]any) error {
	objs, err := kube.DecodeYAML(mustReadFile(filepath.Join(repoRoot(), "apis", "composition.yaml")))
	if err != nil || len(objs) != 1 {
		return fmt.Errorf("apis/composition.yaml: %v", err)
	}
	comp := objs[0]
	steps, _, _ := unstructured.NestedSlice(comp.Object, "spec", "pipeline")
	steps[0].(map[string]any)["input"] = input
	setField(comp, steps, "spec", "pipeline")
	if _, err := f.admin.Apply(ctx, comp); err != nil {
		return err
	}
	f.input = input
	return nil
}

// placeTodayOnRealNode gives today's namespaced Composition — the one a
// remote composite on workload-a gets, its XRD's default — the real node's
// Input, as a platform puts its GPU pools into the workload cluster's
// Composition: the hub sends the claim's spec, not the pool. The packaged
// Input is restored when the fleet stops (scenario 13 composes on kwok).
// Crossplane's package manager re-applies the Composition only when its
// revision reconciles (a package or Lock change), which no fleet
// scenario causes.
func (f *fleetEnv) placeTodayOnRealNode(ctx context.Context, t *testing.T) error {
	comp, err := env.admin.Get(ctx, compositionGVK, "", namespacedXRDName)
	if err != nil {
		return fmt.Errorf("today's namespaced Composition (01b-configuration): %w", err)
	}
	steps, _, _ := unstructured.NestedSlice(comp.Object, "spec", "pipeline")
	f.todayPipeline = steps
	input := realNodeInput()
	input["runtimes"] = map[string]any{"fake": map[string]any{"sharedMemory": true}}
	placed, _, _ := unstructured.NestedSlice(comp.Object, "spec", "pipeline")
	placed[0].(map[string]any)["input"] = input
	return setNamespacedPipeline(ctx, placed)
}

func setNamespacedPipeline(ctx context.Context, steps []any) error {
	ri, err := env.admin.Resource(compositionGVK, "")
	if err != nil {
		return err
	}
	comp, err := ri.Get(ctx, namespacedXRDName, metav1.GetOptions{})
	if err != nil {
		return err
	}
	setField(comp, steps, "spec", "pipeline")
	_, err = ri.Update(ctx, comp, metav1.UpdateOptions{})
	return err
}

// startProvider installs provider-kubernetes on the hub as its package
// would be, less the Deployment: the module's CRDs (package/crds, their
// conversion webhook pointed at the process as the package manager points
// it at the provider's Service), a ServiceAccount with the permissions the
// RBAC manager would give a ProviderRevision, a ClusterRole that lets
// Crossplane compose Objects (what the RBAC manager aggregates for an
// installed provider), and the process in hubNetNS.
func (f *fleetEnv) startProvider(ctx context.Context, t *testing.T) error {
	bin := filepath.Join(binDir(), "provider-kubernetes")
	if _, err := os.Stat(bin); err != nil {
		return fmt.Errorf("no %s: make e2e-tools builds it (%s)", bin, providerKubernetesModuleDir)
	}
	module := moduleDir(t, providerKubernetesModule, providerKubernetesModuleDir)
	dir := mkdir(t, filepath.Join(f.dir, "provider-kubernetes"))
	certDir := mkdir(t, filepath.Join(dir, "tls"))
	ca, err := controlplane.NewCertificateAuthority("provider-kubernetes-webhook-ca (e2e)")
	if err != nil {
		return err
	}
	kp, err := ca.ServingCert("provider-kubernetes", []string{"localhost"}, []net.IP{net.ParseIP("127.0.0.1")})
	if err != nil {
		return err
	}
	if _, _, err := kp.WriteFiles(certDir, "tls"); err != nil {
		return err
	}
	// controller-runtime's webhook server of v1.2.1 listens on :9443, not
	// configurable; the API server reaches it through webhookOut.
	hookPort, err := controlplane.FreePort()
	if err != nil {
		return err
	}
	if f.webhookOut, err = f.ns.ProxyOut(fmt.Sprintf("127.0.0.1:%d", hookPort), "127.0.0.1:9443"); err != nil {
		return err
	}
	crds, err := filepath.Glob(filepath.Join(module, "package", "crds", "*.yaml"))
	if err != nil || len(crds) == 0 {
		return fmt.Errorf("provider-kubernetes CRDs in %s: %v", module, err)
	}
	for _, file := range crds {
		objs, err := kube.DecodeYAML(mustReadFile(file))
		if err != nil || len(objs) != 1 {
			return fmt.Errorf("%s: %v", file, err)
		}
		crd := objs[0]
		if s, _, _ := unstructured.NestedString(crd.Object, "spec", "conversion", "strategy"); s == "Webhook" {
			setField(crd, map[string]any{
				"url":      fmt.Sprintf("https://127.0.0.1:%d/convert", hookPort),
				"caBundle": base64.StdEncoding.EncodeToString(ca.CertPEM),
			}, "spec", "conversion", "webhook", "clientConfig")
		}
		if _, err := f.admin.Apply(ctx, crd); err != nil {
			return err
		}
		if err := waitCRDOn(ctx, f.admin, crd.GetName()); err != nil {
			return err
		}
	}
	f.admin.ResetDiscovery()

	c := f.admin.Typed
	const sa = "provider-kubernetes"
	if _, err := c.CoreV1().ServiceAccounts(crossplanecore.Namespace).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: sa}}, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return err
	}
	groups := []string{"kubernetes.crossplane.io", "kubernetes.m.crossplane.io"}
	roles := []*rbacv1.ClusterRole{
		{
			// The ProviderRevision's system role: its own kinds, the
			// Secrets its ProviderConfigs name and it writes connection
			// details to, Events, and reading CRDs (its safe-start gate).
			ObjectMeta: metav1.ObjectMeta{Name: "crossplane:provider:provider-kubernetes:system"},
			Rules: []rbacv1.PolicyRule{
				{APIGroups: groups, Resources: []string{"*"}, Verbs: []string{"*"}},
				{APIGroups: []string{""}, Resources: []string{"secrets"}, Verbs: []string{"get", "list", "watch", "create", "update", "patch", "delete"}},
				{APIGroups: []string{""}, Resources: []string{"events"}, Verbs: []string{"create", "update", "patch"}},
				{APIGroups: []string{"apiextensions.k8s.io"}, Resources: []string{"customresourcedefinitions"}, Verbs: []string{"get", "list", "watch"}},
			},
		},
		{
			ObjectMeta: metav1.ObjectMeta{Name: "crossplane:provider:provider-kubernetes:aggregate-to-crossplane",
				Labels: map[string]string{"rbac.crossplane.io/aggregate-to-crossplane": "true"}},
			Rules: []rbacv1.PolicyRule{{APIGroups: groups, Resources: []string{"*"}, Verbs: []string{"*"}}},
		},
	}
	for _, r := range roles {
		if _, err := c.RbacV1().ClusterRoles().Create(ctx, r, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			return err
		}
	}
	b := &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: roles[0].Name},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: sa, Namespace: crossplanecore.Namespace}},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: roles[0].Name},
	}
	if _, err := c.RbacV1().ClusterRoleBindings().Create(ctx, b, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return err
	}
	kc, err := tokenKubeconfig(ctx, f.admin, f.cp.URL, crossplanecore.Namespace, sa)
	if err != nil {
		return err
	}
	kubeconfig := filepath.Join(dir, "kubeconfig")
	if err := os.WriteFile(kubeconfig, kc, 0o600); err != nil {
		return err
	}

	healthPort, err := controlplane.FreePort()
	if err != nil {
		return err
	}
	f.providerHealth = fmt.Sprintf("127.0.0.1:%d", healthPort)
	pbin, args := f.ns.Command(bin,
		"--debug",
		"--poll="+providerPoll.String(),
		"--health-probe-bind-addr="+f.providerHealth,
	)
	if f.provider, err = f.cp.StartProcess("provider-kubernetes", pbin, args,
		"KUBECONFIG="+kubeconfig, "TLS_SERVER_CERTS_DIR="+certDir); err != nil {
		return err
	}
	hc := &http.Client{Timeout: 2 * time.Second, Transport: &http.Transport{DialContext: f.ns.DialContext, Proxy: nil}}
	return controlplane.WaitFor(ctx, 90*time.Second, "provider-kubernetes /readyz", f.provider, 250*time.Millisecond, func(ctx context.Context) (bool, error) {
		resp, err := hc.Get("http://" + f.providerHealth + "/readyz")
		if err != nil {
			return false, err
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK, fmt.Errorf("readyz %s", resp.Status)
	})
}

// providerConfigs makes the hub's ProviderConfigs (for claims' cluster-
// scoped Objects) and ClusterProviderConfigs of the same names (for a
// namespaced composite's namespaced Objects):
//   - workload-a: today's cluster through proxyA, as a ServiceAccount of
//     today's that may manage InferenceServices in fleetNS and nothing else;
//   - workload-a-smoke: the same path, for the smoke step's ConfigMap and
//     probe in fleetSmokeNS;
//   - hub-local: the hub itself, as a ServiceAccount of the hub's that may
//     manage InferenceServices in fleetNS.
func (f *fleetEnv) providerConfigs(ctx context.Context) error {
	inferenceServices := rbacv1.PolicyRule{APIGroups: []string{namespacedGVK.Group}, Resources: []string{"inferenceservices"}, Verbs: []string{"get", "list", "watch", "create", "update", "patch", "delete"}}
	smoke := rbacv1.PolicyRule{APIGroups: []string{"", fleetProbeGVK.Group}, Resources: []string{"configmaps", "fleetprobes"}, Verbs: []string{"get", "list", "watch", "create", "update", "patch", "delete"}}
	for _, pc := range []struct {
		name   string
		c      *kube.Client
		server string
		ns     string
		rule   rbacv1.PolicyRule
	}{
		{clusterA, env.admin, env.cp.URL, fleetNS, inferenceServices},
		{smokeProviderConfig, env.admin, env.cp.URL, fleetSmokeNS, smoke},
		{clusterHub, f.admin, f.cp.URL, fleetNS, inferenceServices},
	} {
		sa := "hub-" + pc.name
		if err := namespacedIdentity(ctx, pc.c, fleetSystemNS, sa, pc.ns, pc.rule); err != nil {
			return fmt.Errorf("identity for %s: %w", pc.name, err)
		}
		kc, err := tokenKubeconfig(ctx, pc.c, pc.server, fleetSystemNS, sa)
		if err != nil {
			return err
		}
		secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: pc.name + "-kubeconfig", Namespace: crossplanecore.Namespace}, Data: map[string][]byte{"kubeconfig": kc}}
		if _, err := f.admin.Typed.CoreV1().Secrets(crossplanecore.Namespace).Create(ctx, secret, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			return err
		}
		for _, gvk := range []schema.GroupVersionKind{providerConfigGVK, clusterProviderConfigGVK} {
			o := &unstructured.Unstructured{}
			o.SetGroupVersionKind(gvk)
			o.SetName(pc.name)
			setField(o, map[string]any{
				"source":    "Secret",
				"secretRef": map[string]any{"namespace": crossplanecore.Namespace, "name": secret.Name, "key": "kubeconfig"},
			}, "spec", "credentials")
			if _, err := f.admin.Apply(ctx, o); err != nil {
				return err
			}
		}
	}
	return nil
}

// namespacedIdentity makes ServiceAccount sa in saNS on the cluster of c,
// allowed rule in ns only (the namespace is created if missing).
func namespacedIdentity(ctx context.Context, c *kube.Client, saNS, sa, ns string, rule rbacv1.PolicyRule) error {
	k := c.Typed
	for _, n := range []string{saNS, ns} {
		if _, err := k.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: n}}, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			return err
		}
	}
	if _, err := k.CoreV1().ServiceAccounts(saNS).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: sa}}, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return err
	}
	role := &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: sa, Namespace: ns}, Rules: []rbacv1.PolicyRule{rule}}
	if _, err := k.RbacV1().Roles(ns).Create(ctx, role, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return err
	}
	b := &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: sa, Namespace: ns},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: sa, Namespace: saNS}},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: sa},
	}
	if _, err := k.RbacV1().RoleBindings(ns).Create(ctx, b, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return err
	}
	return nil
}

// tokenKubeconfig is a kubeconfig for ServiceAccount ns/sa of the cluster
// of c at server, with a token from the TokenRequest API (two hours: the
// fleet scenarios' span with room to spare).
func tokenKubeconfig(ctx context.Context, c *kube.Client, server, ns, sa string) ([]byte, error) {
	tok, err := c.Typed.CoreV1().ServiceAccounts(ns).CreateToken(ctx, sa, &authenticationv1.TokenRequest{
		Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptrInt64(7200)},
	}, metav1.CreateOptions{})
	if err != nil {
		return nil, fmt.Errorf("a token for ServiceAccount %s/%s: %w", ns, sa, err)
	}
	ca := c.Config.TLSClientConfig.CAData
	if len(ca) == 0 && c.Config.TLSClientConfig.CAFile != "" {
		if ca, err = os.ReadFile(c.Config.TLSClientConfig.CAFile); err != nil {
			return nil, err
		}
	}
	return []byte(fmt.Sprintf(`apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: %q, certificate-authority-data: %s}}]
users: [{name: %s, user: {token: %q}}]
contexts: [{name: c, context: {cluster: c, user: %s, namespace: %s}}]
current-context: c
`, server, base64.StdEncoding.EncodeToString(ca), sa, tok.Status.Token, sa, ns)), nil
}

func waitCRDOn(ctx context.Context, c *kube.Client, name string) error {
	return kube.Eventually(ctx, 30*time.Second, 200*time.Millisecond, "CRD "+name+" established", func(ctx context.Context) (bool, string, error) {
		crd, err := c.Get(ctx, crdGVK, "", name)
		if err != nil {
			return false, "", err
		}
		st, _, _ := kube.Condition(crd, "Established")
		return st == "True", "", nil
	})
}

// waitXRDOn is waitXRDEstablished on the cluster of c.
func waitXRDOn(ctx context.Context, c *kube.Client, name string, offered bool) error {
	err := kube.Eventually(ctx, 90*time.Second, 200*time.Millisecond, "XRD "+name+" ready", func(ctx context.Context) (bool, string, error) {
		x, err := c.Get(ctx, xrdGVK, "", name)
		if err != nil {
			return false, "", err
		}
		e, _, _ := kube.Condition(x, "Established")
		o, _, _ := kube.Condition(x, "Offered")
		return e == "True" && (!offered || o == "True"), kube.ConditionsSummary(x), nil
	})
	c.ResetDiscovery()
	return err
}

func mustReadFile(path string) []byte {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil
	}
	return b
}

// hubWrites are the hub API server's write requests so far (POST, PUT,
// PATCH, DELETE) by resource, from its /metrics.
func (f *fleetEnv) hubWrites(ctx context.Context) (map[string]float64, error) {
	hc, err := f.cp.HTTPClient(controlplane.Admin)
	if err != nil {
		return nil, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, f.cp.URL+"/metrics", nil)
	if err != nil {
		return nil, err
	}
	resp, err := hc.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	var buf bytes.Buffer
	if _, err := buf.ReadFrom(resp.Body); err != nil {
		return nil, err
	}
	out := map[string]float64{}
	for _, line := range strings.Split(buf.String(), "\n") {
		if !strings.HasPrefix(line, "apiserver_request_total{") {
			continue
		}
		labels, value, ok := strings.Cut(strings.TrimPrefix(line, "apiserver_request_total{"), "} ")
		if !ok {
			continue
		}
		l := promLabels(labels)
		switch l["verb"] {
		case "POST", "PUT", "PATCH", "DELETE", "APPLY", "CREATE", "UPDATE":
		default:
			continue
		}
		key := l["resource"]
		if l["subresource"] != "" {
			key += "/" + l["subresource"]
		}
		var v float64
		fmt.Sscan(value, &v)
		out[key] += v
	}
	return out, nil
}

// promLabels parses k="v",k2="v2" (no escaped quotes in these labels).
func promLabels(s string) map[string]string {
	out := map[string]string{}
	for _, kv := range strings.Split(s, ",") {
		k, v, ok := strings.Cut(kv, "=")
		if ok {
			out[k] = strings.Trim(v, `"`)
		}
	}
	return out
}
