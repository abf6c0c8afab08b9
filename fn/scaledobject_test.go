package fn

import (
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"github.com/google/go-cmp/cmp"
	"github.com/inferno-ai/function-inferno/apis/inference/v1alpha1"
	"github.com/inferno-ai/function-inferno/internal/kinds/keda"
	"github.com/inferno-ai/function-inferno/internal/reason"
	"github.com/inferno-ai/function-inferno/internal/render"
	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/utils/ptr"
)

// kedaInput is an Input that lets claims scale to zero.
func kedaInput() map[string]any {
	return map[string]any{"keda": map[string]any{"enabled": true, "prometheusAddress": "http://prometheus.monitoring.svc:9090"}}
}

// zeroXR is a claim that scales to zero, up to 3 servers at 4 in-flight
// requests each.
func zeroXR() map[string]any {
	xr := testXR()
	setPath(xr, map[string]any{"min": 0, "max": 3}, "spec", "replicas")
	setPath(xr, map[string]any{"enabled": true, "targetConcurrency": 4}, "spec", "autoscaling")
	setPath(xr, "ReadWriteMany", "spec", "storage", "accessMode")
	return xr
}

// kedaStatus is a ScaledObject's status as KEDA writes it.
func kedaStatus(ready, active string) map[string]any {
	return map[string]any{"conditions": []any{
		map[string]any{"type": "Ready", "status": ready, "reason": "ScaledObjectReady", "message": "ScaledObject is defined correctly and is ready for scaling"},
		map[string]any{"type": "Active", "status": active, "reason": "ScalerActive"},
		map[string]any{"type": "Fallback", "status": "False", "reason": "NoFallbackFound"},
	}}
}

// atZero is the status of a Deployment KEDA scaled to zero, as the
// Deployment controller reports it: Available, no server.
func atZero() map[string]any {
	return map[string]any{"observedGeneration": 1, "conditions": []any{
		map[string]any{"type": "Available", "status": "True", "reason": "MinimumReplicasAvailable"},
	}}
}

func TestRenderScaledObject(t *testing.T) {
	cases := map[string]struct {
		edit func(xr, in map[string]any)
		want keda.ScaledObjectSpec
	}{
		"Defaults": {
			want: keda.ScaledObjectSpec{
				ScaleTargetRef:  keda.ScaleTarget{APIVersion: "apps/v1", Kind: "Deployment", Name: "llama"},
				PollingInterval: ptr.To(int32(15)), CooldownPeriod: ptr.To(int32(300)),
				IdleReplicaCount: ptr.To(int32(0)), MinReplicaCount: ptr.To(int32(0)), MaxReplicaCount: ptr.To(int32(3)),
				Triggers: []keda.ScaleTrigger{{Type: "prometheus", Name: "concurrency", MetricType: "AverageValue", Metadata: map[string]string{
					"serverAddress": "http://prometheus.monitoring.svc:9090",
					"query":         `sum(vllm_num_requests_running{namespace="team-a",pod=~"llama-[a-z0-9]{1,10}-?[a-z0-9]{5}"})`,
					"threshold":     "4",
				}}},
				Fallback: &keda.Fallback{FailureThreshold: 3, Replicas: 1},
			},
		},
		"InputSettingsAndCPU": {
			edit: func(xr, in map[string]any) {
				setPath(xr, "fake", "spec", "model", "framework")
				setPath(xr, 70, "spec", "autoscaling", "targetCPUUtilization")
				setPath(xr, 2, "spec", "replicas", "max")
				setPath(in, map[string]any{"enabled": true, "prometheusAddress": "https://prom.internal", "cooldownPeriod": 600, "pollingInterval": 5,
					"fallback": map[string]any{"failureThreshold": 5, "replicas": 4}}, "keda")
			},
			want: keda.ScaledObjectSpec{
				ScaleTargetRef:  keda.ScaleTarget{APIVersion: "apps/v1", Kind: "Deployment", Name: "llama"},
				PollingInterval: ptr.To(int32(5)), CooldownPeriod: ptr.To(int32(600)),
				IdleReplicaCount: ptr.To(int32(0)), MinReplicaCount: ptr.To(int32(0)), MaxReplicaCount: ptr.To(int32(2)),
				Triggers: []keda.ScaleTrigger{
					{Type: "prometheus", Name: "concurrency", MetricType: "AverageValue", Metadata: map[string]string{
						"serverAddress": "https://prom.internal",
						"query":         `sum(inferno_fake_requests_running{namespace="team-a",pod=~"llama-[a-z0-9]{1,10}-?[a-z0-9]{5}"})`,
						"threshold":     "4",
					}},
					{Type: "cpu", Name: "cpu", MetricType: "Utilization", Metadata: map[string]string{"value": "70"}},
				},
				// Capped at spec.replicas.max.
				Fallback: &keda.Fallback{FailureThreshold: 5, Replicas: 2},
			},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			xr, in := zeroXR(), kedaInput()
			if tc.edit != nil {
				tc.edit(xr, in)
			}
			servers, _ := pulled(t, xr, in)
			got := desiredObject[keda.ScaledObject](t, servers, render.ResourceScaledObject)
			if diff := cmp.Diff(tc.want, got.Spec); diff != "" {
				t.Errorf("ScaledObject spec (-want +got):\n%s", diff)
			}
			if got.APIVersion != "keda.sh/v1alpha1" || got.Kind != "ScaledObject" || got.Namespace != "team-a" || got.Name != "llama" {
				t.Errorf("ScaledObject is %s %s %s/%s", got.APIVersion, got.Kind, got.Namespace, got.Name)
			}
			if _, ok := servers.GetDesired().GetResources()[render.ResourceHPA]; ok {
				t.Error("an HPA is rendered beside the ScaledObject")
			}
			// KEDA owns the replicas: the Deployment never sets them.
			if d := desiredObject[appsv1.Deployment](t, servers, render.ResourceDeployment); d.Spec.Replicas != nil {
				t.Errorf("the Deployment sets spec.replicas %d; KEDA's scaling would be reverted", *d.Spec.Replicas)
			}
		})
	}
}

