// Package realnode runs one real Kubernetes node on this machine for the
// end-to-end test: containerd (Debian's 1.6) with runc and the CNI bridge
// plugin, the kubelet and kube-proxy of the pinned Kubernetes. Its pods are
// real containers on a bridge of the test's own, reached from the host
// through their Service's ClusterIP (kube-proxy) or their pod IP.
//
// Everything the node writes lives under its work directory, except what
// the programs write to fixed places whatever they are told; those are
// recorded before the start and put back at Stop (see host.go), and Stop
// reports anything it could not put back.
package realnode

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	criv1 "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/inferno-ai/function-inferno/test/e2e/controlplane"
	"github.com/inferno-ai/function-inferno/test/e2e/kube"
)

// NetworkName is the CNI network of the node's pods.
const NetworkName = "inferno-e2e"

// CgroupRoot is the cgroup, in every hierarchy, under which the kubelet
// puts the node's pods: one subtree to kill and remove at the end.
const CgroupRoot = "inferno-e2e"

// Options configure a node.
type Options struct {
	// Name of the Node object.
	Name string
	// WorkDir receives every file the node writes; it is created.
	WorkDir string
	LogDir  string
	// Kubelet and KubeProxy are the binaries; containerd, ctr and runc
	// come from PATH (Debian's packages).
	Kubelet, KubeProxy string
	// CA signs the kubelet's serving certificate; CAFile (its certificate)
	// is what the kubelet trusts for client certificates: the API
	// server's kubelet client.
	CA     *controlplane.CertificateAuthority
	CAFile string
	// Kubeconfig is the kubelet's identity (system:node:<Name>, group
	// system:nodes); ProxyKubeconfig kube-proxy's (system:kube-proxy).
	Kubeconfig, ProxyKubeconfig string
	// Client is an admin client, to wait for the Node.
	Client kubernetes.Interface
	// Bridge is the network interface created for the pods, and Subnet
	// their addresses; the bridge takes the first one, which is also the
	// node's InternalIP.
	Bridge string
	Subnet netip.Prefix
	// ServiceCIDR, when set, is routed from the pods through the bridge
	// (the host), so they reach ClusterIPs through kube-proxy, the
	// `kubernetes` Service's included. Pods get no default route:
	// nothing but the host, each other and the Services.
	ServiceCIDR netip.Prefix
	Labels      map[string]string
	Taints      []corev1.Taint
	// PauseImage is the sandbox image's tag and PauseTarball its
	// docker-archive, imported before the kubelet starts.
	PauseImage, PauseTarball string
	// LockWait is how long Start waits for another run's node on this
	// network namespace (DefaultLockWait when zero); Logf hears about the
	// wait and about a killed run's leftovers (may be nil).
	LockWait time.Duration
	Logf     func(string, ...any)
}

// Node is a running node.
type Node struct {
	o Options
	// IP is the node's address on the bridge.
	IP string
	// KubeletPort is where the kubelet serves, on IP.
	KubeletPort int
	// Started is how long Start took, until the Node was Ready.
	Started time.Duration
	// ProxyMetrics is kube-proxy's Prometheus endpoint.
	ProxyMetrics string

	host                       *hostState
	lock                       *NetworkLock
	containerd, kubelet, proxy *controlplane.Process
	proxyConfig                string
}

// hostRecord is where the machine's state before the start is kept.
func hostRecord(workDir string) string { return filepath.Join(workDir, "host-before.json") }

// CleanStale puts back what a node that was not stopped (a killed test
// run) left on the machine, from the record in its work directory. Call it
// before removing that directory. It holds the network lock while it
// cleans: the record's "before" does not know another live run's node.
func CleanStale(ctx context.Context, workDir string, logf func(string, ...any)) error {
	if _, err := os.Stat(hostRecord(workDir)); os.IsNotExist(err) {
		return nil
	}
	lock, err := LockNetwork(ctx, DefaultLockWait, logf)
	if err != nil {
		return err
	}
	defer lock.Unlock()
	return cleanStale(workDir)
}

