package fn

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"github.com/google/go-cmp/cmp"
	"github.com/inferno-ai/function-inferno/input/v1beta1"
	"github.com/inferno-ai/function-inferno/internal/reason"
	"github.com/inferno-ai/function-inferno/internal/render"
	"github.com/inferno-ai/function-inferno/internal/resolve"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/utils/ptr"
	inferencev1 "sigs.k8s.io/gateway-api-inference-extension/api/v1"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
	"sigs.k8s.io/yaml"
)

// poolExampleInput is the Input of examples/inference-pool/composition.yaml.
func poolExampleInput(t testing.TB) map[string]any {
	t.Helper()
	comp := readYAML(t, "../examples/inference-pool/composition.yaml")
	steps, _ := nested(comp, "spec", "pipeline")
	in, _ := steps.([]any)[0].(map[string]any)["input"].(map[string]any)
	return in
}

func poolXR(t testing.TB) map[string]any { return readYAML(t, "../examples/inference-pool/xr.yaml") }

// poolStatus is the status a Gateway implementation writes on an
// InferencePool for the example's Gateway: "" none yet, "accepted", or
// "rejected" (an implementation without InferencePool support).
func poolStatus(state string) map[string]any {
	if state == "" {
		return map[string]any{}
	}
	c := func(typ, status, reason, msg string) map[string]any {
		return map[string]any{"type": typ, "status": status, "reason": reason, "message": msg, "lastTransitionTime": "2026-12-01T10:00:00Z"}
	}
	accepted := c("Accepted", "True", "SupportedByParent", "")
	if state == "rejected" {
		accepted = c("Accepted", "False", "NotSupportedByParent", "this Gateway does not support InferencePool backends")
	}
	return map[string]any{"parents": []any{map[string]any{
		"parentRef":      map[string]any{"group": "gateway.networking.k8s.io", "kind": "Gateway", "name": "inference", "namespace": "gateways"},
		"controllerName": "example.com/gateway-controller",
		"conditions":     []any{accepted, c("ResolvedRefs", "True", "ResolvedRefs", "")},
	}}}
}

// poolStage is one state of the inference-pool example: a golden file and
// an observed-resources fixture for the render tests.
type poolStage struct {
	name    string
	example string // the XR's path, for the fixture's header
	xr      func(t testing.TB) map[string]any
	world   world
	// reason is the InferencePoolReady condition's reason at that stage.
	reason string
}

func poolStages() []poolStage {
	routed := world{RouteState: "accepted", PoolState: "accepted"}
	return []poolStage{
		{name: "picker-starting", example: "examples/inference-pool/xr.yaml", xr: poolXR, world: world{NotReady: map[string]bool{"llama-epp": true}}, reason: "PickerStarting"},
		{name: "pending", example: "examples/inference-pool/xr.yaml", xr: poolXR, reason: "PoolPending"},
		{name: "routed", example: "examples/inference-pool/xr.yaml", xr: poolXR, world: routed, reason: "PoolRouted"},
		{name: "rejected", example: "examples/inference-pool/xr.yaml", xr: poolXR, world: world{RouteState: "accepted", PoolState: "rejected"}, reason: "PoolNotAccepted"},
		{name: "canary", example: "examples/canary/xr.yaml", xr: canaryXR, world: routed, reason: "PoolRouted"},
	}
}

// TestInferencePoolGolden renders the inference-pool example fresh and at
// each stage and compares the responses with
// fn/testdata/golden/inference-pool-*.yaml. With -update it rewrites them
// and examples/inference-pool/observed/.
func TestInferencePoolGolden(t *testing.T) {
	t.Run("fresh", func(t *testing.T) {
		compareGolden(t, "inference-pool-fresh", run(t, newRequest(t, poolXR(t), poolExampleInput(t))))
	})
	for _, st := range poolStages() {
		t.Run(st.name, func(t *testing.T) {
			in := poolExampleInput(t)
			_, obs := settle(t, st.xr(t), in, st.world, nil)
			fixture := filepath.Join("..", "examples", "inference-pool", "observed", st.name+".yaml")
			if *update {
				writeObserved(t, fixture, st.example, st.name, obs)
			}
			rsp := run(t, newRequest(t, st.xr(t), in, readObserved(t, fixture)...))
			compareGolden(t, "inference-pool-"+st.name, rsp)
			if got := conditionReason(rsp, reason.ConditionInferencePool); got != st.reason {
				t.Errorf("InferencePoolReady reason %q, want %q (%s)", got, st.reason, conditionMessage(rsp, reason.ConditionInferencePool))
			}
		})
	}
}

