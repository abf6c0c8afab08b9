package crossplanecore

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/inferno-ai/function-inferno/test/e2e/controlplane"
	"github.com/inferno-ai/function-inferno/test/e2e/kube"
)

// Names the chart uses; `core init` fills the three Secrets.
const (
	Namespace           = "crossplane-system"
	TLSCASecretName     = "crossplane-root-ca"
	TLSServerSecretName = "crossplane-tls-server"
	TLSClientSecretName = "crossplane-tls-client"
)

// Options configure Install.
type Options struct {
	// Binary is Crossplane core (github.com/crossplane/crossplane/v2/cmd/crossplane).
	Binary string
	// ModuleDir is the crossplane module's source (for cluster/crds and the
	// Helm chart's RBAC templates), see ModuleDir.
	ModuleDir string
	// WorkDir gets the package cache and TLS folders.
	WorkDir string
	// ExtraArgs are appended to `crossplane core start`, e.g. to try
	// --circuit-breaker-burst or --poll-interval.
	ExtraArgs []string
	// RBACManagerCommand, when set, wraps the RBAC manager's command line
	// (bin, args) into the one to run, e.g. in a network namespace of its
	// own where RBACManagerPort is free: a second control plane's RBAC
	// manager cannot bind it beside the first one's. Its kubeconfig must
	// reach the API server from there.
	RBACManagerCommand func(bin string, args ...string) (string, []string)
}

// Core is a running Crossplane core with its RBAC manager.
type Core struct {
	Start       *controlplane.Process
	RBACManager *controlplane.Process
	// ChartRBAC is the RBAC rendered from the chart, as applied.
	ChartRBAC []byte
	// MetricsURL is Crossplane's Prometheus endpoint (its XR circuit
	// breaker's counters among them).
	MetricsURL string
}

// ModuleDir finds the source of the crossplane module that toolsDir (the
// tools/e2e/crossplane module) pins, so the CRDs and chart the test installs
// always match the binary.
func ModuleDir(ctx context.Context, toolsDir string) (string, error) {
	cmd := exec.CommandContext(ctx, "go", "list", "-m", "-json", "github.com/crossplane/crossplane/v2")
	cmd.Dir = toolsDir
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("go list crossplane module in %s: %w", toolsDir, err)
	}
	var m struct{ Dir string }
	if err := json.Unmarshal(out, &m); err != nil {
		return "", err
	}
	if m.Dir == "" {
		// Not downloaded yet (a fresh module cache): fetch it.
		dl := exec.CommandContext(ctx, "go", "mod", "download", "-json", "github.com/crossplane/crossplane/v2")
		dl.Dir = toolsDir
		if out, err = dl.Output(); err != nil {
			return "", fmt.Errorf("go mod download crossplane: %w", err)
		}
		if err := json.Unmarshal(out, &m); err != nil {
			return "", err
		}
	}
	return m.Dir, nil
}

