//go:build tools

// Package tools pins etcd for the end-to-end control plane. The etcd
// server's main is the root package of go.etcd.io/etcd/server/v3, which
// cannot be imported; importing etcdmain pins the same module version, and
// the Make fragment builds the root package with `go build`.
//
// v3.6 matters: Debian's etcd 3.4 lacks what client-go >= 0.35's streaming
// WatchList needs, so every watch falls back after an error and the chain
// gets about ten times slower.
package tools

import (
	_ "go.etcd.io/etcd/server/v3/etcdmain"
)
