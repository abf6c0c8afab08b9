//go:build tools

// Package tools pins Crossplane core for the end-to-end test. The core
// binary (`crossplane core init|start`, `crossplane rbac start`) is
// github.com/crossplane/crossplane/v2/cmd/crossplane, a main package, so the
// packages it is built from stand in here.
//
// crossplane's own go.mod replaces github.com/crossplane/crossplane/apis/v2
// with a local folder; dependency replaces are ignored, so this module must
// require the published apis/v2 at the same version itself.
//
// This is a different module (and version) from the crossplane CLI v2.2.1
// that /tools pins for `render` and `xpkg`: core v2.4.0 needs newer
// crossplane-runtime and Kubernetes libraries than the CLI, so they cannot
// share a go.mod.
package tools

import (
	_ "github.com/crossplane/crossplane/apis/v2"
	_ "github.com/crossplane/crossplane/v2/cmd/crossplane/core"
	_ "github.com/crossplane/crossplane/v2/cmd/crossplane/rbac"
)
