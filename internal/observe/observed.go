package observe

import (
	"fmt"
	"sort"
	"strings"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"github.com/inferno-ai/function-inferno/internal/kinds/keda"
	"github.com/inferno-ai/function-inferno/internal/kinds/lws"
	"github.com/inferno-ai/function-inferno/internal/render"
	"github.com/inferno-ai/function-inferno/internal/resolve"
	"github.com/inferno-ai/function-inferno/internal/structcodec"
	"google.golang.org/protobuf/types/known/structpb"
	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	inferencev1 "sigs.k8s.io/gateway-api-inference-extension/api/v1"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
)

// Objects holds the composed objects Crossplane observed, decoded into
// their API types and keyed by their composition resource names. It knows
// nothing of the spec: the plan looks up what each version needs, and
// finds what no version names any more.
//
// Only the fields the function reads are decoded: a Job's or an
// autoscaler's spec, and a Deployment's pod template, are large and mostly
// not needed; decoding them was a fifth of a call's time.
type Objects struct {
	PVC     *corev1.PersistentVolumeClaim
	Service *corev1.Service      // the Service <name>
	Route   *gatewayv1.HTTPRoute // metadata, spec and status
	// Pool is the InferencePool (metadata and status), Picker its endpoint
	// picker's Deployment (without its pod template).
	Pool   *inferencev1.InferencePool
	Picker *appsv1.Deployment
	// PickerService is the picker's Service.
	PickerService *corev1.Service
	// Deployments, HPAs and VersionServices are the servers' objects of
	// every version, by composition resource name ("deployment",
	// "deployment-<version>", "hpa", "hpa-<version>", "service-<version>").
	Deployments     map[string]*Deployment
	HPAs            map[string]*autoscalingv2.HorizontalPodAutoscaler // metadata, spec and status
	VersionServices map[string]*corev1.Service
	// ScaledObjects are the KEDA ScaledObjects of services that scale to
	// zero, by composition resource name (metadata and status).
	ScaledObjects map[string]*keda.ScaledObject
	// HTTPScaledObjects are their HTTP add-on objects (metadata, status).
	HTTPScaledObjects map[string]*keda.HTTPScaledObject
	// LeaderWorkerSet is the servers' groups, with spec.nodes > 1.
	LeaderWorkerSet *lws.LeaderWorkerSet
	// names are every observed composition resource name.
	names map[string]bool
	// jobs are the observed pull Jobs, undecoded: the plan decodes the
	// ones of the current spec (job). Pull Jobs of earlier specs are left
	// alone: the function stops returning them, and Crossplane deletes
	// them.
	jobs map[string]*structpb.Struct
	// Progress are the pulls' progress ConfigMaps (metadata and data).
	Progress map[string]*corev1.ConfigMap
	// Secrets are the required Secrets the claim names as credentials
	// (credentials.go); they are not composed, and fn sets them beside
	// the decoded objects.
	Secrets Secrets
}

// Deployment is an observed Deployment: metadata, spec without its
// pod template, status; the template stays undecoded until ServedTemplate
// needs it.
type Deployment struct {
	*appsv1.Deployment
	template *structpb.Value
}

// Decode decodes the observed composed resources the function reads.
func Decode(ocds map[string]*fnv1.Resource) (Objects, error) {
	o := Objects{
		Deployments:       map[string]*Deployment{},
		HPAs:              map[string]*autoscalingv2.HorizontalPodAutoscaler{},
		VersionServices:   map[string]*corev1.Service{},
		ScaledObjects:     map[string]*keda.ScaledObject{},
		HTTPScaledObjects: map[string]*keda.HTTPScaledObject{},
		names:             make(map[string]bool, len(ocds)),
		jobs:              map[string]*structpb.Struct{},
		Progress:          map[string]*corev1.ConfigMap{},
	}
	// In name order, so that the first error is always the same one.
	names := make([]string, 0, len(ocds))
	for name := range ocds {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		c := ocds[name].GetResource()
		if c == nil {
			continue
		}
		o.names[name] = true
		var err error
		switch {
		case name == render.ResourcePVC:
			o.PVC = &corev1.PersistentVolumeClaim{}
			err = decodeFields(c, o.PVC, "metadata", "spec", "status")
		case name == render.ResourceService:
			o.Service = &corev1.Service{}
			err = decodeFields(c, o.Service, "metadata", "spec", "status")
		case name == render.ResourceRoute:
			o.Route = &gatewayv1.HTTPRoute{}
			err = decodeFields(c, o.Route, "metadata", "spec", "status")
		case name == render.ResourcePool:
			o.Pool = &inferencev1.InferencePool{}
			err = decodeFields(c, o.Pool, "metadata", "status")
		case name == render.ResourcePicker:
			o.Picker, _, err = decodeDeployment(c)
		case name == render.ResourcePickerService:
			o.PickerService = &corev1.Service{}
			err = decodeFields(c, o.PickerService, "metadata", "spec", "status")
		case name == render.ResourceDeployment || strings.HasPrefix(name, render.ResourceDeployment+"-"):
			d, t, derr := decodeDeployment(c)
			o.Deployments[name], err = &Deployment{Deployment: d, template: t}, derr
		case name == render.ResourceHPA || strings.HasPrefix(name, render.ResourceHPA+"-"):
			h := &autoscalingv2.HorizontalPodAutoscaler{}
			o.HPAs[name], err = h, decodeFields(c, h, "metadata", "spec", "status")
		case name == render.ResourceScaledObject || strings.HasPrefix(name, render.ResourceScaledObject+"-"):
			so := &keda.ScaledObject{}
			o.ScaledObjects[name], err = so, decodeFields(c, so, "metadata", "status")
		case name == render.ResourceHTTPScaledObject || strings.HasPrefix(name, render.ResourceHTTPScaledObject+"-"):
			so := &keda.HTTPScaledObject{}
			o.HTTPScaledObjects[name], err = so, decodeFields(c, so, "metadata", "status")
		case strings.HasPrefix(name, render.ResourceService+"-"):
			svc := &corev1.Service{}
			o.VersionServices[name], err = svc, decodeFields(c, svc, "metadata", "spec", "status")
		case name == render.ResourceLeaderWorkerSet:
			o.LeaderWorkerSet = &lws.LeaderWorkerSet{}
			err = decodeFields(c, o.LeaderWorkerSet, "metadata", "spec", "status")
		case strings.HasPrefix(name, render.ResourceJobPrefix):
			o.jobs[name] = c
		case render.IsProgressConfigMap(name):
			cm := &corev1.ConfigMap{}
			o.Progress[name], err = cm, decodeFields(c, cm, "metadata", "data")
		}
		if err != nil {
			return o, DecodeError(name, err)
		}
	}
	return o, nil
}

