package fn

import (
	"slices"
	"strings"
	"testing"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"github.com/google/go-cmp/cmp"
	"github.com/inferno-ai/function-inferno/internal/render"
	"github.com/inferno-ai/function-inferno/internal/resolve"
	"google.golang.org/protobuf/types/known/structpb"
	appsv1 "k8s.io/api/apps/v1"
)

// Helpers for walking a claim through its life, shared by this package's
// tests. Each stage observes what the previous call desired, with the
// status a Kubernetes controller would have written.

// pullJobResource is the composition resource name of the desired pull Job.
func pullJobResource(t testing.TB, rsp *fnv1.RunFunctionResponse) string {
	t.Helper()
	for _, n := range desiredNames(rsp) {
		if strings.HasPrefix(n, render.ResourceJobPrefix) {
			return n
		}
	}
	t.Fatalf("no desired pull Job; have %v (fatal: %q)", desiredNames(rsp), fatalMessage(rsp))
	return ""
}

func jobCondition(typ string) map[string]any {
	return map[string]any{"type": typ, "status": "True"}
}

// jobComplete is the status of a pull Job that finished.
func jobCompleteStatus() map[string]any {
	return map[string]any{"succeeded": 1, "conditions": []any{jobCondition("Complete")}}
}

// jobRunning is the status of a pull Job whose pod runs.
func jobRunningStatus() map[string]any { return map[string]any{"active": 1} }

// jobFailed is the status of a pull Job that gave up.
func jobFailedStatus() map[string]any {
	return map[string]any{"failed": 4, "conditions": []any{map[string]any{
		"type": "Failed", "status": "True", "reason": "BackoffLimitExceeded", "message": "Job has reached the specified backoff limit",
	}}}
}

func pvcPhase(phase string) map[string]any { return map[string]any{"phase": phase} }

// deploymentStatus is a Deployment's status for the observed generation 1:
// want replicas of which ready are ready and available. Available is True
// when any server is, as the Deployment controller reports it with the
// default maxUnavailable.
func deploymentStatus(want, ready int, extra ...map[string]any) map[string]any {
	avail := "False"
	if ready > 0 && ready >= want {
		avail = "True"
	}
	conds := []any{map[string]any{"type": "Available", "status": avail}}
	for _, c := range extra {
		conds = append(conds, c)
	}
	return map[string]any{
		"observedGeneration": 1, "replicas": want, "updatedReplicas": want,
		"readyReplicas": ready, "availableReplicas": ready, "conditions": conds,
	}
}

// observeDeployment observes the desired Deployment of rsp at generation
// 1 with spec.replicas replicas (as the API server or the HPA set it).
func observeDeployment(t testing.TB, rsp *fnv1.RunFunctionResponse, replicas int, status map[string]any) observedObject {
	t.Helper()
	o := observedFrom(t, rsp, render.ResourceDeployment, status)
	setPath(o.Object, 1, "metadata", "generation")
	setPath(o.Object, replicas, "spec", "replicas")
	return o
}

// pulled returns the observed PVC (Bound) and pull Job (Complete) of a
// claim, and the response that first renders its servers.
func pulled(t testing.TB, xr, in map[string]any) (*fnv1.RunFunctionResponse, []observedObject) {
	t.Helper()
	fresh := run(t, newRequest(t, xr, in))
	if msg := fatalMessage(fresh); msg != "" {
		t.Fatalf("fatal: %s", msg)
	}
	obs := []observedObject{
		observedFrom(t, fresh, render.ResourcePVC, pvcPhase("Bound")),
		observedFrom(t, fresh, pullJobResource(t, fresh), jobCompleteStatus()),
	}
	return run(t, newRequest(t, xr, in, obs...)), obs
}

// serving returns the observed objects of a claim whose servers run with
// the given Deployment status: PVC, Job, Deployment, Service and, with
// autoscaling, an HPA able to scale.
func serving(t testing.TB, xr, in map[string]any, replicas int, status map[string]any) []observedObject {
	t.Helper()
	servers, obs := pulled(t, xr, in)
	obs = append(obs, observeDeployment(t, servers, replicas, status), observedFrom(t, servers, render.ResourceService, map[string]any{}))
	if _, ok := servers.GetDesired().GetResources()[render.ResourceHPA]; ok {
		obs = append(obs, observedFrom(t, servers, render.ResourceHPA, map[string]any{
			"conditions": []any{map[string]any{"type": "AbleToScale", "status": "True", "reason": "ReadyForNewScale"}},
		}))
	}
	return obs
}

