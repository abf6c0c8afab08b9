package fn

import (
	"fmt"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"google.golang.org/protobuf/types/known/structpb"
	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/inferno-ai/function-inferno/internal/structcodec"
)

// observed holds the composed objects Crossplane observed, decoded into
// their API types. A nil field was not observed.
//
// Only the fields the function reads are decoded: a Job's or an
// autoscaler's spec, and a Deployment's pod template, are large and mostly
// not needed; decoding them was a fifth of a call's time.
type observed struct {
	PVC     *corev1.PersistentVolumeClaim
	Service *corev1.Service      // the Service <name>
	Route   *gatewayv1.HTTPRoute // metadata and status
	// Versions are the objects of each version, in the order of
	// resolvedSpec.Versions.
	Versions []observedVersion
}

// observedVersion holds the observed objects of one version.
type observedVersion struct {
	Job        *batchv1.Job                           // the pull Job of the current spec: metadata and status
	Deployment *appsv1.Deployment                     // metadata, spec without its template, status
	HPA        *autoscalingv2.HorizontalPodAutoscaler // metadata and status
	Service    *corev1.Service                        // the version's own Service, in a split

	// deploymentTemplate is the observed Deployment's pod template, decoded
	// on demand by servedTemplate.
	deploymentTemplate *structpb.Value
}

// observe decodes the observed composed resources the function reads.
// jobs are the composition resource names of each version's current pull
// Job. Pull Jobs of earlier specs are left alone: the function stops
// returning them, and Crossplane deletes them.
func observe(ocds map[string]*fnv1.Resource, s *resolvedSpec, jobs []string) (observed, error) {
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
	if c := get(resourceService); c != nil {
		o.Service = &corev1.Service{}
		if err := decodeFields(c, o.Service, "metadata", "spec", "status"); err != nil {
			return o, wrap(resourceService, err)
		}
	}
	if c := get(resourceRoute); c != nil {
		o.Route = &gatewayv1.HTTPRoute{}
		if err := decodeFields(c, o.Route, "metadata", "status"); err != nil {
			return o, wrap(resourceRoute, err)
		}
	}
	o.Versions = make([]observedVersion, len(s.Versions))
	for i := range s.Versions {
		v, ov := &s.Versions[i], &o.Versions[i]
		if c := get(jobs[i]); c != nil {
			ov.Job = &batchv1.Job{}
			if err := decodeFields(c, ov.Job, "metadata", "status"); err != nil {
				return o, wrap(jobs[i], err)
			}
		}
		if c := get(v.deploymentResource()); c != nil {
			d, t, err := decodeDeployment(c)
			if err != nil {
				return o, wrap(v.deploymentResource(), err)
			}
			ov.Deployment, ov.deploymentTemplate = d, t
		}
		if c := get(v.hpaResource()); c != nil {
			ov.HPA = &autoscalingv2.HorizontalPodAutoscaler{}
			if err := decodeFields(c, ov.HPA, "metadata", "status"); err != nil {
				return o, wrap(v.hpaResource(), err)
			}
		}
		if !s.Split {
			continue
		}
		if c := get(v.serviceResource()); c != nil {
			ov.Service = &corev1.Service{}
			if err := decodeFields(c, ov.Service, "metadata", "spec", "status"); err != nil {
				return o, wrap(v.serviceResource(), err)
			}
		}
	}
	return o, nil
}

// decodeDeployment decodes an observed Deployment without its pod
// template, which it returns undecoded for servedTemplate.
func decodeDeployment(c *structpb.Struct) (*appsv1.Deployment, *structpb.Value, error) {
	d := &appsv1.Deployment{}
	spec := c.GetFields()["spec"].GetStructValue()
	template := spec.GetFields()["template"]
	var specFields map[string]*structpb.Value
	if spec != nil {
		specFields = make(map[string]*structpb.Value, len(spec.GetFields()))
		for k, v := range spec.GetFields() {
			if k != "template" {
				specFields[k] = v
			}
		}
	}
	err := decodeFields(c, d, "metadata", "status")
	if err == nil && specFields != nil {
		err = structcodec.Decode(&structpb.Struct{Fields: specFields}, &d.Spec, "spec")
	}
	return d, template, err
}

// servedTemplate decodes the observed Deployment's pod template.
func (o observedVersion) servedTemplate() (*corev1.PodTemplateSpec, error) {
	t := &corev1.PodTemplateSpec{}
	if o.deploymentTemplate == nil {
		return t, nil
	}
	if err := structcodec.DecodeValue(o.deploymentTemplate, t, "spec.template"); err != nil {
		return nil, err
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
	return structcodec.Decode(&structpb.Struct{Fields: sub}, obj, "")
}
