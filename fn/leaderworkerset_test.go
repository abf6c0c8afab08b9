package fn

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/inferno-ai/function-inferno/internal/kinds/lws"
	"github.com/inferno-ai/function-inferno/internal/reason"
	"github.com/inferno-ai/function-inferno/internal/render"
	"github.com/inferno-ai/function-inferno/internal/resolve"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
)

const (
	multiNodeXR       = "../examples/multi-node/xr.yaml"
	multiNodeObserved = "../examples/multi-node/observed"
)

// multiNodeStages are the lifecycle stages of examples/multi-node, each
// an observed state examples/multi-node/observed/<stage>.yaml holds.
var multiNodeStages = []string{"starting", "serving", "degraded", "rolling"}

// TestGoldenMultiNode renders examples/multi-node/xr.yaml fresh and at
// every stage and compares the responses with
// fn/testdata/golden/multi-node-*. With -update it rewrites the golden
// files and the observed fixtures, which the render tests read.
func TestGoldenMultiNode(t *testing.T) {
	input := multiNodeInput(t)
	xr := readYAML(t, multiNodeXR)
	t.Run("fresh", func(t *testing.T) {
		compareGolden(t, "multi-node-fresh", run(t, newRequest(t, xr, input)))
	})
	for _, stage := range multiNodeStages {
		t.Run(stage, func(t *testing.T) {
			fixture := filepath.Join(multiNodeObserved, stage+".yaml")
			if *update {
				writeObserved(t, fixture, "examples/multi-node/xr.yaml", stage, multiNodeStageObserved(t, xr, input, stage))
			}
			compareGolden(t, "multi-node-"+stage, run(t, newRequest(t, xr, input, readObserved(t, fixture)...)))
		})
	}
}

// multiNodeInput is the Input of examples/multi-node/composition.yaml:
// NetworkPolicies on, which spec.nodes > 1 needs.
func multiNodeInput(t testing.TB) map[string]any {
	t.Helper()
	comp := readYAML(t, "../examples/multi-node/composition.yaml")
	steps, _ := nested(comp, "spec", "pipeline")
	in, _ := steps.([]any)[0].(map[string]any)["input"].(map[string]any)
	return in
}

// lwsStatus is a LeaderWorkerSet status as the LWS controller writes it:
// Available and Progressing exclusive, groups counted.
func lwsStatusOf(replicas, updated, ready int, available bool) map[string]any {
	av, pr := "False", "True"
	if available {
		av, pr = "True", "False"
	}
	return map[string]any{
		"replicas": replicas, "updatedReplicas": updated, "readyReplicas": ready,
		"hpaPodSelector": "leaderworkerset.sigs.k8s.io/name=llama-405b,leaderworkerset.sigs.k8s.io/worker-index=0",
		"conditions": []any{
			map[string]any{"type": "Available", "status": av, "reason": "AllGroupsReady", "message": "All replicas are ready", "lastTransitionTime": "2026-12-01T10:30:00Z"},
			map[string]any{"type": "Progressing", "status": pr, "reason": "GroupsProgressing", "message": "Replicas are progressing", "lastTransitionTime": "2026-12-01T10:25:00Z"},
		},
	}
}

