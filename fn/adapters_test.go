package fn

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"github.com/google/go-cmp/cmp"
	"github.com/inferno-ai/function-inferno/apis/inference/v1alpha1"
	"github.com/inferno-ai/function-inferno/input/v1beta1"
	"github.com/inferno-ai/function-inferno/internal/plan"
	"github.com/inferno-ai/function-inferno/internal/reason"
	"github.com/inferno-ai/function-inferno/internal/render"
	"github.com/inferno-ai/function-inferno/internal/resolve"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
)

const (
	loraSQLURI     = "hf://meta-llama/llama-3.1-8b-sql-lora"
	loraSupportURI = "hf://acme/support-lora"
	loraLegalURI   = "hf://acme/legal-lora"
)

func loraXR(t testing.TB) map[string]any { return readYAML(t, "../examples/lora/xr.yaml") }

func loraAddedXR(t testing.TB) map[string]any { return readYAML(t, "../examples/lora/added.yaml") }

// loraStages are the states of examples/lora/xr.yaml that the goldens and
// the render tests (examples/lora/observed) hold.
var loraStages = []struct {
	name  string
	world world
}{
	{"pulling", world{PullRunning: true}},
	{"adapter-failed", world{FailPull: map[string]bool{loraSupportURI: true}}},
	{"serving", world{}},
}

// TestAdaptersGolden renders the LoRA example fresh, at each stage, and
// on the first call after a third adapter is added to it at rest, and
// compares the responses with fn/testdata/golden/lora-*.yaml. With -update
// it rewrites them and examples/lora/observed/.
func TestAdaptersGolden(t *testing.T) {
	in := compositionInput(t)
	t.Run("fresh", func(t *testing.T) {
		compareGolden(t, "lora-fresh", run(t, newRequest(t, loraXR(t), in)))
	})
	for _, st := range loraStages {
		t.Run(st.name, func(t *testing.T) {
			_, obs := settle(t, loraXR(t), in, st.world, nil)
			fixture := filepath.Join("..", "examples", "lora", "observed", st.name+".yaml")
			if *update {
				writeObserved(t, fixture, "examples/lora/xr.yaml", st.name, obs)
			}
			compareGolden(t, "lora-"+st.name, run(t, newRequest(t, loraXR(t), in, readObserved(t, fixture)...)))
		})
	}
	t.Run("added", func(t *testing.T) {
		fixture := filepath.Join("..", "examples", "lora", "observed", "serving.yaml")
		compareGolden(t, "lora-added", run(t, newRequest(t, loraAddedXR(t), in, readObserved(t, fixture)...)))
	})
}

// adapterStatus is status.adapters as name→phase.
func adapterPhases(t testing.TB, rsp *fnv1.RunFunctionResponse) map[string]string {
	t.Helper()
	st, _ := nested(rsp.GetDesired().GetComposite().GetResource().AsMap(), "status", "adapters")
	out := map[string]string{}
	list, _ := st.([]any)
	for _, e := range list {
		m := e.(map[string]any)
		out[m["name"].(string)], _ = m["phase"].(string)
	}
	return out
}

func statusPhase(rsp *fnv1.RunFunctionResponse) string {
	p, _ := nested(rsp.GetDesired().GetComposite().GetResource().AsMap(), "status", "phase")
	s, _ := p.(string)
	return s
}

// adapterJobs are the desired pull Jobs of adapters, by adapter name.
func adapterJobs(t testing.TB, rsp *fnv1.RunFunctionResponse) map[string]*batchv1.Job {
	t.Helper()
	out := map[string]*batchv1.Job{}
	for _, n := range desiredNames(rsp) {
		if !strings.HasPrefix(n, render.ResourceJobPrefix) {
			continue
		}
		j := desiredObject[batchv1.Job](t, rsp, n)
		if a := j.Labels[render.LabelAdapter]; a != "" {
			out[a] = j
		}
	}
	return out
}

