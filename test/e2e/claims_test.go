//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/inferno-ai/function-inferno/test/e2e/controlplane"
	"github.com/inferno-ai/function-inferno/test/e2e/kube"
)

// --- helpers ----------------------------------------------------------------

// exampleClaim is examples/claim.yaml with another namespace and name: the
// claim an app team would write.
func exampleClaim(t *testing.T, ns, name string) *unstructured.Unstructured {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(repoRoot(), "examples", "claim.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	objs, err := kube.DecodeYAML(b)
	if err != nil || len(objs) != 1 {
		t.Fatalf("examples/claim.yaml: %v (%d objects)", err, len(objs))
	}
	c := objs[0]
	if c.GroupVersionKind() != claimGVK {
		t.Fatalf("examples/claim.yaml is a %s, want %s", c.GroupVersionKind(), claimGVK)
	}
	c.SetNamespace(ns)
	c.SetName(name)
	return c
}

// smallClaim is a CPU-only claim (the node has 8 GPUs; fifty claims must
// fit) without autoscaling, for the fault and stress scenarios. Its
// framework is "fake", the preset meant for tests: a vLLM claim without a
// GPU draws a warning on every reconcile, and Crossplane turns each into
// Events on the composite and the claim, which at fifty claims is API
// server load the scenario is not about.
func smallClaim(t *testing.T, ns, name string) *unstructured.Unstructured {
	c := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": claimGVK.GroupVersion().String(),
		"kind":       claimGVK.Kind,
		"metadata":   map[string]any{"name": name, "namespace": ns},
		"spec": map[string]any{
			"model":     map[string]any{"uri": "hf://e2e/tiny-" + name, "version": "1", "framework": "fake"},
			"replicas":  map[string]any{"min": int64(1), "max": int64(1)},
			"resources": map[string]any{"cpu": "100m", "memory": "256Mi", "gpu": int64(0)},
			"storage":   map[string]any{"size": "1Gi"},
		},
	}}
	return c
}

func setField(o *unstructured.Unstructured, v any, path ...string) {
	if err := unstructured.SetNestedField(o.Object, v, path...); err != nil {
		panic(err)
	}
}

func applyClaim(ctx context.Context, t *testing.T, c *unstructured.Unstructured) {
	t.Helper()
	if _, err := env.admin.Apply(ctx, c); err != nil {
		t.Fatal(err)
	}
}

// createCredentials makes the Secret examples/claim.yaml refers to. kwok
// never reads it, but a real cluster would need it.
func createCredentials(ctx context.Context, t *testing.T, ns string) {
	t.Helper()
	s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "hf-credentials", Namespace: ns}, StringData: map[string]string{"HF_TOKEN": "hf_e2e_not_a_token"}}
	if _, err := env.admin.Typed.CoreV1().Secrets(ns).Create(ctx, s, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
}

// waitClaimsReady waits until every named claim in ns is Ready=True.
func waitClaimsReady(ctx context.Context, t *testing.T, ns string, names []string, timeout time.Duration) {
	t.Helper()
	err := kube.Eventually(ctx, timeout, 500*time.Millisecond, fmt.Sprintf("%d claims in %s Ready", len(names), ns), func(ctx context.Context) (bool, string, error) {
		claims, err := env.admin.List(ctx, claimGVK, ns, "")
		if err != nil {
			return false, "", err
		}
		ready := map[string]bool{}
		var example string
		for i := range claims {
			if st, _, _ := kube.Condition(&claims[i], "Ready"); st == "True" {
				ready[claims[i].GetName()] = true
			} else if example == "" {
				phase, _, _ := unstructured.NestedString(claims[i].Object, "status", "phase")
				example = fmt.Sprintf("e.g. %s: phase %q %s", claims[i].GetName(), phase, kube.ConditionsSummary(&claims[i]))
			}
		}
		n := 0
		for _, name := range names {
			if ready[name] {
				n++
			}
		}
		return n == len(names), fmt.Sprintf("%d/%d Ready; %s", n, len(names), example), nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func controllerName(refs []metav1.OwnerReference) string {
	for _, r := range refs {
		if r.Controller != nil && *r.Controller {
			return r.Name
		}
	}
	return ""
}

func contains(list []string, s string) bool {
	for _, e := range list {
		if e == s || e == "*" {
			return true
		}
	}
	return false
}

func toAny(s []string) []any {
	out := make([]any, len(s))
	for i, v := range s {
		out[i] = v
	}
	return out
}

func minDur(a, b time.Duration) time.Duration {
	if a < b {
		return a
	}
	return b
}

// cpuByProcess snapshots the CPU time of every process the test started.
func cpuByProcess() map[string]float64 {
	out := map[string]float64{}
	for _, p := range env.cp.Processes() {
		out[p.Name] += p.CPUSeconds()
	}
	if env.node != nil {
		for _, p := range env.node.Processes() {
			out[p.Name] += p.CPUSeconds()
		}
	}
	return out
}

// cpuSpent renders the CPU seconds each process used between two
// snapshots, biggest first.
func cpuSpent(before, after map[string]float64) string {
	type use struct {
		name string
		sec  float64
	}
	var uses []use
	for name, a := range after {
		if d := a - before[name]; d >= 0.5 {
			uses = append(uses, use{name, d})
		}
	}
	sort.Slice(uses, func(i, j int) bool { return uses[i].sec > uses[j].sec })
	var parts []string
	for _, u := range uses {
		parts = append(parts, fmt.Sprintf("%s %.0f", u.name, u.sec))
	}
	return strings.Join(parts, ", ")
}

// profileAPIServer saves a CPU profile of the API server, for -profile.
func profileAPIServer(t *testing.T, d time.Duration, path string) {
	c, err := env.cp.HTTPClient(controlplane.Admin)
	if err != nil {
		t.Log(err)
		return
	}
	resp, err := c.Get(fmt.Sprintf("%s/debug/pprof/profile?seconds=%d", env.cp.URL, int(d.Seconds())))
	if err != nil {
		t.Log(err)
		return
	}
	defer resp.Body.Close()
	f, err := os.Create(path)
	if err != nil {
		t.Log(err)
		return
	}
	defer f.Close()
	if _, err := io.Copy(f, resp.Body); err != nil {
		t.Log(err)
		return
	}
	t.Logf("API server CPU profile: %s (go tool pprof -top %s)", path, path)
}

func mustRead(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

// countInLog counts the lines of a log under the run's log directory that
// contain substr.
func countInLog(name, substr string) int {
	b, err := os.ReadFile(filepath.Join(env.logDir(), name))
	if err != nil {
		return 0
	}
	return strings.Count(string(b), substr)
}
