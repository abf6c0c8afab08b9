package fnpackage

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/yaml"

	"github.com/inferno-ai/function-inferno/test/e2e/controlplane"
	"github.com/inferno-ai/function-inferno/test/e2e/kube"
)

// Kinds of Crossplane's package manager for Configurations.
var (
	ConfigurationGVK         = schema.GroupVersionKind{Group: "pkg.crossplane.io", Version: "v1", Kind: "Configuration"}
	ConfigurationRevisionGVK = schema.GroupVersionKind{Group: "pkg.crossplane.io", Version: "v1", Kind: "ConfigurationRevision"}
)

// ConfigurationOptions say how to make and publish a Configuration package.
type ConfigurationOptions struct {
	// CLI is the crossplane CLI (xpkg build/push).
	CLI string
	// PackageRoot holds crossplane.yaml (meta.pkg.crossplane.io
	// Configuration) and the objects, as `make xpkg` builds it.
	PackageRoot string
	// Ignore are paths relative to PackageRoot that are not part of the
	// package, with `xpkg build --ignore` wildcards: the same list the
	// Makefile passes.
	Ignore []string
	// FunctionRef is the reference the Function was pushed to, e.g.
	// 127.0.0.1:5000/function-inferno:v0.0.0-e2e. The package's Function
	// dependency is rewritten to its repository and tag, so that Crossplane
	// resolves it to the Function already installed from there.
	FunctionRef string
	// WorkDir receives the package root's copy and the .xpkg.
	WorkDir string
	LogDir  string
	// Ref is where to push, e.g. 127.0.0.1:5000/configuration-inferno:v0.0.0-e2e.
	Ref string
}

// BuildAndPushConfiguration copies the package root, rewrites the Function
// dependency in its crossplane.yaml, builds the package with the real
// `crossplane xpkg build` and pushes it. It returns the path of the .xpkg.
func BuildAndPushConfiguration(ctx context.Context, o ConfigurationOptions) (string, error) {
	fnRef, err := name.NewTag(o.FunctionRef, name.StrictValidation)
	if err != nil {
		return "", fmt.Errorf("function reference %q: %w", o.FunctionRef, err)
	}
	root := filepath.Join(o.WorkDir, "package")
	if err := os.RemoveAll(root); err != nil {
		return "", err
	}
	if err := copyYAML(o.PackageRoot, root, o.Ignore); err != nil {
		return "", err
	}
	meta := filepath.Join(root, "crossplane.yaml")
	b, err := os.ReadFile(meta)
	if err != nil {
		return "", err
	}
	b, err = RewriteFunctionDependency(b, fnRef.Context().Name(), fnRef.TagStr())
	if err != nil {
		return "", fmt.Errorf("%s: %w", filepath.Join(o.PackageRoot, "crossplane.yaml"), err)
	}
	if err := os.WriteFile(meta, b, 0o644); err != nil {
		return "", err
	}
	xpkg := filepath.Join(o.WorkDir, "configuration.xpkg")
	_ = os.Remove(xpkg)
	if err := controlplane.RunCommand(ctx, "xpkg-build-"+filepath.Base(o.WorkDir), o.LogDir, o.CLI,
		[]string{"xpkg", "build", "--package-root=" + root, "--package-file=" + xpkg}); err != nil {
		return "", err
	}
	if err := controlplane.RunCommand(ctx, "xpkg-push-"+filepath.Base(o.WorkDir), o.LogDir, o.CLI,
		[]string{"xpkg", "push", "-f", xpkg, o.Ref}); err != nil {
		return "", err
	}
	return xpkg, nil
}

// RewriteFunctionDependency points a package's one Function dependency at
// repository, pinned to version. A package without exactly one is an
// error: the Compositions call one Function.
func RewriteFunctionDependency(crossplaneYAML []byte, repository, version string) ([]byte, error) {
	var meta map[string]any
	if err := yaml.Unmarshal(crossplaneYAML, &meta); err != nil {
		return nil, err
	}
	deps, _, err := unstructured.NestedSlice(meta, "spec", "dependsOn")
	if err != nil {
		return nil, err
	}
	n := 0
	for _, d := range deps {
		dep, ok := d.(map[string]any)
		if !ok || dep["kind"] != "Function" {
			continue
		}
		dep["package"], dep["version"] = repository, version
		n++
	}
	if n != 1 {
		return nil, fmt.Errorf("spec.dependsOn has %d Function dependencies, want 1", n)
	}
	if err := unstructured.SetNestedSlice(meta, deps, "spec", "dependsOn"); err != nil {
		return nil, err
	}
	return yaml.Marshal(meta)
}

