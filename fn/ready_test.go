package fn

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/inferno-ai/function-inferno/internal/render"
	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

func TestPVCBound(t *testing.T) {
	cases := map[string]struct {
		pvc  *corev1.PersistentVolumeClaim
		want bool
	}{
		"Nil":      {},
		"NoStatus": {pvc: &corev1.PersistentVolumeClaim{}},
		"Pending":  {pvc: &corev1.PersistentVolumeClaim{Status: corev1.PersistentVolumeClaimStatus{Phase: corev1.ClaimPending}}},
		"Lost":     {pvc: &corev1.PersistentVolumeClaim{Status: corev1.PersistentVolumeClaimStatus{Phase: corev1.ClaimLost}}},
		"Bound":    {pvc: &corev1.PersistentVolumeClaim{Status: corev1.PersistentVolumeClaimStatus{Phase: corev1.ClaimBound}}, want: true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, render.PVCBound(tc.pvc)); diff != "" {
				t.Errorf("pvcBound (-want +got):\n%s", diff)
			}
		})
	}
}

func TestPullState(t *testing.T) {
	job := func(conds ...batchv1.JobCondition) *batchv1.Job {
		return &batchv1.Job{Status: batchv1.JobStatus{Conditions: conds}}
	}
	complete := batchv1.JobCondition{Type: batchv1.JobComplete, Status: corev1.ConditionTrue}
	failed := batchv1.JobCondition{Type: batchv1.JobFailed, Status: corev1.ConditionTrue, Reason: "BackoffLimitExceeded", Message: "Job has reached the specified backoff limit"}
	type out struct {
		State  render.JobState
		Detail string
	}
	cases := map[string]struct {
		job  *batchv1.Job
		want out
	}{
		"Nil":          {want: out{State: render.JobAbsent}},
		"NoConditions": {job: job(), want: out{State: render.JobRunning}},
		"Complete":     {job: job(complete), want: out{State: render.JobComplete}},
		"CompleteFalse": {
			job:  job(batchv1.JobCondition{Type: batchv1.JobComplete, Status: corev1.ConditionFalse}),
			want: out{State: render.JobRunning},
		},
		"Failed":          {job: job(failed), want: out{State: render.JobFailed, Detail: "BackoffLimitExceeded: Job has reached the specified backoff limit"}},
		"FailedNoMessage": {job: job(batchv1.JobCondition{Type: batchv1.JobFailed, Status: corev1.ConditionTrue, Reason: "DeadlineExceeded"}), want: out{State: render.JobFailed, Detail: "DeadlineExceeded"}},
		"CompleteAndFailed": {
			job: job(complete, failed), want: out{State: render.JobFailed, Detail: "BackoffLimitExceeded: Job has reached the specified backoff limit"},
		},
		"FailedAndComplete": {
			job: job(failed, complete), want: out{State: render.JobFailed, Detail: "BackoffLimitExceeded: Job has reached the specified backoff limit"},
		},
		"FailureTargetOnly": {
			job:  job(batchv1.JobCondition{Type: batchv1.JobFailureTarget, Status: corev1.ConditionTrue}),
			want: out{State: render.JobRunning},
		},
		"SuspendedIsRunning": {
			job:  job(batchv1.JobCondition{Type: batchv1.JobSuspended, Status: corev1.ConditionTrue}),
			want: out{State: render.JobRunning},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			s, d := render.PullState(tc.job)
			if diff := cmp.Diff(tc.want, out{s, d}); diff != "" {
				t.Errorf("pullState (-want +got):\n%s", diff)
			}
		})
	}
}

// TestPullFailureOf: why a failed pull Job failed, from its Failed
// condition's reason.
func TestPullFailureOf(t *testing.T) {
	failed := func(reason string) *batchv1.Job {
		return &batchv1.Job{Status: batchv1.JobStatus{Conditions: []batchv1.JobCondition{
			{Type: batchv1.JobFailureTarget, Status: corev1.ConditionTrue, Reason: reason},
			{Type: batchv1.JobFailed, Status: corev1.ConditionTrue, Reason: reason},
		}}}
	}
	cases := map[string]struct {
		job  *batchv1.Job
		want render.PullFailure
	}{
		"Nil":                  {want: render.PullFailedOther},
		"Running":              {job: &batchv1.Job{}, want: render.PullFailedOther},
		"BackoffLimitExceeded": {job: failed("BackoffLimitExceeded"), want: render.PullFailedOther},
		"DeadlineExceeded":     {job: failed("DeadlineExceeded"), want: render.PullTimedOut},
		"PodFailurePolicy":     {job: failed("PodFailurePolicy"), want: render.PullStalled},
		"FailedFalse": {
			job:  &batchv1.Job{Status: batchv1.JobStatus{Conditions: []batchv1.JobCondition{{Type: batchv1.JobFailed, Status: corev1.ConditionFalse, Reason: "DeadlineExceeded"}}}},
			want: render.PullFailedOther,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, render.PullFailureOf(tc.job)); diff != "" {
				t.Errorf("pullFailureOf (-want +got):\n%s", diff)
			}
		})
	}
}