// TestMinOneKeepsHPA: with KEDA enabled, a floor of 1 or more keeps the
// HPA as before.
func TestMinOneKeepsHPA(t *testing.T) {
	xr := zeroXR()
	setPath(xr, 1, "spec", "replicas", "min")
	servers, _ := pulled(t, xr, kedaInput())
	names := desiredNames(servers)
	if !slices.Contains(names, render.ResourceHPA) || slices.Contains(names, render.ResourceScaledObject) {
		t.Errorf("desired %v, want the HPA and no ScaledObject", names)
	}
}

// TestScaleToZeroPhases drives the claim through KEDA's states as its
// operator writes them.
func TestScaleToZeroPhases(t *testing.T) {
	xr, in := zeroXR(), kedaInput()
	servers, obs := pulled(t, xr, in)
	service := observedFrom(t, servers, render.ResourceService, map[string]any{})
	scaled := func(ready, active string) observedObject {
		return observedFrom(t, servers, render.ResourceScaledObject, kedaStatus(ready, active))
	}
	cases := map[string]struct {
		deployment observedObject
		scaled     *observedObject
		phase      v1alpha1.Phase
		reason     reason.Reason
		ready      bool // the ScaledObject's readiness
		msg        string
	}{
		// The Deployment starts at the API server's default of 1: the
		// first server loads the model, then KEDA takes over.
		"FirstServerServes": {
			deployment: observeDeployment(t, servers, 1, deploymentStatus(1, 1)), scaled: ptr.To(scaled("True", "False")),
			phase: v1alpha1.PhaseServing, reason: reason.Available, ready: true, msg: "1 of 1 servers ready",
		},
		"Idle": {
			deployment: observeDeployment(t, servers, 0, atZero()), scaled: ptr.To(scaled("True", "False")),
			phase: v1alpha1.PhaseIdle, reason: reason.Idle, ready: true,
			msg: "idle at http://llama.team-a.svc.cluster.local:80: scaled to zero after 300s without an in-flight request; KEDA starts a server when vllm_num_requests_running is above 0",
		},
		"Waking": {
			deployment: observeDeployment(t, servers, 0, atZero()), scaled: ptr.To(scaled("True", "True")),
			phase: v1alpha1.PhaseStarting, reason: reason.Waking, ready: true, msg: "starting a server",
		},
		"WokenStarting": {
			deployment: observeDeployment(t, servers, 1, deploymentStatus(1, 0)), scaled: ptr.To(scaled("True", "True")),
			phase: v1alpha1.PhaseStarting, reason: reason.Starting, ready: true, msg: "0 of 1 servers ready",
		},
		"ScalerNotReadyAtZero": {
			deployment: observeDeployment(t, servers, 0, atZero()), scaled: ptr.To(scaled("False", "False")),
			phase: v1alpha1.PhaseDegraded, reason: reason.ScalerNotReady, msg: "no request can wake the service",
		},
		"ScaledObjectNotObservedAtZero": {
			deployment: observeDeployment(t, servers, 0, atZero()),
			phase:      v1alpha1.PhaseDegraded, reason: reason.ScalerNotReady, msg: "not observed yet",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			o := append(append([]observedObject{}, obs...), tc.deployment, service)
			if tc.scaled != nil {
				o = append(o, *tc.scaled)
			}
			rsp := run(t, newRequest(t, xr, in, o...))
			if msg := fatalMessage(rsp); msg != "" {
				t.Fatal(msg)
			}
			st := statusOf(rsp)
			if st["phase"] != string(tc.phase) || !strings.Contains(st["message"].(string), tc.msg) {
				t.Errorf("phase %v, message %q; want %s with %q", st["phase"], st["message"], tc.phase, tc.msg)
			}
			if st["url"] != "http://llama.team-a.svc.cluster.local:80" {
				t.Errorf("status.url %v", st["url"])
			}
			if got := conditionReason(rsp, reason.ConditionServerReady); got != tc.reason.String() {
				t.Errorf("ServerReady reason %q, want %s", got, tc.reason)
			}
			if got := readiness(rsp, render.ResourceScaledObject) == fnv1.Ready_READY_TRUE; got != tc.ready {
				t.Errorf("ScaledObject ready %v, want %v", got, tc.ready)
			}
			if tc.phase == v1alpha1.PhaseIdle {
				// Ready for Crossplane: every composed resource is.
				for _, n := range desiredNames(rsp) {
					if readiness(rsp, n) != fnv1.Ready_READY_TRUE {
						t.Errorf("idle: %s is not ready", n)
					}
				}
			}
			if d := desiredObject[appsv1.Deployment](t, rsp, render.ResourceDeployment); d.Spec.Replicas != nil {
				t.Errorf("the Deployment sets spec.replicas %d", *d.Spec.Replicas)
			}
		})
	}
}

