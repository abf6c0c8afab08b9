package invariants

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"google.golang.org/protobuf/types/known/structpb"
	"sigs.k8s.io/yaml"

	"github.com/inferno-ai/function-inferno/fn"
	xprender "github.com/inferno-ai/function-inferno/test/render"
)

// How a claim is walked through its life, black box: each stage's request
// observes what an earlier render desired, with the statuses Kubernetes
// controllers would have written by then (as fn/golden_test.go does), and
// nothing but RunFunction is called.

// The stages every claim is rendered at, in walk order.
const (
	stageFresh    = "fresh"    // nothing observed
	stagePulling  = "pulling"  // volumes pending, pull Jobs running
	stageFailed   = "failed"   // pull Jobs failed
	stagePulled   = "pulled"   // weights there: the servers' first render
	stageStarting = "starting" // servers created, none ready
	stageServing  = "serving"  // everything ready
	stageDegraded = "degraded" // one server short
)

// observedTime is every timestamp the observed statuses carry.
const observedTime = "2026-12-01T10:00:00Z"

// renderer renders one claim (an XR) under one Input.
type renderer struct {
	xr, input *structpb.Struct
	// required is what a service on a cache is given at a stage, by
	// requirement key (nil for none).
	required func(stage string) map[string]*fnv1.Resources
}

// run calls RunFunction with what is observed at a stage.
func (r *renderer) run(stage string, observed map[string]*fnv1.Resource) (*fnv1.RunFunctionResponse, error) {
	req := &fnv1.RunFunctionRequest{
		Meta:     &fnv1.RequestMeta{Tag: "invariants"},
		Input:    r.input,
		Observed: &fnv1.State{Composite: &fnv1.Resource{Resource: r.xr}, Resources: observed},
	}
	if r.required != nil {
		req.RequiredResources = r.required(stage)
	}
	return (&fn.Function{}).RunFunction(context.Background(), req)
}

// render is one RunFunction response at one stage.
type render struct {
	Stage string
	Rsp   *fnv1.RunFunctionResponse
}

// fatal is the response's Fatal result message, "" without one.
func fatal(rsp *fnv1.RunFunctionResponse) string {
	for _, r := range rsp.GetResults() {
		if r.GetSeverity() == fnv1.Severity_SEVERITY_FATAL {
			return r.GetMessage()
		}
	}
	return ""
}