func TestDeploymentReady(t *testing.T) {
	available := appsv1.DeploymentCondition{Type: appsv1.DeploymentAvailable, Status: corev1.ConditionTrue}
	deploy := func(generation, observed int64, replicas *int32, updated, avail int32, conds ...appsv1.DeploymentCondition) *appsv1.Deployment {
		return &appsv1.Deployment{
			ObjectMeta: metav1.ObjectMeta{Generation: generation},
			Spec:       appsv1.DeploymentSpec{Replicas: replicas},
			Status: appsv1.DeploymentStatus{
				ObservedGeneration: observed, UpdatedReplicas: updated, AvailableReplicas: avail, ReadyReplicas: avail, Conditions: conds,
			},
		}
	}
	cases := map[string]struct {
		d    *appsv1.Deployment
		want bool
	}{
		"Nil":                      {},
		"NoStatus":                 {d: &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Generation: 1}, Spec: appsv1.DeploymentSpec{Replicas: ptr.To(int32(1))}}},
		"AvailableCountsMatch":     {d: deploy(2, 2, ptr.To(int32(3)), 3, 3, available), want: true},
		"ObservedNewerGeneration":  {d: deploy(2, 3, ptr.To(int32(1)), 1, 1, available), want: true},
		"StaleObservedGeneration":  {d: deploy(3, 2, ptr.To(int32(3)), 3, 3, available)},
		"UpdatedBelowDesired":      {d: deploy(2, 2, ptr.To(int32(3)), 2, 3, available)},
		"AvailableBelowDesired":    {d: deploy(2, 2, ptr.To(int32(3)), 3, 2, available)},
		"MoreAvailableThanDesired": {d: deploy(2, 2, ptr.To(int32(2)), 2, 3, available)},
		"AvailableFalse": {
			d: deploy(1, 1, ptr.To(int32(1)), 1, 1, appsv1.DeploymentCondition{Type: appsv1.DeploymentAvailable, Status: corev1.ConditionFalse}),
		},
		"NoAvailableCondition": {d: deploy(1, 1, ptr.To(int32(1)), 1, 1)},
		"NilReplicasMeansOne":  {d: deploy(1, 1, nil, 1, 1, available), want: true},
		"NilReplicasTwoUp":     {d: deploy(1, 1, nil, 2, 2, available)},
		"ZeroReplicas":         {d: deploy(1, 1, ptr.To(int32(0)), 0, 0, available), want: true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, render.DeploymentReady(tc.d)); diff != "" {
				t.Errorf("deploymentReady (-want +got):\n%s", diff)
			}
		})
	}
}

func TestDeploymentStalled(t *testing.T) {
	cond := func(s corev1.ConditionStatus, reason string) appsv1.DeploymentCondition {
		return appsv1.DeploymentCondition{Type: appsv1.DeploymentProgressing, Status: s, Reason: reason, Message: "msg"}
	}
	type out struct {
		Stalled bool
		Message string
	}
	cases := map[string]struct {
		conds []appsv1.DeploymentCondition
		want  out
	}{
		"NoConditions":     {},
		"Progressing":      {conds: []appsv1.DeploymentCondition{cond(corev1.ConditionTrue, "NewReplicaSetAvailable")}},
		"DeadlineExceeded": {conds: []appsv1.DeploymentCondition{cond(corev1.ConditionFalse, "ProgressDeadlineExceeded")}, want: out{true, "msg"}},
		"FalseOtherReason": {conds: []appsv1.DeploymentCondition{cond(corev1.ConditionFalse, "ReplicaSetCreateError")}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			s, m := render.DeploymentStalled(&appsv1.Deployment{Status: appsv1.DeploymentStatus{Conditions: tc.conds}})
			if diff := cmp.Diff(tc.want, out{s, m}); diff != "" {
				t.Errorf("deploymentStalled (-want +got):\n%s", diff)
			}
		})
	}
}