// DecodeError is the error of an observed composed resource that cannot
// be decoded into its API type, naming it by composition resource name so
// that the user knows which object Crossplane sent is malformed. It fails
// the call (a Fatal result): no plan is made from a half-read object.
func DecodeError(name string, err error) error {
	return fmt.Errorf("cannot decode the observed composed resource %s: %w", name, err)
}

// Has reports whether a composed resource of that name is observed.
func (o Objects) Has(name string) bool { return o.names[name] }

// Observed is what a readiness rule is given for a composed resource that
// is not decoded: render.Seen when it is observed, nil when it is not.
func (o Objects) Observed(name string) runtime.Object {
	if o.names[name] {
		return render.Seen
	}
	return nil
}

// Job decodes the observed pull Job of that composition resource name
// (metadata and status), nil when there is none.
func (o Objects) Job(name string) (*batchv1.Job, error) {
	c := o.jobs[name]
	if c == nil {
		return nil, nil
	}
	j := &batchv1.Job{}
	if err := decodeFields(c, j, "metadata", "status"); err != nil {
		return nil, DecodeError(name, err)
	}
	return j, nil
}

// decodeDeployment decodes an observed Deployment without its pod
// template, which it returns undecoded for ServedTemplate.
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

// ServedTemplate decodes the observed Deployment's pod template.
func (d *Deployment) ServedTemplate() (*corev1.PodTemplateSpec, error) {
	t := &corev1.PodTemplateSpec{}
	if d.template == nil {
		return t, nil
	}
	if err := structcodec.DecodeValue(d.template, t, "spec.template"); err != nil {
		return nil, err
	}
	return t, nil
}

// TemplateMeta reads one label or annotation of the observed pod template
// without decoding it: field is "labels" or "annotations".
func (d *Deployment) TemplateMeta(field, key string) string {
	return d.template.GetStructValue().GetFields()["metadata"].GetStructValue().
		GetFields()[field].GetStructValue().GetFields()[key].GetStringValue()
}

// Current says the Deployment's status is about its current spec.
func (d *Deployment) Current() bool {
	return d.Status.ObservedGeneration >= d.Generation
}

// ReadyOnTemplate is how many of the Deployment's servers are ready on its
// current pod template, at least: its ready servers less those not yet
// updated, none while its status is about an earlier spec.
func (d *Deployment) ReadyOnTemplate() int32 {
	if d == nil || !d.Current() {
		return 0
	}
	return max(0, d.Status.ReadyReplicas-(d.Status.Replicas-d.Status.UpdatedReplicas))
}

// ReadyOn is how many of the Deployment's servers are ready on weights w,
// at least: readyOnTemplate when its template records w, else none.
func (d *Deployment) ReadyOn(w render.Weights) int32 {
	if d == nil || w.ID == "" || d.TemplateMeta("annotations", resolve.AnnotationWeights) != w.ID {
		return 0
	}
	return d.ReadyOnTemplate()
}

// RouteBackends are the observed HTTPRoute's backends and weights, nil
// without a route.
func (o Objects) RouteBackends() []render.RouteBackend {
	if o.Route == nil {
		return nil
	}
	var out []render.RouteBackend
	for _, r := range o.Route.Spec.Rules {
		for _, b := range r.BackendRefs {
			if (b.Group != nil && *b.Group != "") || (b.Kind != nil && *b.Kind != "Service") {
				continue // an InferencePool: not a Service
			}
			w := int32(1) // the Gateway API's default weight
			if b.Weight != nil {
				w = *b.Weight
			}
			out = append(out, render.RouteBackend{Service: string(b.Name), Weight: w})
		}
	}
	return out
}

// RouteServices are the Services the observed HTTPRoute sends to.
func (o Objects) RouteServices() map[string]bool {
	out := map[string]bool{}
	for _, b := range o.RouteBackends() {
		out[b.Service] = true
	}
	return out
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

// Object is the observed Deployment, nil when there is none.
func (d *Deployment) Object() *appsv1.Deployment {
	if d == nil {
		return nil
	}
	return d.Deployment
}

// required is what Crossplane sent for the requirement key: the required
// resources, or, from Crossplane v1, which fills only that field, the
// extra resources. resolved says Crossplane has answered the requirement
// at all; an answer may hold no item (nothing of that name exists).
func required(req *fnv1.RunFunctionRequest, key string) (items *fnv1.Resources, resolved bool) {
	if items, resolved = req.GetRequiredResources()[key]; resolved {
		return items, true
	}
	items, resolved = req.GetExtraResources()[key] //nolint:staticcheck // Crossplane v1 fills only this field.
	return items, resolved
}
