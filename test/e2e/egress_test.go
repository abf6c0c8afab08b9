//go:build e2e

package e2e

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/inferno-ai/function-inferno/test/e2e/kube"
)

// The egress scenario's names.
const (
	egressPool        = "real-egress"
	egressComposition = "xinferenceservices-real-egress.inference.inferno.io"
	// egressListedNS is the namespace input.networkPolicy.egress lists (on
	// the listener's port); egressOtherNS one it does not.
	egressListedNS = "team-egress-listed"
	egressOtherNS  = "team-egress-other"
	// egressDNSNS is the scenario's input.networkPolicy.dnsNamespace: the
	// cluster runs no DNS server, so a listener on port 53 stands in.
	egressDNSNS = "team-egress-dns"
	// egressListenerPort is where the listener pods listen.
	egressListenerPort = 8080
)

// --- 35 servers' egress enforced ---------------------------------------------

// serverEgressEnforced runs a claim under input.networkPolicy with two
// egress entries (the host's bridge address on one port, a namespace's
// pods on one port) and a DNS namespace of its own on the real node, with
// kube-router's firewall enforcing the servers' policy, and opens TCP
// connections from the server pod's own network namespace (nsenter into
// the server process's; the packets leave through its veth with its
// address) to six listeners the scenario made: the host's on the listed
// port and on another, a pod of the listed namespace and a pod of another,
// a pod of the DNS namespace on port 53 and on another. Without the engine
// all six answer, so what is refused after is the engine's doing; under it
// the listed ones and DNS's port 53 answer and the others are refused. Every connection is to an
// address on the scenario's own bridge, each try bounded (3 s to connect).
func (s *infernoSuite) serverEgressEnforced(t *testing.T) {
	if env.node == nil {
		t.Skip("no real node (-real-node=false)")
	}
	ctx := context.Background()
	sc := env.summary.start(t, "35 servers' egress enforced (real node)")
	sc.onRealNode(false)
	bin := filepath.Join(binDir(), "kube-router")
	if _, err := os.Stat(bin); err != nil {
		t.Fatalf("no %s: make e2e-tools builds it (%s)", bin, kubeRouterModuleDir)
	}
	for _, tool := range []string{"ipset", "nsenter", "curl"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("this scenario needs %s on the host (Debian: ipset, util-linux, curl): %v", tool, err)
		}
	}
	for _, ns := range []string{realNS, egressListedNS, egressOtherNS, egressDNSNS} {
		if err := env.createTeamNamespace(ctx, ns); err != nil {
			t.Fatal(err)
		}
	}
	defer func() {
		for _, ns := range []string{egressListedNS, egressOtherNS, egressDNSNS} {
			_ = env.admin.Typed.CoreV1().Namespaces().Delete(context.Background(), ns, metav1.DeleteOptions{})
		}
	}()

	// The listeners: two on the host's bridge address, one pod in each
	// namespace.
	allowedHost, deniedHost := startHostListener(t, env.node.IP), startHostListener(t, env.node.IP)
	listedPod := startListenerPod(ctx, t, egressListedNS, "egress-listener", egressListenerPort)
	otherPod := startListenerPod(ctx, t, egressOtherNS, "egress-listener", egressListenerPort)
	dnsPod := startListenerPod(ctx, t, egressDNSNS, "egress-dns", 53, egressListenerPort)

	input := realNodeInput()
	input["networkPolicy"] = map[string]any{"enabled": true, "dnsNamespace": egressDNSNS, "egress": []any{
		map[string]any{"cidr": env.node.IP + "/32", "ports": []any{map[string]any{"port": int64(allowedHost.port)}}},
		map[string]any{"namespace": egressListedNS, "ports": []any{map[string]any{"port": int64(egressListenerPort)}}},
	}}
	applyComposition(ctx, t, "composition.yaml", egressComposition, egressPool, input)
	w := publishWeights(t, "egress-v1", "inferno egress v1")
	const name = "egress-fenced"
	c := realClaim(t, name, w.URI, "1", 1)
	setField(c, map[string]any{"matchLabels": map[string]any{poolLabel: egressPool}}, "spec", "compositionSelector")
	applyClaim(ctx, t, c)
	defer deleteClaimsAndWait(context.Background(), t, realNS, []string{name})
	waitClaimsReady(ctx, t, realNS, []string{name}, 3*time.Minute)
	pol, err := env.admin.Typed.NetworkingV1().NetworkPolicies(realNS).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(pol.Spec.Egress) != 3 {
		t.Fatalf("the servers' policy has egress rules %+v, want DNS and the two entries", pol.Spec.Egress)
	}
	pods := claimServerPods(ctx, t, realNS, name)
	if len(pods) != 1 {
		t.Fatalf("%d server pods, want 1", len(pods))
	}
	serverIP, pid := pods[0].Status.PodIP, containerPID(t, &pods[0])

	targets := []egressTarget{
		{"host, listed port", net.JoinHostPort(env.node.IP, strconv.Itoa(allowedHost.port)), true},
		{"pod of the listed namespace", net.JoinHostPort(listedPod, strconv.Itoa(egressListenerPort)), true},
		{"host, another port", net.JoinHostPort(env.node.IP, strconv.Itoa(deniedHost.port)), false},
		{"pod of another namespace", net.JoinHostPort(otherPod, strconv.Itoa(egressListenerPort)), false},
		{"DNS namespace's pod, port 53", net.JoinHostPort(dnsPod, "53"), true},
		{"DNS namespace's pod, another port", net.JoinHostPort(dnsPod, strconv.Itoa(egressListenerPort)), false},
	}
	// Without an engine every listener answers the server (a few tries: a
	// listener pod is Running a moment before it listens).
	for _, tg := range targets {
		var why string
		err := kube.Eventually(ctx, 20*time.Second, time.Second, "the server → "+tg.what+" without an engine", func(ctx context.Context) (bool, string, error) {
			var ok bool
			ok, why = dialFromNetns(ctx, pid, tg.addr)
			return ok, why, nil
		})
		if err != nil {
			t.Fatalf("without an engine, the server could not reach %s (%s): %s; the bridge should let everything through", tg.what, tg.addr, why)
		}
	}
	deniedBefore := deniedHost.accepted.Load()

	start := time.Now()
	rulesAt := startKubeRouter(ctx, t, bin, serverIP)
	var verdicts []string
	for _, tg := range targets {
		var why string
		// A few bounded tries each, so that a slow first sync fails with
		// what the server got rather than on one sample.
		err := kube.Eventually(ctx, 30*time.Second, time.Second, "the server → "+tg.what, func(ctx context.Context) (bool, string, error) {
			var ok bool
			ok, why = dialFromNetns(ctx, pid, tg.addr)
			return ok == tg.admitted, why, nil
		})
		if err != nil {
			t.Errorf("under the engine, the server → %s (%s): %s, want admitted=%t", tg.what, tg.addr, why, tg.admitted)
		}
		verdicts = append(verdicts, fmt.Sprintf("%s → %s", tg.what, why))
	}
	if n := deniedHost.accepted.Load() - deniedBefore; n > 0 {
		t.Errorf("the host's listener on the port no entry lists accepted %d connections under the engine", n)
	}
	sc.note("engine kube-router (firewall only), egress entries %s/32:%d and namespace %s:%d, DNS namespace %s; before it the server reached all %d listeners; its rules %.1fs after start; under it: %s (%.1fs after start)",
		env.node.IP, allowedHost.port, egressListedNS, egressListenerPort, egressDNSNS, len(targets), rulesAt.Seconds(), strings.Join(verdicts, "; "), time.Since(start).Seconds())
}