// TestAdapterLifecycle walks the LoRA example: the servers wait for the
// base model and every adapter, then serve them all; a failed adapter
// holds the first servers (Failed) but only degrades serving ones.
func TestAdapterLifecycle(t *testing.T) {
	in := compositionInput(t)
	cases := map[string]struct {
		world       world
		servers     bool
		phase       string
		adapters    map[string]string
		adaptersWhy string
	}{
		"Pulling":       {world: world{PullRunning: true}, phase: "Pulling", adapters: map[string]string{"sql": "Pulling", "support": "Pulling"}, adaptersWhy: "AdaptersPulling"},
		"AdapterFailed": {world: world{FailPull: map[string]bool{loraSupportURI: true}}, phase: "Failed", adapters: map[string]string{"sql": "Pulled", "support": "Failed"}, adaptersWhy: "AdapterPullFailed"},
		"Serving":       {servers: true, phase: "Serving", adapters: map[string]string{"sql": "Serving", "support": "Serving"}, adaptersWhy: "AdaptersServed"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			rsp, _ := settle(t, loraXR(t), in, tc.world, nil)
			_, has := rsp.GetDesired().GetResources()[render.ResourceDeployment]
			if has != tc.servers {
				t.Errorf("Deployment returned: %v, want %v (%v)", has, tc.servers, desiredNames(rsp))
			}
			if got := statusPhase(rsp); got != tc.phase {
				t.Errorf("phase %q, want %q", got, tc.phase)
			}
			if diff := cmp.Diff(tc.adapters, adapterPhases(t, rsp)); diff != "" {
				t.Errorf("status.adapters (-want +got):\n%s", diff)
			}
			if got := conditionReason(rsp, reason.ConditionAdaptersReady); got != tc.adaptersWhy {
				t.Errorf("AdaptersReady reason %q, want %q", got, tc.adaptersWhy)
			}
			if got := len(adapterJobs(t, rsp)); got != 2 {
				t.Errorf("%d adapter Jobs, want 2", got)
			}
		})
	}
}

// TestAdapterServers checks what the servers of the LoRA example run: the
// preset's adapter arguments with one name=path per adapter (sorted by
// name), MAX_LORAS and MAX_LORA_RANK from spec.lora, the cache volume's
// adapters directory read-only, and the annotation that records them; and
// each adapter's Job: its own directory, its own credentials or
// spec.model's for the same source, a name distinct from the base's.
func TestAdapterServers(t *testing.T) {
	rsp, _ := settle(t, loraXR(t), compositionInput(t), world{}, nil)
	d := desiredObject[appsv1.Deployment](t, rsp, render.ResourceDeployment)
	jobs := adapterJobs(t, rsp)
	hash := func(name string) string {
		for _, e := range jobs[name].Spec.Template.Spec.Containers[0].Env {
			if e.Name == render.EnvTargetDir {
				return strings.TrimPrefix(e.Value, render.MountCache+"/"+resolve.AdaptersDir+"/")
			}
		}
		t.Fatalf("adapter %s's Job has no %s", name, render.EnvTargetDir)
		return ""
	}
	sql, support := hash("sql"), hash("support")
	c := d.Spec.Template.Spec.Containers[0]
	wantArgs := []string{
		"--model=$(MODEL_DIR)", "--served-model-name=$(MODEL_NAME)", "--port=$(PORT)",
		"--enable-lora", "--max-loras=$(MAX_LORAS)", "--max-lora-rank=$(MAX_LORA_RANK)",
		"--lora-modules", "sql=/adapters/" + sql, "support=/adapters/" + support,
	}
	if diff := cmp.Diff(wantArgs, c.Args); diff != "" {
		t.Errorf("server args (-want +got):\n%s", diff)
	}
	if got := envOf(d, v1beta1.EnvMaxLoras) + "/" + envOf(d, v1beta1.EnvMaxLoraRank); got != "2/32" {
		t.Errorf("MAX_LORAS/MAX_LORA_RANK %s, want 2/32 (spec.lora)", got)
	}
	mount := corev1.VolumeMount{Name: resolve.VolumeAdapters, MountPath: resolve.MountAdapters, SubPath: resolve.AdaptersDir, ReadOnly: true}
	if !slices.Contains(c.VolumeMounts, mount) {
		t.Errorf("the server does not mount %+v: %+v", mount, c.VolumeMounts)
	}
	var vol *corev1.Volume
	for i := range d.Spec.Template.Spec.Volumes {
		if v := &d.Spec.Template.Spec.Volumes[i]; v.Name == resolve.VolumeAdapters {
			vol = v
		}
	}
	if vol == nil || vol.PersistentVolumeClaim == nil || vol.PersistentVolumeClaim.ClaimName != "llama-weights" || !vol.PersistentVolumeClaim.ReadOnly {
		t.Errorf("adapters volume %+v, want the cache volume llama-weights read-only", vol)
	}
	if got, want := d.Spec.Template.Annotations[render.AnnotationAdapters], "sql="+sql+",support="+support; got != want {
		t.Errorf("annotation %q, want %q", got, want)
	}
	if ru := d.Spec.Strategy.RollingUpdate; ru == nil || ru.MaxUnavailable.IntValue() != 0 {
		t.Errorf("the servers roll with %+v; a change of adapters must keep every server until its replacement is ready", ru)
	}

	secretOf := func(j *batchv1.Job) string {
		for _, e := range j.Spec.Template.Spec.Containers[0].Env {
			if e.ValueFrom != nil && e.ValueFrom.SecretKeyRef != nil {
				return e.ValueFrom.SecretKeyRef.Name
			}
		}
		return ""
	}
	if got := secretOf(jobs["sql"]); got != "hf-credentials" {
		t.Errorf("sql (same organisation as spec.model) reads Secret %q, want spec.model's hf-credentials", got)
	}
	if got := secretOf(jobs["support"]); got != "acme-hf" {
		t.Errorf("support reads Secret %q, want its own acme-hf", got)
	}
	names := map[string]bool{}
	for _, n := range desiredNames(rsp) {
		if strings.HasPrefix(n, render.ResourceJobPrefix) {
			j := desiredObject[batchv1.Job](t, rsp, n)
			if names[j.Name] {
				t.Errorf("two Jobs named %s", j.Name)
			}
			names[j.Name] = true
			if len(j.Name) > 63 {
				t.Errorf("Job name %s is over 63 characters", j.Name)
			}
		}
	}
	if len(names) != 3 {
		t.Errorf("%d pull Jobs, want 3 (the base model and two adapters): %v", len(names), names)
	}
	// Deterministic: the same spec renders the same Job names.
	again, _ := settle(t, loraXR(t), compositionInput(t), world{}, nil)
	if diff := cmp.Diff(desiredNames(rsp), desiredNames(again)); diff != "" {
		t.Errorf("a second render names other resources:\n%s", diff)
	}
}