// TestInferencePoolObjects checks what a claim on an InferencePool
// composes once everything is accepted: the servers' objects as without
// the extension, the pool, the picker's six objects and the route to the
// pool, all ready, all in the claim's namespace; the pool selects every
// server and nothing else, and the picker is the platform's.
func TestInferencePoolObjects(t *testing.T) {
	rsp, _ := settle(t, poolXR(t), poolExampleInput(t), world{RouteState: "accepted", PoolState: "accepted"}, nil)
	want := []string{
		"deployment", "inference-pool", "picker", "picker-config", "picker-role", "picker-rolebinding",
		"picker-service", "picker-serviceaccount", "pull-job-*", "route", "service", "weights-pvc",
	}
	var got []string
	for _, n := range desiredNames(rsp) {
		if strings.HasPrefix(n, render.ResourceJobPrefix) {
			got = append(got, "pull-job-*")
		} else {
			got = append(got, n)
		}
		if readiness(rsp, n) != fnv1.Ready_READY_TRUE {
			t.Errorf("%s is not ready", n)
		}
		obj := rsp.GetDesired().GetResources()[n].GetResource().AsMap()
		if ns, _ := nested(obj, "metadata", "namespace"); ns != "team-a" {
			t.Errorf("%s is in namespace %v, want team-a", n, ns)
		}
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("desired resources (-want +got):\n%s", diff)
	}

	pool := desiredObject[inferencev1.InferencePool](t, rsp, render.ResourcePool)
	wantSpec := inferencev1.InferencePoolSpec{
		Selector:    inferencev1.LabelSelector{MatchLabels: map[inferencev1.LabelKey]inferencev1.LabelValue{resolve.LabelInstance: "llama", resolve.LabelName: "vllm"}},
		TargetPorts: []inferencev1.Port{{Number: 8000}},
		EndpointPickerRef: inferencev1.EndpointPickerRef{
			Kind: "Service", Name: "llama-epp", Port: &inferencev1.Port{Number: 9002}, FailureMode: inferencev1.EndpointPickerFailClose,
		},
	}
	if diff := cmp.Diff(wantSpec, pool.Spec); diff != "" {
		t.Errorf("InferencePool spec (-want +got):\n%s", diff)
	}
	if pool.Name != "llama" || pool.APIVersion != "inference.networking.k8s.io/v1" {
		t.Errorf("InferencePool %s %s, want llama at inference.networking.k8s.io/v1", pool.APIVersion, pool.Name)
	}

	route := desiredObject[gatewayv1.HTTPRoute](t, rsp, render.ResourceRoute)
	wantRefs := []gatewayv1.HTTPBackendRef{{BackendRef: gatewayv1.BackendRef{BackendObjectReference: gatewayv1.BackendObjectReference{
		Group: ptr.To(gatewayv1.Group("inference.networking.k8s.io")), Kind: ptr.To(gatewayv1.Kind("InferencePool")), Name: "llama",
	}}}}
	if len(route.Spec.Rules) != 1 {
		t.Fatalf("route rules %+v, want one", route.Spec.Rules)
	}
	if diff := cmp.Diff(wantRefs, route.Spec.Rules[0].BackendRefs); diff != "" {
		t.Errorf("route backends (-want +got):\n%s", diff)
	}

	// Who selects whom.
	servers := desiredObject[appsv1.Deployment](t, rsp, render.ResourceDeployment)
	picker := desiredObject[appsv1.Deployment](t, rsp, render.ResourcePicker)
	poolSel := labels.Set{}
	for k, v := range pool.Spec.Selector.MatchLabels {
		poolSel[string(k)] = string(v)
	}
	serverPod, pickerPod := labels.Set(servers.Spec.Template.Labels), labels.Set(picker.Spec.Template.Labels)
	if !poolSel.AsSelector().Matches(serverPod) || poolSel.AsSelector().Matches(pickerPod) {
		t.Errorf("the pool's selector %v must match the servers' pods %v and not the picker's %v", poolSel, serverPod, pickerPod)
	}
	main := desiredObject[corev1.Service](t, rsp, render.ResourceService)
	if labels.SelectorFromSet(main.Spec.Selector).Matches(pickerPod) {
		t.Errorf("the Service llama's selector %v matches the picker's pod %v", main.Spec.Selector, pickerPod)
	}
	psvc := desiredObject[corev1.Service](t, rsp, render.ResourcePickerService)
	if !labels.SelectorFromSet(psvc.Spec.Selector).Matches(pickerPod) || labels.SelectorFromSet(psvc.Spec.Selector).Matches(serverPod) {
		t.Errorf("the picker's Service selector %v must match its pod %v and not the servers' %v", psvc.Spec.Selector, pickerPod, serverPod)
	}
	if psvc.Name != "llama-epp" || psvc.Spec.Ports[0].Port != 9002 {
		t.Errorf("picker Service %s ports %+v, want llama-epp on 9002 as the pool's endpointPickerRef says", psvc.Name, psvc.Spec.Ports)
	}

	// The picker: the platform's image and flags, after the function's.
	pod := picker.Spec.Template.Spec
	c := pod.Containers[0]
	if c.Image != "registry.k8s.io/gateway-api-inference-extension/epp:v1.2.0" {
		t.Errorf("picker image %s", c.Image)
	}
	args := strings.Join(c.Args, " ")
	for _, want := range []string{"--pool-name llama --pool-namespace team-a", "--config-file /config/config.yaml", "--grpc-port 9002", "--grpc-health-port 9003"} {
		if !strings.Contains(args, want) {
			t.Errorf("picker args %q lack %q", args, want)
		}
	}
	if !strings.HasSuffix(args, "--v 2") {
		t.Errorf("picker args %q do not end with the Input's --v 2", args)
	}
	if pod.ServiceAccountName != "llama-epp" || pod.AutomountServiceAccountToken == nil || !*pod.AutomountServiceAccountToken {
		t.Errorf("picker runs as %q with token %v, want llama-epp with a token", pod.ServiceAccountName, pod.AutomountServiceAccountToken)
	}
	if pod.SecurityContext.RunAsNonRoot == nil || !*pod.SecurityContext.RunAsNonRoot || c.SecurityContext.AllowPrivilegeEscalation == nil || *c.SecurityContext.AllowPrivilegeEscalation {
		t.Errorf("picker pod is not restricted: %+v %+v", pod.SecurityContext, c.SecurityContext)
	}
	if pod.Volumes[0].ConfigMap == nil || pod.Volumes[0].ConfigMap.Name != "llama-epp" {
		t.Errorf("picker mounts %+v, want the ConfigMap llama-epp", pod.Volumes[0])
	}

	// Its RBAC: read-only, in the claim's namespace, to its own identity.
	role := desiredObject[rbacv1.Role](t, rsp, render.ResourcePickerRole)
	for _, r := range role.Rules {
		if diff := cmp.Diff([]string{"get", "watch", "list"}, r.Verbs); diff != "" {
			t.Errorf("picker Role rule %+v is not read-only", r)
		}
	}
	rb := desiredObject[rbacv1.RoleBinding](t, rsp, render.ResourcePickerRoleBinding)
	wantRB := []rbacv1.Subject{{Kind: "ServiceAccount", Name: "llama-epp", Namespace: "team-a"}}
	if diff := cmp.Diff(wantRB, rb.Subjects); diff != "" || rb.RoleRef != (rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "llama-epp"}) {
		t.Errorf("picker RoleBinding %+v %+v", rb.Subjects, rb.RoleRef)
	}
	cm := desiredObject[corev1.ConfigMap](t, rsp, render.ResourcePickerConfig)
	if !strings.Contains(cm.Data[render.PickerConfigKey], "kind: EndpointPickerConfig") {
		t.Errorf("picker ConfigMap %v lacks the default EndpointPickerConfig", cm.Data)
	}

	st := statusOf(rsp)
	if st["routeURL"] != "http://llama.team-a.models.example.com" || st["phase"] != "Serving" {
		t.Errorf("status phase %v routeURL %v", st["phase"], st["routeURL"])
	}
	if msg := conditionMessage(rsp, reason.ConditionInferencePool); !strings.Contains(msg, "sends requests to InferencePool llama") {
		t.Errorf("InferencePoolReady message %q", msg)
	}
}

