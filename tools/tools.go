//go:build tools

// Package tools pins the versions of the command-line tools that the
// Makefile builds: controller-gen for the CRD and XRD schemas, and the
// crossplane CLI (v2.2.1, the last with the in-process `crossplane render`).
package tools

import (
	_ "github.com/crossplane/crossplane/v2/cmd/crank"
	_ "sigs.k8s.io/controller-tools/cmd/controller-gen"
)