// multiNodeStageObserved walks the example to stage: weights pulled, then
// the LeaderWorkerSet observed with the status its controller writes.
func multiNodeStageObserved(t testing.TB, xr, input map[string]any, stage string) []observedObject {
	t.Helper()
	fresh := run(t, newRequest(t, xr, input))
	job := ""
	for _, n := range desiredNames(fresh) {
		if strings.HasPrefix(n, render.ResourceJobPrefix) {
			job = n
		}
	}
	weights := []observedObject{
		observedFrom(t, fresh, render.ResourcePVC, boundPVC()),
		observedFrom(t, fresh, job, map[string]any{"succeeded": 1, "startTime": "2026-12-01T10:00:00Z", "completionTime": "2026-12-01T10:20:00Z", "conditions": []any{
			map[string]any{"type": "SuccessCriteriaMet", "status": "True"},
			map[string]any{"type": "Complete", "status": "True"},
		}}),
	}
	servers := run(t, newRequest(t, xr, input, weights...))
	var st map[string]any
	switch stage {
	case "starting":
		st = lwsStatusOf(2, 2, 0, false)
	case "serving":
		st = lwsStatusOf(2, 2, 2, true)
	case "degraded":
		st = lwsStatusOf(2, 2, 1, false)
	case "rolling":
		// Both groups answer, one on the new templates: Progressing (with
		// UpdateInProgress) until the second is updated.
		st = lwsStatusOf(2, 1, 2, false)
		st["conditions"] = append(st["conditions"].([]any), map[string]any{"type": "UpdateInProgress", "status": "True", "reason": "GroupsUpdating", "message": "Rolling Upgrade is in progress", "lastTransitionTime": "2026-12-01T10:40:00Z"})
	}
	lws := observedFrom(t, servers, render.ResourceLeaderWorkerSet, st)
	setPath(lws.Object, int64(1), "metadata", "generation")
	out := append(weights, lws, observedFrom(t, servers, render.ResourceService, nil))
	// The NetworkPolicies: the servers', the pull pods' and each group's.
	for _, n := range desiredNames(servers) {
		if strings.HasPrefix(n, render.ResourceNetworkPolicy) {
			out = append(out, observedFrom(t, servers, n, nil))
		}
	}
	return out
}

// TestLeaderWorkerSetRender checks the groups of examples/multi-node once
// its weights are pulled: the leader and worker commands, GPUs per pod,
// the read-only weights on every pod, probes on the leader only, the
// rollout bounds, and a Service that selects the leaders only.
func TestLeaderWorkerSetRender(t *testing.T) {
	input := multiNodeInput(t)
	xr := readYAML(t, multiNodeXR)
	rsp := run(t, newRequest(t, xr, input, readObserved(t, filepath.Join(multiNodeObserved, "serving.yaml"))...))
	if msg := fatalMessage(rsp); msg != "" {
		t.Fatal(msg)
	}
	if got := desiredNames(rsp); slices.Contains(got, render.ResourceDeployment) || slices.Contains(got, render.ResourceHPA) {
		t.Errorf("desired %v: a multi-node service has no Deployment and no autoscaler", got)
	}
	l := desiredObject[lws.LeaderWorkerSet](t, rsp, render.ResourceLeaderWorkerSet)
	if l == nil {
		t.Fatalf("no LeaderWorkerSet; desired %v", desiredNames(rsp))
	}
	type shape struct {
		APIVersion, Kind, Name, Namespace, Restart, Startup string
		Replicas, Size                                      int32
		Surge, Unavailable                                  intstr.IntOrString
	}
	got := shape{l.APIVersion, l.Kind, l.Name, l.Namespace, l.Spec.LeaderWorkerTemplate.RestartPolicy, l.Spec.StartupPolicy,
		*l.Spec.Replicas, *l.Spec.LeaderWorkerTemplate.Size,
		l.Spec.RolloutStrategy.RollingUpdateConfiguration.MaxSurge, l.Spec.RolloutStrategy.RollingUpdateConfiguration.MaxUnavailable}
	want := shape{"leaderworkerset.x-k8s.io/v1", "LeaderWorkerSet", "llama-405b", "team-a", "RecreateGroupOnPodRestart", "LeaderCreated",
		2, 2, intstr.FromInt32(1), intstr.FromInt32(1)}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("LeaderWorkerSet (-want +got):\n%s", diff)
	}

	leader, worker := l.Spec.LeaderWorkerTemplate.LeaderTemplate.Spec.Containers[0], l.Spec.LeaderWorkerTemplate.WorkerTemplate.Spec.Containers[0]
	wantArgs := []string{"vllm", "serve", "--model=$(MODEL_DIR)", "--served-model-name=$(MODEL_NAME)", "--port=$(PORT)",
		"--tensor-parallel-size=8", "--pipeline-parallel-size=2", "--distributed-executor-backend=ray"}
	if diff := cmp.Diff(wantArgs, leader.Args); diff != "" {
		t.Errorf("leader args (-want +got):\n%s", diff)
	}
	if len(leader.Command) != 4 || !strings.Contains(leader.Command[2], "ray start --head --port=6379") || !strings.Contains(leader.Command[2], `-ge 2 ]`) || !strings.HasSuffix(leader.Command[2], `exec "$@"`) {
		t.Errorf("leader command %q: want sh -c starting the Ray head, waiting for 2 pods, then exec the server", leader.Command)
	}
	if diff := cmp.Diff([]string{"/bin/sh", "-c", `exec ray start --address="$LWS_LEADER_ADDRESS:6379" --block --disable-usage-stats`}, worker.Command); diff != "" || worker.Args != nil {
		t.Errorf("worker command (-want +got):\n%s (args %q)", diff, worker.Args)
	}
	if leader.StartupProbe == nil || leader.ReadinessProbe == nil || leader.LivenessProbe == nil {
		t.Error("the leader must have start-up, readiness and liveness probes")
	}
	if worker.StartupProbe != nil || worker.ReadinessProbe != nil || worker.LivenessProbe != nil || worker.Ports != nil {
		t.Error("a worker serves nothing: no probes, no ports")
	}
	for _, c := range []corev1.Container{leader, worker} {
		if q := c.Resources.Limits["nvidia.com/gpu"]; q.Value() != 8 {
			t.Errorf("%v: %s GPUs per pod, want 8", c.Command[:2], q.String())
		}
		ro := false
		for _, m := range c.VolumeMounts {
			ro = ro || (m.Name == render.VolumeWeights && m.ReadOnly)
		}
		if !ro {
			t.Error("every pod mounts the weights read-only")
		}
	}
	for _, tmpl := range []*corev1.PodTemplateSpec{l.Spec.LeaderWorkerTemplate.LeaderTemplate, &l.Spec.LeaderWorkerTemplate.WorkerTemplate} {
		if tmpl.Spec.Volumes[0].PersistentVolumeClaim == nil || !tmpl.Spec.Volumes[0].PersistentVolumeClaim.ReadOnly {
			t.Error("the weights volume must be mounted read-only")
		}
		if tmpl.Annotations[resolve.AnnotationWeights] == "" {
			t.Error("every pod template records its weights")
		}
	}

	svc := desiredObject[corev1.Service](t, rsp, render.ResourceService)
	wantSel := map[string]string{resolve.LabelInstance: "llama-405b", resolve.LabelComponent: resolve.ComponentServer, lws.WorkerIndexLabel: "0"}
	if diff := cmp.Diff(wantSel, svc.Spec.Selector); diff != "" {
		t.Errorf("Service selector (-want +got):\n%s", diff)
	}
	pvc := desiredObject[corev1.PersistentVolumeClaim](t, rsp, render.ResourcePVC)
	if diff := cmp.Diff([]corev1.PersistentVolumeAccessMode{corev1.ReadWriteMany}, pvc.Spec.AccessModes); diff != "" {
		t.Errorf("PVC access modes (-want +got):\n%s", diff)
	}
}