// replaceObserved replaces (or adds) the observed object of the same name.
func replaceObserved(obs []observedObject, o observedObject) []observedObject {
	out := slices.Clone(obs)
	for i := range out {
		if out[i].Name == o.Name {
			out[i] = o
			return out
		}
	}
	return append(out, o)
}

// withoutObserved drops the observed objects whose names start with prefix.
func withoutObserved(obs []observedObject, prefix string) []observedObject {
	return slices.DeleteFunc(slices.Clone(obs), func(o observedObject) bool { return strings.HasPrefix(o.Name, prefix) })
}

// cond is a condition of a response, without its message.
type cond struct {
	Type   string
	Status fnv1.Status
	Reason string
	Target fnv1.Target
}

func conditionsOf(rsp *fnv1.RunFunctionResponse) []cond {
	var out []cond
	for _, c := range rsp.GetConditions() {
		out = append(out, cond{Type: c.GetType(), Status: c.GetStatus(), Reason: c.GetReason(), Target: c.GetTarget()})
	}
	return out
}

func conditionMessage(rsp *fnv1.RunFunctionResponse, typ string) string {
	for _, c := range rsp.GetConditions() {
		if c.GetType() == typ {
			return c.GetMessage()
		}
	}
	return ""
}

const (
	condTrue  = fnv1.Status_STATUS_CONDITION_TRUE
	condFalse = fnv1.Status_STATUS_CONDITION_FALSE
	toBoth    = fnv1.Target_TARGET_COMPOSITE_AND_CLAIM

	readyTrue  = fnv1.Ready_READY_TRUE
	readyFalse = fnv1.Ready_READY_FALSE
)

type fnv1Ready = fnv1.Ready

// warningsOf returns the messages of the Warning results.
func warningsOf(rsp *fnv1.RunFunctionResponse) []string {
	var out []string
	for _, r := range rsp.GetResults() {
		if r.GetSeverity() == fnv1.Severity_SEVERITY_WARNING {
			out = append(out, r.GetMessage())
		}
	}
	return out
}

// warningWith returns the first warning that contains fragment.
func warningWith(rsp *fnv1.RunFunctionResponse, fragment string) (*fnv1.Result, bool) {
	for _, r := range rsp.GetResults() {
		if r.GetSeverity() == fnv1.Severity_SEVERITY_WARNING && strings.Contains(r.GetMessage(), fragment) {
			return r, true
		}
	}
	return nil, false
}

// statusOf is the desired composite's status.
func statusOf(rsp *fnv1.RunFunctionResponse) map[string]any {
	s, _ := rsp.GetDesired().GetComposite().GetResource().AsMap()["status"].(map[string]any)
	return s
}

// desiredMap is the unstructured content of a desired resource.
func desiredMap(t testing.TB, rsp *fnv1.RunFunctionResponse, name string) map[string]any {
	t.Helper()
	r, ok := rsp.GetDesired().GetResources()[name]
	if !ok {
		t.Fatalf("no desired resource %q; have %v", name, desiredNames(rsp))
	}
	return r.GetResource().AsMap()
}

func autoscalingXR() map[string]any {
	xr := testXR()
	setPath(xr, map[string]any{"min": 1, "max": 3}, "spec", "replicas")
	setPath(xr, map[string]any{"enabled": true}, "spec", "autoscaling")
	setPath(xr, "ReadWriteMany", "spec", "storage", "accessMode")
	return xr
}