// Install sets Crossplane up as its Helm chart would and starts it:
//
//  1. As admin (what `helm install` does): the namespace, the two
//     ServiceAccounts, the chart's RBAC, and the empty TLS Secrets.
//  2. As the crossplane ServiceAccount: `core init` (CRDs, CA and client
//     certificates, lock, default runtime config), as the chart's init
//     container does.
//  3. `core start` as the crossplane ServiceAccount and `rbac start` as the
//     rbac-manager ServiceAccount, side by side, as the chart's two
//     Deployments do. Crossplane thus holds only its chart ClusterRole plus
//     whatever is aggregated into it.
func Install(ctx context.Context, cp *controlplane.ControlPlane, admin *kube.Client, o Options) (*Core, error) {
	// The RBAC manager binds controller-runtime's default metrics address
	// (:8080, every interface); fail with a clear message if it is taken
	// where it will run.
	if o.RBACManagerCommand == nil {
		if err := CheckRBACManagerPort(); err != nil {
			return nil, err
		}
	}
	if _, err := admin.ApplyYAML(ctx, []byte(fmt.Sprintf(helmBasics, Namespace, Namespace, Namespace))); err != nil {
		return nil, fmt.Errorf("crossplane namespace and service accounts: %w", err)
	}
	rbac, err := RenderChartRBAC(filepath.Join(o.ModuleDir, "cluster", "charts", "crossplane"), Namespace)
	if err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(o.WorkDir, "crossplane-chart-rbac.yaml"), rbac, 0o644); err != nil {
		return nil, err
	}
	if _, err := admin.ApplyYAML(ctx, rbac); err != nil {
		return nil, fmt.Errorf("crossplane chart RBAC: %w", err)
	}
	for _, name := range []string{TLSCASecretName, TLSServerSecretName, TLSClientSecretName} {
		s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: Namespace}, Type: corev1.SecretTypeOpaque}
		if _, err := admin.Typed.CoreV1().Secrets(Namespace).Create(ctx, s, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			return nil, err
		}
	}

	env := []string{
		"KUBECONFIG=" + cp.Kubeconfig(controlplane.Crossplane),
		"POD_NAMESPACE=" + Namespace,
		"POD_SERVICE_ACCOUNT=crossplane",
		"TLS_CA_SECRET_NAME=" + TLSCASecretName,
		"TLS_SERVER_SECRET_NAME=" + TLSServerSecretName,
		"TLS_CLIENT_SECRET_NAME=" + TLSClientSecretName,
		"ENABLE_WEBHOOKS=false",
	}
	emptyWebhooks := filepath.Join(o.WorkDir, "webhookconfigurations")
	if err := os.MkdirAll(emptyWebhooks, 0o755); err != nil {
		return nil, err
	}
	initCtx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	// Paths by environment variable: kong spells the CRDsPath flag
	// --cr-ds-path, which is easy to get wrong.
	initEnv := append([]string{
		"CRDS_PATH=" + filepath.Join(o.ModuleDir, "cluster", "crds"),
		"WEBHOOK_CONFIGS_PATH=" + emptyWebhooks,
	}, env...)
	// `core init` creates CRDs and then objects of those kinds with a client
	// whose discovery may not know them yet ("no matches for kind Lock"). In
	// the chart it is an init container that the kubelet restarts; retry it
	// the same way (it is idempotent).
	for attempt := 1; ; attempt++ {
		err := controlplane.RunCommand(initCtx, "crossplane-core-init", cp.LogDir, o.Binary, []string{"core", "init"}, initEnv...)
		if err == nil {
			break
		}
		if attempt == 5 || initCtx.Err() != nil {
			return nil, err
		}
		time.Sleep(time.Second)
	}

	// The chart mounts the client Secret as a volume; do the same by hand.
	clientDir := filepath.Join(o.WorkDir, "tls", "client")
	serverDir := filepath.Join(o.WorkDir, "tls", "server")
	for _, d := range []string{clientDir, serverDir} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return nil, err
		}
	}
	sec, err := admin.Typed.CoreV1().Secrets(Namespace).Get(ctx, TLSClientSecretName, metav1.GetOptions{})
	if err != nil {
		return nil, err
	}
	for _, k := range []string{"tls.crt", "tls.key", "ca.crt"} {
		if len(sec.Data[k]) == 0 {
			return nil, fmt.Errorf("core init left %s without %s", TLSClientSecretName, k)
		}
		if err := os.WriteFile(filepath.Join(clientDir, k), sec.Data[k], 0o600); err != nil {
			return nil, err
		}
	}

	ports, err := controlplane.FreePorts(2)
	if err != nil {
		return nil, err
	}
	cacheDir := filepath.Join(o.WorkDir, "xpkg-cache")
	if err := os.MkdirAll(cacheDir, 0o755); err != nil {
		return nil, err
	}
	args := []string{
		"core", "start",
		"--enable-webhooks=false",
		"--package-runtime=External",
		"--cache-dir=" + cacheDir,
		"--tls-client-secret-name=" + TLSClientSecretName,
		"--tls-client-certs-dir=" + clientDir,
		"--tls-server-secret-name=" + TLSServerSecretName,
		"--tls-server-certs-dir=" + serverDir,
		fmt.Sprintf("--metrics-port=%d", ports[0]),
		fmt.Sprintf("--health-probe-port=%d", ports[1]),
		// Drift polls are for real clouds; watches drive everything here.
		"--poll-interval=1m",
		"--debug",
	}
	start, err := cp.StartProcess("crossplane", o.Binary, append(args, o.ExtraArgs...), env...)
	if err != nil {
		return nil, err
	}
	rbacBin, rbacArgs := o.Binary, []string{
		"rbac", "start",
		"--provider-clusterrole=crossplane:allowed-provider-permissions",
		"--debug",
	}
	if o.RBACManagerCommand != nil {
		rbacBin, rbacArgs = o.RBACManagerCommand(rbacBin, rbacArgs...)
	}
	rbacMgr, err := cp.StartProcess("crossplane-rbac-manager", rbacBin, rbacArgs,
		"KUBECONFIG="+cp.Kubeconfig(controlplane.RBACManager),
		"POD_NAMESPACE="+Namespace,
	)
	if err != nil {
		return nil, err
	}
	// Crossplane's health endpoint says its manager started.
	healthz := fmt.Sprintf("http://127.0.0.1:%d/healthz", ports[1])
	if err := controlplane.WaitFor(ctx, 60*time.Second, "crossplane /healthz", start, 250*time.Millisecond, func(ctx context.Context) (bool, error) {
		if exited, _ := rbacMgr.Exited(); exited {
			return false, fmt.Errorf("rbac manager exited, see %s", rbacMgr.LogPath)
		}
		return getOK(ctx, healthz)
	}); err != nil {
		return nil, err
	}
	return &Core{Start: start, RBACManager: rbacMgr, ChartRBAC: rbac, MetricsURL: fmt.Sprintf("http://127.0.0.1:%d/metrics", ports[0])}, nil
}

// helmBasics is what the chart creates besides RBAC and Deployments.
const helmBasics = `apiVersion: v1
kind: Namespace
metadata:
  name: %s
---
apiVersion: v1
kind: ServiceAccount
metadata:
  name: crossplane
  namespace: %s
---
apiVersion: v1
kind: ServiceAccount
metadata:
  name: rbac-manager
  namespace: %s
`

func getOK(ctx context.Context, url string) (bool, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return false, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return false, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return false, fmt.Errorf("GET %s: %s", url, resp.Status)
	}
	return true, nil
}
