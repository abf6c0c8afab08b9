package fnpackage

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/inferno-ai/function-inferno/test/e2e/controlplane"
	"github.com/inferno-ai/function-inferno/test/e2e/crossplanecore"
	"github.com/inferno-ai/function-inferno/test/e2e/kube"
)

// Kinds of Crossplane's package manager.
var (
	FunctionGVK         = schema.GroupVersionKind{Group: "pkg.crossplane.io", Version: "v1", Kind: "Function"}
	FunctionRevisionGVK = schema.GroupVersionKind{Group: "pkg.crossplane.io", Version: "v1", Kind: "FunctionRevision"}
)

// BuildOptions say how to make and publish the package.
type BuildOptions struct {
	// CLI is the crossplane CLI (xpkg build/push).
	CLI string
	// ModuleDir and Package locate the function's main package; it is built
	// static (CGO_ENABLED=0) because it runs from an empty base image.
	ModuleDir, Package string
	// PackageRoot holds crossplane.yaml (meta.pkg.crossplane.io Function)
	// and the input CRD; ExamplesRoot is embedded as examples.
	PackageRoot, ExamplesRoot string
	// WorkDir receives the binary, runtime.tar and the .xpkg.
	WorkDir string
	LogDir  string
	// Ref is where to push, e.g. 127.0.0.1:5000/function-inferno:v0.0.0-e2e.
	Ref string
}

// Built is what BuildAndPush made.
type Built struct {
	Binary, RuntimeTarball, Xpkg, Ref string
}

// BuildAndPush builds the binary, the runtime image and the package, and
// pushes the package to the registry.
func BuildAndPush(ctx context.Context, o BuildOptions) (*Built, error) {
	b := &Built{
		Binary:         filepath.Join(o.WorkDir, "function"),
		RuntimeTarball: filepath.Join(o.WorkDir, "runtime.tar"),
		Xpkg:           filepath.Join(o.WorkDir, "function.xpkg"),
		Ref:            o.Ref,
	}
	build := func(ctx context.Context) error {
		return controlplane.RunCommandIn(ctx, o.ModuleDir, "function-build", o.LogDir, "go",
			[]string{"build", "-trimpath", "-o", b.Binary, o.Package}, "CGO_ENABLED=0")
	}
	if err := build(ctx); err != nil {
		return nil, err
	}
	if err := BuildRuntimeImage(b.Binary, b.RuntimeTarball, "function-runtime:e2e"); err != nil {
		return nil, fmt.Errorf("runtime image: %w", err)
	}
	_ = os.Remove(b.Xpkg)
	args := []string{"xpkg", "build",
		"--package-root=" + o.PackageRoot,
		"--embed-runtime-image-tarball=" + b.RuntimeTarball,
		"--package-file=" + b.Xpkg,
	}
	if o.ExamplesRoot != "" {
		args = append(args, "--examples-root="+o.ExamplesRoot)
	}
	if err := controlplane.RunCommand(ctx, "xpkg-build", o.LogDir, o.CLI, args); err != nil {
		return nil, err
	}
	if err := controlplane.RunCommand(ctx, "xpkg-push", o.LogDir, o.CLI, []string{"xpkg", "push", "-f", b.Xpkg, o.Ref}); err != nil {
		return nil, err
	}
	return b, nil
}

// Runner plays the External package runtime for one Function: it holds the
// server certificate Crossplane's CA signed for it and (re)starts its
// process.
type Runner struct {
	Name     string // the Function's name
	Binary   string
	CertsDir string
	Port     int
	Debug    bool
	// ExtraArgs are appended to the function's command line.
	ExtraArgs []string

	cp      *controlplane.ControlPlane
	process *controlplane.Process
}

// Endpoint is the gRPC target written into the FunctionRevision status. An
// IP rather than localhost, so Crossplane dials 127.0.0.1 and nothing else;
// the server certificate carries the IP as a SAN.
func (r *Runner) Endpoint() string { return fmt.Sprintf("dns:///127.0.0.1:%d", r.Port) }

// InstallOptions say which package to install and how to run it.
type InstallOptions struct {
	Name    string // metadata.name of the Function
	Ref     string
	Binary  string
	WorkDir string
	Debug   bool
	// ExtraArgs are appended to the function's command line, e.g. to move
	// its metrics server off the default :8080.
	ExtraArgs []string
}

