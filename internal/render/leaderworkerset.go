package render

import (
	"fmt"
	"strconv"

	"github.com/inferno-ai/function-inferno/internal/kinds/lws"
	"github.com/inferno-ai/function-inferno/internal/resolve"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
)

// ResourceLeaderWorkerSet is the composition resource name of the model
// servers when each is a group of several pods (spec.nodes > 1).
const ResourceLeaderWorkerSet = "leaderworkerset"

// Container ports of a group.
const portNameRay = "ray"

// leaderScript starts the Ray head, waits until every pod of the group
// has joined it, then runs the server ("$@": the preset's server command
// and args). Until the server answers, the leader's start-up probe fails,
// within the runtime's start-up budget.
const leaderScript = `set -e
ray start --head --port=%[1]d --disable-usage-stats
echo "waiting for the %[2]d pods of the group to join the Ray cluster"
until [ "$(python3 -c 'import ray; ray.init(address="auto", logging_level="error"); print(len([n for n in ray.nodes() if n["Alive"]]))' 2>/dev/null | tail -n 1)" -ge %[2]d ] 2>/dev/null; do sleep 5; done
exec "$@"`

// workerScript joins the leader's Ray head and stays in the foreground:
// when the head goes, ray exits, the pod restarts, and the LWS controller
// recreates the whole group (RecreateGroupOnPodRestart). The LWS
// controller's pod webhook sets LWS_LEADER_ADDRESS.
const workerScript = `exec ray start --address="$LWS_LEADER_ADDRESS:%d" --block --disable-usage-stats`

// LeaderWorkerSet builds the servers of version v as replicas groups
// of s.MultiNode.Nodes pods, each pod a copy of the Deployment's server
// pod (GPUs, weights read-only, security context, placement):
//  1. the leader runs the Ray head and then the server with the parallel
//     flags, and alone has the port, the probes and the drain pause; the
//     Service selects the leaders only (worker-index 0);
//  2. a worker joins the head and serves nothing itself;
//  3. a pod that restarts restarts its group: Ray does not survive losing
//     a member;
//  4. groups roll with input.rollout's maxSurge and maxUnavailable,
//     counted in groups, maxUnavailable at least 1 (groupsMaxUnavailable).
func LeaderWorkerSet(s *resolve.Spec, v *resolve.Version, w Weights, replicas int32) *lws.LeaderWorkerSet {
	mn := s.MultiNode
	leader := serverPodTemplate(s, v, w)
	c := &leader.Spec.Containers[0]
	c.Command = []string{"/bin/sh", "-c", fmt.Sprintf(leaderScript, mn.RayPort, mn.Nodes), "leader"}
	c.Args = append(append([]string(nil), mn.ServerCommand...), s.Runtime.Args...)
	c.Ports = append(c.Ports, corev1.ContainerPort{Name: portNameRay, ContainerPort: mn.RayPort, Protocol: corev1.ProtocolTCP})

	worker := serverPodTemplate(s, v, w)
	wc := &worker.Spec.Containers[0]
	wc.Command = []string{"/bin/sh", "-c", fmt.Sprintf(workerScript, mn.RayPort)}
	wc.Args = nil
	wc.Ports = nil
	wc.StartupProbe, wc.ReadinessProbe, wc.LivenessProbe, wc.Lifecycle = nil, nil, nil, nil
	// A worker serves nothing: it goes when its group goes.
	worker.Spec.TerminationGracePeriodSeconds = ptr.To(int64(30))

	return &lws.LeaderWorkerSet{
		TypeMeta:   metav1.TypeMeta{APIVersion: lws.APIVersion, Kind: lws.Kind},
		ObjectMeta: metav1.ObjectMeta{Name: v.ServerName(s), Namespace: s.Namespace, Labels: s.Labels(v, v.Component())},
		Spec: lws.Spec{
			Replicas: ptr.To(replicas),
			LeaderWorkerTemplate: lws.Template{
				LeaderTemplate: &leader,
				WorkerTemplate: worker,
				Size:           ptr.To(mn.Nodes),
				RestartPolicy:  "RecreateGroupOnPodRestart",
			},
			RolloutStrategy: lws.RolloutStrategy{
				Type: "RollingUpdate",
				RollingUpdateConfiguration: &lws.RollingUpdate{
					MaxUnavailable: GroupsMaxUnavailable(s.Rollout.MaxUnavailable),
					MaxSurge:       s.Rollout.MaxSurge,
				},
			},
			StartupPolicy: "LeaderCreated",
		},
	}
}

