//go:build e2e

package e2e

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/inferno-ai/function-inferno/test/e2e/kube"
)

// --- 16 serve -------------------------------------------------------------

// serve: a claim whose weights come from the origin over http. The real
// pull Job runs the built-in script and writes the marker; the server's
// probes pass for real; a completion through the Service returns the text
// only those weights produce; a second Job for the same weights is a no-op.
func (s *infernoSuite) serve(t *testing.T) {
	if env.node == nil {
		t.Skip("no real node (-real-node=false)")
	}
	ctx := context.Background()
	sc := env.summary.start(t, "16 serve (real node)")
	sc.onRealNode(false)
	if err := env.createTeamNamespace(ctx, realNS); err != nil {
		t.Fatal(err)
	}
	ensureRealCompositions(ctx, t)
	v1 := publishWeights(t, "chat-v1", "inferno chat v1")
	const name = "chat"
	start := time.Now()
	applyClaim(ctx, t, realClaim(t, name, v1.URI, "1", 1))

	job := waitPullComplete(ctx, t, realNS, name)
	pulled := time.Since(start)
	base := waitServiceURL(ctx, t, realNS, name, time.Minute)
	got, at := firstAnswer(ctx, t, base, name, 3*time.Minute)
	sc.note("apply → Job Complete %.1fs → first answer %.1fs", pulled.Seconds(), at.Sub(start).Seconds())
	if want := oracle(t, v1); got.Text != want {
		t.Errorf("the server answered %q, want %q: the text of the weights published as chat-v1", got.Text, want)
	}
	m, err := listModels(ctx, base)
	if err != nil {
		t.Fatal(err)
	}
	if m.ID != name || m.Version != "1" || m.Digest != got.Fingerprint || got.Weights != got.Fingerprint {
		t.Errorf("/v1/models says %+v; the answer's fingerprint %s, header %s", m, got.Fingerprint, got.Weights)
	}
	if m.UID != 65532 || m.GID != 65532 {
		t.Errorf("the server runs as uid %d gid %d, want 65532", m.UID, m.GID)
	}
	if n := env.origin.Served("/chat-v1/model.markov"); n != 1 {
		t.Errorf("the origin served the weights %d times, want 1", n)
	}
	waitClaimsReady(ctx, t, realNS, []string{name}, 2*time.Minute)
	sc.note("apply → claim Ready %.1fs", time.Since(start).Seconds())

	// The marker, on the volume itself.
	dir := volumeDir(ctx, t, realNS, name+"-weights")
	subdirs, _ := os.ReadDir(dir)
	var markers []string
	for _, d := range subdirs {
		if b, err := os.ReadFile(filepath.Join(dir, d.Name(), ".inferno-complete")); err == nil {
			markers = append(markers, strings.TrimSpace(string(b)))
		}
	}
	if len(markers) != 1 || markers[0] != v1.URI {
		t.Errorf("markers on the volume: %q, want one naming %s", markers, v1.URI)
	}

	// The same pull again: a new Job of the same template finds the marker.
	rerun := job.DeepCopy()
	rerun.ObjectMeta = metav1.ObjectMeta{Name: "rerun-" + job.Name[len(job.Name)-8:], Namespace: realNS}
	rerun.Spec.Selector, rerun.Spec.ManualSelector = nil, nil
	for _, k := range []string{"batch.kubernetes.io/controller-uid", "controller-uid", "batch.kubernetes.io/job-name", "job-name"} {
		delete(rerun.Spec.Template.Labels, k)
	}
	rerun.Status = batchv1.JobStatus{}
	start = time.Now()
	if _, err := env.admin.Typed.BatchV1().Jobs(realNS).Create(ctx, rerun, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := waitJob(ctx, realNS, rerun.Name, batchv1.JobComplete, time.Minute); err != nil {
		t.Fatal(err)
	}
	logs := jobLogs(ctx, realNS, rerun.Name)
	if !strings.Contains(logs, "already in") || env.origin.Served("/chat-v1/model.markov") != 1 {
		t.Errorf("the second pull downloaded again (origin served %d times); its log: %q", env.origin.Served("/chat-v1/model.markov"), logs)
	}
	sc.note("a second pull of the same weights: no-op, Complete in %.1fs", time.Since(start).Seconds())
	_ = env.admin.Typed.BatchV1().Jobs(realNS).Delete(ctx, rerun.Name, metav1.DeleteOptions{PropagationPolicy: ptrTo(metav1.DeletePropagationBackground)})

	// For real, not from the spec: the server process, seen from the host.
	pods := claimServerPods(ctx, t, realNS, name)
	if len(pods) != 1 {
		t.Fatalf("%d server pods, want 1", len(pods))
	}
	if pods[0].Spec.NodeName != RealNodeName {
		t.Errorf("the server pod runs on %q, want the real node", pods[0].Spec.NodeName)
	}
	pid := containerPID(t, &pods[0])
	uid := procStatusField(t, pid, "Uid")
	if f := strings.Fields(uid); len(f) == 0 || f[0] != "65532" || f[1] != "65532" {
		t.Errorf("the server process (pid %d) has Uid %q, want 65532", pid, uid)
	}
	// A write into the weights directory, through the container's own view
	// of its file system: refused even for root, the mount is read-only.
	err = os.WriteFile(fmt.Sprintf("/proc/%d/root/model/probe", pid), []byte("x"), 0o644)
	if !errors.Is(err, syscall.EROFS) {
		t.Errorf("writing into /model of the server: %v, want a read-only file system", err)
	}
	if fs := mountFSType(t, pid, "/dev/shm"); fs != "tmpfs" {
		t.Errorf("/dev/shm of the server is %q, want tmpfs (the preset asks for shared memory)", fs)
	}
	sc.note("server pid %d: uid/gid 65532, /model read-only (EROFS), /dev/shm tmpfs", pid)
	s.realServeOK = true
	s.chat = v1
}

// jobLogs is the log of a Job's last pod, through the API server.
func jobLogs(ctx context.Context, ns, job string) string {
	l, err := env.admin.Typed.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: "batch.kubernetes.io/job-name=" + job})
	if err != nil || len(l.Items) == 0 {
		return fmt.Sprintf("(no pod: %v)", err)
	}
	b, err := env.admin.Typed.CoreV1().Pods(ns).GetLogs(l.Items[len(l.Items)-1].Name, &corev1.PodLogOptions{}).DoRaw(ctx)
	if err != nil {
		return fmt.Sprintf("(logs: %v)", err)
	}
	return string(b)
}