// TestInferencePoolWaitsForServers: the pool, picker and route come with
// the Service <name>, with the first servers, not during the pull.
func TestInferencePoolWaitsForServers(t *testing.T) {
	rsp, _ := settle(t, poolXR(t), poolExampleInput(t), world{PullRunning: true}, nil)
	for _, n := range desiredNames(rsp) {
		if n == render.ResourcePool || n == render.ResourceRoute || strings.HasPrefix(n, render.ResourcePicker) {
			t.Errorf("%s rendered while the weights are pulled", n)
		}
	}
	if got := conditionReason(rsp, reason.ConditionInferencePool); got != "PoolWaiting" {
		t.Errorf("InferencePoolReady %q, want PoolWaiting", got)
	}
}

// TestInferencePoolConfigRestartsPicker: a new picker configuration
// changes the picker's pod template (and so restarts it).
func TestInferencePoolConfigRestartsPicker(t *testing.T) {
	in := poolExampleInput(t)
	_, obs := settle(t, poolXR(t), in, world{}, nil)
	before := desiredObject[appsv1.Deployment](t, run(t, newRequest(t, poolXR(t), in, obs...)), render.ResourcePicker)
	setPath(in, v1beta1DefaultConfigWith("prefix-cache-scorer"), "traffic", "gateway", "inferenceExtension", "picker", "config")
	after := desiredObject[appsv1.Deployment](t, run(t, newRequest(t, poolXR(t), in, obs...)), render.ResourcePicker)
	b, a := before.Spec.Template.Annotations[render.AnnotationPickerConfig], after.Spec.Template.Annotations[render.AnnotationPickerConfig]
	if b == "" || a == "" || a == b {
		t.Errorf("picker config hash %q → %q, want a change", b, a)
	}
}

