package invariants

import (
	"fmt"
	"sort"
	"strings"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/inferno-ai/function-inferno/input/v1beta1"
	"github.com/inferno-ai/function-inferno/internal/resolve"
)

// composition is one render as the checks read it: the desired composed
// objects, the conditions the function wrote, and what the Input and the
// claim say exists beside them.
type composition struct {
	// Namespace is the claim's, where every composed object lives.
	Namespace string
	// Input is the platform's Input, typed; InputMap the same, as written
	// (for settings a version of the Input may not have yet).
	Input    *v1beta1.Input
	InputMap map[string]any
	// Spec is the claim's spec, as written (nil for none).
	Spec map[string]any
	// Existing are the objects the claim or the Input names as existing
	// in the namespace, by kind and name: the claim's Secrets, its pvc://
	// volume, its ModelCache's volume, the Input's ServiceAccount.
	Existing map[string]bool
	Objects  []object
	// Conditions are the function's conditions and results, as "type:
	// reason: message" lines, for checks that accept a reported problem.
	Conditions []string

	// Decoded once, on first use.
	podsOnce []podTemplate
	podsErr  error
	podsDone bool
	services []*corev1.Service
	svcDone  bool
}

// object is one desired composed resource.
type object struct {
	Resource string // composition resource name
	Kind     string
	Name     string
	U        map[string]any
}

// key names an object by kind and name: "ServiceAccount/llama-epp".
func key(kind, name string) string { return kind + "/" + name }

// has says the composition composes an object of that kind and name.
func (c *composition) has(kind, name string) bool {
	for _, o := range c.Objects {
		if o.Kind == kind && o.Name == name {
			return true
		}
	}
	return false
}

// resolves says an object a pod or binding names is there: composed, named
// by the claim or the Input as existing, or one Kubernetes puts in every
// namespace.
func (c *composition) resolves(kind, name string) bool {
	switch {
	case kind == "ServiceAccount" && (name == "" || name == "default"):
		return true
	case kind == "ConfigMap" && name == "kube-root-ca.crt":
		return true
	}
	return c.has(kind, name) || c.Existing[key(kind, name)]
}

// ofKind are the composed objects of a kind, in resource name order.
func (c *composition) ofKind(kind string) []object {
	var out []object
	for _, o := range c.Objects {
		if o.Kind == kind {
			out = append(out, o)
		}
	}
	return out
}

// reported says some condition or result mentions s.
func (c *composition) reported(s string) bool {
	for _, m := range c.Conditions {
		if strings.Contains(m, s) {
			return true
		}
	}
	return false
}

// decode converts an object into a typed one.
func decode[T any](u map[string]any) (*T, error) {
	out := new(T)
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u, out); err != nil {
		return nil, err
	}
	return out, nil
}

// podTemplate is a pod template a composed object renders.
type podTemplate struct {
	Owner string // Kind/name of the object, plus the template for a group's
	Kind  string // the owner's kind
	Role  string // server, leader, worker, puller or picker
	corev1.PodTemplateSpec
}

// Roles of pods.
const (
	roleServer = "server"
	roleLeader = "leader"
	roleWorker = "worker"
	rolePuller = "puller"
	rolePicker = "picker"
)

// The labels the LWS pod webhook (sigs.k8s.io/lws v0.7.0) puts on every
// pod of a LeaderWorkerSet group.
const (
	lwsSetNameLabel     = "leaderworkerset.sigs.k8s.io/name"
	lwsGroupIndexLabel  = "leaderworkerset.sigs.k8s.io/group-index"
	lwsWorkerIndexLabel = "leaderworkerset.sigs.k8s.io/worker-index"
)

// pods are the composition's pod templates. The picker is the Deployment
// whose pods the InferencePool's endpoint picker Service selects; every
// other Deployment runs servers.
func (c *composition) pods() ([]podTemplate, error) {
	if !c.podsDone {
		c.podsOnce, c.podsErr = c.decodePods()
		c.podsDone = true
	}
	return c.podsOnce, c.podsErr
}

// serviceList are the composed Services, typed.
func (c *composition) serviceList() []*corev1.Service {
	if !c.svcDone {
		for _, o := range c.ofKind("Service") {
			if s, err := decode[corev1.Service](o.U); err == nil {
				c.services = append(c.services, s)
			}
		}
		c.svcDone = true
	}
	return c.services
}

