// Command netpol runs the NetworkPolicy engine of Kubernetes SIG Network
// (sigs.k8s.io/kube-network-policies) for the end-to-end test's real node,
// as a process on the host with the test's kubeconfig. The upstream
// command only runs in a pod (it reads the in-cluster config), and the
// real node has no cluster DNS or ServiceAccount path for a host process,
// so this wrapper builds the same controller from flags of its own.
//
// It enforces the NetworkPolicies of the pods on one node in userspace:
// an nftables table of its own sends the first packet of each connection
// to or from a selected pod to an nfqueue, and the controller accepts or
// drops it. NRI is off (containerd 1.6 on the real node has none): pod
// IPs come from the API server.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"

	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/klog/v2"
	"sigs.k8s.io/kube-network-policies/pkg/networkpolicy"
)

func main() {
	kubeconfig := flag.String("kubeconfig", "", "kubeconfig of the API server")
	node := flag.String("node", "", "name of the Node whose pods are enforced")
	table := flag.String("table", "inferno-e2e-netpol", "nftables table (inet family) of the rules; removed on exit")
	queue := flag.Int("nfqueue-id", 100, "nfqueue that carries the packets to decide")
	klog.InitFlags(nil)
	flag.Parse()
	if *kubeconfig == "" || *node == "" {
		fmt.Fprintln(os.Stderr, "netpol: -kubeconfig and -node are required")
		os.Exit(2)
	}
	if err := run(*kubeconfig, *node, *table, *queue); err != nil {
		fmt.Fprintln(os.Stderr, "netpol:", err)
		os.Exit(1)
	}
}

func run(kubeconfig, node, table string, queue int) error {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return err
	}
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	factory := informers.NewSharedInformerFactory(client, 0)
	ctrl, err := networkpolicy.NewController(client,
		factory.Networking().V1().NetworkPolicies(),
		factory.Core().V1().Namespaces(),
		factory.Core().V1().Pods(),
		nil, nil, nil, nil,
		networkpolicy.Config{
			QueueID:     queue,
			NodeName:    node,
			NFTableName: table,
			NRIdisabled: true,
			// The real node's kernel is newer than 6.12: DNS packets need
			// no detour (and the node has no cluster DNS).
			NetfilterBug1766Fix: false,
		})
	if err != nil {
		return err
	}
	done := make(chan error, 1)
	go func() { done <- ctrl.Run(ctx) }()
	factory.Start(ctx.Done())
	select {
	case <-ctx.Done():
		// Run removes the table when its context ends; give it the time
		// the upstream command gives it.
		select {
		case err = <-done:
		case <-time.After(5 * time.Second):
		}
		return err
	case err := <-done:
		return err
	}
}