// copyYAML copies the YAML files under src to dst, less those ignore
// matches, as `xpkg build --ignore` would leave them out.
func copyYAML(src, dst string, ignore []string) error {
	return filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		if ext := filepath.Ext(path); ext != ".yaml" && ext != ".yml" {
			return nil
		}
		rel, err := filepath.Rel(src, path)
		if err != nil {
			return err
		}
		for _, pattern := range ignore {
			if ok, err := filepath.Match(pattern, rel); err != nil || ok {
				return err
			}
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		out := filepath.Join(dst, rel)
		if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
			return err
		}
		return os.WriteFile(out, b, 0o644)
	})
}

// InstalledConfiguration is what Crossplane made of a Configuration.
type InstalledConfiguration struct {
	Configuration, Revision *unstructured.Unstructured
}

// InstallConfiguration applies a pkg.crossplane.io/v1 Configuration of ref
// and waits until it is Installed and Healthy, which Crossplane reports
// only once the package's dependencies are resolved and healthy and its
// objects established.
func InstallConfiguration(ctx context.Context, admin *kube.Client, cfgName, ref string, timeout time.Duration) (*InstalledConfiguration, error) {
	c := &unstructured.Unstructured{}
	c.SetGroupVersionKind(ConfigurationGVK)
	c.SetName(cfgName)
	_ = unstructured.SetNestedField(c.Object, ref, "spec", "package")
	if _, err := admin.Apply(ctx, c); err != nil {
		return nil, err
	}
	out := &InstalledConfiguration{}
	err := kube.Eventually(ctx, timeout, 250*time.Millisecond, "Configuration "+cfgName+" Installed and Healthy", func(ctx context.Context) (bool, string, error) {
		got, err := admin.Get(ctx, ConfigurationGVK, "", cfgName)
		if err != nil {
			return false, "", err
		}
		out.Configuration = got
		installed, _, _ := kube.Condition(got, "Installed")
		healthy, _, _ := kube.Condition(got, "Healthy")
		why := "Configuration: " + kube.ConditionsSummary(got)
		revs, err := admin.List(ctx, ConfigurationRevisionGVK, "", "pkg.crossplane.io/package="+cfgName)
		if err != nil {
			return false, "", err
		}
		out.Revision = nil
		for i := range revs {
			if s, _, _ := unstructured.NestedString(revs[i].Object, "spec", "desiredState"); s == "Active" {
				out.Revision = &revs[i]
				why += "; revision " + revs[i].GetName() + ": " + kube.ConditionsSummary(&revs[i])
			}
		}
		return installed == "True" && healthy == "True" && out.Revision != nil, why, nil
	})
	if err != nil {
		return out, err
	}
	return out, nil
}

// Dependencies are a package revision's dependency counts.
type Dependencies struct {
	Found, Installed, Invalid int64
}

// RevisionDependencies reads a revision's dependency counts.
func RevisionDependencies(rev *unstructured.Unstructured) Dependencies {
	var d Dependencies
	d.Found, _, _ = unstructured.NestedInt64(rev.Object, "status", "foundDependencies")
	d.Installed, _, _ = unstructured.NestedInt64(rev.Object, "status", "installedDependencies")
	d.Invalid, _, _ = unstructured.NestedInt64(rev.Object, "status", "invalidDependencies")
	return d
}

// ObjectRef is one object a package revision established.
type ObjectRef struct {
	APIVersion, Kind, Name, UID string
}

// String is the reference as the test reports it.
func (r ObjectRef) String() string {
	return fmt.Sprintf("%s %s %s (uid %s)", r.APIVersion, r.Kind, r.Name, r.UID)
}

// ObjectRefs lists the objects a revision established. Crossplane v2.4
// leaves kind empty in them (seen in the e2e), so the UID is what
// identifies an object.
func ObjectRefs(rev *unstructured.Unstructured) []ObjectRef {
	refs, _, _ := unstructured.NestedSlice(rev.Object, "status", "objectRefs")
	var out []ObjectRef
	for _, r := range refs {
		m, _ := r.(map[string]any)
		str := func(k string) string { s, _ := m[k].(string); return s }
		out = append(out, ObjectRef{APIVersion: str("apiVersion"), Kind: str("kind"), Name: str("name"), UID: str("uid")})
	}
	return out
}

// ErrNoFunctionPackage says a Function has no spec.package.
var ErrNoFunctionPackage = errors.New("the Function has no spec.package")

// FunctionPackage is the package reference a Function was installed from.
func FunctionPackage(ctx context.Context, admin *kube.Client, fnName string) (string, error) {
	f, err := admin.Get(ctx, FunctionGVK, "", fnName)
	if err != nil {
		return "", err
	}
	p, _, _ := unstructured.NestedString(f.Object, "spec", "package")
	if strings.TrimSpace(p) == "" {
		return "", fmt.Errorf("function %s: %w", fnName, ErrNoFunctionPackage)
	}
	return p, nil
}