// TestSwapHPAAndScaledObject: lowering the floor to 0 swaps the HPA for a
// ScaledObject in one call; raising it again swaps back, and a Deployment
// KEDA left at 0 is lifted to the floor once (an HPA does not scale a
// target at 0), then left to the HPA.
func TestSwapHPAAndScaledObject(t *testing.T) {
	in := kedaInput()
	one := zeroXR()
	setPath(one, 1, "spec", "replicas", "min")
	obs := serving(t, one, in, 1, deploymentStatus(1, 1))

	down := run(t, newRequest(t, zeroXR(), in, obs...))
	names := desiredNames(down)
	if slices.Contains(names, render.ResourceHPA) || !slices.Contains(names, render.ResourceScaledObject) {
		t.Fatalf("min 0: desired %v, want the ScaledObject and no HPA", names)
	}

	// KEDA scaled it to zero; the claim asks for a floor of 2.
	atZeroObs := replaceObserved(obs, observeDeployment(t, down, 0, atZero()))
	atZeroObs = append(atZeroObs, observedFrom(t, down, render.ResourceScaledObject, kedaStatus("True", "False")))
	setPath(one, 2, "spec", "replicas", "min")
	up := run(t, newRequest(t, one, in, atZeroObs...))
	names = desiredNames(up)
	if !slices.Contains(names, render.ResourceHPA) || slices.Contains(names, render.ResourceScaledObject) {
		t.Fatalf("min 2: desired %v, want the HPA and no ScaledObject", names)
	}
	d := desiredObject[appsv1.Deployment](t, up, render.ResourceDeployment)
	if d.Spec.Replicas == nil || *d.Spec.Replicas != 2 {
		t.Errorf("lifting from zero: Deployment replicas %v, want 2", d.Spec.Replicas)
	}
	lifted := replaceObserved(atZeroObs, observeDeployment(t, up, 2, deploymentStatus(2, 2)))
	again := run(t, newRequest(t, one, in, lifted...))
	if d := desiredObject[appsv1.Deployment](t, again, render.ResourceDeployment); d.Spec.Replicas != nil {
		t.Errorf("once above zero the HPA owns the replicas; the Deployment sets %d", *d.Spec.Replicas)
	}
}