func v1beta1DefaultConfigWith(plugin string) string {
	return "apiVersion: inference.networking.x-k8s.io/v1alpha1\nkind: EndpointPickerConfig\nplugins:\n- type: " + plugin + "\nschedulingProfiles:\n- name: default\n  plugins:\n  - pluginRef: " + plugin + "\n"
}

// TestInferencePoolOff: a Gateway whose extension is off, or left out,
// renders what it rendered before the extension existed.
func TestInferencePoolOff(t *testing.T) {
	off := gatewayInput(t)
	setPath(off, map[string]any{"enabled": false, "picker": map[string]any{"image": "x"}}, "traffic", "gateway", "inferenceExtension")
	w := world{RouteState: "accepted"}
	want, _ := settle(t, canaryXR(t), gatewayInput(t), w, nil)
	got, _ := settle(t, canaryXR(t), off, w, nil)
	if diff := cmp.Diff(desiredNames(want), desiredNames(got)); diff != "" {
		t.Errorf("desired resources with the extension off (-without +off):\n%s", diff)
	}
	if diff := cmp.Diff(statusOf(want), statusOf(got)); diff != "" {
		t.Errorf("status with the extension off (-without +off):\n%s", diff)
	}
}

// TestInferencePoolTurnedOff: a claim on a pool whose Input turns the
// extension off goes back to a route to its Service; the pool and picker
// are no longer returned (Crossplane deletes them).
func TestInferencePoolTurnedOff(t *testing.T) {
	obs := readObserved(t, filepath.Join("..", "examples", "inference-pool", "observed", "routed.yaml"))
	in := poolExampleInput(t)
	setPath(in, false, "traffic", "gateway", "inferenceExtension", "enabled")
	rsp := run(t, newRequest(t, poolXR(t), in, obs...))
	for _, n := range desiredNames(rsp) {
		if n == render.ResourcePool || strings.HasPrefix(n, render.ResourcePicker) {
			t.Errorf("%s still rendered with the extension off", n)
		}
	}
	route := desiredObject[gatewayv1.HTTPRoute](t, rsp, render.ResourceRoute)
	refs := route.Spec.Rules[0].BackendRefs
	if len(refs) != 1 || refs[0].Name != "llama" || refs[0].Kind != nil || refs[0].Port == nil || *refs[0].Port != render.ServicePort {
		t.Errorf("route backends %+v, want the Service llama on port %d", refs, render.ServicePort)
	}
}

