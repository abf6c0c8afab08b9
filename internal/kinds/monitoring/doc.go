// Package monitoring holds the Prometheus Operator's PodMonitor
// (monitoring.coreos.com/v1): the fields the function sets. The
// operator's api module is not needed for six structs.
//
// +kubebuilder:object:generate=true
package monitoring
