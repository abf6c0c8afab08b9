package fn

import (
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/crossplane/function-sdk-go/resource"
)

// observed holds the composed objects Crossplane observed, decoded once
// into their API types. A nil field was not observed.
type observed struct {
	PVC        *corev1.PersistentVolumeClaim
	Job        *batchv1.Job // the pull Job of the current spec
	Deployment *appsv1.Deployment
	Service    *corev1.Service
	HPA        *autoscalingv2.HorizontalPodAutoscaler
}

// observe decodes the observed composed resources the function reads.
// Pull Jobs of earlier specs are left alone: the function stops returning
// them, and Crossplane deletes them.
func observe(ocds map[resource.Name]resource.ObservedComposed, jobResource string) (observed, error) {
	var o observed
	for name, into := range map[string]any{
		resourcePVC:        &o.PVC,
		jobResource:        &o.Job,
		resourceDeployment: &o.Deployment,
		resourceService:    &o.Service,
		resourceHPA:        &o.HPA,
	} {
		if name == "" {
			continue
		}
		ocd, ok := ocds[resource.Name(name)]
		if !ok || ocd.Resource == nil {
			continue
		}
		if err := decodeObserved(ocd.Resource.Object, into); err != nil {
			return o, fmt.Errorf("cannot decode the observed %s (%s %s): %w", name, ocd.Resource.GetKind(), ocd.Resource.GetName(), err)
		}
	}
	return o, nil
}

// decodeObserved decodes content into *T, where into is a **T.
func decodeObserved(content map[string]any, into any) error {
	switch p := into.(type) {
	case **corev1.PersistentVolumeClaim:
		return fromUnstructured(content, p)
	case **batchv1.Job:
		return fromUnstructured(content, p)
	case **appsv1.Deployment:
		return fromUnstructured(content, p)
	case **corev1.Service:
		return fromUnstructured(content, p)
	case **autoscalingv2.HorizontalPodAutoscaler:
		return fromUnstructured(content, p)
	}
	return fmt.Errorf("unexpected type %T", into)
}

func fromUnstructured[T any](content map[string]any, into **T) error {
	obj := new(T)
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(content, obj); err != nil {
		return err
	}
	*into = obj
	return nil
}
