//go:build tools

// Package tools pins sigs.k8s.io/lws for the end-to-end test: its
// LeaderWorkerSet CRD (config/crd/bases), which the multi-node scenario
// installs, and its controller (the module's root package, cmd), which the
// scenario does not run: it builds (8 min on 2 shared cores) but needs its
// own webhooks served to the API server (docs/multi-node.md).
package tools

import (
	_ "sigs.k8s.io/lws/cmd"
)
