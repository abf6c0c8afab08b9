//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/inferno-ai/function-inferno/test/e2e/controlplane"
	"github.com/inferno-ai/function-inferno/test/e2e/kube"
)

// --- 10 security ------------------------------------------------------------

// security proves the function rendered nothing that breaks the
// "restricted" Pod Security Standard. Crossplane is the API client that
// created the objects, so the API server's warnings went to Crossplane; the
// test reads the same verdicts from the audit log, where the API server
// records them for namespaces with an audit level
// (pod-security.kubernetes.io/audit-violations), and repeats the
// admission check itself with a server-side dry-run of every rendered
// workload, whose warnings come back to the test.
func (s *infernoSuite) security(t *testing.T) {
	ctx := context.Background()
	sc := env.summary.start(t, "10 security")
	events, err := readAudit(env.cp.AuditLog)
	if err != nil {
		t.Fatal(err)
	}
	seen, violations := 0, []string{}
	for _, e := range events {
		if !strings.HasPrefix(e.ObjectRef.Namespace, "team-") {
			continue
		}
		if e.User.Username != controlplane.Crossplane.User && !isController(e.User.Username) {
			continue
		}
		switch e.ObjectRef.Resource {
		case "deployments", "jobs", "pods", "replicasets":
		default:
			continue
		}
		seen++
		if v := e.Annotations["pod-security.kubernetes.io/audit-violations"]; v != "" {
			violations = append(violations, fmt.Sprintf("%s %s/%s by %s: %s", e.ObjectRef.Resource, e.ObjectRef.Namespace, e.ObjectRef.Name, e.User.Username, v))
		}
	}
	if seen == 0 {
		t.Fatal("the audit log holds no workload writes by Crossplane or the controllers in team namespaces: the check would be vacuous")
	}
	for _, v := range violations {
		t.Errorf("Pod Security violation: %s", v)
	}
	sc.note("%d audited workload writes, %d restricted violations", seen, len(violations))

	// Dry-run every Deployment and Job still present as a fresh object,
	// with a client of its own so that only these requests' warnings count
	// (applying the v1 XRD, for one, draws a deprecation warning).
	dryClient, err := kube.NewClient(env.admin.Config)
	if err != nil {
		t.Fatal(err)
	}
	nsList, err := env.admin.Typed.CoreV1().Namespaces().List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	dry := 0
	for _, n := range nsList.Items {
		ns := n.Name
		if !strings.HasPrefix(ns, "team-") {
			continue
		}
		deps, err := env.admin.Typed.AppsV1().Deployments(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range deps.Items {
			c := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: d.Name + "-dryrun", Namespace: ns, Labels: d.Labels}, Spec: d.Spec}
			if _, err := dryClient.Typed.AppsV1().Deployments(ns).Create(ctx, c, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}}); err != nil {
				t.Errorf("dry-run Deployment %s/%s: %v", ns, d.Name, err)
			}
			dry++
		}
		jobs, err := env.admin.Typed.BatchV1().Jobs(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		for _, j := range jobs.Items {
			spec := j.Spec.DeepCopy()
			spec.Selector, spec.ManualSelector = nil, nil
			delete(spec.Template.Labels, "batch.kubernetes.io/controller-uid")
			delete(spec.Template.Labels, "controller-uid")
			delete(spec.Template.Labels, "batch.kubernetes.io/job-name")
			delete(spec.Template.Labels, "job-name")
			c := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: j.Name + "-dryrun", Namespace: ns}, Spec: *spec}
			if _, err := dryClient.Typed.BatchV1().Jobs(ns).Create(ctx, c, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}}); err != nil {
				t.Errorf("dry-run Job %s/%s: %v", ns, j.Name, err)
			}
			dry++
		}
	}
	if dry == 0 {
		t.Error("no rendered Deployment or Job left to dry-run: the check would be vacuous")
	}
	warnings := dryClient.TakeWarnings()
	for _, w := range warnings {
		t.Errorf("API server warning on a dry-run of a rendered workload: %s", w)
	}
	sc.note("%d dry-runs, %d warnings", dry, len(warnings))
}

func isController(user string) bool {
	return strings.HasPrefix(user, "system:serviceaccount:kube-system:")
}
