// Package lws holds the LeaderWorkerSet kind (sigs.k8s.io/lws v0.7.0,
// leaderworkerset.x-k8s.io/v1): the fields the function sets and reads.
//
// +kubebuilder:object:generate=true
package lws