// TestNoServersBeforePullComplete: the Deployment, Service and HPA are
// created only once the pull Job is Complete (DESIGN §4, garbage collection).
func TestNoServersBeforePullComplete(t *testing.T) {
	xr := autoscalingXR()
	fresh := run(t, newRequest(t, xr, nil))
	job := pullJobResource(t, fresh)
	pvc := func(phase string) observedObject { return observedFrom(t, fresh, render.ResourcePVC, pvcPhase(phase)) }
	pull := func(status map[string]any) observedObject { return observedFrom(t, fresh, job, status) }

	cases := map[string]struct {
		observed []observedObject
		want     []string
	}{
		"NothingObserved":          {want: []string{job, render.ResourcePVC}},
		"PVCPendingJobNotObserved": {observed: []observedObject{pvc("Pending")}, want: []string{job, render.ResourcePVC}},
		"PVCPendingJobRunning":     {observed: []observedObject{pvc("Pending"), pull(jobRunningStatus())}, want: []string{job, render.ResourcePVC}},
		"PVCBoundJobRunning":       {observed: []observedObject{pvc("Bound"), pull(jobRunningStatus())}, want: []string{job, render.ResourcePVC}},
		"JobWithoutStatus":         {observed: []observedObject{pvc("Bound"), pull(nil)}, want: []string{job, render.ResourcePVC}},
		"JobFailed":                {observed: []observedObject{pvc("Bound"), pull(jobFailedStatus())}, want: []string{job, render.ResourcePVC}},
		"JobComplete": {
			observed: []observedObject{pvc("Bound"), pull(jobCompleteStatus())},
			want:     []string{render.ResourceDeployment, render.ResourceHPA, job, render.ResourceService, render.ResourcePVC},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			rsp := run(t, newRequest(t, xr, nil, tc.observed...))
			if diff := cmp.Diff(tc.want, desiredNames(rsp)); diff != "" {
				t.Errorf("desired resources (-want +got):\n%s", diff)
			}
		})
	}
}

// TestServersKeptOnceTheyExist: once the Deployment, Service or HPA
// exists it is returned on every call, even while a new revision is pulled
// or its pull failed, because Crossplane deletes whatever is not returned.
func TestServersKeptOnceTheyExist(t *testing.T) {
	xr := autoscalingXR()
	obs := serving(t, xr, nil, 1, deploymentStatus(1, 1))

	next := autoscalingXR()
	setPath(next, "refs/pr/7", "spec", "model", "revision")
	fresh := run(t, newRequest(t, next, nil, obs...))
	newJob := pullJobResource(t, fresh)
	old := withoutObserved(obs, render.ResourceJobPrefix)
	only := func(names ...string) []observedObject {
		var out []observedObject
		for _, o := range obs {
			if slices.Contains(names, o.Name) {
				out = append(out, o)
			}
		}
		return out
	}
	all := []string{render.ResourceDeployment, render.ResourceHPA, newJob, render.ResourceService, render.ResourcePVC}

	cases := map[string]struct {
		observed []observedObject
		want     []string
	}{
		"NewJobNotObservedYet": {observed: old, want: all},
		"NewJobRunning":        {observed: append(slices.Clone(old), observedFrom(t, fresh, newJob, jobRunningStatus())), want: all},
		"NewJobFailed":         {observed: append(slices.Clone(old), observedFrom(t, fresh, newJob, jobFailedStatus())), want: all},
		"OnlyServiceExists": {
			observed: only(render.ResourcePVC, render.ResourceService),
			want:     []string{newJob, render.ResourceService, render.ResourcePVC},
		},
		"OnlyHPAExists": {
			observed: only(render.ResourcePVC, render.ResourceHPA),
			want:     []string{render.ResourceHPA, newJob, render.ResourcePVC},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			rsp := run(t, newRequest(t, next, nil, tc.observed...))
			if diff := cmp.Diff(tc.want, desiredNames(rsp)); diff != "" {
				t.Errorf("desired resources (-want +got):\n%s", diff)
			}
		})
	}
}

// TestObjectsInClaimNamespaceNamedAfterClaim: every composed object lands
// in the claim's namespace, named after the claim, with the well-known
// labels.
func TestObjectsInClaimNamespaceNamedAfterClaim(t *testing.T) {
	xr := autoscalingXR()
	setPath(xr, "3", "spec", "model", "version")
	servers, _ := pulled(t, xr, nil)
	job := pullJobResource(t, servers)

	type meta struct {
		Kind, Namespace, Name string
		Labels                map[string]any
	}
	labels := func(component string) map[string]any {
		return map[string]any{
			"app.kubernetes.io/name":       "vllm",
			"app.kubernetes.io/instance":   "llama",
			"app.kubernetes.io/managed-by": "function-inferno",
			"app.kubernetes.io/version":    "3",
			"app.kubernetes.io/component":  component,
			"app.kubernetes.io/part-of":    "inferno",
		}
	}
	want := map[string]meta{
		render.ResourcePVC:        {"PersistentVolumeClaim", "team-a", "llama-weights", labels("model-cache")},
		job:                       {"Job", "team-a", "llama-pull-" + strings.TrimPrefix(job, render.ResourceJobPrefix), labels("model-puller")},
		render.ResourceDeployment: {"Deployment", "team-a", "llama", labels("model-server")},
		render.ResourceService:    {"Service", "team-a", "llama", labels("model-server")},
		render.ResourceHPA:        {"HorizontalPodAutoscaler", "team-a", "llama", labels("model-server")},
	}
	got := map[string]meta{}
	for name, r := range servers.GetDesired().GetResources() {
		m := r.GetResource().AsMap()
		md, _ := m["metadata"].(map[string]any)
		l, _ := md["labels"].(map[string]any)
		got[name] = meta{Kind: m["kind"].(string), Namespace: md["namespace"].(string), Name: md["name"].(string), Labels: l}
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("composed objects (-want +got):\n%s", diff)
	}
}