// TestConcurrencyQueryScope: the query's pod pattern, anchored as
// Prometheus anchors =~, matches this claim's pods (also when the
// generated name was cut at 58 characters) and never those of a claim
// whose name extends this one's.
func TestConcurrencyQueryScope(t *testing.T) {
	re := func(name string) *regexp.Regexp {
		return regexp.MustCompile("^(?:" + name + render.PodNameSuffix + ")$")
	}
	long := strings.Repeat("a", 49)
	cases := []struct {
		claim, pod string
		match      bool
	}{
		{"llama", "llama-7d9f8c6b5-x2x4z", true},
		{"llama", "llama-5c4b9-x2x4z", true},
		{"llama", "llama-small-7d9f8c6b5-x2x4z", false},
		{"llama", "llama-2-7d9f8c6b5-x2x4z", false},
		{"llama", "llama-pull-1a2b3c4d-x2x4z", false},
		{"llama", "llama2-7d9f8c6b5-x2x4z", false},
		// 49 characters, "-", then the hash cut to 8 and the dash gone.
		{long, long + "-7d9f8c6b" + "x2x4z", true},
		{"a", long + "-7d9f8c6b" + "x2x4z", false},
	}
	for _, tc := range cases {
		if got := re(tc.claim).MatchString(tc.pod); got != tc.match {
			t.Errorf("claim %s, pod %s: match %v, want %v", tc.claim, tc.pod, got, tc.match)
		}
	}
}

// The scale-to-zero example: a Composition whose Input enables KEDA.
const scaleToZeroDir = "../examples/scale-to-zero"

// TestScaleToZeroGolden renders examples/scale-to-zero's claim fresh, with
// its first server serving, and idle at zero, and the same claim on the
// default Composition (refused: no input.keda), and compares them with
// fn/testdata/golden/scale-to-zero-*.yaml. With -update it rewrites them
// and examples/scale-to-zero/observed/{serving,idle}.yaml.
func TestScaleToZeroGolden(t *testing.T) {
	in := exampleInput(t, filepath.Join(scaleToZeroDir, "composition.yaml"))
	xr := readYAML(t, filepath.Join(scaleToZeroDir, "xr.yaml"))
	fresh := run(t, newRequest(t, xr, in))
	if msg := fatalMessage(fresh); msg != "" {
		t.Fatalf("the scale-to-zero example is refused: %s", msg)
	}
	compareGolden(t, "scale-to-zero-fresh", fresh)

	servers, obs := pulled(t, xr, in)
	service := observedFrom(t, servers, render.ResourceService, map[string]any{})
	stages := []struct {
		name, phase string
		deployment  observedObject
	}{
		{"serving", "Serving", observeDeployment(t, servers, 1, deploymentStatus(1, 1))},
		{"idle", "Idle", observeDeployment(t, servers, 0, atZero())},
	}
	for _, st := range stages {
		t.Run(st.name, func(t *testing.T) {
			o := append(append([]observedObject{}, obs...), st.deployment, service, observedFrom(t, servers, render.ResourceScaledObject, kedaStatus("True", "False")),
				observedFrom(t, servers, render.ResourceHTTPScaledObject, httpAddOnStatus("chat", "True")))
			fixture := filepath.Join(scaleToZeroDir, "observed", st.name+".yaml")
			if *update {
				writeObserved(t, fixture, "examples/scale-to-zero/xr.yaml", st.name, o)
			}
			rsp := run(t, newRequest(t, xr, in, readObserved(t, fixture)...))
			if got := statusOf(rsp)["phase"]; got != st.phase {
				t.Errorf("phase %v, want %s: %v", got, st.phase, statusOf(rsp)["message"])
			}
			for _, n := range desiredNames(rsp) {
				if readiness(rsp, n) != fnv1.Ready_READY_TRUE {
					t.Errorf("%s: %s is not ready", st.name, n)
				}
			}
			compareGolden(t, "scale-to-zero-"+st.name, rsp)
		})
	}
	t.Run("refused", func(t *testing.T) {
		rsp := run(t, newRequest(t, xr, compositionInput(t)))
		if msg := fatalMessage(rsp); !strings.Contains(msg, "spec.replicas.min:") || !strings.Contains(msg, "input.keda") {
			t.Errorf("on the default Composition the claim is not refused by spec.replicas.min naming input.keda: %q", msg)
		}
		compareGolden(t, "scale-to-zero-refused", rsp)
	})
}

