//go:build e2e

// Package e2e is the end-to-end test of function-inferno: a real control
// plane on 127.0.0.1 (etcd v3.6, kube-apiserver, kube-controller-manager and
// kube-scheduler v1.35, Crossplane core v2.4.0 with its RBAC manager) and the
// function installed as a Crossplane package from a local OCI registry.
//
// Only the containers are simulated: kwok v0.8.0 stands in for the kubelets
// of a fake GPU Node, turning pods Running/Ready (servers) or Succeeded
// (pods of Jobs: the model pull) per the Stages in testdata/kwok, and it
// stands in for a volume provisioner too (testdata/kwok/volume.yaml), so
// PersistentVolumeClaims bind the way they do with a real dynamic
// provisioner behind a WaitForFirstConsumer StorageClass. Everything else —
// the Deployment, ReplicaSet, Job, PersistentVolume and garbage-collector
// controllers, the scheduler, Pod Security admission, RBAC, Crossplane's
// package manager, composition and claim machinery — is the real thing.
//
// Run it with `make e2e` from the repository root; see test/e2e/e2e.mk.
package e2e

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/inferno-ai/function-inferno/test/e2e/controlplane"
)

var (
	flagStress     = flag.Int("stress", 50, "number of claims in the stress scenario (the issue asks for 50; 200 for a big run)")
	flagKeep       = flag.Bool("keep", false, "leave the work directory (logs, etcd data, kubeconfigs) in place after the run")
	flagFunction   = flag.String("function", "auto", "which function to install: real (the repo's), standin (testdata/standin), or auto (real if the repo has one)")
	flagDebug      = flag.Bool("fn-debug", false, "run the function with --debug")
	flagProfile    = flag.Bool("profile", false, "save a 30 s CPU profile of the API server during the stress scenario to the logs")
	flagRealNode   = flag.Bool("real-node", true, "run a real node (containerd, kubelet, kube-proxy) beside kwok's fake one; needs root and the Debian packages .ci/run installs")
	flagUnverified = flag.Bool("unverified", false, "also run the scenarios written but not yet seen passing (none today)")
	flagCoreArgs   = flag.String("crossplane-args", "", "extra flags for `crossplane core start`, space-separated (e.g. --circuit-breaker-burst=400)")
)

// env is the shared control plane, set up once by TestMain.
var env *environment

func TestMain(m *testing.M) {
	flag.Parse()
	code := run(m)
	os.Exit(code)
}

func run(m *testing.M) (code int) {
	start := time.Now()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()

	var err error
	env, err = setUp(ctx)
	if env != nil {
		defer func() {
			env.tearDown()
			fmt.Printf("e2e: control plane stopped; total wall time %s\n", time.Since(start).Round(time.Second))
			if env.teardownErr != nil {
				fmt.Fprintf(os.Stderr, "e2e: tearing down left the machine changed: %v\n", env.teardownErr)
				code = 1
			}
		}()
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "e2e: setting up the control plane failed: %v\n", err)
		if env != nil {
			env.printLogPaths()
		}
		return 1
	}
	fmt.Printf("e2e: control plane and function ready in %s (work dir %s)\n", env.setupTime.Round(100*time.Millisecond), env.workDir)

	code = m.Run()
	env.summary.print(os.Stdout)
	if code != 0 {
		env.printLogPaths()
	}
	return code
}

// repoRoot is the repository root: E2E_REPO_ROOT (set by e2e.mk) or two
// levels up from this package.
func repoRoot() string {
	if r := os.Getenv("E2E_REPO_ROOT"); r != "" {
		return r
	}
	wd, _ := os.Getwd()
	return filepath.Clean(filepath.Join(wd, "..", ".."))
}

// binDir holds the tools built by `make e2e-tools` and the crossplane CLI.
func binDir() string {
	if d := os.Getenv("E2E_BIN_DIR"); d != "" {
		return d
	}
	return filepath.Join(repoRoot(), "bin")
}

func (e *environment) printLogPaths() {
	fmt.Fprintf(os.Stderr, "e2e: logs are in %s:\n", e.logDir())
	entries, _ := os.ReadDir(e.logDir())
	for _, en := range entries {
		fmt.Fprintf(os.Stderr, "  %s\n", filepath.Join(e.logDir(), en.Name()))
	}
	if e.cp != nil {
		for _, p := range e.cp.Processes() {
			if exited, perr := p.Exited(); exited {
				fmt.Fprintf(os.Stderr, "e2e: %s had exited (%v); tail of its log:\n%s\n", p.Name, perr, indent(controlplane.Tail(p.LogPath, 20)))
			}
		}
	}
}

func indent(s string) string { return "    " + strings.ReplaceAll(s, "\n", "\n    ") }
