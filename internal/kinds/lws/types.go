package lws

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// The LeaderWorkerSet API (sigs.k8s.io/lws v0.7.0,
// leaderworkerset.x-k8s.io/v1): the fields the function sets and reads.
// They are our own types rather than the module's api package, whose
// go.mod would bring controller-runtime, volcano.sh/apis and
// cert-controller into ours for sixty lines of structs; the e2e applies
// what they render to the upstream CRD with strict field validation.
const (
	APIVersion = "leaderworkerset.x-k8s.io/v1"
	Kind       = "LeaderWorkerSet"
	// WorkerIndexLabel is on every pod of a group: "0" on the leader.
	WorkerIndexLabel = "leaderworkerset.sigs.k8s.io/worker-index"
	// SetNameLabel and GroupIndexLabel are on every pod of a group: the
	// LeaderWorkerSet's name and the group's index ("0" to replicas + surge
	// - 1). The LWS pod webhook sets all three.
	SetNameLabel    = "leaderworkerset.sigs.k8s.io/name"
	GroupIndexLabel = "leaderworkerset.sigs.k8s.io/group-index"
	// Available and Progressing are conditions the LWS controller sets;
	// they are mutually exclusive.
	Available        = "Available"
	Progressing      = "Progressing"
	updateInProgress = "UpdateInProgress"
)

// LeaderWorkerSet is a LeaderWorkerSet: replicas groups of a leader and
// size - 1 workers.
// +kubebuilder:object:root=true
type LeaderWorkerSet struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              Spec   `json:"spec"`
	Status            Status `json:"status,omitempty"`
}

// Spec mirrors LeaderWorkerSetSpec (leaderworkerset.x-k8s.io/v1): how many
// groups, the leader and worker templates, how a new template rolls out,
// and when the workers start.
type Spec struct {
	// Replicas is the number of groups (the API server defaults it to 1).
	Replicas             *int32          `json:"replicas,omitempty"`
	LeaderWorkerTemplate Template        `json:"leaderWorkerTemplate"`
	RolloutStrategy      RolloutStrategy `json:"rolloutStrategy,omitempty"`
	// StartupPolicy LeaderCreated starts the workers with the leader;
	// LeaderReady would wait for a leader that waits for its workers.
	StartupPolicy string `json:"startupPolicy,omitempty"`
}

// Template mirrors LeaderWorkerTemplate (spec.leaderWorkerTemplate,
// leaderworkerset.x-k8s.io/v1): the leader's and the workers' pod
// templates, the size of a group (leader included), and whether a pod's
// restart recreates its whole group.
type Template struct {
	LeaderTemplate *corev1.PodTemplateSpec `json:"leaderTemplate,omitempty"`
	WorkerTemplate corev1.PodTemplateSpec  `json:"workerTemplate"`
	Size           *int32                  `json:"size,omitempty"`
	RestartPolicy  string                  `json:"restartPolicy,omitempty"`
}

// RolloutStrategy mirrors RolloutStrategy (spec.rolloutStrategy,
// leaderworkerset.x-k8s.io/v1): how groups move to a new template.
type RolloutStrategy struct {
	Type                       string         `json:"type"`
	RollingUpdateConfiguration *RollingUpdate `json:"rollingUpdateConfiguration,omitempty"`
}

// RollingUpdate mirrors RollingUpdateConfiguration
// (spec.rolloutStrategy.rollingUpdateConfiguration,
// leaderworkerset.x-k8s.io/v1): its bounds count groups, not pods.
type RollingUpdate struct {
	MaxUnavailable intstr.IntOrString `json:"maxUnavailable"`
	MaxSurge       intstr.IntOrString `json:"maxSurge"`
}

// Status is what the LWS controller reports: groups, not pods. It has
// no observedGeneration.
type Status struct {
	Conditions []metav1.Condition `json:"conditions,omitempty"`
	// ReadyReplicas counts the groups whose leader and workers are all
	// ready, UpdatedReplicas those on the current templates, Replicas
	// those created.
	ReadyReplicas   int32  `json:"readyReplicas,omitempty"`
	UpdatedReplicas int32  `json:"updatedReplicas,omitempty"`
	Replicas        int32  `json:"replicas,omitempty"`
	HPAPodSelector  string `json:"hpaPodSelector,omitempty"`
}

// ServedTemplate is the observed leader template, which records the
// weights the groups mount.
func (l *LeaderWorkerSet) ServedTemplate() (*corev1.PodTemplateSpec, error) {
	if l.Spec.LeaderWorkerTemplate.LeaderTemplate == nil {
		return &l.Spec.LeaderWorkerTemplate.WorkerTemplate, nil
	}
	return l.Spec.LeaderWorkerTemplate.LeaderTemplate, nil
}