// walk renders a claim at every stage, each render once: fresh; the
// fresh objects observed pulling, failed, and pulled; the pulled render's
// objects observed starting, serving and degraded. A refused claim stops
// at its fresh render.
func walk(r *renderer) ([]render, error) {
	fresh, err := r.run(stageFresh, nil)
	if err != nil {
		return nil, err
	}
	out := []render{{stageFresh, fresh}}
	if fatal(fresh) != "" {
		return out, nil
	}
	next := func(stage string, from *fnv1.RunFunctionResponse, as string) (*fnv1.RunFunctionResponse, error) {
		rsp, err := r.run(stage, observe(from, as))
		if err != nil {
			return nil, err
		}
		out = append(out, render{stage, rsp})
		return rsp, nil
	}
	if r.required != nil || pulls(fresh) {
		if _, err := next(stagePulling, fresh, stagePulling); err != nil {
			return nil, err
		}
		if _, err := next(stageFailed, fresh, stageFailed); err != nil {
			return nil, err
		}
	}
	pulled, err := next(stagePulled, fresh, stageStarting)
	if err != nil {
		return nil, err
	}
	for _, st := range []string{stageStarting, stageServing, stageDegraded} {
		if _, err := next(st, pulled, st); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// pulls says a render composes a volume or a pull Job: it has pulling
// and failed stages. (Claims on their own volume, an image or a ModelCache
// start their servers at once.)
func pulls(rsp *fnv1.RunFunctionResponse) bool {
	for _, res := range rsp.GetDesired().GetResources() {
		switch res.GetResource().GetFields()["kind"].GetStringValue() {
		case "Job", "PersistentVolumeClaim":
			return true
		}
	}
	return false
}

// observe turns a response's desired objects into observed ones at a
// stage: annotated with their composition resource name, with the status
// their controller would have written.
func observe(rsp *fnv1.RunFunctionResponse, stage string) map[string]*fnv1.Resource {
	out := make(map[string]*fnv1.Resource, len(rsp.GetDesired().GetResources()))
	routes := parentRefs(rsp)
	for name, res := range rsp.GetDesired().GetResources() {
		// RunFunction does not change its request: a shallow copy with
		// new metadata, spec and status is enough.
		obj := shallow(res.GetResource())
		meta := shallowField(obj, "metadata")
		ann := shallowField(meta, "annotations")
		ann.Fields["crossplane.io/composition-resource-name"] = structpb.NewStringValue(name)
		if st := observedStatus(obj, stage, routes); st != nil {
			v, err := structpb.NewValue(st)
			if err != nil {
				panic(err)
			}
			obj.Fields["status"] = v
		}
		out[name] = &fnv1.Resource{Resource: obj}
	}
	return out
}

// shallow copies a Struct's fields, not their values.
func shallow(s *structpb.Struct) *structpb.Struct {
	out := &structpb.Struct{Fields: make(map[string]*structpb.Value, len(s.GetFields())+1)}
	for k, v := range s.GetFields() {
		out.Fields[k] = v
	}
	return out
}

// shallowField replaces a struct field of obj by a shallow copy (an empty
// one when absent) and returns it.
func shallowField(obj *structpb.Struct, name string) *structpb.Struct {
	s := shallow(obj.Fields[name].GetStructValue())
	obj.Fields[name] = structpb.NewStructValue(s)
	return s
}

// parentRefs are the parentRefs of the response's HTTPRoutes: the
// Gateways that report on its routes and pools.
func parentRefs(rsp *fnv1.RunFunctionResponse) []any {
	var out []any
	for _, res := range rsp.GetDesired().GetResources() {
		obj := res.GetResource()
		if obj.GetFields()["kind"].GetStringValue() != "HTTPRoute" {
			continue
		}
		for _, p := range obj.GetFields()["spec"].GetStructValue().GetFields()["parentRefs"].GetListValue().GetValues() {
			out = append(out, p.GetStructValue().AsMap())
		}
	}
	return out
}

func cond(typ, status string) map[string]any {
	return map[string]any{"type": typ, "status": status, "reason": "Observed", "message": "", "lastTransitionTime": observedTime}
}

// observedStatus is the status of an object at a stage, nil for kinds
// whose status nothing reads.
func observedStatus(obj *structpb.Struct, stage string, gateways []any) map[string]any {
	kind := obj.GetFields()["kind"].GetStringValue()
	switch kind {
	case "PersistentVolumeClaim":
		if stage == stagePulling {
			return map[string]any{"phase": "Pending"}
		}
		return map[string]any{"phase": "Bound", "accessModes": []any{"ReadWriteMany"}, "capacity": map[string]any{"storage": "1Ti"}}
	case "Job":
		switch stage {
		case stagePulling:
			return map[string]any{"active": 1, "startTime": observedTime}
		case stageFailed:
			return map[string]any{"failed": 4, "startTime": observedTime, "conditions": []any{
				map[string]any{"type": "FailureTarget", "status": "True", "reason": "BackoffLimitExceeded", "message": "Job has reached the specified backoff limit"},
				map[string]any{"type": "Failed", "status": "True", "reason": "BackoffLimitExceeded", "message": "Job has reached the specified backoff limit"},
			}}
		}
		return map[string]any{"succeeded": 1, "startTime": observedTime, "completionTime": observedTime, "conditions": []any{
			map[string]any{"type": "SuccessCriteriaMet", "status": "True"},
			map[string]any{"type": "Complete", "status": "True"},
		}}
	case "Deployment", "LeaderWorkerSet":
		spec := shallowField(obj, "spec")
		n := 1
		if v, ok := spec.Fields["replicas"]; ok {
			n = int(v.GetNumberValue())
		}
		spec.Fields["replicas"] = structpb.NewNumberValue(float64(n))
		obj.Fields["metadata"].GetStructValue().Fields["generation"] = structpb.NewNumberValue(1)
		ready := map[string]int{stageStarting: 0, stageServing: n, stageDegraded: max(0, n-1)}[stage]
		available := "False"
		if ready == n {
			available = "True"
		}
		if kind == "LeaderWorkerSet" {
			return map[string]any{"replicas": n, "updatedReplicas": n, "readyReplicas": ready,
				"conditions": []any{cond("Available", available), cond("Progressing", "False")}}
		}
		return map[string]any{"observedGeneration": 1, "replicas": n, "updatedReplicas": n,
			"readyReplicas": ready, "availableReplicas": ready, "unavailableReplicas": n - ready,
			"conditions": []any{
				map[string]any{"type": "Available", "status": available},
				map[string]any{"type": "Progressing", "status": "True", "reason": "NewReplicaSetAvailable"},
			}}
	case "HorizontalPodAutoscaler":
		active := "True"
		if stage == stageStarting {
			active = "False"
		}
		return map[string]any{"currentReplicas": 1, "desiredReplicas": 1, "conditions": []any{
			map[string]any{"type": "AbleToScale", "status": "True"},
			map[string]any{"type": "ScalingActive", "status": active},
		}}
	case "ScaledObject", "HTTPScaledObject":
		return map[string]any{"conditions": []any{
			map[string]any{"type": "Ready", "status": "True"},
			map[string]any{"type": "Active", "status": "True"},
		}}
	case "HTTPRoute", "InferencePool":
		var parents []any
		for _, g := range gateways {
			parents = append(parents, map[string]any{"parentRef": g, "controllerName": "example.com/gateway",
				"conditions": []any{cond("Accepted", "True"), cond("ResolvedRefs", "True")}})
		}
		if parents == nil {
			return nil
		}
		return map[string]any{"parents": parents}
	}
	return nil
}

// readYAML reads one YAML document into a map.
func readYAML(path string) (map[string]any, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	m := map[string]any{}
	if err := yaml.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return m, nil
}

// readYAMLDocs reads every document of a YAML file.
func readYAMLDocs(path string) ([]map[string]any, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	docs, err := xprender.Documents(b)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return docs, nil
}

// requiredKeys are the requirement keys under which the function asks
// Crossplane for what a service on a ModelCache needs, by kind.
var requiredKeys = map[string]string{
	"ModelCache": "model-cache", "XModelCache": "model-cache-composite", "PersistentVolumeClaim": "model-cache-volume",
}

// requiredResources files objs under their requirement keys, each key
// resolved (empty when objs has none of its kind).
func requiredResources(objs []map[string]any) (map[string]*fnv1.Resources, error) {
	out := map[string]*fnv1.Resources{}
	for _, key := range requiredKeys {
		out[key] = &fnv1.Resources{}
	}
	for _, o := range objs {
		key, ok := requiredKeys[fmt.Sprint(o["kind"])]
		if !ok {
			return nil, fmt.Errorf("a required %v is nothing a service on a cache asks for", o["kind"])
		}
		s, err := toStruct(o)
		if err != nil {
			return nil, err
		}
		out[key].Items = append(out[key].Items, &fnv1.Resource{Resource: s})
	}
	return out, nil
}

// compositionInput is the Input of a Composition file's one step.
func compositionInput(path string) (map[string]any, error) {
	comp, err := readYAML(path)
	if err != nil {
		return nil, err
	}
	steps, _ := nested(comp, "spec", "pipeline").([]any)
	if len(steps) != 1 {
		return nil, fmt.Errorf("%s has %d pipeline steps, want 1", path, len(steps))
	}
	in, _ := steps[0].(map[string]any)["input"].(map[string]any)
	return in, nil
}

// nested reads a value at a path of an unstructured object, nil when absent.
func nested(obj any, path ...string) any {
	cur := obj
	for _, p := range path {
		m, ok := cur.(map[string]any)
		if !ok {
			return nil
		}
		cur = m[p]
	}
	return cur
}

// nestedString is nested as a string, "" when absent.
func nestedString(obj any, path ...string) string {
	s, _ := nested(obj, path...).(string)
	return s
}

// toStruct converts a JSON-like map into a protobuf Struct, through JSON
// so that every number and list is of a type structpb takes.
func toStruct(m map[string]any) (*structpb.Struct, error) {
	b, err := json.Marshal(m)
	if err != nil {
		return nil, err
	}
	s := &structpb.Struct{}
	return s, s.UnmarshalJSON(b)
}

// deepCopy copies a JSON-like map.
func deepCopy(m map[string]any) map[string]any {
	b, err := json.Marshal(m)
	if err != nil {
		panic(err)
	}
	out := map[string]any{}
	if err := json.Unmarshal(b, &out); err != nil {
		panic(err)
	}
	return out
}

// setPath sets a value at a path, creating maps on the way.
func setPath(obj map[string]any, value any, path ...string) {
	cur := obj
	for _, p := range path[:len(path)-1] {
		next, ok := cur[p].(map[string]any)
		if !ok {
			next = map[string]any{}
			cur[p] = next
		}
		cur = next
	}
	cur[path[len(path)-1]] = value
}

// yamlOf writes a value as YAML for a failure message.
func yamlOf(v any) string {
	b, err := yaml.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return strings.TrimSpace(string(b))
}