// TestAdapterChanges: a change of spec.adapters over servers that serve
// touches their pod template only once the new set is pulled, and never
// for a reordering; a failing new adapter leaves them as they are.
func TestAdapterChanges(t *testing.T) {
	in := compositionInput(t)
	_, serving := settle(t, loraXR(t), in, world{}, nil)
	template := func(rsp *fnv1.RunFunctionResponse) corev1.PodTemplateSpec {
		return desiredObject[appsv1.Deployment](t, rsp, render.ResourceDeployment).Spec.Template
	}
	before := template(run(t, newRequest(t, loraXR(t), in, serving...)))
	adapters := func(xr map[string]any) []any { return xr["spec"].(map[string]any)["adapters"].([]any) }

	t.Run("AddedPulling", func(t *testing.T) {
		rsp := run(t, newRequest(t, loraAddedXR(t), in, serving...))
		if diff := cmp.Diff(before, template(rsp)); diff != "" {
			t.Errorf("adding an adapter changed the servers before its pull completed:\n%s", diff)
		}
		if got := adapterPhases(t, rsp)["legal"]; got != "Pending" {
			t.Errorf("legal is %q, want Pending", got)
		}
		if got := statusPhase(rsp); got != "Serving" {
			t.Errorf("phase %q, want Serving", got)
		}
	})
	t.Run("AddedPulled", func(t *testing.T) {
		rsp, _ := settle(t, loraAddedXR(t), in, world{}, serving)
		// After the adapters already served, whatever its name: a runtime
		// that numbers adapters by their order keeps sql and support's.
		if got := template(rsp).Annotations[render.AnnotationAdapters]; !strings.HasPrefix(got, "sql=") || !strings.Contains(got, ",support=") || !strings.Contains(got, ",legal=") || strings.Index(got, "legal=") < strings.Index(got, "support=") {
			t.Errorf("annotation %q, want sql, support, then legal", got)
		}
		if diff := cmp.Diff(map[string]string{"legal": "Serving", "sql": "Serving", "support": "Serving"}, adapterPhases(t, rsp)); diff != "" {
			t.Errorf("status.adapters (-want +got):\n%s", diff)
		}
	})
	t.Run("AddedFailed", func(t *testing.T) {
		rsp, _ := settle(t, loraAddedXR(t), in, world{FailPull: map[string]bool{loraLegalURI: true}}, serving)
		if diff := cmp.Diff(before, template(rsp)); diff != "" {
			t.Errorf("a failed new adapter changed the servers:\n%s", diff)
		}
		if got := statusPhase(rsp); got != "Degraded" {
			t.Errorf("phase %q, want Degraded", got)
		}
		if got := conditionReason(rsp, reason.ConditionAdaptersReady); got != "AdapterPullFailed" {
			t.Errorf("AdaptersReady %q, want AdapterPullFailed", got)
		}
	})
	t.Run("Reordered", func(t *testing.T) {
		xr := loraXR(t)
		a := adapters(xr)
		a[0], a[1] = a[1], a[0]
		rsp := run(t, newRequest(t, xr, in, serving...))
		if diff := cmp.Diff(before, template(rsp)); diff != "" {
			t.Errorf("reordering spec.adapters changed the servers:\n%s", diff)
		}
	})
	t.Run("NewRevisionPulling", func(t *testing.T) {
		xr := loraXR(t)
		adapters(xr)[0].(map[string]any)["revision"] = "v3"
		rsp := run(t, newRequest(t, xr, in, serving...))
		if diff := cmp.Diff(before, template(rsp)); diff != "" {
			t.Errorf("the servers changed before the new revision was pulled:\n%s", diff)
		}
		if got := adapterPhases(t, rsp)["sql"]; got != "Pending" {
			t.Errorf("sql is %q, want Pending (its new revision's Job)", got)
		}
	})
	t.Run("Removed", func(t *testing.T) {
		xr := loraXR(t)
		xr["spec"].(map[string]any)["adapters"] = adapters(xr)[:1]
		rsp := run(t, newRequest(t, xr, in, serving...))
		tm := template(rsp)
		if got := tm.Annotations[render.AnnotationAdapters]; strings.Contains(got, "support") {
			t.Errorf("annotation %q still names the removed adapter", got)
		}
		if got := len(adapterJobs(t, rsp)); got != 1 {
			t.Errorf("%d adapter Jobs, want 1", got)
		}
	})
	t.Run("AllRemoved", func(t *testing.T) {
		xr := loraXR(t)
		delete(xr["spec"].(map[string]any), "adapters")
		delete(xr["spec"].(map[string]any), "lora")
		rsp := run(t, newRequest(t, xr, in, serving...))
		tm := template(rsp)
		if _, ok := tm.Annotations[render.AnnotationAdapters]; ok || slices.Contains(tm.Spec.Containers[0].Args, "--enable-lora") {
			t.Errorf("servers without adapters still serve them: %v %v", tm.Annotations, tm.Spec.Containers[0].Args)
		}
		if st := rsp.GetDesired().GetComposite().GetResource().AsMap()["status"].(map[string]any); st["adapters"] != nil {
			t.Errorf("status.adapters %v, want none", st["adapters"])
		}
	})
}

