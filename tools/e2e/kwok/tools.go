//go:build tools

// Package tools pins kwok for the end-to-end test: it plays the kubelets'
// part (fake Nodes, pods that go Running/Ready or Succeeded per Stage), so
// the real Deployment, ReplicaSet, Job and garbage-collector controllers run
// without containers. The Make fragment builds sigs.k8s.io/kwok/cmd/kwok.
package tools

import (
	_ "sigs.k8s.io/kwok/pkg/kwok/cmd"
)
