package fn

import (
	"strings"
	"testing"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"github.com/google/go-cmp/cmp"
	"github.com/inferno-ai/function-inferno/apis/inference/v1alpha1"
	"github.com/inferno-ai/function-inferno/input/v1beta1"
	"github.com/inferno-ai/function-inferno/internal/observe"
	"github.com/inferno-ai/function-inferno/internal/reason"
	"github.com/inferno-ai/function-inferno/internal/render"
	"github.com/inferno-ai/function-inferno/internal/resolve"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
)

var progressInput = map[string]any{"pullProgress": map[string]any{"enabled": true, "intervalSeconds": 3}}

// pullJobName is the composition resource name of the one pull Job.
func pullJobName(t *testing.T, rsp *fnv1.RunFunctionResponse) string {
	t.Helper()
	for _, n := range desiredNames(rsp) {
		if strings.HasPrefix(n, render.ResourceJobPrefix) {
			return n
		}
	}
	t.Fatalf("no pull Job in %v", desiredNames(rsp))
	return ""
}

// TestProgressObjects: with input.pullProgress on, each pull comes with a
// ConfigMap without data, a ServiceAccount that mounts no token, a Role
// that allows get and patch of that ConfigMap alone, and its binding; the
// pull pod runs under the account with a projected token, and is told
// where and how often to report. Off, none of it, and no token.
func TestProgressObjects(t *testing.T) {
	off := run(t, newRequest(t, testXR(), nil))
	for _, n := range desiredNames(off) {
		if strings.HasPrefix(n, "pull-progress") {
			t.Errorf("without input.pullProgress: %s rendered", n)
		}
	}
	job := desiredObject[batchv1.Job](t, off, pullJobName(t, off))
	if ps := job.Spec.Template.Spec; ps.ServiceAccountName != "" || len(ps.Volumes) != 2 {
		t.Errorf("without input.pullProgress the pull pod has account %q and volumes %v", ps.ServiceAccountName, ps.Volumes)
	}

	rsp := run(t, newRequest(t, testXR(), progressInput))
	if msg := fatalMessage(rsp); msg != "" {
		t.Fatal(msg)
	}
	hash := resolve.ShortHash([]string{"hf://meta-llama/Llama-3.1-8B-Instruct", ""})
	name := "llama-progress-" + hash
	cm := desiredMap(t, rsp, render.ResourceProgressPrefix+hash)
	if _, ok := cm["data"]; ok || cm["kind"] != "ConfigMap" {
		t.Errorf("progress ConfigMap %v: want a ConfigMap without data (the pull pod's)", cm)
	}
	sa := desiredObject[corev1.ServiceAccount](t, rsp, render.ResourceProgressSAPrefix+hash)
	role := desiredObject[rbacv1.Role](t, rsp, render.ResourceProgressRolePrefix+hash)
	rb := desiredObject[rbacv1.RoleBinding](t, rsp, render.ResourceProgressBindingPrefix+hash)
	type got struct {
		SA, SANamespace string
		SAToken         bool
		Rules           []rbacv1.PolicyRule
		RoleRef         rbacv1.RoleRef
		Subjects        []rbacv1.Subject
	}
	want := got{
		SA: name, SANamespace: "team-a",
		Rules:    []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"configmaps"}, ResourceNames: []string{name}, Verbs: []string{"get", "patch"}}},
		RoleRef:  rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "Role", Name: name},
		Subjects: []rbacv1.Subject{{Kind: "ServiceAccount", Name: name, Namespace: "team-a"}},
	}
	g := got{SA: sa.Name, SANamespace: sa.Namespace, SAToken: sa.AutomountServiceAccountToken == nil || *sa.AutomountServiceAccountToken,
		Rules: role.Rules, RoleRef: rb.RoleRef, Subjects: rb.Subjects}
	if diff := cmp.Diff(want, g); diff != "" {
		t.Errorf("progress RBAC (-want +got):\n%s", diff)
	}

	job = desiredObject[batchv1.Job](t, rsp, pullJobName(t, rsp))
	ps := job.Spec.Template.Spec
	env := map[string]string{}
	for _, e := range ps.Containers[0].Env {
		env[e.Name] = e.Value
	}
	var mounted string
	for _, m := range ps.Containers[0].VolumeMounts {
		if m.Name == render.VolumeProgressToken && m.ReadOnly {
			mounted = m.MountPath
		}
	}
	if ps.ServiceAccountName != name || ps.AutomountServiceAccountToken == nil || *ps.AutomountServiceAccountToken ||
		env[v1beta1.EnvProgressPath] != "/api/v1/namespaces/team-a/configmaps/"+name || env[v1beta1.EnvProgressInterval] != "3" ||
		mounted != v1beta1.ServiceAccountTokenDir {
		t.Errorf("pull pod: account %q automount %v env %v token at %q", ps.ServiceAccountName, ps.AutomountServiceAccountToken, env, mounted)
	}
	for _, n := range []string{render.ResourceProgressPrefix, render.ResourceProgressSAPrefix, render.ResourceProgressRolePrefix, render.ResourceProgressBindingPrefix} {
		if readiness(rsp, n+hash) != fnv1.Ready_READY_FALSE {
			t.Errorf("%s is ready before it is observed", n+hash)
		}
	}
	// Observed, each is ready.
	var obs []observedObject
	for _, n := range desiredNames(rsp) {
		obs = append(obs, observedFrom(t, rsp, n, nil))
	}
	again := run(t, newRequest(t, testXR(), progressInput, obs...))
	for _, n := range []string{render.ResourceProgressPrefix, render.ResourceProgressSAPrefix, render.ResourceProgressRolePrefix, render.ResourceProgressBindingPrefix} {
		if readiness(again, n+hash) != fnv1.Ready_READY_TRUE {
			t.Errorf("%s is not ready once observed", n+hash)
		}
	}
}

