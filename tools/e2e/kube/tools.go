//go:build tools

// Package tools pins the Kubernetes control-plane binaries for the
// end-to-end test: kube-apiserver, kube-controller-manager and
// kube-scheduler, and for the real node kubelet and kube-proxy, all from
// k8s.io/kubernetes; and Kubernetes' own DRA test driver
// (test/e2e/dra/test-driver), a kubelet plugin that publishes fake devices
// for the DRA scenarios (38-dra-*). Their main packages cannot be
// imported, so the app packages stand in to pin the module; the Make
// fragment builds the cmd/ packages themselves.
package tools

import (
	_ "k8s.io/kubernetes/cmd/kube-apiserver/app"
	_ "k8s.io/kubernetes/cmd/kube-controller-manager/app"
	_ "k8s.io/kubernetes/cmd/kube-proxy/app"
	_ "k8s.io/kubernetes/cmd/kube-scheduler/app"
	_ "k8s.io/kubernetes/cmd/kubelet/app"
	_ "k8s.io/kubernetes/test/e2e/dra/test-driver/app"
)