// Install applies the Function, waits for Crossplane to unpack it into a
// FunctionRevision, then does what the Deployment runtime would have done:
// a server certificate signed by crossplane-root-ca in Secret
// <name>-tls-server, the revision's status.tlsServerSecretName and
// status.endpoint, and the running function. It returns once the revision
// is Healthy.
func Install(ctx context.Context, cp *controlplane.ControlPlane, admin *kube.Client, o InstallOptions) (*Runner, error) {
	fn := &unstructured.Unstructured{}
	fn.SetGroupVersionKind(FunctionGVK)
	fn.SetName(o.Name)
	_ = unstructured.SetNestedField(fn.Object, o.Ref, "spec", "package")
	if _, err := admin.Apply(ctx, fn); err != nil {
		return nil, err
	}

	var rev *unstructured.Unstructured
	if err := kube.Eventually(ctx, 2*time.Minute, 250*time.Millisecond, "FunctionRevision of "+o.Name, func(ctx context.Context) (bool, string, error) {
		revs, err := admin.List(ctx, FunctionRevisionGVK, "", "pkg.crossplane.io/package="+o.Name)
		if err != nil {
			return false, "", err
		}
		f, err := admin.Get(ctx, FunctionGVK, "", o.Name)
		if err != nil {
			return false, "", err
		}
		for i := range revs {
			if s, _, _ := unstructured.NestedString(revs[i].Object, "spec", "desiredState"); s == "Active" {
				rev = &revs[i]
				return true, "", nil
			}
		}
		return false, "Function: " + kube.ConditionsSummary(f), nil
	}); err != nil {
		return nil, err
	}

	port, err := controlplane.FreePort()
	if err != nil {
		return nil, err
	}
	r := &Runner{Name: o.Name, Binary: o.Binary, CertsDir: filepath.Join(o.WorkDir, "tls-"+o.Name), Port: port, Debug: o.Debug, ExtraArgs: o.ExtraArgs, cp: cp}
	secretName := o.Name + "-tls-server"
	if err := r.writeServerCert(ctx, admin, secretName); err != nil {
		return nil, err
	}
	if err := r.Start(ctx); err != nil {
		return nil, err
	}
	status := map[string]any{"status": map[string]any{"tlsServerSecretName": secretName, "endpoint": r.Endpoint()}}
	if err := patchRevisionStatus(ctx, admin, rev.GetName(), status); err != nil {
		return nil, err
	}
	if err := kube.Eventually(ctx, 2*time.Minute, 250*time.Millisecond, "FunctionRevision "+rev.GetName()+" Healthy", func(ctx context.Context) (bool, string, error) {
		got, err := admin.Get(ctx, FunctionRevisionGVK, "", rev.GetName())
		if err != nil {
			return false, "", err
		}
		// Crossplane rewrites status wholesale on some reconciles; keep
		// our fields in place as a runtime controller would.
		if ep, _, _ := unstructured.NestedString(got.Object, "status", "endpoint"); ep != r.Endpoint() {
			return false, "endpoint not set", patchRevisionStatus(ctx, admin, rev.GetName(), status)
		}
		// Crossplane v2.4 calls it RevisionHealthy; older versions Healthy.
		s, _, _ := kube.Condition(got, "RevisionHealthy")
		if s == "" {
			s, _, _ = kube.Condition(got, "Healthy")
		}
		return s == "True", kube.ConditionsSummary(got), nil
	}); err != nil {
		return nil, err
	}
	return r, nil
}

func patchRevisionStatus(ctx context.Context, admin *kube.Client, name string, status map[string]any) error {
	ri, err := admin.Resource(FunctionRevisionGVK, "")
	if err != nil {
		return err
	}
	b, err := (&unstructured.Unstructured{Object: status}).MarshalJSON()
	if err != nil {
		return err
	}
	_, err = ri.Patch(ctx, name, types.MergePatchType, b, metav1.PatchOptions{}, "status")
	if err != nil {
		return fmt.Errorf("patch FunctionRevision %s status: %w", name, err)
	}
	return nil
}

// writeServerCert signs the function's server certificate with Crossplane's
// root CA (so Crossplane's client trusts it, and it trusts Crossplane's
// client certificate), stores it as the Secret the revision names, and
// writes tls.crt/tls.key/ca.crt where --tls-certs-dir expects them.
func (r *Runner) writeServerCert(ctx context.Context, admin *kube.Client, secretName string) error {
	root, err := admin.Typed.CoreV1().Secrets(crossplanecore.Namespace).Get(ctx, crossplanecore.TLSCASecretName, metav1.GetOptions{})
	if err != nil {
		return fmt.Errorf("crossplane root CA: %w", err)
	}
	ca, err := controlplane.LoadCertificateAuthority(root.Data["tls.crt"], root.Data["tls.key"])
	if err != nil {
		return fmt.Errorf("crossplane root CA: %w", err)
	}
	kp, err := ca.ServingCert(r.Name, []string{"localhost", r.Name, r.Name + "." + crossplanecore.Namespace}, []net.IP{net.ParseIP("127.0.0.1")})
	if err != nil {
		return err
	}
	data := map[string][]byte{"tls.crt": kp.CertPEM, "tls.key": kp.KeyPEM, "ca.crt": ca.CertPEM}
	if err := os.MkdirAll(r.CertsDir, 0o700); err != nil {
		return err
	}
	for k, v := range data {
		if err := os.WriteFile(filepath.Join(r.CertsDir, k), v, 0o600); err != nil {
			return err
		}
	}
	s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: secretName, Namespace: crossplanecore.Namespace}, Type: corev1.SecretTypeTLS, Data: data}
	_, err = admin.Typed.CoreV1().Secrets(crossplanecore.Namespace).Create(ctx, s, metav1.CreateOptions{})
	if apierrors.IsAlreadyExists(err) {
		_, err = admin.Typed.CoreV1().Secrets(crossplanecore.Namespace).Update(ctx, s, metav1.UpdateOptions{})
	}
	return err
}

// Start runs the function with the flags of function-template-go and waits
// until its port accepts connections.
func (r *Runner) Start(ctx context.Context) error {
	args := []string{fmt.Sprintf("--address=127.0.0.1:%d", r.Port), "--tls-certs-dir=" + r.CertsDir}
	if r.Debug {
		args = append(args, "--debug")
	}
	args = append(args, r.ExtraArgs...)
	p, err := r.cp.StartProcess(r.Name, r.Binary, args)
	if err != nil {
		return err
	}
	r.process = p
	addr := fmt.Sprintf("127.0.0.1:%d", r.Port)
	return controlplane.WaitFor(ctx, 30*time.Second, r.Name+" listening", p, 100*time.Millisecond, func(context.Context) (bool, error) {
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err != nil {
			return false, err
		}
		_ = c.Close()
		return true, nil
	})
}

// Kill ends the function abruptly, as a crash or an evicted pod would.
func (r *Runner) Kill() {
	if r.process != nil {
		r.process.Kill()
	}
}

// Process is the running function process.
func (r *Runner) Process() *controlplane.Process { return r.process }