// TestProgressStatus: the pull pod's report, observed in its ConfigMap,
// becomes status.pulls and the WeightsReady message; a report that does
// not read is left out.
func TestProgressStatus(t *testing.T) {
	fresh := run(t, newRequest(t, testXR(), progressInput))
	hash := resolve.ShortHash([]string{"hf://meta-llama/Llama-3.1-8B-Instruct", ""})
	jobRes := pullJobName(t, fresh)
	jobName := desiredObject[batchv1.Job](t, fresh, jobRes).Name
	running := observedFrom(t, fresh, jobRes, map[string]any{"active": 1})
	cases := map[string]struct {
		data    map[string]any
		job     observedObject
		want    v1alpha1.PullStatus
		message string // what the WeightsReady message ends with
	}{
		"NoReportYet": {
			job:     running,
			want:    v1alpha1.PullStatus{URI: "hf://meta-llama/Llama-3.1-8B-Instruct", Job: jobName, State: "Pulling"},
			message: "; no progress report yet",
		},
		"WithTotal": {
			data: map[string]any{"bytes": "3328599655", "total": "16106127360", "rate": "125829120", "startedAt": "2026-12-03T10:00:00Z", "updatedAt": "2026-12-03T10:00:27Z"},
			job:  running,
			want: v1alpha1.PullStatus{URI: "hf://meta-llama/Llama-3.1-8B-Instruct", Job: jobName, State: "Pulling",
				BytesDone: ptr.To(int64(3328599655)), BytesTotal: ptr.To(int64(16106127360)), BytesPerSecond: ptr.To(int64(125829120)), ETASeconds: ptr.To(int64(102)),
				StartedAt: "2026-12-03T10:00:00Z", UpdatedAt: "2026-12-03T10:00:27Z", Progress: "3.1 of 15.0 GiB (20%), 120.0 MiB/s, ETA 2m"},
			message: ": 3.1 of 15.0 GiB (20%), 120.0 MiB/s, ETA 2m (reported 2026-12-03T10:00:27Z)",
		},
		"NoTotal": {
			data: map[string]any{"bytes": "524288000", "total": "", "rate": "0", "startedAt": "2026-12-03T10:00:00Z", "updatedAt": "2026-12-03T10:00:27Z"},
			job:  running,
			want: v1alpha1.PullStatus{URI: "hf://meta-llama/Llama-3.1-8B-Instruct", Job: jobName, State: "Pulling",
				BytesDone: ptr.To(int64(524288000)), BytesPerSecond: ptr.To(int64(0)),
				StartedAt: "2026-12-03T10:00:00Z", UpdatedAt: "2026-12-03T10:00:27Z", Progress: "500.0 MiB so far, 0 B/s"},
			message: ": 500.0 MiB so far, 0 B/s (reported 2026-12-03T10:00:27Z)",
		},
		"Garbage": {
			data:    map[string]any{"bytes": "lots", "total": "-1", "rate": "fast", "updatedAt": "yesterday"},
			job:     running,
			want:    v1alpha1.PullStatus{URI: "hf://meta-llama/Llama-3.1-8B-Instruct", Job: jobName, State: "Pulling"},
			message: "; no progress report yet",
		},
		"TotalBelowDoneIsUnknown": {
			data: map[string]any{"bytes": "2048", "total": "1024", "updatedAt": "2026-12-03T10:00:27+02:00"},
			job:  running,
			want: v1alpha1.PullStatus{URI: "hf://meta-llama/Llama-3.1-8B-Instruct", Job: jobName, State: "Pulling",
				BytesDone: ptr.To(int64(2048)), UpdatedAt: "2026-12-03T08:00:27Z", Progress: "2.0 KiB so far"},
			message: ": 2.0 KiB so far (reported 2026-12-03T08:00:27Z)",
		},
		"Pulled": {
			data: map[string]any{"bytes": "16106127360", "total": "16106127360", "rate": "125829120", "updatedAt": "2026-12-03T10:02:08Z"},
			job:  observedFrom(t, fresh, jobRes, map[string]any{"conditions": []any{map[string]any{"type": "Complete", "status": "True"}}}),
			want: v1alpha1.PullStatus{URI: "hf://meta-llama/Llama-3.1-8B-Instruct", Job: jobName, State: "Pulled",
				BytesDone: ptr.To(int64(16106127360)), BytesTotal: ptr.To(int64(16106127360)), BytesPerSecond: ptr.To(int64(125829120)),
				UpdatedAt: "2026-12-03T10:02:08Z", Progress: "15.0 of 15.0 GiB (100%), 120.0 MiB/s, ETA 0s"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			cm := observedFrom(t, fresh, render.ResourceProgressPrefix+hash, nil)
			if tc.data != nil {
				cm.Object["data"] = tc.data
			}
			rsp := run(t, newRequest(t, testXR(), progressInput, tc.job, cm))
			if msg := fatalMessage(rsp); msg != "" {
				t.Fatal(msg)
			}
			var st v1alpha1.InferenceServiceStatus
			if err := fromMap(statusOf(rsp), &st); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff([]v1alpha1.PullStatus{tc.want}, st.Pulls); diff != "" {
				t.Errorf("status.pulls (-want +got):\n%s", diff)
			}
			if tc.message == "" {
				return
			}
			var msg string
			for _, c := range rsp.GetConditions() {
				if c.GetType() == reason.ConditionWeightsReady {
					msg = c.GetMessage()
				}
			}
			// The report is in status.message; the condition says the same
			// without it, so that a report alone is one write of the
			// composite (reason.Condition.Detail).
			if !strings.HasSuffix(st.Message, tc.message) || msg+tc.message != st.Message {
				t.Errorf("status.message %q and WeightsReady message %q, want the first to be the second and %q", st.Message, msg, tc.message)
			}
		})
	}
}

