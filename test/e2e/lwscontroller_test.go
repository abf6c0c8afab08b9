//go:build e2e

package e2e

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	admissionv1 "k8s.io/api/admissionregistration/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/yaml"

	"github.com/inferno-ai/function-inferno/test/e2e/controlplane"
	"github.com/inferno-ai/function-inferno/test/e2e/kube"
)

// liveLWS is the LeaderWorkerSet controller of the pinned sigs.k8s.io/lws
// (bin/lws-controller, built from tools/e2e/lws) run on the host the way its
// release manifests deploy it, less the Deployment:
//   - as ServiceAccount lws-system/lws-controller-manager bound to the
//     module's own ClusterRole (config/rbac/role.yaml), through a token
//     (controllerIdentity);
//   - with its four webhooks (config/webhook/manifests.yaml with the
//     objectSelector patches config/webhook applies to the pod webhooks),
//     called by the API server at https://127.0.0.1:<port> instead of
//     through a Service, with a serving certificate from a CA of the test's.
//     Its internal certificate management is off: it would rewrite the
//     configurations to point at its in-cluster Service.
//
// The pod webhook is what makes LWS work: it labels each pod with its group
// and worker index (the claim's Service selects worker index 0) and gives
// workers LWS_LEADER_ADDRESS. kwok runs the pods it creates.
type liveLWS struct {
	*hostController
	webhooks []string
}

const (
	lwsNamespace      = "lws-system"
	lwsServiceAccount = "lws-controller-manager"
	// lwsNamePrefix names the ClusterRole and the webhook configurations
	// as the release's kustomization does (namePrefix "lws-").
	lwsNamePrefix = "lws-"
)

