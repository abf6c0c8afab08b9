//go:build e2e

package e2e

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"sync"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/inferno-ai/function-inferno/test/e2e/kube"
)

// lifecycle records when the test first saw each step of one claim's life,
// relative to when it was applied: the timings the issue asks for. It polls
// every 100 ms, so each time is accurate to about that.
type lifecycle struct {
	// gvk is the kind polled for phase and Ready: the claim, or a
	// namespaced XR (watchNamespacedLifecycle).
	gvk      schema.GroupVersionKind
	ns, name string
	mu       sync.Mutex
	st       lifecycleState
	start    time.Time
}

type lifecycleState struct {
	pvc, job, jobComplete, deployment, ready time.Duration
	// available is when the Deployment was first Available; hpaAble when
	// the autoscaler first reported AbleToScale=True.
	available, hpaAble time.Duration
	jobName            string
	phases             map[string]time.Duration
	phaseOrder         []string
}

func watchLifecycle(_ context.Context, ns, name string) *lifecycle {
	return &lifecycle{gvk: claimGVK, ns: ns, name: name, st: lifecycleState{phases: map[string]time.Duration{}}}
}

// applied starts the clock and the polling; polling ends once the claim is
// Ready or after ten minutes.
func (l *lifecycle) applied(at time.Time) {
	l.mu.Lock()
	l.start = at
	l.mu.Unlock()
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
		defer cancel()
		for ctx.Err() == nil {
			if l.poll(ctx) {
				return
			}
			time.Sleep(100 * time.Millisecond)
		}
	}()
}

func (l *lifecycle) poll(ctx context.Context) (done bool) {
	now := time.Since(l.start)
	set := func(d *time.Duration) {
		if *d == 0 {
			*d = now
		}
	}
	c := env.admin
	pvcs, _ := c.Typed.CoreV1().PersistentVolumeClaims(l.ns).List(ctx, metav1.ListOptions{LabelSelector: instanceLabel + "=" + l.name})
	jobs, _ := c.Typed.BatchV1().Jobs(l.ns).List(ctx, metav1.ListOptions{LabelSelector: instanceLabel + "=" + l.name})
	dep, depErr := c.Typed.AppsV1().Deployments(l.ns).Get(ctx, l.name, metav1.GetOptions{})
	hpa, hpaErr := c.Typed.AutoscalingV2().HorizontalPodAutoscalers(l.ns).Get(ctx, l.name, metav1.GetOptions{})
	claim, claimErr := c.Get(ctx, l.gvk, l.ns, l.name)

	l.mu.Lock()
	defer l.mu.Unlock()
	if pvcs != nil && len(pvcs.Items) > 0 {
		set(&l.st.pvc)
	}
	if jobs != nil && len(jobs.Items) > 0 {
		set(&l.st.job)
		if l.st.jobName == "" {
			l.st.jobName = jobs.Items[0].Name
		}
		for _, j := range jobs.Items {
			if j.Name == l.st.jobName && jobDone(&j, batchv1.JobComplete) {
				set(&l.st.jobComplete)
			}
		}
	}
	if depErr == nil {
		set(&l.st.deployment)
		for _, cond := range dep.Status.Conditions {
			if cond.Type == appsv1.DeploymentAvailable && cond.Status == corev1.ConditionTrue {
				set(&l.st.available)
			}
		}
	}
	if hpaErr == nil {
		for _, cond := range hpa.Status.Conditions {
			if cond.Type == autoscalingv2.AbleToScale && cond.Status == corev1.ConditionTrue {
				set(&l.st.hpaAble)
			}
		}
	}
	if claimErr == nil {
		if p, _, _ := unstructured.NestedString(claim.Object, "status", "phase"); p != "" {
			if _, seen := l.st.phases[p]; !seen {
				l.st.phases[p] = now
				l.st.phaseOrder = append(l.st.phaseOrder, p)
			}
		}
		if s, _, _ := kube.Condition(claim, "Ready"); s == "True" {
			set(&l.st.ready)
			return true
		}
	}
	return false
}