// egressTarget is a listener the server tries, and whether the servers'
// policy admits it.
type egressTarget struct {
	what, addr string
	admitted   bool
}

// dialFromNetns asks addr over HTTP with curl run in the network
// namespace of process pid (3 s to connect, 5 s in all) and says whether
// a connection was made (any HTTP status), with curl's verdict: the
// status, or its exit code and error (7: refused, 28: timed out).
func dialFromNetns(ctx context.Context, pid int, addr string) (bool, string) {
	cmd := exec.CommandContext(ctx, "nsenter", "-t", strconv.Itoa(pid), "-n", "--",
		"curl", "-sS", "-o", "/dev/null", "-w", "%{http_code}", "--connect-timeout", "3", "-m", "5", "http://"+addr+"/")
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	code := strings.TrimSpace(string(out))
	if err == nil && code != "" && code != "000" {
		return true, "HTTP " + code
	}
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		return false, fmt.Sprintf("curl exit %d: %s", exit.ExitCode(), truncate(strings.TrimSpace(stderr.String()), 120))
	}
	return false, fmt.Sprintf("%v: %s", err, truncate(strings.TrimSpace(stderr.String()), 120))
}

// hostListener is an HTTP listener of the test on the host, counting the
// connections it accepts.
type hostListener struct {
	port     int
	accepted atomic.Int64
}

