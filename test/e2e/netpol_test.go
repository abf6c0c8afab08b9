//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"maps"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"

	"github.com/inferno-ai/function-inferno/test/e2e/controlplane"
	"github.com/inferno-ai/function-inferno/test/e2e/kube"
	"github.com/inferno-ai/function-inferno/test/e2e/realnode"
)

// The NetworkPolicy scenario's names.
const (
	netpolPool        = "real-netpol"
	netpolComposition = "xinferenceservices-real-netpol.inference.inferno.io"
	// netpolOtherNS is a namespace the servers' policy does not admit.
	netpolOtherNS = "team-netpol-other"
	// kubeRouterModule is the NetworkPolicy engine's module, pinned by
	// the tools module kubeRouterModuleDir.
	kubeRouterModule    = "github.com/cloudnativelabs/kube-router/v2"
	kubeRouterModuleDir = "tools/e2e/kuberouter"
	// kubeRouterRBAC is the release manifest whose ClusterRole the engine
	// runs under (every manifest of the release that has one has this
	// one; the firewall-only manifest has none and mounts a kubeconfig).
	kubeRouterRBAC = "daemonset/generic-kuberouter.yaml"
)

// kubeRouterPorts are the ports kube-router listens on with the parts it
// must not run, or that this scenario turns off: BGP, GoBGP's gRPC API,
// its health check, pprof.
var kubeRouterPorts = []int{179, 50051, 20244, 6060}

// --- 33 NetworkPolicy enforced ------------------------------------------------

