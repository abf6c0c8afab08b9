//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/inferno-ai/function-inferno/test/e2e/fnpackage"
	"github.com/inferno-ai/function-inferno/test/e2e/kube"
)

var (
	xrdGVK         = schema.GroupVersionKind{Group: "apiextensions.crossplane.io", Version: "v1", Kind: "CompositeResourceDefinition"}
	compositionGVK = schema.GroupVersionKind{Group: "apiextensions.crossplane.io", Version: "v1", Kind: "Composition"}
	standinGVK     = schema.GroupVersionKind{Group: "e2e.inferno.io", Version: "v1alpha1", Kind: "Standin"}
)

// TestStandin proves the harness end to end with the throwaway function in
// testdata/standin: package build and install through the External
// runtime, an XRD with a claim, and claim -> Deployment (kwok) -> Ready.
// It runs when the real function is not in the repository yet, or with
// -function=standin.
func TestStandin(t *testing.T) {
	if env.mode != "standin" {
		t.Skip("the real function is present; run with -function=standin to exercise the stand-in")
	}
	ctx := context.Background()

	t.Run("install", func(t *testing.T) {
		sc := env.summary.start(t, "standin: install")
		start := time.Now()
		installFunction(ctx, t, StandinFunctionName, filepath.Join(repoRoot(), "test", "e2e"), "./cmd/standin-function",
			"testdata/standin/package", "")
		sc.note("package built, pushed, installed and Healthy in %.1fs", time.Since(start).Seconds())
		start = time.Now()
		if _, err := env.admin.ApplyFile(ctx, "testdata/standin/xrd.yaml"); err != nil {
			t.Fatal(err)
		}
		waitXRDReady(ctx, t, "xstandins.e2e.inferno.io")
		sc.note("XRD Established+Offered in %.1fs", time.Since(start).Seconds())
	})
	if t.Failed() {
		return
	}

	t.Run("claim-ready", func(t *testing.T) {
		sc := env.summary.start(t, "standin: claim -> Deployment -> Ready")
		const ns, name = "team-a", "standin"
		if err := env.createTeamNamespace(ctx, ns); err != nil {
			t.Fatal(err)
		}
		claim := &unstructured.Unstructured{}
		claim.SetGroupVersionKind(standinGVK)
		claim.SetNamespace(ns)
		claim.SetName(name)
		_ = unstructured.SetNestedField(claim.Object, int64(2), "spec", "replicas")
		start := time.Now()
		if _, err := env.admin.Apply(ctx, claim); err != nil {
			t.Fatal(err)
		}
		var firstObject time.Duration
		err := kube.Eventually(ctx, 90*time.Second, 100*time.Millisecond, "standin claim Ready", func(ctx context.Context) (bool, string, error) {
			if firstObject == 0 {
				if _, err := env.admin.Typed.AppsV1().Deployments(ns).Get(ctx, name, metav1.GetOptions{}); err == nil {
					firstObject = time.Since(start)
				}
			}
			c, err := env.admin.Get(ctx, standinGVK, ns, name)
			if err != nil {
				return false, "", err
			}
			s, _, _ := kube.Condition(c, "Ready")
			return s == "True", kube.ConditionsSummary(c), nil
		})
		if err != nil {
			t.Fatal(err)
		}
		sc.note("claim -> Deployment %.1fs, claim -> Ready %.1fs", firstObject.Seconds(), time.Since(start).Seconds())
		d, err := env.admin.Typed.AppsV1().Deployments(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if d.Status.AvailableReplicas != 2 {
			t.Errorf("Deployment has %d available replicas, want 2", d.Status.AvailableReplicas)
		}
	})

	t.Run("delete", func(t *testing.T) {
		sc := env.summary.start(t, "standin: delete claim -> GC")
		const ns, name = "team-a", "standin"
		start := time.Now()
		if err := env.admin.Delete(ctx, standinGVK, ns, name); err != nil {
			t.Fatal(err)
		}
		err := kube.Eventually(ctx, 60*time.Second, 200*time.Millisecond, "Deployment and pods gone", func(ctx context.Context) (bool, string, error) {
			_, err := env.admin.Typed.AppsV1().Deployments(ns).Get(ctx, name, metav1.GetOptions{})
			if !apierrors.IsNotFound(err) {
				return false, "Deployment still there", nil
			}
			pods, err := env.admin.Typed.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
			if err != nil {
				return false, "", err
			}
			return len(pods.Items) == 0, fmt.Sprintf("%d pods left", len(pods.Items)), nil
		})
		if err != nil {
			t.Fatal(err)
		}
		sc.note("all gone in %.1fs", time.Since(start).Seconds())
	})
}

// installFunction builds the function at pkg (a main package inside
// moduleDir), packages it with packageRoot, pushes it to the test registry
// and installs it as Function name, then runs it as the External runtime
// would. It fails the test on error.
func installFunction(ctx context.Context, t *testing.T, name, moduleDir, pkg, packageRoot, examplesRoot string, extraArgs ...string) *fnpackage.Runner {
	t.Helper()
	work := filepath.Join(env.workDir, name)
	built, err := fnpackage.BuildAndPush(ctx, fnpackage.BuildOptions{
		CLI:          filepath.Join(binDir(), "crossplane"),
		ModuleDir:    moduleDir,
		Package:      pkg,
		PackageRoot:  absIn(moduleDir, packageRoot),
		ExamplesRoot: absIn(moduleDir, examplesRoot),
		WorkDir:      mkdir(t, work),
		LogDir:       env.logDir(),
		Ref:          fmt.Sprintf("%s/%s:v0.0.0-e2e", env.registry.Host, name),
	})
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := fnpackage.ImageConfig(built.RuntimeTarball)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Config.User != fnpackage.RuntimeUser || len(cfg.Config.Entrypoint) != 1 || cfg.Config.Entrypoint[0] != "/function" {
		t.Errorf("runtime image config: user %q entrypoint %q, want %q [/function]", cfg.Config.User, cfg.Config.Entrypoint, fnpackage.RuntimeUser)
	}
	r, err := fnpackage.Install(ctx, env.cp, env.admin, fnpackage.InstallOptions{
		Name: name, Ref: built.Ref, Binary: built.Binary, WorkDir: work, Debug: *flagDebug, ExtraArgs: extraArgs,
	})
	if err != nil {
		t.Fatal(err)
	}
	env.functions[name] = r
	return r
}

// waitXRDReady waits until Crossplane has established the XRD's composite
// CRD and offered its claim CRD.
func waitXRDReady(ctx context.Context, t *testing.T, name string) {
	t.Helper()
	err := kube.Eventually(ctx, 90*time.Second, 200*time.Millisecond, "XRD "+name+" Established and Offered", func(ctx context.Context) (bool, string, error) {
		x, err := env.admin.Get(ctx, xrdGVK, "", name)
		if err != nil {
			return false, "", err
		}
		e, _, _ := kube.Condition(x, "Established")
		o, _, _ := kube.Condition(x, "Offered")
		return e == "True" && o == "True", kube.ConditionsSummary(x), nil
	})
	if err != nil {
		t.Fatal(err)
	}
	env.admin.ResetDiscovery()
}

func absIn(dir, p string) string {
	if p == "" || filepath.IsAbs(p) {
		return p
	}
	return filepath.Join(dir, p)
}

func mkdir(t *testing.T, d string) string {
	t.Helper()
	if err := os.MkdirAll(d, 0o755); err != nil {
		t.Fatal(err)
	}
	return d
}
