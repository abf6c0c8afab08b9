//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/inferno-ai/function-inferno/test/e2e/fnpackage"
	"github.com/inferno-ai/function-inferno/test/e2e/kube"
)

var lockGVK = schema.GroupVersionKind{Group: "pkg.crossplane.io", Version: "v1beta1", Kind: "Lock"}

// configurationPackage is one Configuration package `make xpkg` builds.
type configurationPackage struct {
	// Name is the Configuration's metadata.name and its repository in the
	// test registry.
	Name string
	// Root is the package root, relative to the repository, and Ignore the
	// paths under it that are not in the package: the Makefile's xpkg
	// target passes the same.
	Root   string
	Ignore []string
	// XRDs are the CompositeResourceDefinitions (each with a Composition of
	// the same name) it ships; Offered says they offer claims, so
	// Crossplane reports Offered.
	XRDs    []string
	Offered bool
}

// configurationPackages are the Configurations the e2e installs, in order:
// everything the scenarios compose goes through them.
var configurationPackages = []configurationPackage{
	{Name: "configuration-inferno", Root: "apis", Ignore: []string{"rbac.yaml", "namespaced/*"}, XRDs: []string{xrdName, cacheXRDName}, Offered: true},
	{Name: "configuration-inferno-namespaced", Root: "apis/namespaced", XRDs: []string{namespacedXRDName}},
}

// --- 01b configuration ------------------------------------------------------

