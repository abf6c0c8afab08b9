package fn

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/inferno-ai/function-inferno/apis/inference/v1alpha1"
	"github.com/inferno-ai/function-inferno/input/v1beta1"
)

// LoRA adapters (spec.adapters). Each adapter is pulled by its own Job
// (renderPullJob, as the base model) into adapters/<hash> of the claim's
// cache volume, which the servers mount read-only at /adapters; the
// runtime preset's adapter arguments name each one as <name>=<path>.
//
// What adding an adapter costs: the pod template lists the adapters, so a
// change of the set rolls the servers (maxUnavailable 0, so no request
// fails, and a server's drain pause covers the switch). vLLM could load an
// adapter at run time (VLLM_ALLOW_RUNTIME_LORA_UPDATING and POST
// /v1/load_lora_adapter), but a composition function cannot call a server,
// and a loader beside every server would be a second image and an
// unauthenticated endpoint that loads any path into the server; see
// docs/adapters.md.

// maxAdapters is the most adapters a claim may list (the schema's
// maxItems).
const maxAdapters = 16

// Where the servers mount the adapters, and the directory of the cache
// volume that holds them (one subdirectory per adapter weights hash).
const (
	volumeAdapters = "adapters"
	mountAdapters  = "/adapters"
	adaptersDir    = "adapters"
)

// annotationAdapters on the server's pod template records the adapters it
// serves, as name=hash pairs sorted by name, so that a later call keeps
// serving an adapter's current weights while a new revision is pulled.
const annotationAdapters = "inference.inferno.io/adapters"

// labelAdapter on an adapter's pull Job names the adapter.
const labelAdapter = "inference.inferno.io/adapter"

// loraRanks are the ranks vLLM accepts for --max-lora-rank.
var loraRanks = []int32{1, 8, 16, 32, 64, 128, 256, 320, 512}

// adapter is one entry of spec.adapters, checked.
type adapter struct {
	Name string
	// Model is the adapter's weights as a pull Job reads them; its Dir is
	// adapters/<hash>.
	Model  model
	Puller v1beta1.PullerPreset
}

// adapterSettings are spec.adapters and spec.lora, resolved against the
// runtime's adapter preset.
type adapterSettings struct {
	List                  []adapter
	MaxLoras, MaxLoraRank int32
	Preset                *v1beta1.AdapterPreset
}