// TestLeaderWorkerSetStatus reads each stage's LWS status into readiness,
// ServerReady, phase and status.readyReplicas (groups).
func TestLeaderWorkerSetStatus(t *testing.T) {
	input := multiNodeInput(t)
	xr := readYAML(t, multiNodeXR)
	type result struct {
		Ready       bool
		Reason      string
		Phase       string
		ReadyGroups int64
		MessageHas  string
	}
	cases := map[string]result{
		"starting": {Reason: "GroupsStarting", Phase: "Starting", MessageHas: "0 of 2 groups ready (each 2 pods × 8 nvidia.com/gpu)"},
		"serving":  {Ready: true, Reason: "GroupsAvailable", Phase: "Serving", ReadyGroups: 2, MessageHas: "2 of 2 groups ready (each 2 pods × 8 nvidia.com/gpu, tensor 8 × pipeline 2)"},
		"degraded": {Reason: "GroupsDegraded", Phase: "Degraded", ReadyGroups: 1, MessageHas: "1 of 2 groups ready"},
		"rolling":  {Reason: "GroupsRollingOut", Phase: "Serving", ReadyGroups: 2, MessageHas: "rolling out 1 updated groups"},
	}
	for stage, want := range cases {
		t.Run(stage, func(t *testing.T) {
			rsp := run(t, newRequest(t, xr, input, readObserved(t, filepath.Join(multiNodeObserved, stage+".yaml"))...))
			st := rsp.GetDesired().GetComposite().GetResource().AsMap()["status"].(map[string]any)
			got := result{Ready: readiness(rsp, render.ResourceLeaderWorkerSet) == 1, Phase: st["phase"].(string), MessageHas: want.MessageHas}
			if n, ok := st["readyReplicas"].(float64); ok {
				got.ReadyGroups = int64(n)
			}
			// The counts are in status.message, not in the condition
			// (reason.Condition.Detail).
			if msg, _ := st["message"].(string); !strings.Contains(msg, want.MessageHas) {
				got.MessageHas = msg
			}
			for _, c := range rsp.GetConditions() {
				if c.GetType() == reason.ConditionServerReady {
					got.Reason = c.GetReason()
				}
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// TestLWSReady is lwsReady's rule, case by case.
func TestLWSReady(t *testing.T) {
	cond := func(typ string, status metav1.ConditionStatus) metav1.Condition {
		return metav1.Condition{Type: typ, Status: status}
	}
	lwsIn := func(replicas *int32, st lws.Status) *lws.LeaderWorkerSet {
		return &lws.LeaderWorkerSet{Spec: lws.Spec{Replicas: replicas}, Status: st}
	}
	available := []metav1.Condition{cond(lws.Available, metav1.ConditionTrue), cond(lws.Progressing, metav1.ConditionFalse)}
	cases := map[string]struct {
		l    *lws.LeaderWorkerSet
		want bool
	}{
		"NotObserved":            {nil, false},
		"NoStatus":               {lwsIn(ptr.To(int32(2)), lws.Status{}), false},
		"AllReady":               {lwsIn(ptr.To(int32(2)), lws.Status{Conditions: available, Replicas: 2, UpdatedReplicas: 2, ReadyReplicas: 2}), true},
		"DefaultOneReplica":      {lwsIn(nil, lws.Status{Conditions: available, Replicas: 1, UpdatedReplicas: 1, ReadyReplicas: 1}), true},
		"Progressing":            {lwsIn(ptr.To(int32(2)), lws.Status{Conditions: []metav1.Condition{cond(lws.Available, metav1.ConditionFalse), cond(lws.Progressing, metav1.ConditionTrue)}, Replicas: 2, UpdatedReplicas: 2, ReadyReplicas: 1}), false},
		"ScaledUpNotCounted":     {lwsIn(ptr.To(int32(3)), lws.Status{Conditions: available, Replicas: 2, UpdatedReplicas: 2, ReadyReplicas: 2}), false},
		"NotAllUpdated":          {lwsIn(ptr.To(int32(2)), lws.Status{Conditions: available, Replicas: 2, UpdatedReplicas: 1, ReadyReplicas: 2}), false},
		"AvailableConditionOnly": {lwsIn(ptr.To(int32(2)), lws.Status{Conditions: available}), false},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := render.LWSReady(tc.l); got != tc.want {
				t.Errorf("lwsReady = %v, want %v", got, tc.want)
			}
		})
	}
}

// TestMultiNodeResolve: the defaults of spec.parallelism, the flags the
// servers get, and a one-node parallel server (a Deployment with the
// flags, no Ray).
func TestMultiNodeResolve(t *testing.T) {
	cases := map[string]struct {
		spec     string
		in       map[string]any
		wantArgs []string
		groups   bool
	}{
		"Defaults": {spec: `{nodes: 2, resources: {gpu: 4}, storage: {accessMode: ReadWriteMany}}`, in: map[string]any{"networkPolicy": map[string]any{"enabled": true}},
			wantArgs: []string{"--tensor-parallel-size=4", "--pipeline-parallel-size=2", "--distributed-executor-backend=ray"}, groups: true},
		// Groups without NetworkPolicies, where the platform says its
		// cluster isolates them.
		"TensorAcrossNodes": {spec: `{nodes: 2, parallelism: {tensor: 16, pipeline: 1}, resources: {gpu: 8}, storage: {accessMode: ReadWriteMany}}`,
			in:       map[string]any{"runtimes": map[string]any{"vllm": map[string]any{"multiNode": map[string]any{"serverCommand": []any{"vllm", "serve"}, "isolatedByCluster": true}}}},
			wantArgs: []string{"--tensor-parallel-size=16", "--pipeline-parallel-size=1", "--distributed-executor-backend=ray"}, groups: true},
		"OneNodeParallel": {spec: `{parallelism: {tensor: 4}, resources: {gpu: 4}}`,
			wantArgs: []string{"--tensor-parallel-size=4", "--pipeline-parallel-size=1"}},
		"OneNodeAloneIsTheDefault": {spec: `{nodes: 1, resources: {gpu: 2}}`,
			wantArgs: []string{"--served-model-name=$(MODEL_NAME)", "--port=$(PORT)"}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			xr := testXR()
			for k, v := range mustYAML(tc.spec) {
				xr["spec"].(map[string]any)[k] = v
			}
			rsp, _ := pulled(t, xr, tc.in)
			if msg := fatalMessage(rsp); msg != "" {
				t.Fatal(msg)
			}
			var c corev1.Container
			if tc.groups {
				c = desiredObject[lws.LeaderWorkerSet](t, rsp, render.ResourceLeaderWorkerSet).Spec.LeaderWorkerTemplate.LeaderTemplate.Spec.Containers[0]
			} else {
				d := desiredObject[appsv1.Deployment](t, rsp, render.ResourceDeployment)
				if d == nil {
					t.Fatalf("no Deployment; desired %v", desiredNames(rsp))
				}
				c = d.Spec.Template.Spec.Containers[0]
			}
			if got := c.Args[len(c.Args)-len(tc.wantArgs):]; !cmp.Equal(tc.wantArgs, got) {
				t.Errorf("args end %q, want %q", got, tc.wantArgs)
			}
		})
	}
}

// TestNodesOneAnyRuntime: spec.nodes 1 is the default, so any runtime
// takes it, and the servers stay a Deployment without parallel flags.
func TestNodesOneAnyRuntime(t *testing.T) {
	xr := testXR()
	setPath(xr, "tgi", "spec", "model", "framework")
	setPath(xr, int64(1), "spec", "nodes")
	rsp, _ := pulled(t, xr, nil)
	if msg := fatalMessage(rsp); msg != "" {
		t.Fatal(msg)
	}
	d := desiredObject[appsv1.Deployment](t, rsp, render.ResourceDeployment)
	if d == nil {
		t.Fatalf("no Deployment; desired %v", desiredNames(rsp))
	}
	for _, a := range d.Spec.Template.Spec.Containers[0].Args {
		if strings.HasPrefix(a, resolve.FlagTensorParallel) || strings.HasPrefix(a, resolve.FlagPipelineParallel) {
			t.Errorf("arg %q: spec.nodes 1 adds no parallel flags", a)
		}
	}
}

// TestGroupsMaxUnavailable checks the groups' maxUnavailable: the Input's,
// but never 0, which the LWS controller would copy into a StatefulSet the
// API server refuses.
func TestGroupsMaxUnavailable(t *testing.T) {
	cases := []struct {
		in, want intstr.IntOrString
	}{
		{intstr.FromInt32(0), intstr.FromInt32(1)},
		{intstr.FromString("0%"), intstr.FromInt32(1)},
		{intstr.FromString("00%"), intstr.FromInt32(1)},
		{intstr.FromInt32(1), intstr.FromInt32(1)},
		{intstr.FromInt32(2), intstr.FromInt32(2)},
		{intstr.FromString("25%"), intstr.FromString("25%")},
	}
	for _, c := range cases {
		if got := render.GroupsMaxUnavailable(c.in); got != c.want {
			t.Errorf("groupsMaxUnavailable(%s) = %s, want %s", c.in.String(), got.String(), c.want.String())
		}
	}
}

// TestOneGroupWarns checks the warning for a multi-node service of one
// group, which every rollout replaces in place, and its absence for two.
func TestOneGroupWarns(t *testing.T) {
	input := multiNodeInput(t)
	for _, c := range []struct {
		min  int64
		warn bool
	}{{1, true}, {2, false}} {
		xr := readYAML(t, multiNodeXR)
		setPath(xr, c.min, "spec", "replicas", "min")
		rsp := run(t, newRequest(t, xr, input))
		if msg := fatalMessage(rsp); msg != "" {
			t.Fatal(msg)
		}
		w, ok := warningWith(rsp, "spec.replicas.min: one group of 2 nodes is replaced in place")
		if ok != c.warn {
			t.Errorf("replicas.min %d: warned %v (%v), want %v; warnings %q", c.min, ok, w, c.warn, warningsOf(rsp))
		}
	}
}