func (l *lifecycle) snapshot() lifecycleState {
	l.mu.Lock()
	defer l.mu.Unlock()
	s := l.st
	s.phases = map[string]time.Duration{}
	for k, v := range l.st.phases {
		s.phases[k] = v
	}
	s.phaseOrder = append([]string(nil), l.st.phaseOrder...)
	return s
}

// waitFor waits until cond holds for the recorded state.
func (l *lifecycle) waitFor(timeout time.Duration, cond func(*lifecycleState) bool) error {
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		s := l.snapshot()
		if cond(&s) {
			return nil
		}
		time.Sleep(100 * time.Millisecond)
	}
	s := l.snapshot()
	return fmt.Errorf("timed out after %s on %s/%s: pvc@%s job@%s(%s) jobComplete@%s deployment@%s ready@%s phases %v",
		timeout, l.ns, l.name, s.pvc, s.job, s.jobName, s.jobComplete, s.deployment, s.ready, s.phaseOrder)
}

func jobDone(j *batchv1.Job, cond batchv1.JobConditionType) bool {
	for _, c := range j.Status.Conditions {
		if c.Type == cond && c.Status == corev1.ConditionTrue {
			return true
		}
	}
	return false
}

// table is the server-side Table form of a resource, what kubectl get
// prints (printer columns from the CRD plus Crossplane's).
type table struct {
	metav1.Table
}

// getTable asks the API server for the Table form of path, the way kubectl
// does.
func getTable(ctx context.Context, path string) (*table, error) {
	raw, err := env.admin.Typed.CoreV1().RESTClient().Get().AbsPath(path).
		SetHeader("Accept", "application/json;as=Table;v=v1;g=meta.k8s.io").DoRaw(ctx)
	if err != nil {
		return nil, fmt.Errorf("GET %s as Table: %w", path, err)
	}
	t := &table{}
	if err := json.Unmarshal(raw, &t.Table); err != nil {
		return nil, fmt.Errorf("decode Table: %w", err)
	}
	if len(t.Rows) == 0 {
		return nil, fmt.Errorf("table for %s has no rows", path)
	}
	return t, nil
}

// column returns the first row's cells of the named columns (matched
// case-insensitively).
func (t *table) column(names ...string) map[string]string {
	out := map[string]string{}
	for i, c := range t.ColumnDefinitions {
		for _, n := range names {
			if strings.EqualFold(c.Name, n) && i < len(t.Rows[0].Cells) {
				out[n] = fmt.Sprint(t.Rows[0].Cells[i])
			}
		}
	}
	return out
}

func (t *table) rowMaps() []map[string]string {
	var out []map[string]string
	for _, r := range t.Rows {
		m := map[string]string{}
		for i, c := range t.ColumnDefinitions {
			if i < len(r.Cells) {
				m[c.Name] = fmt.Sprint(r.Cells[i])
			}
		}
		out = append(out, m)
	}
	return out
}

func (t *table) render() string {
	var parts []string
	for i, c := range t.ColumnDefinitions {
		if c.Priority == 0 && i < len(t.Rows[0].Cells) {
			parts = append(parts, fmt.Sprintf("%s=%v", c.Name, t.Rows[0].Cells[i]))
		}
	}
	return strings.Join(parts, " ")
}

// auditEvent is the part of an audit.k8s.io/v1 Event the test reads.
type auditEvent struct {
	Verb  string `json:"verb"`
	Stage string `json:"stage"`
	User  struct {
		Username string `json:"username"`
	} `json:"user"`
	ObjectRef struct {
		Resource  string `json:"resource"`
		Namespace string `json:"namespace"`
		Name      string `json:"name"`
	} `json:"objectRef"`
	Annotations map[string]string `json:"annotations"`
}

func readAudit(path string) ([]auditEvent, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []auditEvent
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		var e auditEvent
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			return nil, fmt.Errorf("audit log line: %w", err)
		}
		out = append(out, e)
	}
	return out, sc.Err()
}