// exampleInput is the Input of an example Composition's one step.
func exampleInput(t testing.TB, path string) map[string]any {
	t.Helper()
	steps, _ := nested(readYAML(t, path), "spec", "pipeline")
	in, _ := steps.([]any)[0].(map[string]any)["input"].(map[string]any)
	return in
}

// httpAddOnStatus is the status of claim name's HTTPScaledObject as the add-on's
// operator writes it (v0.12.0, operator/controllers/http): a
// metav1.Condition Ready, True once it reconciled the object (with the
// skip annotation: made no ScaledObject of its own), False with
// CreateError when that failed.
func httpAddOnStatus(name, ready string) map[string]any {
	reason, msg := "Reconciled", "ScaledObject created and configured"
	if ready != "True" {
		reason, msg = "CreateError", "Failed to create scaled objects: scaledobjects.keda.sh is forbidden"
	}
	return map[string]any{
		"targetWorkload": "apps/v1/Deployment/" + name, "targetService": name + ":80",
		"conditions": []any{map[string]any{
			"type": "Ready", "status": ready, "reason": reason, "message": msg,
			"lastTransitionTime": "2026-12-06T03:00:00Z", "observedGeneration": int64(1),
		}},
	}
}

// TestHTTPAddOn: with input.keda.httpAddOn the claim also gets an
// HTTPScaledObject that keeps the add-on from making a ScaledObject of its
// own and gives the interceptor timeouts for a model server, and the
// function's ScaledObject the add-on's external-push trigger.
func TestHTTPAddOn(t *testing.T) {
	in := kedaInput()
	setPath(in, map[string]any{"enabled": true}, "keda", "httpAddOn")
	xr := zeroXR()
	servers, obs := pulled(t, xr, in)
	got := desiredObject[keda.HTTPScaledObject](t, servers, render.ResourceHTTPScaledObject)
	want := keda.HTTPScaledObjectSpec{
		Hosts:           []string{"llama.team-a.svc.cluster.local", "llama.team-a.svc"},
		ScaleTargetRef:  keda.HTTPScaleTarget{Name: "llama", APIVersion: "apps/v1", Kind: "Deployment", Service: "llama", Port: 80},
		Replicas:        &keda.HTTPReplicas{Min: ptr.To(int32(0)), Max: ptr.To(int32(3))},
		ScaledownPeriod: ptr.To(int32(300)),
		ScalingMetric:   &keda.HTTPScaledMetric{Concurrency: &keda.HTTPTarget{TargetValue: 4}},
		// vLLM's preset may load for 1800 s; a completion may take 600 s
		// to its headers.
		Timeouts: &keda.HTTPTimeouts{ConditionWait: "1860s", ResponseHeader: "600s"},
	}
	if diff := cmp.Diff(want, got.Spec); diff != "" {
		t.Errorf("HTTPScaledObject spec (-want +got):\n%s", diff)
	}
	if got.Annotations[render.SkipScaledObjectCreation] != "true" || got.APIVersion != "http.keda.sh/v1alpha1" || got.Kind != "HTTPScaledObject" {
		t.Errorf("HTTPScaledObject %s %s, annotations %v", got.APIVersion, got.Kind, got.Annotations)
	}
	so := desiredObject[keda.ScaledObject](t, servers, render.ResourceScaledObject)
	if n := len(so.Spec.Triggers); n != 2 {
		t.Fatalf("ScaledObject has %d triggers, want prometheus and external-push", n)
	}
	wantTrigger := keda.ScaleTrigger{Type: "external-push", Name: "http", MetricType: "AverageValue", Metadata: map[string]string{
		"scalerAddress": "keda-add-ons-http-external-scaler.keda:9090", "httpScaledObject": "llama",
	}}
	if diff := cmp.Diff(wantTrigger, so.Spec.Triggers[1]); diff != "" {
		t.Errorf("external-push trigger (-want +got):\n%s", diff)
	}
	if readiness(servers, render.ResourceHTTPScaledObject) == fnv1.Ready_READY_TRUE {
		t.Error("an HTTPScaledObject not observed is ready")
	}
	// Observed with the add-on's Ready condition: ready; Ready=False:
	// not.
	for ready, want := range map[string]fnv1.Ready{"True": fnv1.Ready_READY_TRUE, "False": fnv1.Ready_READY_FALSE} {
		o := append(append([]observedObject{}, obs...), observedFrom(t, servers, render.ResourceHTTPScaledObject, httpAddOnStatus("llama", ready)))
		if got := readiness(run(t, newRequest(t, xr, in, o...)), render.ResourceHTTPScaledObject); got != want {
			t.Errorf("an HTTPScaledObject with Ready=%s is %v, want %v", ready, got, want)
		}
	}

	// The Input's response timeout, and the runtime's start-up budget.
	setPath(in, map[string]any{"enabled": true, "responseTimeoutSeconds": 45}, "keda", "httpAddOn")
	setPath(in, map[string]any{"vllm": map[string]any{"startupSeconds": 120}}, "runtimes")
	servers, _ = pulled(t, xr, in)
	got = desiredObject[keda.HTTPScaledObject](t, servers, render.ResourceHTTPScaledObject)
	if diff := cmp.Diff(&keda.HTTPTimeouts{ConditionWait: "180s", ResponseHeader: "45s"}, got.Spec.Timeouts); diff != "" {
		t.Errorf("HTTPScaledObject timeouts with responseTimeoutSeconds 45 and startupSeconds 120 (-want +got):\n%s", diff)
	}
}

