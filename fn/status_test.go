package fn

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/inferno-ai/function-inferno/internal/render"
	"github.com/inferno-ai/function-inferno/internal/resolve"
	"github.com/inferno-ai/function-inferno/internal/status"
	"k8s.io/utils/ptr"
)

// TestPhases walks a claim through its life and checks what RunFunction
// reports at each stage: the composite's status fields and the
// WeightsReady and ServerReady conditions.
func TestPhases(t *testing.T) {
	xr := testXR()
	setPath(xr, map[string]any{"min": 2}, "spec", "replicas")
	setPath(xr, "ReadWriteMany", "spec", "storage", "accessMode")

	fresh := run(t, newRequest(t, xr, nil))
	job := pullJobResource(t, fresh)
	pvc := observedFrom(t, fresh, render.ResourcePVC, pvcPhase("Bound"))
	servers, weights := pulled(t, xr, nil)
	svc := observedFrom(t, servers, render.ResourceService, map[string]any{})
	withDeploy := func(status map[string]any) []observedObject {
		return append(append([]observedObject(nil), weights...), observeDeployment(t, servers, 2, status), svc)
	}
	stalled := map[string]any{"type": "Progressing", "status": "False", "reason": "ProgressDeadlineExceeded", "message": `ReplicaSet "llama-6d4cf56db6" has timed out progressing.`}

	// A new revision of the same claim, while the old weights serve.
	next := testXR()
	setPath(next, map[string]any{"min": 2}, "spec", "replicas")
	setPath(next, "ReadWriteMany", "spec", "storage", "accessMode")
	setPath(next, "v2", "spec", "model", "revision")
	old := withoutObserved(withDeploy(deploymentStatus(2, 2)), render.ResourceJobPrefix)
	nextFresh := run(t, newRequest(t, next, nil, old...))
	newJob := pullJobResource(t, nextFresh)

	// pvc:// weights, mounted.
	mounted := testXR()
	setPath(mounted, "pvc://shared-models/llama", "spec", "model", "uri")
	mountedFresh := run(t, newRequest(t, mounted, nil))
	mountedDeploy := observeDeployment(t, mountedFresh, 1, deploymentStatus(1, 1))

	const url = "http://llama.team-a.svc.cluster.local:80"
	type status struct {
		Phase         string
		ReadyReplicas float64
		ServiceName   string
		URL           string
	}
	cases := map[string]struct {
		xr       map[string]any
		observed []observedObject
		want     status
		conds    []cond
		message  string // a fragment of status.message
	}{
		// Pulling from the call that creates the volume and the Job on, in
		// the words of the call that first sees them: one status, not
		// three, while they are created and bind.
		"PullingNothingObserved": {
			xr: xr, want: status{Phase: "Pulling"},
			conds:   []cond{{"WeightsReady", condFalse, "Pulling", toBoth}, {"ServerReady", condFalse, "WaitingForWeights", toBoth}},
			message: "pulling hf://meta-llama/Llama-3.1-8B-Instruct into volume llama-weights with Job llama-pull-4076392f; the volume is not bound yet",
		},
		"PullingPVCOnly": {
			xr: xr, observed: []observedObject{observedFrom(t, fresh, render.ResourcePVC, pvcPhase("Pending"))}, want: status{Phase: "Pulling"},
			conds:   []cond{{"WeightsReady", condFalse, "Pulling", toBoth}, {"ServerReady", condFalse, "WaitingForWeights", toBoth}},
			message: "pulling hf://meta-llama/Llama-3.1-8B-Instruct into volume llama-weights with Job llama-pull-4076392f; the volume is not bound yet",
		},
		"PullingVolumeLost": {
			xr: xr, observed: []observedObject{observedFrom(t, fresh, render.ResourcePVC, pvcPhase("Lost")), observedFrom(t, fresh, job, jobRunningStatus())}, want: status{Phase: "Pulling"},
			conds:   []cond{{"WeightsReady", condFalse, "Pulling", toBoth}, {"ServerReady", condFalse, "WaitingForWeights", toBoth}},
			message: "; the volume is Lost",
		},
		"Pulling": {
			xr: xr, observed: []observedObject{pvc, observedFrom(t, fresh, job, jobRunningStatus())}, want: status{Phase: "Pulling"},
			conds:   []cond{{"WeightsReady", condFalse, "Pulling", toBoth}, {"ServerReady", condFalse, "WaitingForWeights", toBoth}},
			message: "pulling hf://meta-llama/Llama-3.1-8B-Instruct into volume llama-weights with Job llama-pull-4076392f",
		},
		"FailedPull": {
			xr: xr, observed: []observedObject{pvc, observedFrom(t, fresh, job, jobFailedStatus())}, want: status{Phase: "Failed"},
			conds:   []cond{{"WeightsReady", condFalse, "PullFailed", toBoth}, {"ServerReady", condFalse, "WaitingForWeights", toBoth}},
			message: "BackoffLimitExceeded: Job has reached the specified backoff limit); read its logs with: kubectl logs -n team-a job/llama-pull-",
		},
		"StartingDeploymentNotObserved": {
			xr: xr, observed: weights, want: status{Phase: "Starting", ServiceName: "llama", URL: url},
			// The call that creates the Deployment says what the one that
			// first sees it will.
			conds:   []cond{{"WeightsReady", condTrue, "Pulled", toBoth}, {"ServerReady", condFalse, "Starting", toBoth}},
			message: "0 of 2 servers ready; loading a model can take up to 1800s",
		},
		"StartingNoneReady": {
			xr: xr, observed: withDeploy(deploymentStatus(2, 0)), want: status{Phase: "Starting", ServiceName: "llama", URL: url},
			conds:   []cond{{"WeightsReady", condTrue, "Pulled", toBoth}, {"ServerReady", condFalse, "Starting", toBoth}},
			message: "0 of 2 servers ready; loading a model can take up to 1800s",
		},
		"StartingDeploymentWithoutStatus": {
			xr: xr, observed: withDeploy(nil), want: status{Phase: "Starting", ServiceName: "llama", URL: url},
			conds: []cond{{"WeightsReady", condTrue, "Pulled", toBoth}, {"ServerReady", condFalse, "Starting", toBoth}},
		},
		"Serving": {
			xr: xr, observed: withDeploy(deploymentStatus(2, 2)), want: status{Phase: "Serving", ReadyReplicas: 2, ServiceName: "llama", URL: url},
			conds:   []cond{{"WeightsReady", condTrue, "Pulled", toBoth}, {"ServerReady", condTrue, "Available", toBoth}},
			message: "serving hf://meta-llama/Llama-3.1-8B-Instruct at " + url,
		},
		"Degraded": {
			xr: xr, observed: withDeploy(deploymentStatus(2, 1)), want: status{Phase: "Degraded", ReadyReplicas: 1, ServiceName: "llama", URL: url},
			conds:   []cond{{"WeightsReady", condTrue, "Pulled", toBoth}, {"ServerReady", condFalse, "Degraded", toBoth}},
			message: "1 of 2 servers ready",
		},
		"RollingOutStillServes": {
			xr: xr, observed: withDeploy(map[string]any{
				"observedGeneration": 1, "replicas": 3, "updatedReplicas": 1, "readyReplicas": 2, "availableReplicas": 2,
				"conditions": []any{map[string]any{"type": "Available", "status": "True"}},
			}),
			want:  status{Phase: "Serving", ReadyReplicas: 2, ServiceName: "llama", URL: url},
			conds: []cond{{"WeightsReady", condTrue, "Pulled", toBoth}, {"ServerReady", condFalse, "RollingOut", toBoth}},
		},
		"FailedProgressDeadlineNoneReady": {
			xr: xr, observed: withDeploy(deploymentStatus(2, 0, stalled)), want: status{Phase: "Failed", ServiceName: "llama", URL: url},
			conds:   []cond{{"WeightsReady", condTrue, "Pulled", toBoth}, {"ServerReady", condFalse, "ProgressDeadlineExceeded", toBoth}},
			message: "kubectl describe -n team-a deployment/llama",
		},
		"DegradedProgressDeadlineSomeReady": {
			xr: xr, observed: withDeploy(deploymentStatus(2, 1, stalled)), want: status{Phase: "Degraded", ReadyReplicas: 1, ServiceName: "llama", URL: url},
			conds: []cond{{"WeightsReady", condTrue, "Pulled", toBoth}, {"ServerReady", condFalse, "ProgressDeadlineExceeded", toBoth}},
		},
		"ServingWhileNewRevisionNotObserved": {
			xr: next, observed: old, want: status{Phase: "Serving", ReadyReplicas: 2, ServiceName: "llama", URL: url},
			conds:   []cond{{"WeightsReady", condFalse, "Pulling", toBoth}, {"ServerReady", condTrue, "Available", toBoth}},
			message: "serving the previous weights at " + url,
		},
		"ServingWhilePullingNewRevision": {
			xr: next, observed: append(old[:len(old):len(old)], observedFrom(t, nextFresh, newJob, jobRunningStatus())),
			want:    status{Phase: "Serving", ReadyReplicas: 2, ServiceName: "llama", URL: url},
			conds:   []cond{{"WeightsReady", condFalse, "Pulling", toBoth}, {"ServerReady", condTrue, "Available", toBoth}},
			message: "serving the previous weights at " + url + " while pulling hf://meta-llama/Llama-3.1-8B-Instruct into volume llama-weights with Job llama-pull-",
		},
		"DegradedNewRevisionPullFailed": {
			xr: next, observed: append(old[:len(old):len(old)], observedFrom(t, nextFresh, newJob, jobFailedStatus())),
			want:    status{Phase: "Degraded", ReadyReplicas: 2, ServiceName: "llama", URL: url},
			conds:   []cond{{"WeightsReady", condFalse, "PullFailed", toBoth}, {"ServerReady", condTrue, "Available", toBoth}},
			message: "still serving the previous weights",
		},
		"NewRevisionPulledRollsOut": {
			// The Deployment now mounts the new weights; its status is
			// still the old generation's, so it is not yet ready.
			xr: next, observed: append(old[:len(old):len(old)], observedFrom(t, nextFresh, newJob, jobCompleteStatus())),
			want:  status{Phase: "Serving", ReadyReplicas: 2, ServiceName: "llama", URL: url},
			conds: []cond{{"WeightsReady", condTrue, "Pulled", toBoth}, {"ServerReady", condTrue, "Available", toBoth}},
		},
		"MountedWeightsServing": {
			xr: mounted, observed: []observedObject{mountedDeploy, observedFrom(t, mountedFresh, render.ResourceService, nil)},
			want:  status{Phase: "Serving", ReadyReplicas: 1, ServiceName: "llama", URL: url},
			conds: []cond{{"WeightsReady", condTrue, "UserVolume", toBoth}, {"ServerReady", condTrue, "Available", toBoth}},
		},
		"MountedWeightsFresh": {
			xr: mounted, want: status{Phase: "Starting", ServiceName: "llama", URL: url},
			conds: []cond{{"WeightsReady", condTrue, "UserVolume", toBoth}, {"ServerReady", condFalse, "Starting", toBoth}},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			rsp := run(t, newRequest(t, tc.xr, nil, tc.observed...))
			if msg := fatalMessage(rsp); msg != "" {
				t.Fatalf("fatal: %s", msg)
			}
			st := statusOf(rsp)
			got := status{}
			got.Phase, _ = st["phase"].(string)
			got.ReadyReplicas, _ = st["readyReplicas"].(float64)
			got.ServiceName, _ = st["serviceName"].(string)
			got.URL, _ = st["url"].(string)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("status (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.conds, conditionsOf(rsp)); diff != "" {
				t.Errorf("conditions (-want +got):\n%s", diff)
			}
			msg, _ := st["message"].(string)
			if msg == "" || !strings.Contains(msg, tc.message) {
				t.Errorf("status.message %q does not contain %q", msg, tc.message)
			}
		})
	}
}