func TestServiceReady(t *testing.T) {
	svc := func(typ corev1.ServiceType, ingress ...corev1.LoadBalancerIngress) *corev1.Service {
		return &corev1.Service{Spec: corev1.ServiceSpec{Type: typ}, Status: corev1.ServiceStatus{LoadBalancer: corev1.LoadBalancerStatus{Ingress: ingress}}}
	}
	cases := map[string]struct {
		svc  *corev1.Service
		want bool
	}{
		"Nil":                     {},
		"ClusterIP":               {svc: svc(corev1.ServiceTypeClusterIP), want: true},
		"TypeUnset":               {svc: svc(""), want: true},
		"NodePort":                {svc: svc(corev1.ServiceTypeNodePort), want: true},
		"LoadBalancerNoIngress":   {svc: svc(corev1.ServiceTypeLoadBalancer)},
		"LoadBalancerWithIP":      {svc: svc(corev1.ServiceTypeLoadBalancer, corev1.LoadBalancerIngress{IP: "10.0.0.7"}), want: true},
		"LoadBalancerWithHostnme": {svc: svc(corev1.ServiceTypeLoadBalancer, corev1.LoadBalancerIngress{Hostname: "lb.example.com"}), want: true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, render.ServiceReady(tc.svc)); diff != "" {
				t.Errorf("serviceReady (-want +got):\n%s", diff)
			}
		})
	}
}

func TestHPAReady(t *testing.T) {
	hpa := func(conds ...autoscalingv2.HorizontalPodAutoscalerCondition) *autoscalingv2.HorizontalPodAutoscaler {
		return &autoscalingv2.HorizontalPodAutoscaler{Status: autoscalingv2.HorizontalPodAutoscalerStatus{Conditions: conds}}
	}
	c := func(typ autoscalingv2.HorizontalPodAutoscalerConditionType, s corev1.ConditionStatus) autoscalingv2.HorizontalPodAutoscalerCondition {
		return autoscalingv2.HorizontalPodAutoscalerCondition{Type: typ, Status: s}
	}
	cases := map[string]struct {
		h    *autoscalingv2.HorizontalPodAutoscaler
		want bool
	}{
		"Nil":                {},
		"NoConditions":       {h: hpa()},
		"AbleToScaleTrue":    {h: hpa(c(autoscalingv2.AbleToScale, corev1.ConditionTrue)), want: true},
		"AbleToScaleFalse":   {h: hpa(c(autoscalingv2.AbleToScale, corev1.ConditionFalse))},
		"AbleToScaleUnknown": {h: hpa(c(autoscalingv2.AbleToScale, corev1.ConditionUnknown))},
		"ScalingInactiveDoesNotHold": {
			h:    hpa(c(autoscalingv2.AbleToScale, corev1.ConditionTrue), c(autoscalingv2.ScalingActive, corev1.ConditionFalse)),
			want: true,
		},
		"OnlyScalingActive": {h: hpa(c(autoscalingv2.ScalingActive, corev1.ConditionTrue))},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, render.HPAReady(tc.h)); diff != "" {
				t.Errorf("hpaReady (-want +got):\n%s", diff)
			}
		})
	}
}

// TestObservedOddShapes: observed objects in unexpected shapes decode
// without error and get the readiness the DESIGN table says.
func TestObservedOddShapes(t *testing.T) {
	xr := autoscalingXR()
	servers, obs := pulled(t, xr, nil)
	bare := func(name string) observedObject {
		o := observedFrom(t, servers, name, nil)
		delete(o.Object, "status")
		return o
	}
	jobBoth := observedFrom(t, servers, obs[1].Name, map[string]any{"conditions": []any{jobCondition("Complete"), jobCondition("Failed")}})
	rsp := run(t, newRequest(t, xr, nil, obs[0], jobBoth, bare(render.ResourceDeployment), bare(render.ResourceService), bare(render.ResourceHPA)))
	if msg := fatalMessage(rsp); msg != "" {
		t.Fatalf("fatal: %s", msg)
	}
	got := map[string]fnv1Ready{}
	for _, n := range desiredNames(rsp) {
		got[n] = readiness(rsp, n)
	}
	want := map[string]fnv1Ready{
		render.ResourcePVC: readyTrue, obs[1].Name: readyFalse, render.ResourceDeployment: readyFalse, render.ResourceService: readyTrue, render.ResourceHPA: readyFalse,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("readiness (-want +got):\n%s", diff)
	}
}