// resolveAdapters checks spec.adapters and spec.lora: the runtime must
// serve adapters; each name a DNS label, unique and not the claim's own;
// each uri a pulled source the platform allows, with credentials as
// spec.traffic's are given (its own, or spec.model's for the same source).
func resolveAdapters(name string, pm model, rt v1beta1.RuntimePreset, spec v1alpha1.InferenceServiceSpec, in *v1beta1.Input, errs *fieldErrors, warnings *[]string) adapterSettings {
	const field = "spec.adapters"
	if len(spec.Adapters) == 0 {
		if spec.LoRA != nil {
			*warnings = append(*warnings, "spec.lora has no effect without spec.adapters")
		}
		return adapterSettings{}
	}
	if rt.Adapters == nil {
		errs.add(field, "the %s runtime serves no LoRA adapters in the platform's Input; remove spec.adapters, or use a framework that serves them (vllm), or ask your platform team to set input.runtimes.%s.adapters", pm.Framework, pm.Framework)
		return adapterSettings{}
	}
	if spec.Traffic != nil {
		errs.add(field, "cannot be combined with spec.traffic yet: an adapter belongs to one base model, and a split serves several; finish the canary (promote or drop it) before adding adapters")
		return adapterSettings{}
	}
	if len(spec.Adapters) > maxAdapters {
		errs.add(field, "lists %d adapters; serve at most %d", len(spec.Adapters), maxAdapters)
	}
	out := adapterSettings{Preset: rt.Adapters, MaxLoras: v1beta1.DefaultMaxLoras, MaxLoraRank: v1beta1.DefaultMaxLoraRank}
	if rt.Adapters.MaxLoras != nil {
		out.MaxLoras = *rt.Adapters.MaxLoras
	}
	if rt.Adapters.MaxLoraRank != nil {
		out.MaxLoraRank = *rt.Adapters.MaxLoraRank
	}
	claimLoras := spec.LoRA != nil && spec.LoRA.MaxLoras != nil
	if claimLoras {
		out.MaxLoras = *spec.LoRA.MaxLoras
	}
	if out.MaxLoras < 1 || out.MaxLoras > 64 {
		const msg = "%d is out of range; use 1 to 64 adapters per batch"
		if claimLoras {
			errs.add("spec.lora.maxLoras", msg, out.MaxLoras)
		} else {
			errs.add("input.runtimes."+string(pm.Framework)+".adapters.maxLoras", msg, out.MaxLoras)
		}
	}
	claimRank := spec.LoRA != nil && spec.LoRA.MaxLoraRank != nil
	if claimRank {
		out.MaxLoraRank = *spec.LoRA.MaxLoraRank
	}
	if !contains(loraRanks, out.MaxLoraRank) {
		const msg = "%d is not a rank the runtime accepts; use one of 1, 8, 16, 32, 64, 128, 256, 320 or 512, at least the highest rank of the adapters"
		if claimRank {
			errs.add("spec.lora.maxLoraRank", msg, out.MaxLoraRank)
		} else {
			errs.add("input.runtimes."+string(pm.Framework)+".adapters.maxLoraRank", msg, out.MaxLoraRank)
		}
	}

	names := map[string]int{}
	hashes := map[string]int{}
	for i, a := range spec.Adapters {
		f := fmt.Sprintf("%s[%d]", field, i)
		for _, msg := range validation.IsDNS1123Label(a.Name) {
			errs.add(f+".name", "%q is not an adapter name: %s", a.Name, msg)
		}
		if a.Name == name {
			errs.add(f+".name", "%q is the InferenceService's own name, which the base model answers to; give the adapter another name", a.Name)
		}
		if j, dup := names[a.Name]; dup {
			errs.add(f+".name", "%q is listed twice (also at %s[%d]); give each adapter one entry", a.Name, field, j)
			continue
		}
		names[a.Name] = i
		m := model{URI: a.URI, Revision: a.Revision, Framework: pm.Framework, Secret: a.CredentialsSecretRef}
		parseURI(&m, f+".uri", errs)
		if m.Scheme == schemePVC || m.Scheme == schemeOCI {
			errs.add(f+".uri", "%s:// adapters are not supported: adapters are pulled into the claim's cache volume; pull it from hf://, s3://, gs:// or http(s)://", m.Scheme)
			continue
		}
		checkRevision(a.Revision, f+".revision", errs)
		checkSecretRef(a.CredentialsSecretRef, f+".credentialsSecretRef", errs)
		if msg, bad := sourceRefused(m, in); bad {
			errs.add(f+".uri", "%s", msg)
		}
		switch {
		case m.Secret != nil:
			if msg, bad := inClearText(m, in); bad {
				errs.add(f+".credentialsSecretRef", "%s", msg)
			}
		case pm.Secret != nil && m.Scheme != "" && pm.pulled():
			// Credentials go only to the source they were given for.
			if sameSource(pm, m) {
				m.Secret = pm.Secret
			} else {
				*warnings = append(*warnings, fmt.Sprintf("%s.credentialsSecretRef: adapter %q pulls from %s, not from %s as spec.model does, so it does not use spec.model.credentialsSecretRef; if its source needs credentials, name them here", f, a.Name, sourceOf(m), sourceOf(pm)))
			}
		}
		m.Hash = shortHash([]string{m.URI, m.Revision})
		m.Dir = adaptersDir + "/" + m.Hash
		if j, dup := hashes[m.Hash]; dup {
			errs.add(f, "pulls the same uri and revision as %s[%d]; list each adapter's weights once", field, j)
		}
		hashes[m.Hash] = i
		ad := adapter{Name: a.Name, Model: m}
		ad.Puller = resolvePuller(m, f+".uri", in, errs)
		out.List = append(out.List, ad)
	}
	return out
}

// servedAdapter is one adapter a server's pod template serves.
type servedAdapter struct {
	Name, Hash string
}

// path is where the server reads the adapter.
func (a servedAdapter) path() string { return mountAdapters + "/" + a.Hash }

// adaptersAnnotation is the pod template's record of the served adapters.
func adaptersAnnotation(list []servedAdapter) string {
	parts := make([]string, len(list))
	for i, a := range list {
		parts[i] = a.Name + "=" + a.Hash
	}
	return strings.Join(parts, ",")
}

