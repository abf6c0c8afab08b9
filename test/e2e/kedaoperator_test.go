//go:build e2e

package e2e

import (
	"context"
	"encoding/json"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/inferno-ai/function-inferno/test/e2e/controlplane"
)

// kedaModuleDir is the tools module that pins KEDA's operator (v2.17.0,
// the newest KEDA whose go.mod this toolchain accepts).
const kedaModuleDir = "tools/e2e/keda"

const (
	kedaNamespace      = "keda"
	kedaServiceAccount = "keda-operator"
)

// liveKEDA is KEDA's operator (bin/keda-operator, built from
// tools/e2e/keda) run on the host the way its release deploys it, less the
// Deployment: as ServiceAccount keda/keda-operator bound to the module's
// own ClusterRole and Role (config/rbac/role.yaml), leader election and
// certificate rotation off, its gRPC metrics service (for the metrics
// adapter, which does not run) on a certificate of the test's CA. It scales
// a ScaledObject's target between 0 and its minReplicaCount itself,
// through the scale subresource, from what its scalers say; going above
// that is the HPA's work through the external metrics API, which no
// adapter serves here.
type liveKEDA struct{ *hostController }

// startKEDA starts the operator with the module's CRDs installed and waits
// until it is ready. The CRDs are deleted when the scenario ends, after
// the operator stops; the test must delete its ScaledObjects before then
// (the operator's finalizer).
func startKEDA(ctx context.Context, t *testing.T) *liveKEDA {
	t.Helper()
	bin := filepath.Join(binDir(), "keda-operator")
	if _, err := os.Stat(bin); err != nil {
		t.Fatalf("no %s: make e2e-tools builds it (tools/e2e/keda)", bin)
	}
	module := moduleDir(t, "github.com/kedacore/keda/v2", kedaModuleDir)

	// Every CRD the operator watches: it starts a controller for each.
	crds, err := filepath.Glob(filepath.Join(module, "config", "crd", "bases", "*.yaml"))
	if err != nil || len(crds) == 0 {
		t.Fatalf("KEDA's CRDs in %s: %v", module, err)
	}
	var names []string
	for _, f := range crds {
		// Scenario 26 installs a newer ScaledObject CRD and deletes it as
		// it ends.
		if strings.HasSuffix(f, "keda.sh_scaledobjects.yaml") {
			waitCRDGone(ctx, t, "scaledobjects.keda.sh")
		}
		names = append(names, applyCRDFile(ctx, t, f))
	}
	t.Cleanup(func() {
		for _, n := range names {
			if err := env.admin.Delete(context.Background(), crdGVK, "", n); err != nil && !apierrors.IsNotFound(err) {
				t.Logf("deleting CRD %s: %v", n, err)
			}
		}
	})

	dir := filepath.Join(env.workDir, "keda-operator")
	certDir, caDir := filepath.Join(dir, "certs"), filepath.Join(dir, "ca")
	for _, d := range []string{certDir, caDir} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	controllerIdentity(ctx, t, kedaNamespace, kedaServiceAccount, filepath.Join(module, "config", "rbac", "role.yaml"), "")
	kubeconfig := serviceAccountKubeconfig(ctx, t, dir, kedaNamespace, kedaServiceAccount)

	// The gRPC metrics service refuses to start without ca.crt, tls.crt
	// and tls.key in its certificate directory.
	ca, err := controlplane.NewCertificateAuthority("keda-ca (e2e)")
	if err != nil {
		t.Fatal(err)
	}
	kp, err := ca.ServingCert("keda-operator", []string{"keda-operator.keda.svc", "localhost"}, []net.IP{net.ParseIP("127.0.0.1")})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := kp.WriteFiles(certDir, "tls"); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(certDir, "ca.crt"), ca.CertPEM, 0o600); err != nil {
		t.Fatal(err)
	}

	probePort := freePort(t)
	// All namespaces; the cluster objects' namespace, which it would read
	// from its pod's ServiceAccount mount.
	k := &liveKEDA{startHostController(t, "keda-operator", bin, []string{
		"--kubeconfig=" + kubeconfig,
		"--leader-elect=false",
		"--metrics-bind-address=127.0.0.1:" + freePort(t),
		"--health-probe-bind-address=127.0.0.1:" + probePort,
		"--metrics-service-bind-address=127.0.0.1:" + freePort(t),
		"--cert-dir=" + certDir,
		"--enable-cert-rotation=false",
		"--ca-dir=" + caDir,
		"--zap-encoder=console",
		"--zap-time-encoding=iso8601",
	}, []string{"WATCH_NAMESPACE=", "KEDA_CLUSTER_OBJECT_NAMESPACE=" + kedaNamespace, "POD_NAMESPACE=" + kedaNamespace})}
	k.waitReady(ctx, t, "http://127.0.0.1:"+probePort+"/readyz")
	return k
}

// fakePrometheus answers Prometheus's instant-query API
// (GET /api/v1/query) on 127.0.0.1 with one sample of the value the test
// sets, in the vector form KEDA's prometheus scaler reads (the value a
// JSON string). It records the queries it was asked.
type fakePrometheus struct {
	URL string

	mu      sync.Mutex
	value   float64
	queries map[string]int
}

func startFakePrometheus(t *testing.T) *fakePrometheus {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &fakePrometheus{URL: "http://" + l.Addr().String(), queries: map[string]int{}}
	mux := http.NewServeMux()
	mux.HandleFunc("/api/v1/query", func(w http.ResponseWriter, r *http.Request) {
		p.mu.Lock()
		p.queries[r.URL.Query().Get("query")]++
		v := p.value
		p.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{
			"status": "success",
			"data": map[string]any{
				"resultType": "vector",
				"result": []any{map[string]any{
					"metric": map[string]any{},
					"value":  []any{float64(time.Now().Unix()), strconv.FormatFloat(v, 'f', -1, 64)},
				}},
			},
		})
	})
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = srv.Serve(l) }()
	t.Cleanup(func() { _ = srv.Close() })
	return p
}

// set is the value every later query answers.
func (p *fakePrometheus) set(v float64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.value = v
}

// asked is how many times query was asked.
func (p *fakePrometheus) asked(query string) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.queries[query]
}

// others are the queries asked other than query.
func (p *fakePrometheus) others(query string) []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []string
	for q := range p.queries {
		if q != query {
			out = append(out, q)
		}
	}
	return out
}