// TestInferencePoolStates: each state of the pool, the route and the
// picker gives its reason, and only all of them together make the claim's
// objects ready.
func TestInferencePoolStates(t *testing.T) {
	in := poolExampleInput(t)
	routed := readObserved(t, filepath.Join("..", "examples", "inference-pool", "observed", "routed.yaml"))
	edit := func(name string, f func(o map[string]any)) []observedObject {
		out := make([]observedObject, len(routed))
		for i, o := range routed {
			o.Object = deepCopyMap(o.Object)
			if o.Name == name {
				f(o.Object)
			}
			out[i] = o
		}
		return out
	}
	cases := map[string]struct {
		observed []observedObject
		reason   string
		notReady string // the composed resource that is not ready, "" for none
	}{
		"Routed": {observed: routed, reason: "PoolRouted"},
		"RouteRejected": {observed: edit(render.ResourceRoute, func(o map[string]any) {
			route := map[string]any{"spec": map[string]any{"parentRefs": []any{map[string]any{"name": "inference", "namespace": "gateways"}}}}
			o["status"] = routeStatus(route, "rejected")
		}), reason: "PoolNotAccepted", notReady: render.ResourceRoute},
		"RefsUnresolved": {observed: edit(render.ResourcePool, func(o map[string]any) {
			st := poolStatus("accepted")
			conds, _ := nested(st, "parents")
			p := conds.([]any)[0].(map[string]any)
			p["conditions"].([]any)[1] = map[string]any{"type": "ResolvedRefs", "status": "False", "reason": "InvalidExtensionRef", "message": "Service llama-epp not found", "lastTransitionTime": "2026-12-01T10:00:00Z"}
			o["status"] = st
		}), reason: "PoolNotAccepted", notReady: render.ResourcePool},
		"OtherGatewayOnly": {observed: edit(render.ResourcePool, func(o map[string]any) {
			st := poolStatus("accepted")
			setPath(st["parents"].([]any)[0].(map[string]any), "other", "parentRef", "name")
			o["status"] = st
		}), reason: "PoolPending", notReady: render.ResourcePool},
		"PickerStalled": {observed: edit(render.ResourcePicker, func(o map[string]any) {
			o["status"] = deploymentStatus(1, 0, map[string]any{"type": "Progressing", "status": "False", "reason": "ProgressDeadlineExceeded", "message": "ReplicaSet llama-epp-5d8 has timed out progressing"})
		}), reason: "PickerFailed", notReady: render.ResourcePicker},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			rsp := run(t, newRequest(t, poolXR(t), in, tc.observed...))
			if got := conditionReason(rsp, reason.ConditionInferencePool); got != tc.reason {
				t.Errorf("InferencePoolReady %q, want %q (%s)", got, tc.reason, conditionMessage(rsp, reason.ConditionInferencePool))
			}
			for _, n := range desiredNames(rsp) {
				if ready := readiness(rsp, n) == fnv1.Ready_READY_TRUE; ready == (n == tc.notReady) {
					t.Errorf("%s ready %v", n, ready)
				}
			}
		})
	}
}

func deepCopyMap(m map[string]any) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		switch x := v.(type) {
		case map[string]any:
			out[k] = deepCopyMap(x)
		default:
			out[k] = v
		}
	}
	return out
}