// startLWSController starts the controller and waits until its webhooks
// answer. Its cleanup removes the webhook configurations before it stops
// the process: the pod webhook fails closed.
func startLWSController(ctx context.Context, t *testing.T) *liveLWS {
	t.Helper()
	bin := filepath.Join(binDir(), "lws-controller")
	if _, err := os.Stat(bin); err != nil {
		t.Fatalf("no %s: make e2e-tools builds it (tools/e2e/lws)", bin)
	}
	module := moduleDir(t, "sigs.k8s.io/lws", lwsModuleDir)
	dir := filepath.Join(env.workDir, "lws-controller")
	certDir := filepath.Join(dir, "certs")
	if err := os.MkdirAll(certDir, 0o755); err != nil {
		t.Fatal(err)
	}

	// Identity: the module's ClusterRole, nothing more.
	controllerIdentity(ctx, t, lwsNamespace, lwsServiceAccount, filepath.Join(module, "config", "rbac", "role.yaml"), lwsNamePrefix)
	kubeconfig := serviceAccountKubeconfig(ctx, t, dir, lwsNamespace, lwsServiceAccount)

	// Serving certificate for 127.0.0.1, as tls.crt/tls.key (controller-
	// runtime's webhook server's file names).
	ca, err := controlplane.NewCertificateAuthority("lws-webhook-ca (e2e)")
	if err != nil {
		t.Fatal(err)
	}
	kp, err := ca.ServingCert("lws-webhook", []string{"localhost"}, []net.IP{net.ParseIP("127.0.0.1")})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := kp.WriteFiles(certDir, "tls"); err != nil {
		t.Fatal(err)
	}

	webhookPort, probePort := freePort(t), freePort(t)
	config := filepath.Join(dir, "config.yaml")
	cfg := fmt.Sprintf(`apiVersion: config.lws.x-k8s.io/v1alpha1
kind: Configuration
leaderElection:
  leaderElect: false
internalCertManagement:
  enable: false
webhook:
  host: 127.0.0.1
  port: %s
  certDir: %s
health:
  healthProbeBindAddress: 127.0.0.1:%s
`, webhookPort, certDir, probePort)
	if err := os.WriteFile(config, []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}

	// Metrics off: its secure metrics server would want TokenReviews, which
	// its ClusterRole does not grant (the release binds a separate proxy
	// role for them).
	l := &liveLWS{hostController: startHostController(t, "lws-controller", bin,
		[]string{"--config=" + config, "--metrics-bind-address=0", "--zap-log-level=info"},
		[]string{"KUBECONFIG=" + kubeconfig})}
	// Webhooks first, before the process stops (cleanups run last in,
	// first out): with the process gone they would refuse every LWS pod
	// (failurePolicy Fail).
	t.Cleanup(func() { l.removeWebhooks(context.Background(), t) })

	// Its webhook server must answer before the API server is told to call
	// it, or the first LWS would be refused. Any HTTP answer over TLS with
	// our CA will do.
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(ca.CertPEM)
	client := &http.Client{Timeout: 2 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
	l.waitReady(ctx, t, "http://127.0.0.1:"+probePort+"/readyz", func() (bool, string) {
		resp, err := client.Get("https://127.0.0.1:" + webhookPort + "/validate--v1-pod")
		if err != nil {
			return false, "webhook server: " + err.Error()
		}
		resp.Body.Close()
		return true, ""
	})
	l.installWebhooks(ctx, t, module, "https://127.0.0.1:"+webhookPort, ca.CertPEM)
	return l
}

// jsonPatchReplace is one operation of config/webhook's patches, which
// replace a whole webhook by index.
type jsonPatchReplace struct {
	Op    string         `json:"op"`
	Path  string         `json:"path"`
	Value map[string]any `json:"value"`
}

var webhookIndex = regexp.MustCompile(`^/webhooks/(\d+)$`)

// installWebhooks creates the module's webhook configurations, patched as
// its kustomization patches them, each webhook called at base+path with
// caBundle ca.
func (l *liveLWS) installWebhooks(ctx context.Context, t *testing.T, module, base string, ca []byte) {
	t.Helper()
	dir := filepath.Join(module, "config", "webhook")
	objs, err := kube.DecodeYAML(mustRead(t, filepath.Join(dir, "manifests.yaml")))
	if err != nil {
		t.Fatal(err)
	}
	// patch applies one patch file's "replace /webhooks/N" operations.
	patch := func(o map[string]any, file string) {
		var ops []jsonPatchReplace
		if err := yaml.Unmarshal(mustRead(t, filepath.Join(dir, file)), &ops); err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		hooks, _ := o["webhooks"].([]any)
		for _, op := range ops {
			m := webhookIndex.FindStringSubmatch(op.Path)
			var i int
			if op.Op != "replace" || m == nil {
				t.Fatalf("%s: %s %s is not the replace of a webhook this test applies", file, op.Op, op.Path)
			}
			fmt.Sscan(m[1], &i)
			if i >= len(hooks) {
				t.Fatalf("%s: %s: only %d webhooks", file, op.Path, len(hooks))
			}
			hooks[i] = op.Value
		}
	}
	point := func(cc *admissionv1.WebhookClientConfig) {
		if cc.Service == nil || cc.Service.Path == nil {
			t.Fatalf("a webhook without a service path: %+v", cc)
		}
		url := base + *cc.Service.Path
		cc.Service, cc.URL, cc.CABundle = nil, &url, ca
	}
	for _, o := range objs {
		switch o.GetKind() {
		case "MutatingWebhookConfiguration":
			patch(o.Object, "mutating-patch.yaml")
			var w admissionv1.MutatingWebhookConfiguration
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(o.Object, &w); err != nil {
				t.Fatal(err)
			}
			w.Name = lwsNamePrefix + w.Name
			for i := range w.Webhooks {
				point(&w.Webhooks[i].ClientConfig)
			}
			if _, err := env.admin.Typed.AdmissionregistrationV1().MutatingWebhookConfigurations().Create(ctx, &w, metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
			l.webhooks = append(l.webhooks, "mutating/"+w.Name)
		case "ValidatingWebhookConfiguration":
			patch(o.Object, "validating-patch.yaml")
			var w admissionv1.ValidatingWebhookConfiguration
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(o.Object, &w); err != nil {
				t.Fatal(err)
			}
			w.Name = lwsNamePrefix + w.Name
			for i := range w.Webhooks {
				point(&w.Webhooks[i].ClientConfig)
			}
			if _, err := env.admin.Typed.AdmissionregistrationV1().ValidatingWebhookConfigurations().Create(ctx, &w, metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
			l.webhooks = append(l.webhooks, "validating/"+w.Name)
		default:
			t.Fatalf("config/webhook/manifests.yaml: unexpected %s", o.GetKind())
		}
	}
	if len(l.webhooks) != 2 {
		t.Fatalf("config/webhook/manifests.yaml: %d configurations, want 2", len(l.webhooks))
	}
}

func (l *liveLWS) removeWebhooks(ctx context.Context, t *testing.T) {
	for _, w := range l.webhooks {
		kind, name, _ := strings.Cut(w, "/")
		var err error
		if kind == "mutating" {
			err = env.admin.Typed.AdmissionregistrationV1().MutatingWebhookConfigurations().Delete(ctx, name, metav1.DeleteOptions{})
		} else {
			err = env.admin.Typed.AdmissionregistrationV1().ValidatingWebhookConfigurations().Delete(ctx, name, metav1.DeleteOptions{})
		}
		if err != nil && !apierrors.IsNotFound(err) {
			t.Errorf("deleting webhook configuration %s: %v", w, err)
		}
	}
}