// TestProgressWords: how a report reads.
func TestProgressWords(t *testing.T) {
	n := func(v int64) *int64 { return &v }
	cases := map[string]struct {
		r    observe.ProgressReport
		want string
	}{
		"Bytes":         {r: observe.ProgressReport{Bytes: n(512)}, want: "512 B so far"},
		"KiB":           {r: observe.ProgressReport{Bytes: n(1536), Total: n(4096)}, want: "1.5 of 4.0 KiB (37%)"},
		"GiBOfTiB":      {r: observe.ProgressReport{Bytes: n(3 << 30), Total: n(2 << 40), Rate: n(50 << 20)}, want: "0.0 of 2.0 TiB (0%), 50.0 MiB/s, ETA 11h39m"},
		"SecondsLeft":   {r: observe.ProgressReport{Bytes: n(190 << 20), Total: n(200 << 20), Rate: n(10 << 20)}, want: "190.0 of 200.0 MiB (95%), 10.0 MiB/s, ETA 1s"},
		"ZeroRateNoETA": {r: observe.ProgressReport{Bytes: n(0), Total: n(200 << 20), Rate: n(0)}, want: "0.0 of 200.0 MiB (0%), 0 B/s"},
		"EmptyTotal":    {r: observe.ProgressReport{Bytes: n(0), Total: n(0)}, want: "0 of 0 B"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := tc.r.Words(); got != tc.want {
				t.Errorf("words() = %q, want %q", got, tc.want)
			}
		})
	}
	for s, want := range map[int64]string{0: "0s", 89: "89s", 90: "2m", 3599: "60m", 3600: "1h0m", 3661: "1h2m"} {
		if got := observe.Duration(s); got != want {
			t.Errorf("duration(%d) = %q, want %q", s, got, want)
		}
	}
}