// TestPoolReady reads status.parents as implementations write them.
func TestPoolReady(t *testing.T) {
	s := &resolve.Spec{Name: "llama", Namespace: "team-a", Gateway: &resolve.Gateway{Name: "inference", Namespace: "gateways"}}
	cond := func(typ string, st metav1.ConditionStatus) metav1.Condition {
		return metav1.Condition{Type: typ, Status: st, Reason: "R", Message: "m"}
	}
	parent := func(name, ns string, conds ...metav1.Condition) inferencev1.ParentStatus {
		return inferencev1.ParentStatus{ParentRef: inferencev1.ParentReference{Name: inferencev1.ObjectName(name), Namespace: inferencev1.Namespace(ns)}, Conditions: conds}
	}
	ok := []metav1.Condition{cond("Accepted", metav1.ConditionTrue), cond("ResolvedRefs", metav1.ConditionTrue)}
	cases := map[string]struct {
		parents            []inferencev1.ParentStatus
		ready, rejected    bool
		namespaceOfTheGate string
	}{
		"None":             {},
		"Accepted":         {parents: []inferencev1.ParentStatus{parent("inference", "gateways", ok...)}, ready: true},
		"OtherGateway":     {parents: []inferencev1.ParentStatus{parent("inference", "elsewhere", ok...)}},
		"AcceptedUnknown":  {parents: []inferencev1.ParentStatus{parent("inference", "gateways", cond("Accepted", metav1.ConditionUnknown), cond("ResolvedRefs", metav1.ConditionTrue))}},
		"OnlyAccepted":     {parents: []inferencev1.ParentStatus{parent("inference", "gateways", cond("Accepted", metav1.ConditionTrue))}},
		"NotSupported":     {parents: []inferencev1.ParentStatus{parent("inference", "gateways", cond("Accepted", metav1.ConditionFalse), cond("ResolvedRefs", metav1.ConditionTrue))}, rejected: true},
		"SecondParentOurs": {parents: []inferencev1.ParentStatus{parent("other", "gateways"), parent("inference", "gateways", ok...)}, ready: true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			pool := &inferencev1.InferencePool{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a"}, Status: inferencev1.InferencePoolStatus{Parents: tc.parents}}
			ready, st := render.PoolReady(s, pool)
			if ready != tc.ready || st.Rejected != tc.rejected {
				t.Errorf("ready %v rejected %v, want %v %v (%s)", ready, st.Rejected, tc.ready, tc.rejected, st.Message)
			}
		})
	}
	// A parentRef without a namespace is the pool's own.
	local := &resolve.Spec{Name: "llama", Namespace: "team-a", Gateway: &resolve.Gateway{Name: "inference", Namespace: "team-a"}}
	pool := &inferencev1.InferencePool{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a"}, Status: inferencev1.InferencePoolStatus{Parents: []inferencev1.ParentStatus{parent("inference", "", ok...)}}}
	if ready, _ := render.PoolReady(local, pool); !ready {
		t.Error("a parentRef without namespace, to a Gateway of the pool's namespace, is not read as ours")
	}
}

// TestInferencePoolCanary: a split on a pool keeps its version Services
// (to call one version alone) but routes only to the pool, and says the
// split follows the servers.
func TestInferencePoolCanary(t *testing.T) {
	rsp, _ := settle(t, canaryXR(t), poolExampleInput(t), world{RouteState: "accepted", PoolState: "accepted"}, nil)
	names := strings.Join(desiredNames(rsp), " ")
	for _, n := range []string{"service-1", "service-2", render.ResourcePool, render.ResourcePicker} {
		if !strings.Contains(names, n) {
			t.Errorf("no %s among %s", n, names)
		}
	}
	if got := conditionReason(rsp, reason.ConditionTrafficSplit); got != "PoolSplit" {
		t.Errorf("TrafficSplit %q, want PoolSplit", got)
	}
	if msg := conditionMessage(rsp, reason.ConditionTrafficSplit); !strings.Contains(msg, "version 1 75% (3 of 4 servers, asked 90%)") {
		t.Errorf("TrafficSplit message %q", msg)
	}
	route := desiredObject[gatewayv1.HTTPRoute](t, rsp, render.ResourceRoute)
	if refs := route.Spec.Rules[0].BackendRefs; len(refs) != 1 || refs[0].Name != "llama" {
		t.Errorf("route backends %+v, want only the pool", refs)
	}
}

// TestInferencePoolNameClash: the picker's Service <name>-epp is checked
// like every Service name the claim creates: a claim named llama-epp
// already has it.
func TestInferencePoolNameClash(t *testing.T) {
	_, obs := settle(t, poolXR(t), poolExampleInput(t), world{}, nil)
	var withoutPicker []observedObject
	for _, o := range obs {
		if !strings.HasPrefix(o.Name, render.ResourcePicker) {
			withoutPicker = append(withoutPicker, o)
		}
	}
	req := newRequest(t, poolXR(t), poolExampleInput(t), withoutPicker...)
	req = withServices(t, req, map[string]map[string]any{"llama-epp": takenService("llama-epp", "llama-epp", "", resolve.ComponentServer)})
	msg := fatalMessage(run(t, req))
	if !strings.Contains(msg, "metadata.name: would name Service llama-epp") {
		t.Errorf("Fatal %q, want the clash over llama-epp", msg)
	}
}

// TestPickerPlacement: the picker runs on the Input's node pool unless its
// own nodeSelector and tolerations say otherwise, never on the GPU nodes'
// selector, and with the platform's resources.
func TestPickerPlacement(t *testing.T) {
	pool := map[string]any{"nodeSelector": map[string]any{"pool": "cpu"}, "tolerations": []any{map[string]any{"key": "pool", "operator": "Exists", "effect": "NoSchedule"}}}
	cases := map[string]struct {
		picker map[string]any
		want   map[string]string
		tols   int
		cpu    string
	}{
		"InputPool":  {picker: nil, want: map[string]string{"pool": "cpu"}, tols: 1, cpu: "250m"},
		"OwnPool":    {picker: map[string]any{"nodeSelector": map[string]any{"pool": "system"}, "tolerations": []any{}, "cpu": "1"}, want: map[string]string{"pool": "system"}, tols: 0, cpu: "1"},
		"InputEmpty": {picker: map[string]any{}, want: map[string]string{"pool": "cpu"}, tols: 1, cpu: "250m"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			in := poolInput(nil, tc.picker)
			in["scheduling"] = pool
			in["gpu"] = map[string]any{"nodeSelector": map[string]any{"gpu": "a100"}}
			_, obs := settle(t, poolXR(t), in, world{}, nil)
			d := desiredObject[appsv1.Deployment](t, run(t, newRequest(t, poolXR(t), in, obs...)), render.ResourcePicker)
			spec := d.Spec.Template.Spec
			if diff := cmp.Diff(tc.want, spec.NodeSelector); diff != "" {
				t.Errorf("picker nodeSelector (-want +got):\n%s", diff)
			}
			if len(spec.Tolerations) != tc.tols {
				t.Errorf("picker tolerations %+v, want %d", spec.Tolerations, tc.tols)
			}
			if got := spec.Containers[0].Resources.Requests.Cpu().String(); got != tc.cpu {
				t.Errorf("picker CPU %s, want %s", got, tc.cpu)
			}
		})
	}
}