// cleanStale is CleanStale under a lock already held.
func cleanStale(workDir string) error {
	h, err := loadHost(hostRecord(workDir))
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		return err
	}
	if err := h.restore(); err != nil {
		return err
	}
	if l := h.leftovers(); len(l) > 0 {
		return fmt.Errorf("a previous run's node left, and cleaning did not remove:\n  %s", strings.Join(l, "\n  "))
	}
	return os.Remove(hostRecord(workDir))
}

// Start brings the node up and waits until the Node is Ready. On error,
// what was started is stopped and the host put back.
func Start(ctx context.Context, o Options) (n *Node, err error) {
	start := time.Now()
	wait := o.LockWait
	if wait == 0 {
		wait = DefaultLockWait
	}
	lock, err := LockNetwork(ctx, wait, o.Logf)
	if err != nil {
		return nil, err
	}
	// Until the node is up, an error gives the lock back; then Stop does.
	defer func() {
		if n == nil {
			lock.Unlock()
		}
	}()
	if err := cleanStale(o.WorkDir); err != nil {
		return nil, err
	}
	if err := cleanStrangers(o.Bridge, o.Logf); err != nil {
		return nil, err
	}
	n = &Node{o: o, IP: o.Subnet.Addr().Next().String(), lock: lock}
	for _, d := range []string{"containerd", "cni/net.d", "cni/ipam", "kubelet", "pki", "logs/pods"} {
		if err := os.MkdirAll(n.dir(d), 0o755); err != nil {
			return nil, err
		}
	}
	if n.host, err = recordHost(o.WorkDir, o.Bridge); err != nil {
		return nil, err
	}
	if err := n.host.save(hostRecord(o.WorkDir)); err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			if serr := n.Stop(); serr != nil {
				err = fmt.Errorf("%w; and stopping the node: %v", err, serr)
			}
			n = nil
		}
	}()
	if err := makeCgroups(CgroupRoot); err != nil {
		return n, err
	}

	// The bridge comes first: the kubelet serves on its address.
	bits := o.Subnet.Bits()
	ipCmds := [][]string{
		{"link", "add", "name", o.Bridge, "type", "bridge"},
		{"addr", "add", fmt.Sprintf("%s/%d", n.IP, bits), "dev", o.Bridge},
		{"link", "set", o.Bridge, "up"},
	}
	if o.ServiceCIDR.IsValid() {
		// The host's connections to ClusterIPs stay on the bridge. kube-proxy
		// rewrites them to a pod's address before they are routed again,
		// but when a Service's first endpoint turns ready it drops its
		// REJECT about 15 ms before it adds its DNAT (iptables, nf_tables
		// backend), and a connection in between would take the host's
		// default route off the machine (seen: the gateway answered HTTP
		// 404). On the bridge it finds no one and times out. The route goes
		// with the bridge.
		ipCmds = append(ipCmds, []string{"route", "add", o.ServiceCIDR.String(), "dev", o.Bridge, "src", n.IP})
	}
	for _, args := range ipCmds {
		if out, err := exec.Command("ip", args...).CombinedOutput(); err != nil {
			return n, fmt.Errorf("ip %s: %v: %s", strings.Join(args, " "), err, out)
		}
	}
	cni, err := n.cniNetwork()
	if err != nil {
		return n, err
	}
	if err := os.WriteFile(n.dir("cni", "net.d", "10-"+NetworkName+".conflist"), cni, 0o644); err != nil {
		return n, err
	}

	// containerd.
	cfg := n.dir("containerd", "config.toml")
	if err := os.WriteFile(cfg, []byte(n.containerdConfig()), 0o644); err != nil {
		return n, err
	}
	if n.containerd, err = controlplane.StartProcess("containerd", o.LogDir, "containerd", []string{"--config", cfg}); err != nil {
		return n, err
	}
	if err := controlplane.WaitFor(ctx, 30*time.Second, "containerd", n.containerd, 100*time.Millisecond, func(ctx context.Context) (bool, error) {
		return exec.CommandContext(ctx, "ctr", "--address", n.Socket(), "version").Run() == nil, nil
	}); err != nil {
		return n, err
	}
	if err := n.Import(ctx, o.PauseTarball); err != nil {
		return n, err
	}

	// The kubelet, with a serving certificate of the test's CA for its
	// address on the bridge.
	kp, err := o.CA.ServingCert(o.Name, []string{o.Name}, []net.IP{net.ParseIP(n.IP)})
	if err != nil {
		return n, err
	}
	if _, _, err := kp.WriteFiles(n.dir("pki"), "kubelet"); err != nil {
		return n, err
	}
	ports, err := controlplane.FreePorts(5)
	if err != nil {
		return n, err
	}
	n.KubeletPort = ports[0]
	kcfg, err := n.kubeletConfig(ports[0], ports[1])
	if err != nil {
		return n, err
	}
	kcfgPath := n.dir("kubelet-config.yaml")
	if err := os.WriteFile(kcfgPath, kcfg, 0o644); err != nil {
		return n, err
	}
	if n.kubelet, err = controlplane.StartProcess("kubelet", o.LogDir, o.Kubelet, []string{
		"--config=" + kcfgPath,
		"--kubeconfig=" + o.Kubeconfig,
		"--root-dir=" + n.dir("kubelet"),
		"--hostname-override=" + o.Name,
		"--node-ip=" + n.IP,
		"--node-labels=" + nodeLabels(o.Labels),
		"--v=2",
	}); err != nil {
		return n, err
	}
	if err := n.waitReady(ctx, 2*time.Minute); err != nil {
		return n, err
	}

	// kube-proxy.
	pcfg, err := n.kubeProxyConfig(o.ProxyKubeconfig, ports[2], ports[3])
	if err != nil {
		return n, err
	}
	n.proxyConfig = n.dir("kube-proxy-config.yaml")
	if err := os.WriteFile(n.proxyConfig, pcfg, 0o644); err != nil {
		return n, err
	}
	if n.proxy, err = controlplane.StartProcess("kube-proxy", o.LogDir, o.KubeProxy, []string{"--config=" + n.proxyConfig, "--v=2"}); err != nil {
		return n, err
	}
	healthz := fmt.Sprintf("http://127.0.0.1:%d/healthz", ports[3])
	n.ProxyMetrics = fmt.Sprintf("http://127.0.0.1:%d/metrics", ports[2])
	if err := controlplane.WaitFor(ctx, time.Minute, "kube-proxy healthz", n.proxy, 200*time.Millisecond, func(ctx context.Context) (bool, error) {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, healthz, nil)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return false, nil
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK, nil
	}); err != nil {
		return n, err
	}
	n.Started = time.Since(start)
	return n, nil
}

