package realnode

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"
)

// The configuration files of containerd, the CNI network, the kubelet and
// kube-proxy. Each setting that is not a default says why: most of them keep
// the node's state under the work directory or keep the node off the
// machine's own network, and two are what this VM needs to run containers
// at all (failCgroupV1, restrict_oom_score_adj).

// containerdConfig is containerd's config (version 2): private root, state
// and sockets, the CRI plugin with the test's pause image and CNI network.
func (n *Node) containerdConfig() string {
	d := n.dir("containerd")
	return fmt.Sprintf(`version = 2
root = %[1]q
state = %[2]q
# Plugins that would write outside the work directory or need what this
# machine lacks.
disabled_plugins = ["io.containerd.snapshotter.v1.aufs", "io.containerd.snapshotter.v1.btrfs", "io.containerd.snapshotter.v1.zfs", "io.containerd.snapshotter.v1.devmapper", "io.containerd.tracing.processor.v1.otlp", "io.containerd.internal.v1.tracing"]

[grpc]
  address = %[3]q

[ttrpc]
  address = %[4]q

[debug]
  address = ""

[metrics]
  address = ""

[plugins."io.containerd.internal.v1.opt"]
  path = %[5]q

[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = %[6]q
  # Streams (exec, logs -f, port-forward) on loopback only.
  stream_server_address = "127.0.0.1"
  stream_server_port = "0"
  # This VM withholds CAP_SYS_RESOURCE even from root: runc cannot lower
  # the pause container's oom_score_adj, and every sandbox would fail with
  # "can't get final child's PID from pipe: EOF".
  restrict_oom_score_adj = true
  tolerate_missing_hugetlb_controller = true
  disable_hugetlb_controller = true
  disable_apparmor = true
  enable_selinux = false

  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"

    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"

      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        SystemdCgroup = false
        Root = %[7]q

  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "/usr/lib/cni"
    conf_dir = %[8]q
    max_conf_num = 1
`, filepath.Join(d, "root"), filepath.Join(d, "state"), n.Socket(), n.Socket()+".ttrpc",
		filepath.Join(d, "opt"), n.o.PauseImage, filepath.Join(d, "runc"), n.dir("cni", "net.d"))
}

// cniNetwork is the pods' network: one bridge with the node's address as
// the gateway and host-local addresses, its state under the work directory.
// No masquerading: pods talk only to the host, to each other and, with
// ServiceCIDR, to Services.
func (n *Node) cniNetwork() ([]byte, error) {
	ipam := map[string]any{
		"type":    "host-local",
		"ranges":  []any{[]any{map[string]any{"subnet": n.o.Subnet.String(), "gateway": n.IP}}},
		"dataDir": n.dir("cni", "ipam"),
	}
	if n.o.ServiceCIDR.IsValid() {
		ipam["routes"] = []any{map[string]any{"dst": n.o.ServiceCIDR.String(), "gw": n.IP}}
	}
	conf := map[string]any{
		"cniVersion": "0.4.0",
		"name":       NetworkName,
		"plugins": []any{map[string]any{
			"type":        "bridge",
			"bridge":      n.o.Bridge,
			"isGateway":   true,
			"ipMasq":      false,
			"hairpinMode": true,
			"ipam":        ipam,
		}},
	}
	return json.MarshalIndent(conf, "", "  ")
}