// TestScaledToZero: min 0 keeps the weights, runs no server and says so.
func TestScaledToZero(t *testing.T) {
	xr := testXR()
	setPath(xr, map[string]any{"min": 0}, "spec", "replicas")
	obs := serving(t, xr, nil, 0, map[string]any{
		"observedGeneration": 1, "conditions": []any{map[string]any{"type": "Available", "status": "True"}},
	})
	rsp := run(t, newRequest(t, xr, nil, obs...))
	want := []cond{{"WeightsReady", condTrue, "Pulled", toBoth}, {"ServerReady", condFalse, "ScaledToZero", toBoth}}
	if diff := cmp.Diff(want, conditionsOf(rsp)); diff != "" {
		t.Errorf("conditions (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff("Degraded", statusOf(rsp)["phase"]); diff != "" {
		t.Errorf("phase (-want +got):\n%s", diff)
	}
}

// TestHPAScalingInactiveWarns: an autoscaler without metrics is reported
// as a warning and does not hold readiness back (DESIGN §5).
func TestHPAScalingInactiveWarns(t *testing.T) {
	xr := autoscalingXR()
	setPath(xr, map[string]any{"enabled": true, "targetConcurrency": 8}, "spec", "autoscaling")
	obs := serving(t, xr, nil, 1, deploymentStatus(1, 1))
	servers, _ := pulled(t, xr, nil)
	inactive := observedFrom(t, servers, render.ResourceHPA, map[string]any{"conditions": []any{
		map[string]any{"type": "AbleToScale", "status": "True", "reason": "ReadyForNewScale"},
		map[string]any{"type": "ScalingActive", "status": "False", "reason": "FailedGetPodsMetric", "message": "unable to get metric vllm_num_requests_running"},
	}})
	cases := map[string]struct {
		hpa      observedObject
		wantWarn bool
	}{
		"Active":   {hpa: obs[len(obs)-1]},
		"Inactive": {hpa: inactive, wantWarn: true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			rsp := run(t, newRequest(t, xr, nil, replaceObserved(obs, tc.hpa)...))
			r, warned := warningWith(rsp, "spec.autoscaling: the autoscaler llama cannot scale yet (FailedGetPodsMetric")
			if diff := cmp.Diff(tc.wantWarn, warned); diff != "" {
				t.Errorf("warned (-want +got):\n%s\nwarnings: %q", diff, warningsOf(rsp))
			}
			if warned {
				if diff := cmp.Diff(toBoth, r.GetTarget()); diff != "" {
					t.Errorf("warning target (-want +got):\n%s", diff)
				}
				if !strings.Contains(r.GetMessage(), "vllm_num_requests_running") {
					t.Errorf("warning %q does not name the metric", r.GetMessage())
				}
			}
			if diff := cmp.Diff(readyTrue, readiness(rsp, render.ResourceHPA)); diff != "" {
				t.Errorf("HPA readiness (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff("Serving", statusOf(rsp)["phase"]); diff != "" {
				t.Errorf("phase (-want +got):\n%s", diff)
			}
		})
	}
}

func TestAutoscalerMetrics(t *testing.T) {
	cases := map[string]struct {
		a    resolve.Autoscaling
		want string
	}{
		"CPU":         {a: resolve.Autoscaling{CPUUtilization: ptr.To(int32(80))}, want: "CPU utilisation (metrics-server)"},
		"Concurrency": {a: resolve.Autoscaling{Concurrency: ptr.To(int32(4)), Metric: "m"}, want: "m"},
		"Both":        {a: resolve.Autoscaling{CPUUtilization: ptr.To(int32(80)), Concurrency: ptr.To(int32(4)), Metric: "m"}, want: "CPU utilisation and m"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, status.AutoscalerMetrics(&resolve.Spec{ReplicaBounds: resolve.ReplicaBounds{Autoscaling: &tc.a}})); diff != "" {
				t.Errorf("autoscalerMetrics (-want +got):\n%s", diff)
			}
		})
	}
}
