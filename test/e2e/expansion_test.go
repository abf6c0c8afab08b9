//go:build e2e

package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/inferno-ai/function-inferno/test/e2e/kube"
)

// expansionCorpus is the function's internal/resolve/testdata/expansion.json:
// a container's environment and arguments, with what the function's
// expansion (resolve.Expand) says the process receives. The function's
// policy judges that, so it must be what the kubelet hands the process.
type expansionCorpus struct {
	Pod  string          `json:"pod"`
	Env  []corev1.EnvVar `json:"env"`
	Args []struct {
		Arg      string `json:"arg"`
		Receives string `json:"receives"`
	} `json:"args"`
}

// serverReceives (scenario 34): the real kubelet on the real node runs a
// container with the corpus's environment and arguments, and the process
// prints the argv it was given; every argument must be what the function
// predicted. Tricky spellings: $(VAR) inside words, $$ escapes, unknown
// and unclosed references, a variable defined after its use, one from a
// field (valueFrom) and one built on it.
func (s *infernoSuite) serverReceives(t *testing.T) {
	if env.node == nil {
		t.Skip("no real node (-real-node=false)")
	}
	ctx := context.Background()
	sc := env.summary.start(t, "34 what a server receives (real kubelet)")
	sc.onRealNode(false)
	b, err := os.ReadFile(filepath.Join("..", "..", "internal", "resolve", "testdata", "expansion.json"))
	if err != nil {
		t.Fatal(err)
	}
	var corpus expansionCorpus
	if err := json.Unmarshal(b, &corpus); err != nil {
		t.Fatal(err)
	}
	const ns = "e2e-expansion"
	if err := env.createTeamNamespace(ctx, ns); err != nil {
		t.Fatal(err)
	}
	defer func() {
		_ = env.admin.Typed.CoreV1().Namespaces().Delete(context.Background(), ns, metav1.DeleteOptions{})
	}()

	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: corpus.Pod, Namespace: ns},
		Spec:       *harnessJob(ns, corpus.Pod, "", "").Spec.Template.Spec.DeepCopy(),
	}
	onRealNode(&pod.Spec)
	c := &pod.Spec.Containers[0]
	c.Image, c.ImagePullPolicy = busyboxImage, corev1.PullIfNotPresent
	// Each argument as it arrived, NUL-terminated: no argument can hold a
	// NUL, so none can forge a split.
	c.Command = []string{"/bin/sh", "-c", `for a in "$@"; do printf '%s\0' "$a"; done`, "argv"}
	c.Env = corpus.Env
	want := make([]string, len(corpus.Args))
	for i, a := range corpus.Args {
		c.Args = append(c.Args, a.Arg)
		want[i] = a.Receives
	}
	pod.Spec.TerminationGracePeriodSeconds = ptr.To[int64](0)
	start := time.Now()
	if _, err := env.admin.Typed.CoreV1().Pods(ns).Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := kube.Eventually(ctx, 90*time.Second, 200*time.Millisecond, "the argv pod Succeeded", func(ctx context.Context) (bool, string, error) {
		p, err := env.admin.Typed.CoreV1().Pods(ns).Get(ctx, corpus.Pod, metav1.GetOptions{})
		if err != nil {
			return false, "", err
		}
		if p.Status.Phase == corev1.PodFailed {
			return false, "", fmt.Errorf("the argv pod failed: %s", p.Status.Message)
		}
		return p.Status.Phase == corev1.PodSucceeded, string(p.Status.Phase), nil
	}); err != nil {
		t.Fatal(err)
	}
	logs, err := env.admin.Typed.CoreV1().Pods(ns).GetLogs(corpus.Pod, &corev1.PodLogOptions{}).DoRaw(ctx)
	if err != nil {
		t.Fatal(err)
	}
	got := strings.Split(strings.TrimSuffix(string(logs), "\x00"), "\x00")
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("the kubelet handed the process other arguments than the function's expansion predicts (-function +kubelet):\n%s", diff)
	}
	sc.note("%d arguments, %d variables (one from a field): the kubelet's argv matches the function's expansion; pod Succeeded in %.1fs", len(want), len(corpus.Env), time.Since(start).Seconds())
}
