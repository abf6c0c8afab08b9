package resolve

import (
	"fmt"
	"slices"

	"github.com/inferno-ai/function-inferno/apis/inference/v1alpha1"
	"github.com/inferno-ai/function-inferno/input/v1beta1"
	"k8s.io/apimachinery/pkg/util/validation"
)

// LoRA adapters (spec.adapters). Each adapter is pulled by its own Job
// (render.PullJob, as the base model) into adapters/<hash> of the claim's
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
	VolumeAdapters = "adapters"
	MountAdapters  = "/adapters"
	AdaptersDir    = "adapters"
)

// loraRanks are the ranks vLLM accepts for --max-lora-rank.
var loraRanks = []int32{1, 8, 16, 32, 64, 128, 256, 320, 512}

// Adapter is one entry of spec.adapters, checked.
type Adapter struct {
	Name string
	// Model is the adapter's weights as a pull Job reads them; its Dir is
	// adapters/<hash>.
	Model  Model
	Puller v1beta1.PullerPreset
}

// adapterSettings are spec.adapters and spec.lora, resolved against the
// runtime's adapter preset.
type adapterSettings struct {
	List                  []Adapter
	MaxLoras, MaxLoraRank int32
	Preset                *v1beta1.AdapterPreset
}

// resolveAdapters checks spec.adapters and spec.lora: the runtime must
// serve adapters; each name a DNS label, unique and not the claim's own;
// each uri a pulled source the platform allows, with credentials as
// spec.traffic's are given (its own, or spec.model's for the same source).
func resolveAdapters(name string, pm Model, rt v1beta1.RuntimePreset, spec v1alpha1.InferenceServiceSpec, in *v1beta1.Input, errs *FieldErrors, warnings *[]string) adapterSettings {
	const field = "spec.adapters"
	if len(spec.Adapters) == 0 {
		if spec.LoRA != nil {
			*warnings = append(*warnings, "spec.lora has no effect without spec.adapters")
		}
		return adapterSettings{}
	}
	if rt.Adapters == nil {
		errs.Add(field, "the %s runtime serves no LoRA adapters in the platform's Input; remove spec.adapters, or use a framework that serves them (vllm, llamacpp), or ask your platform team to set input.runtimes.%s.adapters", pm.Framework, pm.Framework)
		return adapterSettings{}
	}
	if spec.Traffic != nil {
		errs.Add(field, "cannot be combined with spec.traffic yet: an adapter belongs to one base model, and a split serves several; finish the canary (promote or drop it) before adding adapters")
		return adapterSettings{}
	}
	if len(spec.Adapters) > maxAdapters {
		errs.Add(field, "lists %d adapters; serve at most %d", len(spec.Adapters), maxAdapters)
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
			errs.Add("spec.lora.maxLoras", msg, out.MaxLoras)
		} else {
			errs.Add("input.runtimes."+string(pm.Framework)+".adapters.maxLoras", msg, out.MaxLoras)
		}
	}
	claimRank := spec.LoRA != nil && spec.LoRA.MaxLoraRank != nil
	if claimRank {
		out.MaxLoraRank = *spec.LoRA.MaxLoraRank
	}
	if !slices.Contains(loraRanks, out.MaxLoraRank) {
		const msg = "%d is not a rank the runtime accepts; use one of 1, 8, 16, 32, 64, 128, 256, 320 or 512, at least the highest rank of the adapters"
		if claimRank {
			errs.Add("spec.lora.maxLoraRank", msg, out.MaxLoraRank)
		} else {
			errs.Add("input.runtimes."+string(pm.Framework)+".adapters.maxLoraRank", msg, out.MaxLoraRank)
		}
	}

	names := map[string]int{}
	hashes := map[string]int{}
	for i, a := range spec.Adapters {
		f := fmt.Sprintf("%s[%d]", field, i)
		for _, msg := range validation.IsDNS1123Label(a.Name) {
			errs.Add(f+".name", "%q is not an adapter name: %s", a.Name, msg)
		}
		if a.Name == name {
			errs.Add(f+".name", "%q is the InferenceService's own name, which the base model answers to; give the adapter another name", a.Name)
		}
		if j, dup := names[a.Name]; dup {
			errs.Add(f+".name", "%q is listed twice (also at %s[%d]); give each adapter one entry", a.Name, field, j)
			continue
		}
		names[a.Name] = i
		m := Model{URI: a.URI, Revision: a.Revision, Framework: pm.Framework, Secret: a.CredentialsSecretRef, SecretField: f + ".credentialsSecretRef"}
		ParseURI(&m, f+".uri", errs)
		if m.Scheme == SchemePVC || m.Scheme == SchemeOCI {
			errs.Add(f+".uri", "%s:// adapters are not supported: adapters are pulled into the claim's cache volume; pull it from hf://, s3://, gs:// or http(s)://", m.Scheme)
			continue
		}
		checkRevision(a.Revision, f+".revision", errs)
		checkSecretRef(a.CredentialsSecretRef, f+".credentialsSecretRef", errs)
		if msg, bad := sourceRefused(m, in); bad {
			errs.Add(f+".uri", "%s", msg)
		}
		switch {
		case m.Secret != nil:
			if msg, bad := inClearText(m, in); bad {
				errs.Add(f+".credentialsSecretRef", "%s", msg)
			}
		case pm.Secret != nil && m.Scheme != "" && pm.pulled():
			// Credentials go only to the source they were given for.
			if sameSource(pm, m) {
				m.Secret, m.SecretField = pm.Secret, pm.SecretField
			} else {
				*warnings = append(*warnings, fmt.Sprintf("%s.credentialsSecretRef: adapter %q pulls from %s, not from %s as spec.model does, so it does not use spec.model.credentialsSecretRef; if its source needs credentials, name them here", f, a.Name, sourceOf(m), sourceOf(pm)))
			}
		}
		m.Hash = ShortHash([]string{m.URI, m.Revision})
		m.Dir = AdaptersDir + "/" + m.Hash
		if j, dup := hashes[m.Hash]; dup {
			errs.Add(f, "pulls the same uri and revision as %s[%d]; list each adapter's weights once", field, j)
		}
		hashes[m.Hash] = i
		ad := Adapter{Name: a.Name, Model: m}
		ad.Puller = resolvePuller(m, f+".uri", in, errs)
		if a.CredentialsSecretRef != nil {
			checkCredentialRef(m, ad.Puller, f+".credentialsSecretRef", in, errs)
		}
		out.List = append(out.List, ad)
	}
	return out
}