// fromMap decodes an unstructured map into a typed value.
func fromMap(m map[string]any, out any) error {
	return runtime.DefaultUnstructuredConverter.FromUnstructured(m, out)
}

// TestAdapterProgressStatus: an adapter's pull reports its progress as the
// model's does: status.pulls lists it after the versions' pulls, by
// adapter name, and its status.adapters message says how far it is (or
// that no report came yet).
func TestAdapterProgressStatus(t *testing.T) {
	xr := loraXR(t)
	delete(xr["spec"].(map[string]any)["model"].(map[string]any), "credentialsSecretRef")
	fresh := run(t, newRequest(t, xr, progressInput))
	jobs := adapterJobs(t, fresh)
	const sqlURI, supportURI = "hf://meta-llama/llama-3.1-8b-sql-lora", "hf://acme/support-lora"
	sqlReport := render.ResourceProgressPrefix + resolve.ShortHash([]string{sqlURI, ""})
	if _, ok := fresh.GetDesired().GetResources()[sqlReport]; !ok {
		t.Fatalf("no progress ConfigMap %s for adapter sql among %v", sqlReport, desiredNames(fresh))
	}
	var obs []observedObject
	for _, n := range desiredNames(fresh) {
		var st map[string]any
		if strings.HasPrefix(n, render.ResourceJobPrefix) {
			st = map[string]any{"active": 1}
			if desiredObject[batchv1.Job](t, fresh, n).Labels[render.LabelAdapter] == "" {
				st = map[string]any{"conditions": []any{map[string]any{"type": "Complete", "status": "True"}}}
			}
		}
		o := observedFrom(t, fresh, n, st)
		if n == sqlReport {
			o.Object["data"] = map[string]any{"bytes": "3328599655", "total": "16106127360", "rate": "125829120", "startedAt": "2026-12-03T10:00:00Z", "updatedAt": "2026-12-03T10:00:27Z"}
		}
		obs = append(obs, o)
	}
	rsp := run(t, newRequest(t, xr, progressInput, obs...))
	if msg := fatalMessage(rsp); msg != "" {
		t.Fatal(msg)
	}
	var st v1alpha1.InferenceServiceStatus
	if err := fromMap(statusOf(rsp), &st); err != nil {
		t.Fatal(err)
	}
	var model string
	for _, n := range desiredNames(fresh) {
		if j := desiredObject[batchv1.Job](t, fresh, n); strings.HasPrefix(n, render.ResourceJobPrefix) && j.Labels[render.LabelAdapter] == "" {
			model = j.Name
		}
	}
	want := []v1alpha1.PullStatus{
		{URI: "hf://meta-llama/Llama-3.1-8B-Instruct", Job: model, State: "Pulled"},
		{Adapter: "sql", URI: sqlURI, Job: jobs["sql"].Name, State: "Pulling",
			BytesDone: ptr.To(int64(3328599655)), BytesTotal: ptr.To(int64(16106127360)), BytesPerSecond: ptr.To(int64(125829120)), ETASeconds: ptr.To(int64(102)),
			StartedAt: "2026-12-03T10:00:00Z", UpdatedAt: "2026-12-03T10:00:27Z", Progress: "3.1 of 15.0 GiB (20%), 120.0 MiB/s, ETA 2m"},
		{Adapter: "support", URI: supportURI, Job: jobs["support"].Name, State: "Pulling"},
	}
	if diff := cmp.Diff(want, st.Pulls); diff != "" {
		t.Errorf("status.pulls (-want +got):\n%s", diff)
	}
	ends := map[string]string{"sql": ": 3.1 of 15.0 GiB (20%), 120.0 MiB/s, ETA 2m (reported 2026-12-03T10:00:27Z)", "support": "; no progress report yet"}
	for _, a := range st.Adapters {
		if !strings.HasSuffix(a.Message, ends[a.Name]) || a.Phase != v1alpha1.AdapterPulling {
			t.Errorf("adapter %s: %s %q, want Pulling ending %q", a.Name, a.Phase, a.Message, ends[a.Name])
		}
	}
}
