//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/inferno-ai/function-inferno/test/e2e/kube"
)

// hostController is an upstream controller run on the host for a scenario
// (the LWS controller, KEDA's operator, a claim's endpoint picker) as it
// would run in its pod: its own ServiceAccount's token, its own RBAC. Its log is in the run's
// log directory; the scenario's cleanup interrupts it (then kills it).
type hostController struct {
	name   string
	cmd    *exec.Cmd
	log    string
	exited chan struct{}
}

// startHostController runs bin with args and environ (beside the test's own
// environment) and registers its stop. Cleanups registered after this run
// before the stop.
func startHostController(t *testing.T, name, bin string, args, environ []string) *hostController {
	t.Helper()
	h := &hostController{name: name, log: filepath.Join(env.logDir(), name+".log"), exited: make(chan struct{})}
	logf, err := os.Create(h.log)
	if err != nil {
		t.Fatal(err)
	}
	h.cmd = exec.Command(bin, args...)
	h.cmd.Env = append(os.Environ(), environ...)
	h.cmd.Stdout, h.cmd.Stderr = logf, logf
	if err := h.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { _ = h.cmd.Wait(); close(h.exited) }()
	t.Cleanup(func() {
		_ = h.cmd.Process.Signal(os.Interrupt)
		select {
		case <-h.exited:
		case <-time.After(10 * time.Second):
			_ = h.cmd.Process.Kill()
			<-h.exited
		}
		logf.Close()
	})
	return h
}

// waitReady waits until the controller's health probe answers 200 on
// readyz and each of also holds, failing the test if the process exits.
func (h *hostController) waitReady(ctx context.Context, t *testing.T, readyz string, also ...func() (bool, string)) {
	t.Helper()
	err := kube.Eventually(ctx, time.Minute, 200*time.Millisecond, h.name+" ready", func(ctx context.Context) (bool, string, error) {
		select {
		case <-h.exited:
			return false, "", fmt.Errorf("%s exited: %s; log: %s", h.name, h.cmd.ProcessState, tail(h.log, 5))
		default:
		}
		for _, f := range also {
			if ok, why := f(); !ok {
				return false, why, nil
			}
		}
		resp, err := http.Get(readyz)
		if err != nil {
			return false, err.Error(), nil
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK, "readyz " + resp.Status, nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// refusals are the lines of its log where the API server refused it
// something: its RBAC fell short of what it does.
func (h *hostController) refusals() []string {
	b, _ := os.ReadFile(h.log)
	var out []string
	for _, line := range strings.Split(string(b), "\n") {
		if strings.Contains(line, "is forbidden") {
			out = append(out, truncate(line, 300))
		}
	}
	return out
}

// controllerIdentity gives a host controller the identity its release
// manifests give it: ServiceAccount sa in namespace ns, bound to every
// ClusterRole and Role of rolesFile (the module's own RBAC), each named
// with prefix as the release's kustomization names them. All of it goes
// when the scenario ends.
func controllerIdentity(ctx context.Context, t *testing.T, ns, sa, rolesFile, prefix string) {
	t.Helper()
	c := env.admin.Typed
	if _, err := c.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.CoreV1().Namespaces().Delete(context.Background(), ns, metav1.DeleteOptions{}) })
	if _, err := c.CoreV1().ServiceAccounts(ns).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: sa}}, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	objs, err := kube.DecodeYAML(mustRead(t, rolesFile))
	if err != nil || len(objs) == 0 {
		t.Fatalf("%s: %v (%d objects)", rolesFile, err, len(objs))
	}
	subjects := []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: sa, Namespace: ns}}
	for _, o := range objs {
		name := prefix + o.GetName()
		ref := rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: o.GetKind(), Name: name}
		switch o.GetKind() {
		case "ClusterRole":
			var role rbacv1.ClusterRole
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(o.Object, &role); err != nil {
				t.Fatal(err)
			}
			role.Name = name
			if _, err := c.RbacV1().ClusterRoles().Create(ctx, &role, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
				t.Fatal(err)
			}
			b := &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: name}, Subjects: subjects, RoleRef: ref}
			if _, err := c.RbacV1().ClusterRoleBindings().Create(ctx, b, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
				t.Fatal(err)
			}
			t.Cleanup(func() {
				ctx := context.Background()
				_ = c.RbacV1().ClusterRoleBindings().Delete(ctx, name, metav1.DeleteOptions{})
				_ = c.RbacV1().ClusterRoles().Delete(ctx, name, metav1.DeleteOptions{})
			})
		case "Role":
			// In the controller's namespace, which the namespace's
			// deletion takes with it.
			var role rbacv1.Role
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(o.Object, &role); err != nil {
				t.Fatal(err)
			}
			role.Name, role.Namespace = name, ns
			if _, err := c.RbacV1().Roles(ns).Create(ctx, &role, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
				t.Fatal(err)
			}
			b := &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}, Subjects: subjects, RoleRef: ref}
			if _, err := c.RbacV1().RoleBindings(ns).Create(ctx, b, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
				t.Fatal(err)
			}
		default:
			t.Fatalf("%s: a %s, not a ClusterRole or Role", rolesFile, o.GetKind())
		}
	}
}
