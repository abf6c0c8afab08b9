//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/inferno-ai/function-inferno/test/e2e/kube"
)

// TestHarness checks the simulation itself before any scenario relies on
// it: that kwok's Stages complete and fail Jobs the way the scenarios
// assume, and that the stand-in provisioner binds a WaitForFirstConsumer
// claim once a pod mounts it. If this fails, the scenarios' failures say
// nothing about the function.
func TestHarness(t *testing.T) {
	ctx := context.Background()
	sc := env.summary.start(t, "harness: kwok stages + provisioner")
	const ns = "e2e-harness"
	if err := env.createTeamNamespace(ctx, ns); err != nil {
		t.Fatal(err)
	}
	pvc := &corev1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Name: "weights", Namespace: ns},
		Spec: corev1.PersistentVolumeClaimSpec{
			AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			Resources:   corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}},
		},
	}
	if _, err := env.admin.Typed.CoreV1().PersistentVolumeClaims(ns).Create(ctx, pvc, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	ok := harnessJob(ns, "pull-ok", "hf://e2e/model", "weights")
	bad := harnessJob(ns, "pull-bad", "hf://e2e/e2e-pull-fails", "")
	for _, j := range []*batchv1.Job{ok, bad} {
		if _, err := env.admin.Typed.BatchV1().Jobs(ns).Create(ctx, j, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	if w := env.admin.TakeWarnings(); len(w) > 0 {
		t.Errorf("the harness's own restricted pod template drew warnings: %q", w)
	}
	if err := waitJob(ctx, ns, "pull-ok", batchv1.JobComplete, time.Minute); err != nil {
		t.Error(err)
	} else {
		sc.note("Job Complete in %.1fs", time.Since(start).Seconds())
	}
	if err := waitJob(ctx, ns, "pull-bad", batchv1.JobFailed, time.Minute); err != nil {
		t.Error(err)
	} else {
		sc.note("marked Job Failed in %.1fs", time.Since(start).Seconds())
	}
	got, err := env.admin.Typed.CoreV1().PersistentVolumeClaims(ns).Get(ctx, "weights", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got.Status.Phase != corev1.ClaimBound {
		t.Errorf("PVC weights is %s after its Job completed, want Bound (annotations %v)", got.Status.Phase, got.Annotations)
	}
	// Clean up so the namespace does not count in later checks.
	_ = env.admin.Typed.CoreV1().Namespaces().Delete(ctx, ns, metav1.DeleteOptions{})
}

// harnessJob is a restricted-compliant, single-try Job that "pulls" uri,
// optionally mounting a PVC.
func harnessJob(ns, name, uri, pvc string) *batchv1.Job {
	pod := corev1.PodSpec{
		RestartPolicy: corev1.RestartPolicyNever,
		SecurityContext: &corev1.PodSecurityContext{
			RunAsNonRoot:   ptr.To(true),
			RunAsUser:      ptr.To[int64](65532),
			SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
		},
		Containers: []corev1.Container{{
			Name:  "pull",
			Image: "registry.invalid/puller:e2e",
			Env:   []corev1.EnvVar{{Name: "MODEL_URI", Value: uri}},
			SecurityContext: &corev1.SecurityContext{
				AllowPrivilegeEscalation: ptr.To(false),
				Capabilities:             &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
			},
		}},
	}
	if pvc != "" {
		pod.Volumes = []corev1.Volume{{Name: "weights", VolumeSource: corev1.VolumeSource{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: pvc}}}}
		pod.Containers[0].VolumeMounts = []corev1.VolumeMount{{Name: "weights", MountPath: "/models"}}
	}
	return &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec:       batchv1.JobSpec{BackoffLimit: ptr.To[int32](0), Template: corev1.PodTemplateSpec{Spec: pod}},
	}
}

func waitJob(ctx context.Context, ns, name string, cond batchv1.JobConditionType, timeout time.Duration) error {
	return kube.Eventually(ctx, timeout, 200*time.Millisecond, fmt.Sprintf("Job %s/%s %s", ns, name, cond), func(ctx context.Context) (bool, string, error) {
		j, err := env.admin.Typed.BatchV1().Jobs(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, "", err
		}
		var conds []string
		for _, c := range j.Status.Conditions {
			if c.Type == cond && c.Status == corev1.ConditionTrue {
				return true, "", nil
			}
			conds = append(conds, fmt.Sprintf("%s=%s(%s)", c.Type, c.Status, c.Reason))
		}
		return false, fmt.Sprintf("active=%d succeeded=%d failed=%d conditions=%v", j.Status.Active, j.Status.Succeeded, j.Status.Failed, conds), nil
	})
}

// TestRealNodeHarness checks the real node before any scenario relies on
// it: a restricted Job on it downloads a file from the model origin into a
// volume of local-path-provisioner, and a second pod reads that volume
// read-only, as the servers will; both run as UID 65532, and their logs
// come back through the API server from the kubelet.
func TestRealNodeHarness(t *testing.T) {
	if env.node == nil {
		t.Skip("no real node (-real-node=false)")
	}
	ctx := context.Background()
	sc := env.summary.start(t, "harness: real node")
	sc.onRealNode(false)
	sc.note("node Ready and images imported in %.1fs", env.nodeSetup.Seconds())
	const ns = "e2e-realnode-harness"
	start := time.Now()
	if err := env.createTeamNamespace(ctx, ns); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(env.origin.Dir, "harness"), 0o755); err != nil {
		t.Fatal(err)
	}
	const content = "weights from the origin\n"
	if err := os.WriteFile(filepath.Join(env.origin.Dir, "harness", "hello.txt"), []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	class := RealStorageClass
	pvc := &corev1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Name: "data", Namespace: ns},
		Spec: corev1.PersistentVolumeClaimSpec{
			StorageClassName: &class,
			AccessModes:      []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			Resources:        corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}},
		},
	}
	if _, err := env.admin.Typed.CoreV1().PersistentVolumeClaims(ns).Create(ctx, pvc, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	job := harnessJob(ns, "download", "", "data")
	pod := &job.Spec.Template.Spec
	onRealNode(pod)
	pod.Containers[0].Image = httpPullerImage
	pod.Containers[0].Command = []string{"/bin/sh", "-c", `curl -fsS "$ORIGIN/harness/hello.txt" -o /models/hello.txt`}
	pod.Containers[0].Env = []corev1.EnvVar{{Name: "ORIGIN", Value: env.origin.URL}, {Name: "HOME", Value: "/tmp"}}
	if _, err := env.admin.Typed.BatchV1().Jobs(ns).Create(ctx, job, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := waitJob(ctx, ns, "download", batchv1.JobComplete, 2*time.Minute); err != nil {
		t.Fatal(err)
	}
	sc.note("namespace → download Job Complete in %.1fs", time.Since(start).Seconds())
	if n := env.origin.Served("/harness/hello.txt"); n != 1 {
		t.Errorf("the origin served /harness/hello.txt %d times, want 1", n)
	}

	reader := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "reader", Namespace: ns},
		Spec:       *harnessJob(ns, "reader", "", "data").Spec.Template.Spec.DeepCopy(),
	}
	onRealNode(&reader.Spec)
	reader.Spec.Volumes[0].PersistentVolumeClaim.ReadOnly = true
	reader.Spec.Containers[0].VolumeMounts[0].ReadOnly = true
	reader.Spec.Containers[0].Image = httpPullerImage
	reader.Spec.Containers[0].Command = []string{"/bin/sh", "-c", `cat /models/hello.txt
if (echo x > /models/probe) 2>/dev/null; then echo WRITABLE; else echo READONLY; fi`}
	if _, err := env.admin.Typed.CoreV1().Pods(ns).Create(ctx, reader, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := kube.Eventually(ctx, time.Minute, 200*time.Millisecond, "reader pod Succeeded", func(ctx context.Context) (bool, string, error) {
		p, err := env.admin.Typed.CoreV1().Pods(ns).Get(ctx, "reader", metav1.GetOptions{})
		if err != nil {
			return false, "", err
		}
		if p.Status.Phase == corev1.PodFailed {
			return false, "", fmt.Errorf("reader pod failed: %s", p.Status.Message)
		}
		return p.Status.Phase == corev1.PodSucceeded, string(p.Status.Phase), nil
	}); err != nil {
		t.Fatal(err)
	}
	logs, err := env.admin.Typed.CoreV1().Pods(ns).GetLogs("reader", &corev1.PodLogOptions{}).DoRaw(ctx)
	if err != nil {
		t.Fatalf("logs through the API server from the kubelet: %v", err)
	}
	if want := content + "READONLY\n"; string(logs) != want {
		t.Errorf("reader pod printed %q, want %q", logs, want)
	}
	sc.note("read-only mount, logs via the kubelet: ok in %.1fs total", time.Since(start).Seconds())
	_ = env.admin.Typed.CoreV1().Namespaces().Delete(ctx, ns, metav1.DeleteOptions{})
}

// onRealNode places a pod on the real node's pool, as the real-node
// Composition's Input does for the function's pods.
func onRealNode(p *corev1.PodSpec) {
	p.NodeSelector = map[string]string{poolLabel: realPool}
	p.Tolerations = []corev1.Toleration{{Key: poolLabel, Operator: corev1.TolerationOpEqual, Value: realPool, Effect: corev1.TaintEffectNoSchedule}}
}