// TestNamespaceSources: the claim namespace label wins; a namespaced XR
// composes into its own namespace; an XR without a claim uses the Input's.
func TestNamespaceSources(t *testing.T) {
	cases := map[string]struct {
		xr            func() map[string]any
		in            map[string]any
		wantName      string
		wantNamespace string
	}{
		"ClaimLabels": {xr: testXR, wantName: "llama", wantNamespace: "team-a"},
		"ClaimLabelsWinOverInput": {
			xr: testXR, in: map[string]any{"namespace": "platform"}, wantName: "llama", wantNamespace: "team-a",
		},
		"NamespacedXR": {
			xr: func() map[string]any {
				xr := testXR()
				xr["metadata"] = map[string]any{"name": "mistral", "namespace": "team-b"}
				return xr
			},
			wantName: "mistral", wantNamespace: "team-b",
		},
		"ClusterXRWithInputNamespace": {
			xr: func() map[string]any {
				xr := testXR()
				xr["metadata"] = map[string]any{"name": "phi"}
				return xr
			},
			in:       map[string]any{"namespace": "models"},
			wantName: "phi", wantNamespace: "models",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			rsp := run(t, newRequest(t, tc.xr(), tc.in))
			if msg := fatalMessage(rsp); msg != "" {
				t.Fatalf("fatal: %s", msg)
			}
			pvc := desiredMap(t, rsp, render.ResourcePVC)["metadata"].(map[string]any)
			got := []string{pvc["name"].(string), pvc["namespace"].(string)}
			if diff := cmp.Diff([]string{tc.wantName + "-weights", tc.wantNamespace}, got); diff != "" {
				t.Errorf("PVC name and namespace (-want +got):\n%s", diff)
			}
		})
	}
}

// TestWarningsTargetCompositeAndClaim: risky-but-legal specs render, with
// a Warning result the claim's author sees.
func TestWarningsTargetCompositeAndClaim(t *testing.T) {
	xr := testXR()
	setPath(xr, map[string]any{"min": 1, "max": 4}, "spec", "replicas")
	setPath(xr, map[string]any{"enabled": true}, "spec", "autoscaling")
	setPath(xr, "ReadWriteOnce", "spec", "storage", "accessMode")
	rsp := run(t, newRequest(t, xr, nil))
	if msg := fatalMessage(rsp); msg != "" {
		t.Fatalf("fatal: %s", msg)
	}
	r, ok := warningWith(rsp, "spec.storage.accessMode")
	if !ok {
		t.Fatalf("no warning about spec.storage.accessMode; have %q", warningsOf(rsp))
	}
	type result struct {
		Target                 fnv1.Target
		NamesMode, SuggestsRWX bool
	}
	want := result{Target: toBoth, NamesMode: true, SuggestsRWX: true}
	got := result{
		Target:      r.GetTarget(),
		NamesMode:   strings.Contains(r.GetMessage(), "ReadWriteOnce") && strings.Contains(r.GetMessage(), "4 servers"),
		SuggestsRWX: strings.Contains(r.GetMessage(), "use ReadWriteMany"),
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("warning %q (-want +got):\n%s", r.GetMessage(), diff)
	}
}

