package fn

import (
	"fmt"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// resourceLeaderWorkerSet is the composition resource name of the model
// servers when each is a group of several pods (spec.nodes > 1).
const resourceLeaderWorkerSet = "leaderworkerset"

// The LeaderWorkerSet API (sigs.k8s.io/lws v0.7.0,
// leaderworkerset.x-k8s.io/v1): the fields the function sets and reads.
// They are our own types rather than the module's api package, whose
// go.mod would bring controller-runtime, volcano.sh/apis and
// cert-controller into ours for sixty lines of structs; the e2e applies
// what they render to the upstream CRD with strict field validation.
const (
	lwsAPIVersion = "leaderworkerset.x-k8s.io/v1"
	lwsKind       = "LeaderWorkerSet"
	// lwsWorkerIndexLabel is on every pod of a group: "0" on the leader.
	lwsWorkerIndexLabel = "leaderworkerset.sigs.k8s.io/worker-index"
	// Conditions the LWS controller sets; Available and Progressing are
	// mutually exclusive.
	lwsAvailable      = "Available"
	lwsProgressing    = "Progressing"
	lwsUpdateProgress = "UpdateInProgress"
)

// leaderWorkerSet is a LeaderWorkerSet: replicas groups of a leader and
// size - 1 workers.
type leaderWorkerSet struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              lwsSpec   `json:"spec"`
	Status            lwsStatus `json:"status,omitempty"`
}

type lwsSpec struct {
	// Replicas is the number of groups (the API server defaults it to 1).
	Replicas             *int32             `json:"replicas,omitempty"`
	LeaderWorkerTemplate lwsTemplate        `json:"leaderWorkerTemplate"`
	RolloutStrategy      lwsRolloutStrategy `json:"rolloutStrategy,omitempty"`
	// StartupPolicy LeaderCreated starts the workers with the leader;
	// LeaderReady would wait for a leader that waits for its workers.
	StartupPolicy string `json:"startupPolicy,omitempty"`
}

type lwsTemplate struct {
	LeaderTemplate *corev1.PodTemplateSpec `json:"leaderTemplate,omitempty"`
	WorkerTemplate corev1.PodTemplateSpec  `json:"workerTemplate"`
	Size           *int32                  `json:"size,omitempty"`
	RestartPolicy  string                  `json:"restartPolicy,omitempty"`
}

type lwsRolloutStrategy struct {
	Type                       string            `json:"type"`
	RollingUpdateConfiguration *lwsRollingUpdate `json:"rollingUpdateConfiguration,omitempty"`
}

type lwsRollingUpdate struct {
	MaxUnavailable intstr.IntOrString `json:"maxUnavailable"`
	MaxSurge       intstr.IntOrString `json:"maxSurge"`
}

// lwsStatus is what the LWS controller reports: groups, not pods. It has
// no observedGeneration.
type lwsStatus struct {
	Conditions []metav1.Condition `json:"conditions,omitempty"`
	// ReadyReplicas counts the groups whose leader and workers are all
	// ready, UpdatedReplicas those on the current templates, Replicas
	// those created.
	ReadyReplicas   int32  `json:"readyReplicas,omitempty"`
	UpdatedReplicas int32  `json:"updatedReplicas,omitempty"`
	Replicas        int32  `json:"replicas,omitempty"`
	HPAPodSelector  string `json:"hpaPodSelector,omitempty"`
}

// DeepCopyObject makes leaderWorkerSet a runtime.Object.
func (l *leaderWorkerSet) DeepCopyObject() runtime.Object {
	out := *l
	l.ObjectMeta.DeepCopyInto(&out.ObjectMeta)
	if l.Spec.Replicas != nil {
		out.Spec.Replicas = ptrTo(*l.Spec.Replicas)
	}
	t := &out.Spec.LeaderWorkerTemplate
	if l.Spec.LeaderWorkerTemplate.LeaderTemplate != nil {
		t.LeaderTemplate = l.Spec.LeaderWorkerTemplate.LeaderTemplate.DeepCopy()
	}
	l.Spec.LeaderWorkerTemplate.WorkerTemplate.DeepCopyInto(&t.WorkerTemplate)
	if l.Spec.LeaderWorkerTemplate.Size != nil {
		t.Size = ptrTo(*l.Spec.LeaderWorkerTemplate.Size)
	}
	if r := l.Spec.RolloutStrategy.RollingUpdateConfiguration; r != nil {
		out.Spec.RolloutStrategy.RollingUpdateConfiguration = ptrTo(*r)
	}
	out.Status.Conditions = append([]metav1.Condition(nil), l.Status.Conditions...)
	return &out
}

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