// TestAdapterArgs: the two command-line forms of an adapter preset.
func TestAdapterArgs(t *testing.T) {
	list := []render.ServedAdapter{{Name: "a", Hash: "11"}, {Name: "b", Hash: "22"}}
	cases := map[string]struct {
		preset *v1beta1.AdapterPreset
		want   []string
	}{
		"vLLM": {v1beta1.BuiltinRuntimes()["vllm"].Adapters, []string{"--enable-lora", "--max-loras=$(MAX_LORAS)", "--max-lora-rank=$(MAX_LORA_RANK)", "--lora-modules", "a=/adapters/11", "b=/adapters/22"}},
		"Fake": {v1beta1.BuiltinRuntimes()["fake"].Adapters, []string{"--adapter", "a=/adapters/11", "--adapter", "b=/adapters/22"}},
		// llama.cpp numbers adapters by order: paths alone, which the
		// preset's script turns into --lora-scaled FILE:0.
		"LlamaCPP": {v1beta1.BuiltinRuntimes()["llamacpp"].Adapters, []string{"--lora", "/adapters/11", "--lora", "/adapters/22"}},
		"None":     {nil, nil},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, render.AdapterArgs(tc.preset, list)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// TestServedAdapters: which adapters a server's template lists.
func TestServedAdapters(t *testing.T) {
	ap := func(name, hash string, st render.JobState) plan.Adapter {
		return plan.Adapter{Adapter: resolve.Adapter{Name: name, Model: resolve.Model{Hash: hash}}, Pull: st}
	}
	cases := map[string]struct {
		aps  []plan.Adapter
		was  []render.ServedAdapter
		want []render.ServedAdapter
	}{
		"Pulled":            {aps: []plan.Adapter{ap("b", "2", render.JobComplete), ap("a", "1", render.JobComplete)}, want: []render.ServedAdapter{{Name: "a", Hash: "1"}, {Name: "b", Hash: "2"}}},
		"NotYetPulled":      {aps: []plan.Adapter{ap("a", "1", render.JobComplete), ap("b", "2", render.JobRunning)}, want: []render.ServedAdapter{{Name: "a", Hash: "1"}}},
		"NewRevisionFailed": {aps: []plan.Adapter{ap("a", "9", render.JobFailed)}, was: []render.ServedAdapter{{Name: "a", Hash: "1"}}, want: []render.ServedAdapter{{Name: "a", Hash: "1"}}},
		"Removed":           {aps: []plan.Adapter{ap("a", "1", render.JobComplete)}, was: []render.ServedAdapter{{Name: "a", Hash: "1"}, {Name: "b", Hash: "2"}}, want: []render.ServedAdapter{{Name: "a", Hash: "1"}}},
		// A runtime that numbers adapters by position (llama.cpp) keeps
		// sql as 0 while legal, which sorts before it, is added as 1.
		"AddedAfterTheServed": {aps: []plan.Adapter{ap("legal", "3", render.JobComplete), ap("sql", "2", render.JobComplete), ap("code", "4", render.JobComplete)}, was: []render.ServedAdapter{{Name: "sql", Hash: "2"}}, want: []render.ServedAdapter{{Name: "sql", Hash: "2"}, {Name: "code", Hash: "4"}, {Name: "legal", Hash: "3"}}},
		"ObservedOrderKept":   {aps: []plan.Adapter{ap("a", "1", render.JobComplete), ap("b", "2", render.JobComplete)}, was: []render.ServedAdapter{{Name: "b", Hash: "2"}, {Name: "a", Hash: "1"}}, want: []render.ServedAdapter{{Name: "b", Hash: "2"}, {Name: "a", Hash: "1"}}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, plan.ServedAdapters(tc.aps, tc.was)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
	if got := render.ParseAdaptersAnnotation(render.AdaptersAnnotation([]render.ServedAdapter{{Name: "a", Hash: "1"}, {Name: "b", Hash: "2"}})); !cmp.Equal(got, []render.ServedAdapter{{Name: "a", Hash: "1"}, {Name: "b", Hash: "2"}}) {
		t.Errorf("annotation round trip: %v", got)
	}
}

// TestAdaptersOnFake: the fake runtime serves adapters too, in its own
// command-line form, so the e2e's real node can prove one answering.
func TestAdaptersOnFake(t *testing.T) {
	xr := testXR()
	setPath(xr, "fake", "spec", "model", "framework")
	setPath(xr, []any{map[string]any{"name": "tiny", "uri": "http://origin.internal/tiny-adapter.json"}}, "spec", "adapters")
	rsp, _ := settle(t, xr, nil, world{}, nil)
	d := desiredObject[appsv1.Deployment](t, rsp, render.ResourceDeployment)
	args := d.Spec.Template.Spec.Containers[0].Args
	i := slices.Index(args, "--adapter")
	if i < 0 || i+1 >= len(args) || !strings.HasPrefix(args[i+1], "tiny=/adapters/") {
		t.Errorf("fake server args %v, want --adapter tiny=/adapters/<hash>", args)
	}
	if got := adapterPhases(t, rsp)["tiny"]; got != string(v1alpha1.AdapterServing) {
		t.Errorf("tiny is %q, want Serving", got)
	}
}

// TestAdaptersOnLlamaCPP: llama.cpp numbers its adapters by their order on
// the command line, so the servers get each one's directory alone, and
// status.adapters says the number a request applies it by (sql sorts
// first on a fresh template: 0; tiny 1). The preset's start script is the
// container's command, so spec.serve.args and the adapters are its args,
// which the script hands to llama-server, rather than replacing it.
func TestAdaptersOnLlamaCPP(t *testing.T) {
	xr := testXR()
	setPath(xr, "llamacpp", "spec", "model", "framework")
	setPath(xr, []any{"--ctx-size", "4096"}, "spec", "serve", "args")
	setPath(xr, []any{
		map[string]any{"name": "tiny", "uri": "http://origin.internal/tiny-lora.gguf"},
		map[string]any{"name": "sql", "uri": loraSQLURI},
	}, "spec", "adapters")
	rsp, _ := settle(t, xr, nil, world{}, nil)
	d := desiredObject[appsv1.Deployment](t, rsp, render.ResourceDeployment)
	var loras []string
	args := d.Spec.Template.Spec.Containers[0].Args
	for i, a := range args {
		if a == "--lora" && i+1 < len(args) {
			loras = append(loras, args[i+1])
		}
	}
	if len(loras) != 2 || !strings.HasPrefix(loras[0], "/adapters/") || strings.Contains(loras[0], "=") {
		t.Errorf("llama-server's adapters %v, want two --lora /adapters/<hash>", loras)
	}
	c := d.Spec.Template.Spec.Containers[0]
	if len(c.Command) != 4 || !strings.Contains(c.Command[2], "exec /app/llama-server") || len(args) < 2 || args[0] != "--ctx-size" || args[1] != "4096" {
		t.Errorf("command %q args %q, want the preset's script as the command and spec.serve.args first among its args", c.Command, args)
	}
	st, _ := nested(rsp.GetDesired().GetComposite().GetResource().AsMap(), "status", "adapters")
	ids := map[string]any{}
	for _, e := range st.([]any) {
		m := e.(map[string]any)
		ids[m["name"].(string)] = m["id"]
		if m["phase"] != string(v1alpha1.AdapterServing) || !strings.Contains(m["message"].(string), `"lora": [{"id": `) {
			t.Errorf("%s: %v, want Serving with the request that applies it", m["name"], m)
		}
	}
	if diff := cmp.Diff(map[string]any{"sql": float64(0), "tiny": float64(1)}, ids); diff != "" {
		t.Errorf("status.adapters[].id (-want +got):\n%s", diff)
	}
}

// TestAdaptersBesideMountedWeights: a pvc:// model mounts the team's own
// claim, and its adapters are still pulled into a cache volume of the
// claim's, which is then composed; the first servers wait for them.
func TestAdaptersBesideMountedWeights(t *testing.T) {
	xr := testXR()
	setPath(xr, "pvc://shared-models/llama", "spec", "model", "uri")
	setPath(xr, []any{map[string]any{"name": "sql", "uri": loraSQLURI}}, "spec", "adapters")
	fresh := run(t, newRequest(t, xr, nil))
	if msg := fatalMessage(fresh); msg != "" {
		t.Fatal(msg)
	}
	names := desiredNames(fresh)
	if !slices.Contains(names, render.ResourcePVC) || slices.Contains(names, render.ResourceDeployment) {
		t.Errorf("fresh: %v, want the cache volume and no servers before the adapter is pulled", names)
	}
	rsp, _ := settle(t, xr, nil, world{}, nil)
	d := desiredObject[appsv1.Deployment](t, rsp, render.ResourceDeployment)
	claims := map[string]string{}
	for _, v := range d.Spec.Template.Spec.Volumes {
		if v.PersistentVolumeClaim != nil {
			claims[v.Name] = v.PersistentVolumeClaim.ClaimName
		}
	}
	if diff := cmp.Diff(map[string]string{render.VolumeWeights: "shared-models", resolve.VolumeAdapters: "llama-weights"}, claims); diff != "" {
		t.Errorf("volumes (-want +got):\n%s", diff)
	}
}