// parseAdaptersAnnotation reads adaptersAnnotation back; entries that are
// not name=hash are skipped.
func parseAdaptersAnnotation(v string) []servedAdapter {
	var out []servedAdapter
	for _, p := range strings.Split(v, ",") {
		name, hash, ok := strings.Cut(p, "=")
		if ok && name != "" && hash != "" {
			out = append(out, servedAdapter{Name: name, Hash: hash})
		}
	}
	return out
}

// adapterPlan is one adapter's part of the plan: its pull Job and what is
// observed of it.
type adapterPlan struct {
	adapter
	job      pullJob
	observed *batchv1.Job
	pull     jobState
	detail   string
	failure  pullFailure
}

// planAdapters renders each adapter's pull Job and reads its observed one.
func planAdapters(s *resolvedSpec, o observed) ([]adapterPlan, error) {
	out := make([]adapterPlan, 0, len(s.Adapters.List))
	for _, a := range s.Adapters.List {
		v := &modelVersion{Model: a.Model, Puller: a.Puller}
		job := renderPullJob(s, v)
		job.Job.Labels[labelAdapter] = a.Name
		observedJob, err := o.job(job.Resource)
		if err != nil {
			return nil, err
		}
		ap := adapterPlan{adapter: a, job: job, observed: observedJob}
		ap.pull, ap.detail = pullState(observedJob)
		ap.failure = pullFailureOf(observedJob)
		out = append(out, ap)
	}
	return out, nil
}

// adaptersPulled says every adapter's pull is complete: the servers'
// first creation waits for it, as for the base model's weights.
func adaptersPulled(aps []adapterPlan) bool {
	for _, a := range aps {
		if a.pull != jobComplete {
			return false
		}
	}
	return true
}

