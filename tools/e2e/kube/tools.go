//go:build tools

// Package tools pins the Kubernetes control-plane binaries for the
// end-to-end test: kube-apiserver, kube-controller-manager and
// kube-scheduler, and for the real node kubelet and kube-proxy, all from
// k8s.io/kubernetes. Their main packages cannot be
// imported, so the app packages stand in to pin the module; the Make
// fragment builds the cmd/ packages themselves.
package tools

import (
	_ "k8s.io/kubernetes/cmd/kube-apiserver/app"
	_ "k8s.io/kubernetes/cmd/kube-controller-manager/app"
	_ "k8s.io/kubernetes/cmd/kube-proxy/app"
	_ "k8s.io/kubernetes/cmd/kube-scheduler/app"
	_ "k8s.io/kubernetes/cmd/kubelet/app"
)