// renderLeaderWorkerSet builds the servers of version v as replicas groups
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
func renderLeaderWorkerSet(s *resolvedSpec, v *modelVersion, w weights, replicas int32) *leaderWorkerSet {
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
	worker.Spec.TerminationGracePeriodSeconds = ptrTo(int64(30))

	return &leaderWorkerSet{
		TypeMeta:   metav1.TypeMeta{APIVersion: lwsAPIVersion, Kind: lwsKind},
		ObjectMeta: metav1.ObjectMeta{Name: v.serverName(s), Namespace: s.Namespace, Labels: s.labels(v, v.component())},
		Spec: lwsSpec{
			Replicas: ptrTo(replicas),
			LeaderWorkerTemplate: lwsTemplate{
				LeaderTemplate: &leader,
				WorkerTemplate: worker,
				Size:           ptrTo(mn.Nodes),
				RestartPolicy:  "RecreateGroupOnPodRestart",
			},
			RolloutStrategy: lwsRolloutStrategy{
				Type: "RollingUpdate",
				RollingUpdateConfiguration: &lwsRollingUpdate{
					MaxUnavailable: groupsMaxUnavailable(s.Rollout.MaxUnavailable),
					MaxSurge:       s.Rollout.MaxSurge,
				},
			},
			StartupPolicy: "LeaderCreated",
		},
	}
}

// groupsMaxUnavailable is input.rollout.maxUnavailable for groups, made
// at least 1. The LWS controller (v0.7.0 and v0.8.0, the newest served)
// copies it into its leader StatefulSet's rollingUpdate.maxUnavailable,
// which the API server refuses at 0 from Kubernetes 1.35 on, where
// MaxUnavailableStatefulSet is on by default: the controller then fails
// every reconcile and no group is ever created (kubernetes-sigs/lws issue
// 776; its fix is in no release yet). Seen with the real controller in the
// e2e. The surge still comes first: the StatefulSet counts an unready
// surge group as unavailable, so it stops no old group until the surge
// group is ready.
func groupsMaxUnavailable(v intstr.IntOrString) intstr.IntOrString {
	if boundIsZero(v) {
		return intstr.FromInt32(1)
	}
	return v
}

// leaderSelector selects the leaders of the groups: only they serve.
func (s *resolvedSpec) leaderSelector() map[string]string {
	sel := s.selector()
	sel[lwsWorkerIndexLabel] = "0"
	return sel
}

// desiredGroups is the observed LeaderWorkerSet's spec.replicas, which the
// API server defaults to 1.
func desiredGroups(l *leaderWorkerSet) int32 {
	if l.Spec.Replicas == nil {
		return 1
	}
	return *l.Spec.Replicas
}

// servedTemplate is the observed leader template, which records the
// weights the groups mount.
func (l *leaderWorkerSet) servedTemplate() (*corev1.PodTemplateSpec, error) {
	if l.Spec.LeaderWorkerTemplate.LeaderTemplate == nil {
		return &l.Spec.LeaderWorkerTemplate.WorkerTemplate, nil
	}
	return l.Spec.LeaderWorkerTemplate.LeaderTemplate, nil
}

// readyOn is how many groups are ready on weights w, at least: the ready
// groups less those not yet updated, when the leader template records w.
func (l *leaderWorkerSet) readyOn(w weights) int32 {
	if l == nil || w.ID == "" {
		return 0
	}
	t, _ := l.servedTemplate()
	if t.Annotations[annotationWeights] != w.ID {
		return 0
	}
	return max(0, l.Status.ReadyReplicas-(l.Status.Replicas-l.Status.UpdatedReplicas))
}

// gpusPerGroup describes a group's GPUs for messages, e.g. "2 pods × 8
// nvidia.com/gpu".
func gpusPerGroup(s *resolvedSpec) string {
	q := resource.NewQuantity(int64(s.GPU), resource.DecimalSI)
	return strconv.Itoa(int(s.MultiNode.Nodes)) + " pods × " + q.String() + " " + s.GPUSettings.ResourceName
}