// ProxySynced reports whether every Service and endpoint the API server
// had at after is programmed into the node's rules: kube-proxy has written
// its rules since then, or it has nothing queued, nothing pending, and a
// second has passed for its watch to deliver what changed before after.
func (n *Node) ProxySynced(ctx context.Context, after time.Time) (bool, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, n.ProxyMetrics, nil)
	if err != nil {
		return false, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return false, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return false, err
	}
	// Metric name (labels dropped: kube-proxy runs IPv4 only here) to value.
	m := map[string]float64{}
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) != 2 || strings.HasPrefix(line, "#") {
			continue
		}
		name, _, _ := strings.Cut(f[0], "{")
		if v, err := strconv.ParseFloat(f[1], 64); err == nil {
			m[name] = max(m[name], v)
		}
	}
	last := m["kubeproxy_sync_proxy_rules_last_timestamp_seconds"]
	queued := m["kubeproxy_sync_proxy_rules_last_queued_timestamp_seconds"]
	idle := m["kubeproxy_sync_proxy_rules_endpoint_changes_pending"] == 0 &&
		m["kubeproxy_sync_proxy_rules_service_changes_pending"] == 0 && last >= queued
	at := float64(after.UnixNano()) / 1e9
	return last > at || (idle && time.Since(after) > time.Second), nil
}

// Socket is containerd's private socket.
func (n *Node) Socket() string { return n.dir("containerd", "containerd.sock") }

// KubeletRootDir is the kubelet's --root-dir, under which a DRA driver's
// kubelet plugin registers (plugins_registry) and keeps its socket
// (plugins/<driver>).
func (n *Node) KubeletRootDir() string { return n.dir("kubelet") }

func (n *Node) dir(parts ...string) string {
	return filepath.Join(append([]string{n.o.WorkDir}, parts...)...)
}

