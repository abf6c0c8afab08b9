//go:build e2e

package e2e

import (
	"context"
	"encoding/base64"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/inferno-ai/function-inferno/test/e2e/kube"
)

// livePicker is the real endpoint picker (EPP v1.2.0, built from
// tools/e2e/epp) run as a process on the host against a claim's
// InferencePool: with the rendered Deployment's own arguments (ports and
// the config path moved to the host), the rendered ConfigMap's
// configuration, and the identity of the rendered ServiceAccount (a token
// from the TokenRequest API), so that it can do only what the rendered
// Role lets it. The rendered pod itself lands on kwok, where the scenario's
// Composition places the claim's pods, so its container is fake: the host
// process stands in for that container.
type livePicker struct{ *hostController }

// startLivePicker starts the picker of claim name in ns; nil (and a note)
// when bin/epp is not built.
func startLivePicker(ctx context.Context, t *testing.T, ns, name string) *livePicker {
	t.Helper()
	bin := filepath.Join(binDir(), "epp")
	if _, err := os.Stat(bin); err != nil {
		t.Logf("no %s (make e2e-tools builds it): the live picker check is skipped", bin)
		return nil
	}
	picker := name + "-epp"
	dir := filepath.Join(env.workDir, "picker-"+ns+"-"+name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	kubeconfig := serviceAccountKubeconfig(ctx, t, dir, ns, picker)
	cm, err := env.admin.Typed.CoreV1().ConfigMaps(ns).Get(ctx, picker, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	configFile := filepath.Join(dir, "config.yaml")
	if err := os.WriteFile(configFile, []byte(cm.Data["config.yaml"]), 0o644); err != nil {
		t.Fatal(err)
	}
	d, err := env.admin.Typed.AppsV1().Deployments(ns).Get(ctx, picker, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ports := map[string]string{"--grpc-port": freePort(t), "--grpc-health-port": freePort(t), "--metrics-port": freePort(t), "--config-file": configFile}
	args := append([]string(nil), d.Spec.Template.Spec.Containers[0].Args...)
	for i := 0; i+1 < len(args); i++ {
		if v, ok := ports[args[i]]; ok {
			args[i+1] = v
		}
	}
	return &livePicker{startHostController(t, "epp-"+ns+"-"+name, bin, args,
		[]string{"KUBECONFIG=" + kubeconfig, "NAMESPACE=" + ns, "POD_NAME=" + picker + "-host"})}
}

// waitPodsAdded waits until the picker's log says it added every pod of
// want to its pool's endpoints ("Pod added", which it logs when a pod its
// pool selects is ready), and checks it added no other pod of the claim
// (its own, a pull pod) and was never refused by the API server. Its
// Prometheus gauge inference_pool_ready_pods would be the nicer witness,
// but it counts only pods whose metrics it could scrape, and kwok's pods
// serve none.
func (lp *livePicker) waitPodsAdded(ctx context.Context, t *testing.T, claim string, want []string) {
	t.Helper()
	var added map[string]bool
	err := kube.Eventually(ctx, 2*time.Minute, 500*time.Millisecond, fmt.Sprintf("the live picker adds the pool's servers %v", want), func(ctx context.Context) (bool, string, error) {
		select {
		case <-lp.exited:
			return false, "", fmt.Errorf("the picker exited: %s; see %s", lp.cmd.ProcessState, lp.log)
		default:
		}
		b, err := os.ReadFile(lp.log)
		if err != nil {
			return false, "", err
		}
		if strings.Contains(strings.ToLower(string(b)), "forbidden") {
			return false, "", fmt.Errorf("the API server refused the picker something; see %s", lp.log)
		}
		added = podsAdded(string(b))
		for _, p := range want {
			if !added[p] {
				return false, fmt.Sprintf("added %v; log tail: %s", added, tail(lp.log, 2)), nil
			}
		}
		return true, "", nil
	})
	if err != nil {
		t.Fatalf("%v (log: %s)", err, lp.log)
	}
	for p := range added {
		if strings.HasPrefix(p, claim+"-epp-") || strings.Contains(p, "-pull-") {
			t.Errorf("the picker added pod %s, which is not a server", p)
		}
	}
}

// scheduledWith reports whether the picker built its scheduler with a
// plugin of that type: v1.2.0 logs the scheduler it parsed from its
// configuration ("parsed config") once, at start.
func (lp *livePicker) scheduledWith(t *testing.T, plugin string) bool {
	t.Helper()
	b, err := os.ReadFile(lp.log)
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if strings.Contains(line, `"msg":"parsed config"`) {
			return strings.Contains(line, plugin)
		}
	}
	t.Fatalf("the picker never logged its parsed configuration; see %s", lp.log)
	return false
}

// podsAdded reads the names of the pods an EPP log says it added to its
// datastore. v1.2.0 says so in two ways: "Pod added" from its pod
// reconciler, and, for each endpoint (pod and target port rank) it starts
// tracking, "Starting refresher" with the endpoint named
// <pod>-rank-<n>. Which comes depends on whether the pool or the pod was
// reconciled first (a resync of an already-listed pod logs only the
// refresher), so both count.
func podsAdded(log string) map[string]bool {
	out := map[string]bool{}
	for _, m := range eppAdded.FindAllStringSubmatch(log, -1) {
		name := m[1] + m[2]
		if i := strings.LastIndex(name, "-rank-"); m[2] != "" && i > 0 {
			name = name[:i]
		}
		out[name] = true
	}
	return out
}

// eppAdded matches both lines in an EPP's JSON log (the refresher's
// repeats the "pod" key, as a string, which encoding/json refuses).
var eppAdded = regexp.MustCompile(`"msg":"Pod added".*?"Pod":\{"name":"([^"]+)"|"msg":"Starting refresher","pod":\{"name":"([^"]+)"`)

func freePort(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return strconv.Itoa(l.Addr().(*net.TCPAddr).Port)
}

// tail is the last n lines of a file, joined by " | ".
func tail(path string, n int) string {
	f, err := os.Open(path)
	if err != nil {
		return err.Error()
	}
	defer f.Close()
	b, _ := io.ReadAll(f)
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	out := strings.Join(lines, " | ")
	if len(out) > 600 {
		out = out[len(out)-600:]
	}
	return out
}

func ptrInt64(v int64) *int64 { return &v }

// serviceAccountKubeconfig writes dir/kubeconfig for ServiceAccount sa of
// ns (a token from the TokenRequest API, an hour long), so that a host
// process can do what that account's roles let it and nothing more.
func serviceAccountKubeconfig(ctx context.Context, t *testing.T, dir, ns, sa string) string {
	t.Helper()
	tok, err := env.admin.Typed.CoreV1().ServiceAccounts(ns).CreateToken(ctx, sa, &authenticationv1.TokenRequest{
		Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptrInt64(3600)},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("a token for ServiceAccount %s/%s: %v", ns, sa, err)
	}
	cfg := env.admin.Config
	ca := cfg.TLSClientConfig.CAData
	if len(ca) == 0 && cfg.TLSClientConfig.CAFile != "" {
		if ca, err = os.ReadFile(cfg.TLSClientConfig.CAFile); err != nil {
			t.Fatal(err)
		}
	}
	kubeconfig := filepath.Join(dir, "kubeconfig")
	kc := fmt.Sprintf(`apiVersion: v1
kind: Config
clusters: [{name: e2e, cluster: {server: %q, certificate-authority-data: %s}}]
users: [{name: %s, user: {token: %q}}]
contexts: [{name: %s, context: {cluster: e2e, user: %s, namespace: %s}}]
current-context: %s
`, cfg.Host, base64.StdEncoding.EncodeToString(ca), sa, tok.Status.Token, sa, sa, ns, sa)
	if err := os.WriteFile(kubeconfig, []byte(kc), 0o600); err != nil {
		t.Fatal(err)
	}
	return kubeconfig
}