// kubeletConfig is the KubeletConfiguration.
func (n *Node) kubeletConfig(port, healthzPort int) ([]byte, error) {
	taints := make([]any, 0, len(n.o.Taints))
	for _, t := range n.o.Taints {
		taints = append(taints, map[string]any{"key": t.Key, "value": t.Value, "effect": string(t.Effect)})
	}
	cfg := map[string]any{
		"apiVersion": "kubelet.config.k8s.io/v1beta1",
		"kind":       "KubeletConfiguration",
		// Served on the bridge only: the API server reaches the kubelet
		// (logs, exec, port-forward) through the test's own network.
		"address":            n.IP,
		"port":               port,
		"readOnlyPort":       0,
		"healthzBindAddress": "127.0.0.1",
		"healthzPort":        healthzPort,
		"tlsCertFile":        n.dir("pki", "kubelet.crt"),
		"tlsPrivateKeyFile":  n.dir("pki", "kubelet.key"),
		"authentication": map[string]any{
			"anonymous": map[string]any{"enabled": false},
			"webhook":   map[string]any{"enabled": false},
			"x509":      map[string]any{"clientCAFile": n.o.CAFile},
		},
		// Only holders of a certificate of the test's CA get this far: the
		// API server's kubelet client.
		"authorization":            map[string]any{"mode": "AlwaysAllow"},
		"containerRuntimeEndpoint": "unix://" + n.Socket(),
		// This VM runs cgroup v1, which kubelet 1.35 refuses by default.
		"failCgroupV1":           false,
		"cgroupDriver":           "cgroupfs",
		"cgroupRoot":             "/" + CgroupRoot,
		"failSwapOn":             false,
		"enforceNodeAllocatable": []string{"pods"},
		"registerWithTaints":     taints,
		"serializeImagePulls":    false,
		// Generous thresholds: the node shares a dev machine's disk and
		// memory, and an eviction would read as a function bug.
		"evictionHard": map[string]string{
			"memory.available": "100Mi", "nodefs.available": "1%", "imagefs.available": "1%", "nodefs.inodesFree": "1%",
		},
		"imageGCHighThresholdPercent": 100,
		"imageGCLowThresholdPercent":  99,
		"resolvConf":                  "/etc/resolv.conf",
		"clusterDomain":               "cluster.local",
		"volumePluginDir":             n.dir("kubelet", "volume-plugins"),
		"podLogsDir":                  n.dir("logs", "pods"),
		"makeIPTablesUtilChains":      false,
		"shutdownGracePeriod":         "0s",
		"kubeAPIQPS":                  50,
		"kubeAPIBurst":                100,
		// Pods start and stop in seconds: report them without delay.
		"nodeStatusUpdateFrequency": "5s",
		"syncFrequency":             "10s",
		"maxPods":                   110,
	}
	return yaml.Marshal(cfg)
}

// kubeProxyConfig is kube-proxy's configuration. It programs Service
// addresses into the machine's iptables (so the host reaches ClusterIPs)
// and leaves the rest of the host alone: no conntrack sysctls, no
// localhost NodePorts, NodePorts only on the bridge.
func (n *Node) kubeProxyConfig(kubeconfig string, metricsPort, healthzPort int) ([]byte, error) {
	cfg := map[string]any{
		"apiVersion":       "kubeproxy.config.k8s.io/v1alpha1",
		"kind":             "KubeProxyConfiguration",
		"clientConnection": map[string]any{"kubeconfig": kubeconfig, "qps": 50, "burst": 100},
		"hostnameOverride": n.o.Name,
		"clusterCIDR":      n.o.Subnet.String(),
		"mode":             "iptables",
		// kube-proxy's default minSyncPeriod (1 s) batches changes: every
		// Service of the cluster, the kwok node's claims' included, is
		// programmed here, and 50 claims at once would otherwise mean 50
		// rule rewrites competing with the control plane for two cores.
		"iptables": map[string]any{
			"localhostNodePorts": false,
			"minSyncPeriod":      "1s",
		},
		"conntrack": map[string]any{
			"maxPerCore":            0,
			"min":                   0,
			"tcpEstablishedTimeout": "0s",
			"tcpCloseWaitTimeout":   "0s",
		},
		"nodePortAddresses":  []string{n.IP + "/32"},
		"metricsBindAddress": fmt.Sprintf("127.0.0.1:%d", metricsPort),
		"healthzBindAddress": fmt.Sprintf("127.0.0.1:%d", healthzPort),
	}
	return yaml.Marshal(cfg)
}

// nodeLabels is the kubelet's --node-labels value.
func nodeLabels(labels map[string]string) string {
	var parts []string
	for k, v := range labels {
		parts = append(parts, k+"="+v)
	}
	return strings.Join(sortedCopy(parts), ",")
}

// taintsString renders taints for messages.
func taintsString(ts []corev1.Taint) string {
	var parts []string
	for _, t := range ts {
		parts = append(parts, t.ToString())
	}
	return strings.Join(parts, ",")
}