// servedAdapters decides which adapters the servers serve, sorted by name
// (so reordering spec.adapters changes nothing), given the adapters the
// observed pod template serves (nil without servers):
//  1. an adapter whose pull is complete, on its current weights;
//  2. else one the observed servers already serve under that name, on the
//     weights they serve (a new revision is being pulled);
//  3. else none yet: it is added once pulled (a rolling update).
//
// An adapter spec.adapters no longer lists is dropped.
func servedAdapters(aps []adapterPlan, observedServed []servedAdapter) []servedAdapter {
	old := map[string]string{}
	for _, a := range observedServed {
		old[a.Name] = a.Hash
	}
	var out []servedAdapter
	for _, a := range aps {
		switch {
		case a.pull == jobComplete:
			out = append(out, servedAdapter{Name: a.Name, Hash: a.Model.Hash})
		case old[a.Name] != "":
			out = append(out, servedAdapter{Name: a.Name, Hash: old[a.Name]})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// adapterArgs are the server's arguments for its adapters: the preset's
// Args, then the modules flag and one <name>=<path> per adapter.
func adapterArgs(p *v1beta1.AdapterPreset, list []servedAdapter) []string {
	if p == nil || len(list) == 0 {
		return nil
	}
	args := append([]string(nil), p.Args...)
	each := p.ModulesFlagEach != nil && *p.ModulesFlagEach
	if p.ModulesFlag != "" && !each {
		args = append(args, p.ModulesFlag)
	}
	for _, a := range list {
		if p.ModulesFlag != "" && each {
			args = append(args, p.ModulesFlag)
		}
		args = append(args, a.Name+"="+a.path())
	}
	return args
}

// withAdapters adds a server pod's adapters: their arguments, the
// $(MAX_LORAS) and $(MAX_LORA_RANK) variables, the cache volume's adapters
// directory mounted read-only, and the annotation that records them.
func withAdapters(s *resolvedSpec, pod *corev1.PodTemplateSpec, list []servedAdapter) {
	if len(list) == 0 {
		return
	}
	c := &pod.Spec.Containers[0]
	c.Args = append(append([]string(nil), c.Args...), adapterArgs(s.Adapters.Preset, list)...)
	c.Env = mergeEnv(c.Env, []corev1.EnvVar{
		{Name: v1beta1.EnvMaxLoras, Value: strconv.Itoa(int(s.Adapters.MaxLoras))},
		{Name: v1beta1.EnvMaxLoraRank, Value: strconv.Itoa(int(s.Adapters.MaxLoraRank))},
	})
	c.VolumeMounts = append(c.VolumeMounts, corev1.VolumeMount{Name: volumeAdapters, MountPath: mountAdapters, SubPath: adaptersDir, ReadOnly: true})
	pod.Spec.Volumes = append(pod.Spec.Volumes, corev1.Volume{Name: volumeAdapters, VolumeSource: corev1.VolumeSource{
		PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: pvcName(s), ReadOnly: true},
	}})
	pod.Annotations[annotationAdapters] = adaptersAnnotation(list)
}

// adapterPhase judges one adapter: its pull, then whether the servers on
// the observed Deployment's current template serve it (the template lists
// it on these weights and one of its servers is ready).
func (a adapterPlan) phase(s *resolvedSpec, d *observedDeployment) (v1alpha1.AdapterPhase, string) {
	job := a.job.Job.Name
	switch a.pull {
	case jobAbsent:
		return v1alpha1.AdapterPending, fmt.Sprintf("creating pull Job %s for %s", job, a.Model.URI)
	case jobRunning:
		return v1alpha1.AdapterPulling, fmt.Sprintf("pull Job %s is downloading %s into volume %s", job, a.Model.URI, pvcName(s))
	case jobFailed:
		why := a.detail
		switch a.failure {
		case pullStalled:
			why = "its download made no progress for " + strconv.Itoa(int(s.PullStall)) + "s: " + why
		case pullTimedOut:
			why = "it ran past input.pullDeadlineSeconds: " + why
		}
		return v1alpha1.AdapterFailed, fmt.Sprintf("pull Job %s failed (%s); read its logs with: kubectl logs -n %s job/%s; fix the uri or revision, or delete the Job to retry", job, why, s.Namespace, job)
	}
	if d != nil && d.readyOnTemplate() > 0 {
		for _, sa := range parseAdaptersAnnotation(d.templateMeta("annotations", annotationAdapters)) {
			if sa.Name == a.Name && sa.Hash == a.Model.Hash {
				return v1alpha1.AdapterServing, fmt.Sprintf("served as model %q by %d ready servers", a.Name, d.readyOnTemplate())
			}
		}
	}
	if d == nil {
		return v1alpha1.AdapterPulled, "pulled; the servers start once every adapter and the base model are pulled"
	}
	return v1alpha1.AdapterPulled, fmt.Sprintf("pulled; Deployment %s rolls out to serve it (one server at a time, none stopped before its replacement is ready)", d.Name)
}

// adapterReport is status.adapters and the AdaptersReady condition; nil
// condition without adapters.
func (p *plan) adapterReport() ([]v1alpha1.AdapterStatus, *condition) {
	if len(p.adapters) == 0 {
		return nil, nil
	}
	d := p.versions[0].deployment
	var out []v1alpha1.AdapterStatus
	var failed, pulling, rolling []string
	for _, a := range p.adapters {
		phase, msg := a.phase(p.spec, d)
		out = append(out, v1alpha1.AdapterStatus{Name: a.Name, URI: a.Model.URI, Phase: phase, Message: msg})
		switch phase {
		case v1alpha1.AdapterFailed:
			failed = append(failed, fmt.Sprintf("adapter %s: %s", a.Name, msg))
		case v1alpha1.AdapterPending, v1alpha1.AdapterPulling:
			pulling = append(pulling, a.Name)
		case v1alpha1.AdapterPulled:
			rolling = append(rolling, a.Name)
		}
	}
	var c condition
	switch {
	case len(failed) > 0:
		c = reasonAdapterPullFailed.condition(strings.Join(failed, "; "))
	case len(pulling) > 0:
		c = reasonAdaptersPulling.condition(fmt.Sprintf("pulling adapters %s; status.adapters has each one's progress", strings.Join(pulling, ", ")))
	case len(rolling) > 0:
		c = reasonAdaptersRollingOut.condition(fmt.Sprintf("adapters %s are pulled and not yet served by every server; status.adapters says which", strings.Join(rolling, ", ")))
	default:
		c = reasonAdaptersServed.condition(fmt.Sprintf("every server serves adapters %s", strings.Join(adapterNames(p.adapters), ", ")))
	}
	return out, &c
}

func adapterNames(aps []adapterPlan) []string {
	out := make([]string, len(aps))
	for i, a := range aps {
		out[i] = a.Name
	}
	return out
}