// GroupsMaxUnavailable is input.rollout.maxUnavailable for groups, made
// at least 1. The LWS controller (v0.7.0 and v0.8.0, the newest served)
// copies it into its leader StatefulSet's rollingUpdate.maxUnavailable,
// which the API server refuses at 0 from Kubernetes 1.35 on, where
// MaxUnavailableStatefulSet is on by default: the controller then fails
// every reconcile and no group is ever created (kubernetes-sigs/lws issue
// 776; its fix is in no release yet). Seen with the real controller in the
// e2e. The surge still comes first: the StatefulSet counts an unready
// surge group as unavailable, so it stops no old group until the surge
// group is ready.
func GroupsMaxUnavailable(v intstr.IntOrString) intstr.IntOrString {
	if resolve.BoundIsZero(v) {
		return intstr.FromInt32(1)
	}
	return v
}

// GroupCount is how many groups a LeaderWorkerSet of replicas groups may
// run at once, indices 0 to GroupCount-1: during a rollout the LWS
// controller (v0.7.0) adds surge groups after the last, maxSurge of them
// (a percentage of replicas rounded up), never more than replicas.
func GroupCount(s *resolve.Spec, replicas int32) int32 {
	surge, err := intstr.GetScaledValueFromIntOrPercent(&s.Rollout.MaxSurge, int(replicas), true)
	if err != nil || surge < 0 {
		surge = 0
	}
	return replicas + min(int32(surge), replicas)
}

// LeaderSelector selects the leaders of the groups: only they serve.
func LeaderSelector(s *resolve.Spec) map[string]string {
	sel := s.Selector()
	sel[lws.WorkerIndexLabel] = "0"
	return sel
}

// DesiredGroups is the observed LeaderWorkerSet's spec.replicas, which the
// API server defaults to 1.
func DesiredGroups(l *lws.LeaderWorkerSet) int32 {
	if l.Spec.Replicas == nil {
		return 1
	}
	return *l.Spec.Replicas
}

// GroupsReadyOn is how many groups are ready on weights w, at least: the ready
// groups less those not yet updated, when the leader template records w.
func GroupsReadyOn(l *lws.LeaderWorkerSet, w Weights) int32 {
	if l == nil || w.ID == "" {
		return 0
	}
	t, _ := l.ServedTemplate()
	if t.Annotations[resolve.AnnotationWeights] != w.ID {
		return 0
	}
	return max(0, l.Status.ReadyReplicas-(l.Status.Replicas-l.Status.UpdatedReplicas))
}

// GPUsPerGroup describes a group's GPUs for messages, e.g. "2 pods × 8
// nvidia.com/gpu" (GPUsPerPod).
func GPUsPerGroup(s *resolve.Spec) string {
	return strconv.Itoa(int(s.MultiNode.Nodes)) + " pods × " + GPUsPerPod(s)
}

// LWSReady reports whether the groups of a LeaderWorkerSet are ready:
//  1. condition Available=True (the LWS controller sets it, and
//     Progressing=False, once every group's leader and workers are ready
//     on the current templates);
//  2. status.readyReplicas == status.updatedReplicas == status.replicas ==
//     spec.replicas.
//
// The LWS status has no observedGeneration, so for the moment between a
// new template and the controller's next status it may still describe the
// old one; the weights the servers mount are judged from the template
// (readyOn), not from the status.
func LWSReady(l *lws.LeaderWorkerSet) bool {
	if l == nil || !lwsCondition(l, lws.Available) {
		return false
	}
	want := DesiredGroups(l)
	return l.Status.ReadyReplicas == want && l.Status.UpdatedReplicas == want && l.Status.Replicas == want
}

// lwsCondition says the LeaderWorkerSet's condition of that type is True.
func lwsCondition(l *lws.LeaderWorkerSet, t string) bool {
	c := meta.FindStatusCondition(l.Status.Conditions, t)
	return c != nil && c.Status == metav1.ConditionTrue
}