// TestWarningOnlyWhenRisky: no storage warning for one replica or for
// ReadWriteMany, nor for pvc:// models, which have no cache volume.
func TestWarningOnlyWhenRisky(t *testing.T) {
	cases := map[string]struct {
		edit func(xr map[string]any)
		want bool
	}{
		"RWOOneReplica": {edit: func(map[string]any) {}, want: false},
		"RWXFourReplicas": {edit: func(xr map[string]any) {
			setPath(xr, map[string]any{"min": 4}, "spec", "replicas")
			setPath(xr, "ReadWriteMany", "spec", "storage", "accessMode")
		}, want: false},
		"RWOFourReplicas": {edit: func(xr map[string]any) {
			setPath(xr, map[string]any{"min": 4}, "spec", "replicas")
		}, want: true},
		"PVCModelFourReplicas": {edit: func(xr map[string]any) {
			setPath(xr, "pvc://models/llama", "spec", "model", "uri")
			setPath(xr, map[string]any{"min": 4}, "spec", "replicas")
		}, want: false},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			xr := testXR()
			tc.edit(xr)
			rsp := run(t, newRequest(t, xr, nil))
			if msg := fatalMessage(rsp); msg != "" {
				t.Fatalf("fatal: %s", msg)
			}
			_, got := warningWith(rsp, "spec.storage.accessMode")
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("storage warning (-want +got):\n%s\nwarnings: %q", diff, warningsOf(rsp))
			}
		})
	}
}

// TestRunFunctionKeepsEarlierSteps: desired resources of earlier pipeline
// steps pass through.
func TestRunFunctionKeepsEarlierSteps(t *testing.T) {
	req := newRequest(t, testXR(), nil)
	other, err := structpb.NewStruct(map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "x"}})
	if err != nil {
		t.Fatal(err)
	}
	req.Desired = &fnv1.State{Resources: map[string]*fnv1.Resource{"other": {Resource: other}}}
	rsp := run(t, req)
	job := pullJobResource(t, rsp)
	if diff := cmp.Diff([]string{"other", job, render.ResourcePVC}, desiredNames(rsp)); diff != "" {
		t.Errorf("desired resources (-want +got):\n%s", diff)
	}
}

// TestReadinessOfDesired: each returned object carries the readiness the
// function judged, never unspecified.
func TestReadinessOfDesired(t *testing.T) {
	xr := autoscalingXR()
	obs := serving(t, xr, nil, 2, deploymentStatus(2, 2))
	rsp := run(t, newRequest(t, xr, nil, obs...))
	job := pullJobResource(t, rsp)
	got := map[string]fnv1.Ready{}
	for _, n := range desiredNames(rsp) {
		got[n] = readiness(rsp, n)
	}
	want := map[string]fnv1.Ready{
		render.ResourcePVC: fnv1.Ready_READY_TRUE, job: fnv1.Ready_READY_TRUE, render.ResourceDeployment: fnv1.Ready_READY_TRUE,
		render.ResourceService: fnv1.Ready_READY_TRUE, render.ResourceHPA: fnv1.Ready_READY_TRUE,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("readiness (-want +got):\n%s", diff)
	}

	fresh := run(t, newRequest(t, xr, nil))
	for _, n := range desiredNames(fresh) {
		if r := readiness(fresh, n); r != fnv1.Ready_READY_FALSE {
			t.Errorf("%s not observed yet: readiness %v, want READY_FALSE", n, r)
		}
	}
}

// TestObservedDeploymentOfAnotherMaker: a Deployment without our weights
// annotation is taken over with the wanted weights rather than dropped.
func TestObservedDeploymentOfAnotherMaker(t *testing.T) {
	xr := testXR()
	fresh := run(t, newRequest(t, xr, nil))
	foreign := observedObject{Name: render.ResourceDeployment, Object: map[string]any{
		"apiVersion": "apps/v1", "kind": "Deployment",
		"metadata": map[string]any{"name": "llama", "namespace": "team-a"},
		"spec":     map[string]any{"template": map[string]any{"spec": map[string]any{"containers": []any{map[string]any{"name": "x", "image": "x"}}}}},
	}}
	rsp := run(t, newRequest(t, xr, nil, observedFrom(t, fresh, render.ResourcePVC, pvcPhase("Bound")), observedFrom(t, fresh, pullJobResource(t, fresh), jobRunningStatus()), foreign))
	d := desiredObject[appsv1.Deployment](t, rsp, render.ResourceDeployment)
	s := mustResolve(t, xr, nil)
	if diff := cmp.Diff(s.Model.Hash, d.Spec.Template.Annotations[resolve.AnnotationWeights]); diff != "" {
		t.Errorf("weights annotation (-want +got):\n%s", diff)
	}
}