// TestRBACCoversPicker: Kubernetes lets Crossplane create the picker's Role
// only with every permission in it, so apis/rbac.yaml must hold each rule
// of pickerRules, and cover every kind of the picker's set that
// Crossplane's own role may not.
func TestRBACCoversPicker(t *testing.T) {
	b, err := os.ReadFile("../apis/rbac.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var role rbacv1.ClusterRole
	if err := yaml.Unmarshal(b, &role); err != nil {
		t.Fatal(err)
	}
	allows := func(group, resource, verb string) bool {
		for _, r := range role.Rules {
			if slices.Contains(r.APIGroups, group) && slices.Contains(r.Resources, resource) && slices.Contains(r.Verbs, verb) {
				return true
			}
		}
		return false
	}
	for _, r := range render.PickerRules() {
		for _, g := range r.APIGroups {
			for _, res := range r.Resources {
				for _, v := range r.Verbs {
					if !allows(g, res, v) {
						t.Errorf("apis/rbac.yaml does not let Crossplane %s %s.%s, which the picker's Role grants", v, res, g)
					}
				}
			}
		}
	}
	for _, k := range []struct{ group, resource string }{
		{"inference.networking.k8s.io", "inferencepools"}, {"rbac.authorization.k8s.io", "roles"}, {"rbac.authorization.k8s.io", "rolebindings"},
		{"", "serviceaccounts"}, {"", "configmaps"}, {"apps", "deployments"}, {"", "services"}, {"gateway.networking.k8s.io", "httproutes"},
	} {
		for _, v := range []string{"get", "list", "watch", "create", "update", "patch", "delete"} {
			if !allows(k.group, k.resource, v) {
				t.Errorf("apis/rbac.yaml does not let Crossplane %s %s.%s", v, k.resource, k.group)
			}
		}
	}
	for _, r := range role.Rules {
		if slices.Contains(r.Verbs, "bind") || slices.Contains(r.Verbs, "escalate") || slices.Contains(r.Verbs, "*") {
			t.Errorf("apis/rbac.yaml grants %v: Crossplane needs no bind, escalate or *", r)
		}
	}
}

// TestInferencePoolRoutesByAdapter: a claim that serves adapters gets a
// picker that routes by adapter name (the lora-affinity scorer, added to
// the platform's configuration); a claim without adapters, or a platform
// configuration that already has the scorer, keeps the configuration as
// the Input wrote it.
func TestInferencePoolRoutesByAdapter(t *testing.T) {
	withAdapter := func(t *testing.T) map[string]any {
		xr := poolXR(t)
		setPath(xr, []any{map[string]any{"name": "sql", "uri": "hf://acme/llama-sql-lora"}}, "spec", "adapters")
		return xr
	}
	own := "apiVersion: inference.networking.x-k8s.io/v1alpha1\nkind: EndpointPickerConfig\nplugins:\n- type: queue-scorer\n- type: lora-affinity-scorer\nschedulingProfiles:\n- name: default\n  plugins:\n  - pluginRef: queue-scorer\n  - pluginRef: lora-affinity-scorer\n    weight: 5\n"
	type profile struct {
		Name    string
		Plugins []struct {
			PluginRef string `json:"pluginRef"`
			Weight    *int   `json:"weight"`
		}
	}
	type config struct {
		APIVersion string `json:"apiVersion"`
		Kind       string `json:"kind"`
		Plugins    []struct {
			Type string `json:"type"`
		}
		SchedulingProfiles []profile `json:"schedulingProfiles"`
	}
	cases := []struct {
		name     string
		xr       func(t *testing.T) map[string]any
		config   string // the Input's; "" for the built-in default
		verbatim bool   // the ConfigMap holds the Input's configuration as written
	}{
		{name: "NoAdapters", xr: func(t *testing.T) map[string]any { return poolXR(t) }, verbatim: true},
		{name: "Adapters", xr: withAdapter},
		{name: "PlatformHasScorer", xr: withAdapter, config: own, verbatim: true},
	}
	hashes := map[string]string{}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			in := poolExampleInput(t)
			want := v1beta1.DefaultPickerConfig
			if tc.config != "" {
				setPath(in, tc.config, "traffic", "gateway", "inferenceExtension", "picker", "config")
				want = tc.config
			}
			_, obs := settle(t, tc.xr(t), in, world{}, nil)
			rsp := run(t, newRequest(t, tc.xr(t), in, obs...))
			if msg := fatalMessage(rsp); msg != "" {
				t.Fatal(msg)
			}
			cm := desiredObject[corev1.ConfigMap](t, rsp, render.ResourcePickerConfig)
			if cm == nil {
				t.Fatalf("no picker ConfigMap; desired %v", desiredNames(rsp))
			}
			got := cm.Data[render.PickerConfigKey]
			hashes[tc.name] = desiredObject[appsv1.Deployment](t, rsp, render.ResourcePicker).Spec.Template.Annotations[render.AnnotationPickerConfig]
			if tc.verbatim {
				if diff := cmp.Diff(want, got); diff != "" {
					t.Errorf("picker configuration (-the Input's +rendered):\n%s", diff)
				}
				return
			}
			var c config
			if err := yaml.Unmarshal([]byte(got), &c); err != nil {
				t.Fatal(err)
			}
			var types []string
			for _, p := range c.Plugins {
				types = append(types, p.Type)
			}
			if diff := cmp.Diff([]string{"queue-scorer", "kv-cache-utilization-scorer", "prefix-cache-scorer", resolve.LoraAffinityScorer}, types); diff != "" {
				t.Errorf("plugins (-want +got):\n%s", diff)
			}
			if c.Kind != "EndpointPickerConfig" || len(c.SchedulingProfiles) != 1 {
				t.Fatalf("configuration %q", got)
			}
			refs := c.SchedulingProfiles[0].Plugins
			last := refs[len(refs)-1]
			if len(refs) != 4 || last.PluginRef != resolve.LoraAffinityScorer || last.Weight == nil || *last.Weight != resolve.LoraAffinityWeight {
				t.Errorf("profile %s: %+v, want the three scorers and lora-affinity-scorer weight %d", c.SchedulingProfiles[0].Name, refs, resolve.LoraAffinityWeight)
			}
		})
	}
	if hashes["Adapters"] == "" || hashes["Adapters"] == hashes["NoAdapters"] {
		t.Errorf("picker config hash with adapters %q, without %q: want a new one (the picker restarts onto it)", hashes["Adapters"], hashes["NoAdapters"])
	}
}