// TestScaleToZeroWithoutRuntimeMetric: a runtime without a concurrency
// metric (Ollama) scales to zero where the platform runs KEDA's HTTP
// add-on, whose interceptor counts the requests itself: the ScaledObject
// has the add-on's external-push trigger alone (no Prometheus query of a
// metric that does not exist), the servers' NetworkPolicy needs no metrics
// namespace for it, and Idle says what wakes it. Without the add-on, and
// with min 1, targetConcurrency is still refused by name.
func TestScaleToZeroWithoutRuntimeMetric(t *testing.T) {
	in := kedaInput()
	setPath(in, map[string]any{"enabled": true}, "keda", "httpAddOn")
	setPath(in, map[string]any{"enabled": true}, "networkPolicy")
	xr := zeroXR()
	setPath(xr, "ollama", "spec", "model", "framework")
	setPath(xr, "hf://acme/llama-3.2-1b-gguf", "spec", "model", "uri")
	servers, obs := pulled(t, xr, in)
	if m := fatalMessage(servers); m != "" {
		t.Fatal(m)
	}
	so := desiredObject[keda.ScaledObject](t, servers, render.ResourceScaledObject)
	want := []keda.ScaleTrigger{{Type: "external-push", Name: "http", MetricType: "AverageValue", Metadata: map[string]string{
		"scalerAddress": "keda-add-ons-http-external-scaler.keda:9090", "httpScaledObject": "llama",
	}}}
	if diff := cmp.Diff(want, so.Spec.Triggers); diff != "" {
		t.Errorf("triggers (-want +got):\n%s", diff)
	}
	waking := append(append([]observedObject{}, obs...),
		observeDeployment(t, servers, 0, atZero()),
		observedFrom(t, servers, render.ResourceService, map[string]any{}),
		observedFrom(t, servers, render.ResourceScaledObject, kedaStatus("True", "True")),
		observedFrom(t, servers, render.ResourceHTTPScaledObject, httpAddOnStatus("llama", "True")))
	rsp := run(t, newRequest(t, xr, in, waking...))
	var msg string
	for _, c := range rsp.GetConditions() {
		if c.GetType() == "ServerReady" {
			msg = c.GetMessage()
		}
	}
	if !strings.Contains(msg, "the HTTP add-on interceptor's in-flight requests") {
		t.Errorf("waking, ServerReady says %q; want it to name the interceptor's count as what woke the service", msg)
	}

	for name, change := range map[string]func(in, xr map[string]any){
		"without the add-on": func(in, xr map[string]any) { delete(in["keda"].(map[string]any), "httpAddOn") },
		"min 1":              func(in, xr map[string]any) { setPath(xr, map[string]any{"min": 1, "max": 3}, "spec", "replicas") },
	} {
		in, xr := kedaInput(), zeroXR()
		setPath(in, map[string]any{"enabled": true}, "keda", "httpAddOn")
		setPath(xr, "ollama", "spec", "model", "framework")
		setPath(xr, "hf://acme/llama-3.2-1b-gguf", "spec", "model", "uri")
		change(in, xr)
		got := fatalMessage(run(t, newRequest(t, xr, in)))
		if !strings.Contains(got, "spec.autoscaling.targetConcurrency: the ollama runtime exposes no concurrency metric") {
			t.Errorf("%s: fatal %q, want targetConcurrency refused for ollama", name, got)
		}
	}
}