// Import loads a docker-archive image tarball into containerd's CRI
// namespace, where the kubelet finds it: pods name it with a pull policy of
// IfNotPresent (the default for a tag other than latest) or Never.
func (n *Node) Import(ctx context.Context, tarball string) error {
	return controlplane.RunCommand(ctx, "ctr-import", n.o.LogDir, "ctr",
		[]string{"--address", n.Socket(), "-n", "k8s.io", "images", "import", "--snapshotter", "overlayfs", tarball})
}

// Processes lists the node's long-running processes, for liveness checks.
func (n *Node) Processes() []*controlplane.Process {
	var out []*controlplane.Process
	for _, p := range []*controlplane.Process{n.containerd, n.kubelet, n.proxy} {
		if p != nil {
			out = append(out, p)
		}
	}
	return out
}

func (n *Node) waitReady(ctx context.Context, timeout time.Duration) error {
	return kube.Eventually(ctx, timeout, 250*time.Millisecond, "real node "+n.o.Name+" Ready", func(ctx context.Context) (bool, string, error) {
		if exited, err := n.kubelet.Exited(); exited {
			return false, "", fmt.Errorf("kubelet exited (%v)\n--- tail of %s ---\n%s", err, n.kubelet.LogPath, controlplane.Tail(n.kubelet.LogPath, 40))
		}
		node, err := n.o.Client.CoreV1().Nodes().Get(ctx, n.o.Name, metav1.GetOptions{})
		if err != nil {
			return false, "not registered yet", nil
		}
		for _, c := range node.Status.Conditions {
			if c.Type == corev1.NodeReady {
				return c.Status == corev1.ConditionTrue, fmt.Sprintf("Ready=%s %s: %s", c.Status, c.Reason, c.Message), nil
			}
		}
		return false, "no Ready condition", nil
	})
}

// Stop stops the node and puts the machine back as it was: kube-proxy and
// its rules, the kubelet, every pod sandbox through the CRI (so the CNI
// plugin releases its addresses and network namespaces), containerd, then
// whatever remains (see hostState.restore). It returns an error naming
// anything left behind. Safe to call twice.
func (n *Node) Stop() error {
	var errs []error
	if n.proxy != nil {
		n.proxy.Stop(5 * time.Second)
		if err := controlplane.RunCommand(context.Background(), "kube-proxy-cleanup", n.o.LogDir, n.o.KubeProxy,
			[]string{"--cleanup", "--config=" + n.proxyConfig}); err != nil {
			errs = append(errs, err)
		}
		n.proxy = nil
	}
	if n.kubelet != nil {
		n.kubelet.Stop(10 * time.Second)
		n.kubelet = nil
	}
	if n.containerd != nil {
		if err := n.removeSandboxes(); err != nil {
			errs = append(errs, fmt.Errorf("removing pod sandboxes: %w", err))
		}
		n.containerd.Stop(10 * time.Second)
		n.containerd = nil
	}
	if n.host != nil {
		if err := n.host.restore(); err != nil {
			errs = append(errs, err)
		}
		if l := n.host.leftovers(); len(l) > 0 {
			errs = append(errs, fmt.Errorf("the real node left behind:\n  %s", strings.Join(l, "\n  ")))
		} else {
			_ = os.Remove(hostRecord(n.o.WorkDir))
		}
		n.host = nil
	}
	n.lock.Unlock()
	return errors.Join(errs...)
}

// removeSandboxes stops and removes every pod sandbox, as the kubelet
// would on deleting their pods.
func (n *Node) removeSandboxes() error {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	conn, err := grpc.NewClient("unix://"+n.Socket(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		return err
	}
	defer conn.Close()
	rt := criv1.NewRuntimeServiceClient(conn)
	list, err := rt.ListPodSandbox(ctx, &criv1.ListPodSandboxRequest{})
	if err != nil {
		return err
	}
	var errs []error
	for _, sb := range list.Items {
		if _, err := rt.StopPodSandbox(ctx, &criv1.StopPodSandboxRequest{PodSandboxId: sb.Id}); err != nil {
			errs = append(errs, err)
		}
		if _, err := rt.RemovePodSandbox(ctx, &criv1.RemovePodSandboxRequest{PodSandboxId: sb.Id}); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}
