//go:build tools

// Package tools pins sigs.k8s.io/lws for the end-to-end test: its
// LeaderWorkerSet CRD (config/crd/bases), RBAC (config/rbac) and webhook
// configurations (config/webhook), and its controller (the module's cmd
// package), which the multi-node scenario runs on the host with its
// webhooks served to the API server (docs/multi-node.md).
package tools

import (
	_ "sigs.k8s.io/lws/cmd"
)
