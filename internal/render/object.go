package render

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/inferno-ai/function-inferno/apis/inference/v1alpha1"
	"github.com/inferno-ai/function-inferno/internal/kinds/providerkubernetes"
	"github.com/inferno-ai/function-inferno/internal/resolve"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// ResourceClusterPrefix begins the composition resource name of the
// Object that carries a placed claim to one workload cluster:
// "cluster-<name>".
const ResourceClusterPrefix = "cluster-"

// ClusterResource is the composition resource name of cluster's Object.
func ClusterResource(cluster string) string { return ResourceClusterPrefix + cluster }

// ClusterOfResource is the workload cluster a composition resource name
// is the Object of, and whether it is one.
func ClusterOfResource(name string) (string, bool) {
	c, ok := strings.CutPrefix(name, ResourceClusterPrefix)
	return c, ok && c != ""
}

// RemoteService is the claim as one workload cluster receives it: Inferno's
// own namespaced InferenceService (inference.inferno.dev), named like the
// claim in the namespace the platform maps the claim's namespace to, with
// the claim's spec but its placement. The cluster's Crossplane composes
// it there, under that cluster's own Input.
type RemoteService struct {
	metav1.TypeMeta `json:",inline"`
	Metadata        RemoteMetadata                `json:"metadata"`
	Spec            v1alpha1.InferenceServiceSpec `json:"spec"`
}

// RemoteMetadata is the remote InferenceService's metadata: only its name
// and namespace, which the hub derives and a tenant cannot choose.
type RemoteMetadata struct {
	Name      string `json:"name"`
	Namespace string `json:"namespace"`
}

// ClusterObject builds the Object that carries the claim to one workload
// cluster through the provider-kubernetes configuration providerConfig:
//   - a claim (a cluster-scoped composite) composes the cluster-scoped
//     Object, named after its composite and the cluster, whose reference
//     names a cluster-scoped ProviderConfig;
//   - a namespaced composite composes a namespaced Object in its own
//     namespace, whose reference names a ClusterProviderConfig, never a
//     ProviderConfig of the tenant's namespace, which the tenant may write.
//
// Its readiness is the remote composite's Ready condition
// (DeriveFromObject), which the remote function says outright.
func ClusterObject(s *resolve.Spec, cluster, providerConfig string) (*providerkubernetes.Object, error) {
	p := s.Placement
	manifest, err := json.Marshal(RemoteService{
		TypeMeta: metav1.TypeMeta{APIVersion: v1alpha1.NamespacedGroupVersion.String(), Kind: v1alpha1.NamespacedKind},
		Metadata: RemoteMetadata{Name: s.Name, Namespace: p.Namespace},
		Spec:     p.Remote,
	})
	if err != nil {
		return nil, fmt.Errorf("cannot encode the InferenceService for cluster %s: %w", cluster, err)
	}
	o := &providerkubernetes.Object{
		TypeMeta: metav1.TypeMeta{APIVersion: providerkubernetes.ClusterAPIVersion, Kind: providerkubernetes.Kind},
		ObjectMeta: metav1.ObjectMeta{
			Name:   s.Composite + "-" + cluster,
			Labels: map[string]string{LabelCluster: cluster},
		},
		Spec: providerkubernetes.ObjectSpec{
			ForProvider:       providerkubernetes.ObjectParameters{Manifest: runtime.RawExtension{Raw: manifest}},
			Readiness:         &providerkubernetes.Readiness{Policy: providerkubernetes.ReadinessDeriveFromObject},
			ProviderConfigRef: &providerkubernetes.ProviderConfigRef{Name: providerConfig},
			DeletionPolicy:    p.DeletionPolicy,
		},
	}
	if p.Namespaced {
		o.APIVersion = providerkubernetes.NamespacedAPIVersion
		o.Name, o.Namespace = s.Name+"-"+cluster, s.Namespace
		o.Spec.ProviderConfigRef.Kind = providerkubernetes.KindClusterProviderConfig
	}
	return o, nil
}

// LabelCluster names, on an Object, the workload cluster it reaches.
const LabelCluster = "inference.inferno.io/cluster"

// ObjectReady reports whether a workload cluster serves the claim:
//  1. the Object is Synced=True: provider-kubernetes reached the cluster
//     and applied the current manifest;
//  2. it is Ready=True: the remote composite's Ready condition is True
//     (DeriveFromObject), which its function sets once every server
//     there is ready.
func ObjectReady(o *providerkubernetes.Object) bool {
	if o == nil {
		return false
	}
	synced, ready := o.Condition("Synced"), o.Condition("Ready")
	return synced != nil && synced.Status == "True" && ready != nil && ready.Status == "True"
}