// configuration builds each Configuration package from its package root
// with the real `crossplane xpkg build`, its Function dependency pointed at
// the reference the install scenario pushed the Function to, pushes it to
// the test registry and installs it as a pkg.crossplane.io/v1
// Configuration. Crossplane must resolve the dependency to the Function
// already installed from that source, not install a second one, then
// establish the XRD and Composition itself.
func (s *infernoSuite) configuration(t *testing.T) {
	ctx := context.Background()
	sc := env.summary.start(t, "01b configuration")
	fnRef, err := fnpackage.FunctionPackage(ctx, env.admin, RealFunctionName)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range configurationPackages {
		start := time.Now()
		ref := fmt.Sprintf("%s/%s:v0.0.0-e2e", env.registry.Host, p.Name)
		if _, err := fnpackage.BuildAndPushConfiguration(ctx, fnpackage.ConfigurationOptions{
			CLI:         filepath.Join(binDir(), "crossplane"),
			PackageRoot: filepath.Join(repoRoot(), p.Root),
			Ignore:      p.Ignore,
			FunctionRef: fnRef,
			WorkDir:     mkdir(t, filepath.Join(env.workDir, p.Name)),
			LogDir:      env.logDir(),
			Ref:         ref,
		}); err != nil {
			t.Fatal(err)
		}
		built := time.Since(start)
		inst, err := fnpackage.InstallConfiguration(ctx, env.admin, p.Name, ref, 2*time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		healthy := time.Since(start)
		for _, x := range p.XRDs {
			waitXRDEstablished(ctx, t, x, p.Offered)
		}
		sc.note("%s: built+pushed %.1fs, Installed+Healthy %.1fs, %d XRD(s) ready %.1fs", p.Name, built.Seconds(), healthy.Seconds(), len(p.XRDs), time.Since(start).Seconds())

		// The revision found and installed its one dependency, and owns
		// what it established.
		if got, want := fnpackage.RevisionDependencies(inst.Revision), (fnpackage.Dependencies{Found: 1, Installed: 1}); got != want {
			t.Errorf("%s dependencies %+v, want %+v", inst.Revision.GetName(), got, want)
		}
		refs := fnpackage.ObjectRefs(inst.Revision)
		for _, name := range p.XRDs {
			checkPackaged(ctx, t, inst.Revision.GetName(), refs, name)
		}
	}

	// Dependency resolution found the Function installed by hand from the
	// same source: no second Function appeared.
	fns, err := env.admin.List(ctx, fnpackage.FunctionGVK, "", "")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, f := range fns {
		names = append(names, f.GetName())
	}
	if !slices.Equal(names, []string{RealFunctionName}) {
		t.Errorf("Functions after installing the Configurations: %v, want only %s (Crossplane installed the dependency again instead of finding it)", names, RealFunctionName)
	}
	lock, err := env.admin.Get(ctx, lockGVK, "", "lock")
	if err != nil {
		t.Fatal(err)
	}
	sc.note("lock: %s; dependency %s", lockSummary(lock), fnRef)
}

// waitXRDEstablished waits until Crossplane has established the XRD's
// composite CRD and, for an XRD with a claim, offered its claim CRD.
// apiextensions.crossplane.io/v2 XRDs have no claims and never report
// Offered.
func waitXRDEstablished(ctx context.Context, t *testing.T, name string, offered bool) {
	t.Helper()
	what := "XRD " + name + " Established"
	if offered {
		what += " and Offered"
	}
	err := kube.Eventually(ctx, 90*time.Second, 200*time.Millisecond, what, func(ctx context.Context) (bool, string, error) {
		x, err := env.admin.Get(ctx, xrdGVK, "", name)
		if err != nil {
			return false, "", err
		}
		e, _, _ := kube.Condition(x, "Established")
		o, _, _ := kube.Condition(x, "Offered")
		return e == "True" && (!offered || o == "True"), kube.ConditionsSummary(x), nil
	})
	if err != nil {
		t.Fatal(err)
	}
	env.admin.ResetDiscovery()
}

// ownerOfKind is the name of o's owner of the given kind.
func ownerOfKind(o *unstructured.Unstructured, kind string) string {
	for _, r := range o.GetOwnerReferences() {
		if r.Kind == kind {
			return r.Name
		}
	}
	return ""
}

// lockSummary lists the Lock's packages with their dependencies.
func lockSummary(lock *unstructured.Unstructured) string {
	pkgs, _, _ := unstructured.NestedSlice(lock.Object, "packages")
	var out []string
	for _, p := range pkgs {
		m, _ := p.(map[string]any)
		deps, _ := m["dependencies"].([]any)
		out = append(out, fmt.Sprintf("%v %v@%v (%d deps)", m["kind"], m["name"], m["version"], len(deps)))
	}
	slices.Sort(out)
	return strings.Join(out, ", ")
}

// checkPackaged asserts that the XRD name and its Composition come from the
// ConfigurationRevision rev (refs are its objectRefs) and that the
// Composition calls the function.
func checkPackaged(ctx context.Context, t *testing.T, rev string, refs []fnpackage.ObjectRef, name string) {
	t.Helper()
	xrd, err := env.admin.Get(ctx, xrdGVK, "", name)
	if err != nil {
		t.Fatalf("XRD %s: %v", name, err)
	}
	comp, err := env.admin.Get(ctx, compositionGVK, "", name)
	if err != nil {
		t.Fatalf("Composition %s: %v", name, err)
	}
	for _, o := range []*unstructured.Unstructured{xrd, comp} {
		what := o.GetKind() + " " + o.GetName()
		if !slices.ContainsFunc(refs, func(r fnpackage.ObjectRef) bool { return r.UID == string(o.GetUID()) }) {
			t.Errorf("%s established %v, not the %s (uid %s)", rev, refs, what, o.GetUID())
		}
		if owner := ownerOfKind(o, "ConfigurationRevision"); owner != rev {
			t.Errorf("%s is owned by ConfigurationRevision %q, want %q: it must come from the package", what, owner, rev)
		}
	}
	steps, _, _ := unstructured.NestedSlice(comp.Object, "spec", "pipeline")
	if len(steps) == 0 || !strings.Contains(fmt.Sprint(steps), RealFunctionName) {
		t.Errorf("Composition %s pipeline %v does not call %s", name, steps, RealFunctionName)
	}
}