// networkPolicyEnforced runs a claim under input.networkPolicy on the real
// node with a NetworkPolicy engine that enforces what the function renders
// (kube-router's firewall, on the host, with its router and service proxy
// off): a client pod in another namespace reaches the servers before the
// engine runs and is refused after, at the Service and at the pod IP; a
// client pod in the claim's namespace reaches them throughout; a second
// claim pulls (egress to the origin) and passes its probes under it. The
// engine changes the host's filter table and ipsets and nothing else (no
// route, rule, link or listener); when it stops, its chains and sets go.
func (s *infernoSuite) networkPolicyEnforced(t *testing.T) {
	if env.node == nil {
		t.Skip("no real node (-real-node=false)")
	}
	ctx := context.Background()
	sc := env.summary.start(t, "33 NetworkPolicy enforced (real node)")
	sc.onRealNode(false)
	bin := filepath.Join(binDir(), "kube-router")
	if _, err := os.Stat(bin); err != nil {
		t.Fatalf("no %s: make e2e-tools builds it (%s)", bin, kubeRouterModuleDir)
	}
	if _, err := exec.LookPath("ipset"); err != nil {
		t.Fatalf("kube-router keeps its pod sets with the ipset command, which is missing (Debian: apt-get install ipset; .ci/run installs it): %v", err)
	}
	for _, ns := range []string{realNS, netpolOtherNS} {
		if err := env.createTeamNamespace(ctx, ns); err != nil {
			t.Fatal(err)
		}
	}
	defer func() {
		_ = env.admin.Typed.CoreV1().Namespaces().Delete(context.Background(), netpolOtherNS, metav1.DeleteOptions{})
	}()

	input := realNodeInput()
	input["networkPolicy"] = map[string]any{"enabled": true}
	applyComposition(ctx, t, "composition.yaml", netpolComposition, netpolPool, input)
	w := publishWeights(t, "netpol-v1", "inferno netpol v1")
	const name = "fenced"
	c := realClaim(t, name, w.URI, "1", 1)
	setField(c, map[string]any{"matchLabels": map[string]any{poolLabel: netpolPool}}, "spec", "compositionSelector")
	applyClaim(ctx, t, c)
	defer deleteClaimsAndWait(context.Background(), t, realNS, []string{name})
	waitClaimsReady(ctx, t, realNS, []string{name}, 3*time.Minute)
	pols, err := env.admin.Typed.NetworkingV1().NetworkPolicies(realNS).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var polNames []string
	for _, p := range pols.Items {
		polNames = append(polNames, p.Name)
	}
	url := serviceURL(ctx, t, realNS, name) + "/v1/models"
	serverIP := serverPodIP(ctx, t, realNS, name)

	// Without an engine the policies are objects, nothing more: the real
	// node's bridge lets the other namespace in. This is what makes the
	// denial below the engine's doing.
	if code, _ := clientRequest(ctx, t, netpolOtherNS, "before", url); code != "200" {
		t.Fatalf("without an engine, a pod of %s asked %s: %s, want 200 (the bridge enforces nothing)", netpolOtherNS, url, code)
	}

	host := recordHostNetwork(t)
	start := time.Now()
	rulesAt := startKubeRouter(ctx, t, bin, serverIP)
	// The rules are in place: the first request must be refused. A few
	// bounded tries all the same, so that a slow first sync fails with what
	// the client got rather than on one sample.
	var denied string
	err = kube.Eventually(ctx, 30*time.Second, time.Second, "the other namespace denied", func(ctx context.Context) (bool, string, error) {
		denied, _ = clientRequest(ctx, t, netpolOtherNS, fmt.Sprintf("denied-%d", time.Since(start).Milliseconds()), url)
		return denied != "200", "answered " + denied, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	deniedAt := time.Since(start)
	direct, _ := clientRequest(ctx, t, netpolOtherNS, "denied-direct", fmt.Sprintf("http://%s:8080/v1/models", serverIP))
	if direct == "200" {
		t.Errorf("a pod of %s reached the server's pod IP directly under the engine", netpolOtherNS)
	}
	// The engine learns a new pod's IP from the API server, so the first
	// packets of a pod it has not synced yet meet the policy without it:
	// this client retries a refused connection for a while, and the note
	// says how often it was refused.
	admitted, refusedFirst := clientRequest(ctx, t, realNS, "admitted", url, "--retry", "10", "--retry-connrefused", "--retry-delay", "1")
	if admitted != "200" {
		t.Errorf("a pod of the claim's namespace %s asked %s under the engine: %s, want 200", realNS, url, admitted)
	}

	// A second claim pulls and starts under the engine: the pull's egress
	// to the origin and the kubelet's probes pass it.
	w2 := publishWeights(t, "netpol-v2", "inferno netpol v2")
	c2 := realClaim(t, name+"-2", w2.URI, "1", 1)
	setField(c2, map[string]any{"matchLabels": map[string]any{poolLabel: netpolPool}}, "spec", "compositionSelector")
	start2 := time.Now()
	applyClaim(ctx, t, c2)
	defer deleteClaimsAndWait(context.Background(), t, realNS, []string{name + "-2"})
	waitClaimsReady(ctx, t, realNS, []string{name + "-2"}, 3*time.Minute)
	if changed := host.changes(); len(changed) > 0 {
		t.Errorf("kube-router, with only its firewall on, changed the host beyond its filter table and ipsets:\n%s", strings.Join(changed, "\n"))
	}
	sc.note("engine kube-router v2.1.0 (firewall only); policies %v; before it: other namespace → 200; with it: its rules for the server %.1fs after start, other namespace → %s via the Service (observed %.1fs after start), → %s at the pod IP; claim's namespace → %s (after %d refused tries, 1 s apart, while the engine learnt the new client's IP); a claim pulled and served under it in %.1fs",
		polNames, rulesAt.Seconds(), denied, deniedAt.Seconds(), direct, admitted, refusedFirst, time.Since(start2).Seconds())
}

// startKubeRouter runs kube-router's NetworkPolicy firewall for the real
// node as its release runs it, less the pod: its own ServiceAccount bound
// to the release's ClusterRole, with the router, the service proxy, the
// health and metrics ports off, IPv4 only. It returns how long after its
// start the server's pod had its chain with the REJECT rule that denies
// what no policy admits (read from the filter table every 100 ms). When
// the scenario ends the engine stops and the chains and ipsets it made go
// (kube-router leaves them behind when it stops); a later scenario's pod
// could get one of these pod IPs.
func startKubeRouter(ctx context.Context, t *testing.T, bin, serverIP string) time.Duration {
	t.Helper()
	module := moduleDir(t, kubeRouterModule, kubeRouterModuleDir)
	dir := filepath.Join(env.workDir, "kube-router")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	objs, err := kube.DecodeYAML(mustRead(t, filepath.Join(module, kubeRouterRBAC)))
	if err != nil {
		t.Fatal(err)
	}
	var roles []string
	for _, o := range objs {
		if o.GetKind() == "ClusterRole" {
			b, err := yaml.Marshal(o.Object)
			if err != nil {
				t.Fatal(err)
			}
			roles = append(roles, string(b))
		}
	}
	if len(roles) != 1 {
		t.Fatalf("%s: %d ClusterRoles, want kube-router's one", kubeRouterRBAC, len(roles))
	}
	rolesFile := filepath.Join(dir, "roles.yaml")
	if err := os.WriteFile(rolesFile, []byte(roles[0]), 0o644); err != nil {
		t.Fatal(err)
	}
	const ns, sa = "kube-router", "kube-router"
	controllerIdentity(ctx, t, ns, sa, rolesFile, "e2e-")
	kubeconfig := serviceAccountKubeconfig(ctx, t, dir, ns, sa)

	// Registered before the engine starts, so that it runs after the
	// engine's stop (cleanups run last first).
	fw := realnode.RecordFirewall()
	t.Cleanup(func() {
		if err := fw.Restore(); err != nil {
			t.Errorf("removing kube-router's chains and ipsets: %v", err)
		}
		if l := fw.Leftovers(); len(l) > 0 {
			t.Errorf("kube-router left on the host after its cleanup: %v", l)
		}
	})
	start := time.Now()
	h := startHostController(t, "kube-router", bin, []string{
		"--kubeconfig=" + kubeconfig,
		"--hostname-override=" + RealNodeName,
		"--run-firewall=true", "--run-router=false", "--run-service-proxy=false", "--run-loadbalancer=false",
		"--enable-ipv4=true", "--enable-ipv6=false",
		"--service-cluster-ip-range=" + controlplane.ServiceCIDR,
		"--health-port=0", "--metrics-port=0",
		"--v=1",
	}, nil)
	var rulesAt time.Duration
	err = kube.Eventually(ctx, time.Minute, 100*time.Millisecond, "kube-router's rules for the server's pod", func(ctx context.Context) (bool, string, error) {
		select {
		case <-h.exited:
			return false, "", fmt.Errorf("kube-router exited: %s; log: %s", h.cmd.ProcessState, tail(h.log, 10))
		default:
		}
		chain, why := podFirewallChain(ctx, serverIP)
		if chain == "" {
			return false, why, nil
		}
		out, err := exec.CommandContext(ctx, "iptables", "-w", "-S", chain).CombinedOutput()
		if err != nil || !strings.Contains(string(out), "-j REJECT") {
			return false, "chain " + chain + " has no REJECT yet: " + truncate(string(out), 200), nil
		}
		rulesAt = time.Since(start)
		return true, "", nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if r := h.refusals(); len(r) > 0 {
		t.Errorf("the API server refused kube-router (its release's ClusterRole falls short): %v", r)
	}
	return rulesAt
}

// podFirewallChain is the chain kube-router's FORWARD chain sends traffic
// to pod IP ip through, or "" and what there is instead.
func podFirewallChain(ctx context.Context, ip string) (string, string) {
	out, err := exec.CommandContext(ctx, "iptables", "-w", "-S", "KUBE-ROUTER-FORWARD").CombinedOutput()
	if err != nil {
		return "", "no KUBE-ROUTER-FORWARD yet: " + truncate(string(out), 120)
	}
	for _, line := range strings.Split(string(out), "\n") {
		// -A KUBE-ROUTER-FORWARD -d IP/32 -m comment --comment "…" -j CHAIN:
		// the jump comes last, and the comment has spaces.
		if j := strings.LastIndex(line, " -j "); j >= 0 && strings.Contains(line, " -d "+ip+"/32 ") {
			return strings.TrimSpace(line[j+4:]), ""
		}
	}
	return "", "no rule for " + ip + " in KUBE-ROUTER-FORWARD: " + truncate(string(out), 200)
}

// hostNetwork is what a firewall-only kube-router must leave alone: the
// host's IPv4 routes and rules of every table, its links other than the
// pods' veths (which come and go with the scenario's pods), and
// listeners on kube-router's own ports.
type hostNetwork struct {
	t      *testing.T
	before map[string]string
}

func recordHostNetwork(t *testing.T) *hostNetwork {
	t.Helper()
	return &hostNetwork{t: t, before: readHostNetwork(t)}
}

func readHostNetwork(t *testing.T) map[string]string {
	t.Helper()
	out := map[string]string{}
	for key, args := range map[string][]string{
		"routes": {"-4", "route", "show", "table", "all"},
		"rules":  {"-4", "rule", "show"},
		"links":  {"-o", "link", "show"},
	} {
		b, err := exec.Command("ip", args...).Output()
		if err != nil {
			t.Fatalf("ip %s: %v", strings.Join(args, " "), err)
		}
		var lines []string
		for _, l := range strings.Split(string(b), "\n") {
			if key == "links" {
				// "N: name@peer: <flags> ... state ...": the name, for
				// links that are not a pod's veth.
				f := strings.Fields(l)
				if len(f) < 2 || strings.HasPrefix(f[1], "veth") {
					continue
				}
				l = strings.TrimSuffix(strings.SplitN(f[1], "@", 2)[0], ":")
			}
			lines = append(lines, l)
		}
		slices.Sort(lines)
		out[key] = strings.Join(lines, "\n")
	}
	for _, port := range kubeRouterPorts {
		if c, err := net.DialTimeout("tcp", fmt.Sprintf("127.0.0.1:%d", port), 200*time.Millisecond); err == nil {
			c.Close()
			out[fmt.Sprintf("listener on port %d", port)] = "open"
		}
	}
	return out
}

// changes lists what differs from the record.
func (h *hostNetwork) changes() []string {
	h.t.Helper()
	now := readHostNetwork(h.t)
	all := maps.Clone(h.before)
	maps.Copy(all, now)
	var out []string
	for _, k := range slices.Sorted(maps.Keys(all)) {
		if h.before[k] != now[k] {
			out = append(out, fmt.Sprintf("%s: before %q, now %q", k, truncate(h.before[k], 400), truncate(now[k], 400)))
		}
	}
	return out
}

// serverPodIP is the IP of the one server pod of claim name.
func serverPodIP(ctx context.Context, t *testing.T, ns, name string) string {
	t.Helper()
	pods, err := env.admin.Typed.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range pods.Items {
		if strings.HasPrefix(p.Name, name+"-") && p.Status.Phase == corev1.PodRunning && p.Status.PodIP != "" && p.Labels["batch.kubernetes.io/job-name"] == "" {
			return p.Status.PodIP
		}
	}
	t.Fatalf("no running server pod of %s/%s", ns, name)
	return ""
}

// clientRequest runs a restricted pod with curl in ns on the real node
// that asks url once (3 s to connect, 5 s in all; more curl flags in
// extra, such as retries) and returns the HTTP status it got, or curl's
// exit status when it got none (7: refused, 28: timed out), and how many
// of its tries were refused.
func clientRequest(ctx context.Context, t *testing.T, ns, tag, url string, extra ...string) (status string, refused int) {
	t.Helper()
	name := "client-" + tag
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec:       *harnessJob(ns, name, "", "").Spec.Template.Spec.DeepCopy(),
	}
	onRealNode(&pod.Spec)
	pod.Spec.Containers[0].Image = httpPullerImage
	pod.Spec.Containers[0].ImagePullPolicy = corev1.PullIfNotPresent
	pod.Spec.Containers[0].Command = append(append([]string{"curl", "-sS", "-o", "/dev/null", "-w", "%{http_code}", "--connect-timeout", "3", "-m", "5"}, extra...), url)
	pod.Spec.TerminationGracePeriodSeconds = ptr.To[int64](0)
	pods := env.admin.Typed.CoreV1().Pods(ns)
	if _, err := pods.Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	defer func() {
		_ = pods.Delete(context.Background(), name, metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](0)})
	}()
	err := kube.Eventually(ctx, time.Minute, 250*time.Millisecond, "client "+ns+"/"+name+" done", func(ctx context.Context) (bool, string, error) {
		p, err := pods.Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, "", err
		}
		for _, cs := range p.Status.ContainerStatuses {
			term := cs.State.Terminated
			if term == nil {
				continue
			}
			// The log is curl's errors (stderr), one a try, then the
			// status (stdout, -w) when it got one.
			b, err := pods.GetLogs(name, &corev1.PodLogOptions{}).DoRaw(ctx)
			if err != nil {
				return false, "", err
			}
			refused = strings.Count(string(b), "curl: (7)")
			status = fmt.Sprintf("curl exit %d", term.ExitCode)
			if term.ExitCode == 0 {
				lines := strings.Split(strings.TrimSpace(string(b)), "\n")
				status = strings.TrimSpace(lines[len(lines)-1])
			}
			return true, "", nil
		}
		return false, string(p.Status.Phase), nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return status, refused
}
