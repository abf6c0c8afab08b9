package fn

import (
	"fmt"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"google.golang.org/protobuf/types/known/structpb"
	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
)

// observed holds the composed objects Crossplane observed, decoded into
// their API types. A nil field was not observed.
//
// Only the fields the function reads are decoded: a Job's or an
// autoscaler's spec, and a Deployment's pod template, are large and mostly
// not needed; decoding them was a fifth of a call's time.
type observed struct {
	PVC        *corev1.PersistentVolumeClaim
	Job        *batchv1.Job       // the pull Job of the current spec: metadata and status
	Deployment *appsv1.Deployment // metadata, spec without its template, status
	Service    *corev1.Service
	HPA        *autoscalingv2.HorizontalPodAutoscaler // metadata and status

	// deploymentTemplate is the observed Deployment's pod template, decoded
	// on demand by servedTemplate.
	deploymentTemplate *structpb.Value
}

// observe decodes the observed composed resources the function reads.
// Pull Jobs of earlier specs are left alone: the function stops returning
// them, and Crossplane deletes them.
func observe(ocds map[string]*fnv1.Resource, jobResource string) (observed, error) {
	var o observed
	get := func(name string) *structpb.Struct {
		if name == "" {
			return nil
		}
		return ocds[name].GetResource()
	}
	wrap := func(name string, err error) error {
		if err == nil {
			return nil
		}
		return fmt.Errorf("cannot decode the observed composed resource %s: %w", name, err)
	}
	if c := get(resourcePVC); c != nil {
		o.PVC = &corev1.PersistentVolumeClaim{}
		if err := decodeFields(c, o.PVC, "metadata", "spec", "status"); err != nil {
			return o, wrap(resourcePVC, err)
		}
	}
	if c := get(jobResource); c != nil {
		o.Job = &batchv1.Job{}
		if err := decodeFields(c, o.Job, "metadata", "status"); err != nil {
			return o, wrap(jobResource, err)
		}
	}
	if c := get(resourceDeployment); c != nil {
		o.Deployment = &appsv1.Deployment{}
		spec := c.GetFields()["spec"].GetStructValue()
		o.deploymentTemplate = spec.GetFields()["template"]
		var specFields map[string]*structpb.Value
		if spec != nil {
			specFields = make(map[string]*structpb.Value, len(spec.GetFields()))
			for k, v := range spec.GetFields() {
				if k != "template" {
					specFields[k] = v
				}
			}
		}
		err := decodeFields(c, o.Deployment, "metadata", "status")
		if err == nil && specFields != nil {
			err = decodeStruct(&structpb.Struct{Fields: specFields}, &o.Deployment.Spec, "spec")
		}
		if err != nil {
			return o, wrap(resourceDeployment, err)
		}
	}
	if c := get(resourceService); c != nil {
		o.Service = &corev1.Service{}
		if err := decodeFields(c, o.Service, "metadata", "spec", "status"); err != nil {
			return o, wrap(resourceService, err)
		}
	}
	if c := get(resourceHPA); c != nil {
		o.HPA = &autoscalingv2.HorizontalPodAutoscaler{}
		if err := decodeFields(c, o.HPA, "metadata", "status"); err != nil {
			return o, wrap(resourceHPA, err)
		}
	}
	return o, nil
}

// servedTemplate decodes the observed Deployment's pod template.
func (o observed) servedTemplate() (*corev1.PodTemplateSpec, error) {
	t := &corev1.PodTemplateSpec{}
	if o.deploymentTemplate == nil {
		return t, nil
	}
	if err := decodeValue(o.deploymentTemplate, reflectValue(t), &fieldPath{name: "spec.template", index: -1}); err != nil {
		return nil, fmt.Errorf("cannot decode the observed composed resource %s: %w", resourceDeployment, err)
	}
	return t, nil
}

// decodeFields decodes only the named top-level fields of content into obj.
func decodeFields(content *structpb.Struct, obj any, fields ...string) error {
	sub := make(map[string]*structpb.Value, len(fields))
	for _, f := range fields {
		if v, ok := content.GetFields()[f]; ok {
			sub[f] = v
		}
	}
	return decodeStruct(&structpb.Struct{Fields: sub}, obj, "")
}