func (c *composition) decodePods() ([]podTemplate, error) {
	pickerSel := c.pickerSelector()
	var out []podTemplate
	add := func(o object, role string, path ...string) error {
		u, _ := nested(o.U, path...).(map[string]any)
		if u == nil {
			return nil
		}
		t, err := decode[corev1.PodTemplateSpec](u)
		if err != nil {
			return fmt.Errorf("%s %s: %w", o.Kind, o.Name, err)
		}
		owner := key(o.Kind, o.Name)
		if role == roleLeader || role == roleWorker {
			owner += " (" + role + ")"
			// The LWS pod webhook labels every pod of a group: the set's
			// name, the group's index and the pod's index in it. The
			// templates stand for the pods of group 0.
			worker := "0"
			if role == roleWorker {
				worker = "1"
			}
			if t.Labels == nil {
				t.Labels = map[string]string{}
			}
			t.Labels[lwsSetNameLabel], t.Labels[lwsGroupIndexLabel], t.Labels[lwsWorkerIndexLabel] = o.Name, "0", worker
		}
		out = append(out, podTemplate{Owner: owner, Kind: o.Kind, Role: role, PodTemplateSpec: *t})
		return nil
	}
	for _, o := range c.Objects {
		var err error
		switch o.Kind {
		case "Job":
			err = add(o, rolePuller, "spec", "template")
		case "Deployment":
			role := roleServer
			labels, _ := nested(o.U, "spec", "template", "metadata", "labels").(map[string]any)
			if pickerSel != nil && selects(pickerSel, stringMap(labels)) {
				role = rolePicker
			}
			err = add(o, role, "spec", "template")
		case "LeaderWorkerSet":
			if err = add(o, roleLeader, "spec", "leaderWorkerTemplate", "leaderTemplate"); err == nil {
				err = add(o, roleWorker, "spec", "leaderWorkerTemplate", "workerTemplate")
			}
		}
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}

// pickerSelector is the selector of the Service the InferencePool names as
// its endpoint picker, nil without one.
func (c *composition) pickerSelector() map[string]string {
	for _, p := range c.ofKind("InferencePool") {
		name := nestedString(p.U, "spec", "endpointPickerRef", "name")
		for _, s := range c.ofKind("Service") {
			if s.Name == name {
				sel, _ := nested(s.U, "spec", "selector").(map[string]any)
				return stringMap(sel)
			}
		}
	}
	return nil
}

func stringMap(m map[string]any) map[string]string {
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[k], _ = v.(string)
	}
	return out
}

// selects says every key of sel has its value in labels (a Service's
// selector).
func selects(sel, labels map[string]string) bool {
	if len(sel) == 0 {
		return false
	}
	for k, v := range sel {
		if labels[k] != v {
			return false
		}
	}
	return true
}

// newComposition reads a response for the checks. claim is the XR as
// written, required the ModelCache claim it was given (nil for none).
func newComposition(rsp *fnv1.RunFunctionResponse, claim, input, required map[string]any) (*composition, error) {
	in, err := decode[v1beta1.Input](input)
	if err != nil {
		return nil, fmt.Errorf("input: %w", err)
	}
	spec, _ := claim["spec"].(map[string]any)
	c := &composition{Input: in, InputMap: input, Spec: spec, Existing: map[string]bool{}}
	c.Namespace = nestedString(claim, "metadata", "labels", "crossplane.io/claim-namespace")
	if c.Namespace == "" {
		c.Namespace = nestedString(claim, "metadata", "namespace")
	}
	if c.Namespace == "" {
		c.Namespace = in.Namespace
	}
	for name, res := range rsp.GetDesired().GetResources() {
		u := res.GetResource().AsMap()
		c.Objects = append(c.Objects, object{Resource: name, Kind: nestedString(u, "kind"), Name: nestedString(u, "metadata", "name"), U: u})
	}
	sort.Slice(c.Objects, func(i, j int) bool { return c.Objects[i].Resource < c.Objects[j].Resource })
	for _, cd := range rsp.GetConditions() {
		c.Conditions = append(c.Conditions, cd.GetType()+": "+cd.GetReason()+": "+cd.GetMessage())
	}
	for _, r := range rsp.GetResults() {
		c.Conditions = append(c.Conditions, r.GetSeverity().String()+": "+r.GetMessage())
	}
	c.addExisting(spec, required)
	return c, nil
}

// addExisting records what the claim and the Input name as existing: every
// credentialsSecretRef, the Secrets and ConfigMaps spec.serve.env reads, the
// claim of every pvc:// uri, the volume of the ModelCache, and the servers'
// ServiceAccount.
func (c *composition) addExisting(spec, required map[string]any) {
	var visit func(v any)
	visit = func(v any) {
		switch t := v.(type) {
		case map[string]any:
			for k, x := range t {
				switch k {
				case "credentialsSecretRef", "secretKeyRef", "secretRef":
					if n := nestedString(x, "name"); n != "" {
						c.Existing[key("Secret", n)] = true
					}
				case "configMapKeyRef", "configMapRef":
					if n := nestedString(x, "name"); n != "" {
						c.Existing[key("ConfigMap", n)] = true
					}
				case "uri":
					if s, _ := x.(string); strings.HasPrefix(s, "pvc://") {
						name, _, _ := strings.Cut(strings.TrimPrefix(s, "pvc://"), "/")
						c.Existing[key("PersistentVolumeClaim", name)] = true
						c.Existing["pvc-uri/"+name] = true
					}
				}
				visit(x)
			}
		case []any:
			for _, x := range t {
				visit(x)
			}
		}
	}
	visit(spec)
	// The cache's volume, named after the cache as its own composition
	// names it (resolve.CacheVolume): a service never takes the name from
	// the cache's status.
	if n := nestedString(required, "metadata", "name"); n != "" {
		c.Existing[key("PersistentVolumeClaim", resolve.CacheVolume(n))] = true
	}
	if sa := c.Input.ServerServiceAccount; sa != nil {
		c.Existing[key("ServiceAccount", sa.Name)] = true
	}
}