// volumeDir is the host directory behind a PVC of the real node's class.
func volumeDir(ctx context.Context, t *testing.T, ns, pvc string) string {
	t.Helper()
	c, err := env.admin.Typed.CoreV1().PersistentVolumeClaims(ns).Get(ctx, pvc, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	pv, err := env.admin.Typed.CoreV1().PersistentVolumes().Get(ctx, c.Spec.VolumeName, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	switch {
	case pv.Spec.HostPath != nil:
		return pv.Spec.HostPath.Path
	case pv.Spec.Local != nil:
		return pv.Spec.Local.Path
	}
	t.Fatalf("volume %s is neither hostPath nor local", pv.Name)
	return ""
}

// claimServerPods lists a claim's server pods that are not terminating.
func claimServerPods(ctx context.Context, t *testing.T, ns, claim string) []corev1.Pod {
	t.Helper()
	l, err := env.admin.Typed.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: instanceLabel + "=" + claim})
	if err != nil {
		t.Fatal(err)
	}
	var out []corev1.Pod
	for _, p := range l.Items {
		if p.Labels["app.kubernetes.io/component"] != "model-puller" && p.DeletionTimestamp == nil && p.Status.Phase == corev1.PodRunning {
			out = append(out, p)
		}
	}
	return out
}

// containerPID finds the host pid of a pod's first container: its cgroup
// is named after the container's id under the node's cgroup root.
func containerPID(t *testing.T, p *corev1.Pod) int {
	t.Helper()
	if len(p.Status.ContainerStatuses) == 0 {
		t.Fatalf("pod %s has no container status", p.Name)
	}
	id := p.Status.ContainerStatuses[0].ContainerID
	id = id[strings.Index(id, "://")+3:]
	var found string
	_ = filepath.WalkDir("/sys/fs/cgroup/pids/inferno-e2e", func(path string, d os.DirEntry, err error) error {
		if err == nil && d.IsDir() && d.Name() == id {
			found = path
			return filepath.SkipAll
		}
		return nil
	})
	if found == "" {
		t.Fatalf("no cgroup for container %s of pod %s", id, p.Name)
	}
	b, err := os.ReadFile(filepath.Join(found, "cgroup.procs"))
	if err != nil {
		t.Fatal(err)
	}
	var pid int
	if _, err := fmt.Sscan(string(b), &pid); err != nil {
		t.Fatalf("cgroup.procs of %s: %q", id, b)
	}
	return pid
}

func procStatusField(t *testing.T, pid int, field string) string {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, field+":"); ok {
			return strings.TrimSpace(v)
		}
	}
	return ""
}

// waitPullComplete waits up to two minutes for a claim's one pull Job to
// complete and returns it; a failed Job fails the test with its logs.
func waitPullComplete(ctx context.Context, t *testing.T, ns, claim string) batchv1.Job {
	t.Helper()
	var job batchv1.Job
	if err := kube.Eventually(ctx, 2*time.Minute, 100*time.Millisecond, "the pull Job Complete", func(ctx context.Context) (bool, string, error) {
		jobs := pullJobs(ctx, t, ns, claim)
		if len(jobs) != 1 {
			return false, fmt.Sprintf("%d Jobs", len(jobs)), nil
		}
		job = jobs[0]
		if jobDone(&job, batchv1.JobFailed) {
			return false, "", fmt.Errorf("the pull Job failed: %s", jobLogs(ctx, ns, job.Name))
		}
		return jobDone(&job, batchv1.JobComplete), fmt.Sprintf("active %d failed %d", job.Status.Active, job.Status.Failed), nil
	}); err != nil {
		t.Fatal(err)
	}
	return job
}

// procCmdline is a process's argv, as the kernel keeps it.
func procCmdline(t *testing.T, pid int) []string {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	if err != nil {
		t.Fatal(err)
	}
	return strings.Split(strings.TrimSuffix(string(b), "\x00"), "\x00")
}

// mountFSType is the file system type of a mount point in a process's
// mount namespace.
func mountFSType(t *testing.T, pid int, point string) string {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/mountinfo", pid))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) < 10 || f[4] != point {
			continue
		}
		for i := range f {
			if f[i] == "-" && i+1 < len(f) {
				return f[i+1]
			}
		}
	}
	return ""
}