// startHostListener listens on ip at a free port and answers every
// request 204 until the scenario ends.
func startHostListener(t *testing.T, ip string) *hostListener {
	t.Helper()
	ln, err := net.Listen("tcp", net.JoinHostPort(ip, "0"))
	if err != nil {
		t.Fatal(err)
	}
	h := &hostListener{port: ln.Addr().(*net.TCPAddr).Port}
	srv := &http.Server{
		Handler:           http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusNoContent) }),
		ReadHeaderTimeout: 5 * time.Second,
	}
	go func() { _ = srv.Serve(countingListener{ln, &h.accepted}) }()
	t.Cleanup(func() { _ = srv.Close() })
	return h
}

// countingListener counts the connections it accepts.
type countingListener struct {
	net.Listener
	n *atomic.Int64
}

func (l countingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err == nil {
		l.n.Add(1)
	}
	return c, err
}

// startListenerPod runs the fake model server in ns on the real node as a
// plain listener on each port, one container a port (it answers HTTP
// before it has weights: /healthz says it is not ready), and returns its
// pod IP. A port below 1024 is opened to the pod's non-root user by the
// safe sysctl net.ipv4.ip_unprivileged_port_start.
func startListenerPod(ctx context.Context, t *testing.T, ns, name string, ports ...int) string {
	t.Helper()
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec:       *harnessJob(ns, name, "", "").Spec.Template.Spec.DeepCopy(),
	}
	onRealNode(&pod.Spec)
	base := pod.Spec.Containers[0]
	pod.Spec.Containers = nil
	for _, port := range ports {
		c := *base.DeepCopy()
		c.Name, c.Image, c.ImagePullPolicy = "listen-"+strconv.Itoa(port), fakeServerImage, corev1.PullIfNotPresent
		c.Env = []corev1.EnvVar{{Name: "MODEL_DIR", Value: "/nonexistent"}, {Name: "PORT", Value: strconv.Itoa(port)}}
		pod.Spec.Containers = append(pod.Spec.Containers, c)
		if port < 1024 {
			pod.Spec.SecurityContext.Sysctls = []corev1.Sysctl{{Name: "net.ipv4.ip_unprivileged_port_start", Value: strconv.Itoa(port)}}
		}
	}
	pod.Spec.TerminationGracePeriodSeconds = ptr.To[int64](0)
	pods := env.admin.Typed.CoreV1().Pods(ns)
	if _, err := pods.Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = pods.Delete(context.Background(), name, metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](0)})
	})
	var ip string
	err := kube.Eventually(ctx, time.Minute, 250*time.Millisecond, "listener "+ns+"/"+name+" running", func(ctx context.Context) (bool, string, error) {
		p, err := pods.Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, "", err
		}
		ip = p.Status.PodIP
		return p.Status.Phase == corev1.PodRunning && ip != "", string(p.Status.Phase), nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return ip
}
