package v1beta1

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestRuntimeAdapters: the Input's adapter preset lays over the built-in
// one field by field; runtimes without one serve no adapters.
func TestRuntimeAdapters(t *testing.T) {
	in := &Input{Runtimes: map[string]RuntimePreset{
		"vllm": {Adapters: &AdapterPreset{MaxLoras: ptr(int32(8))}},
		"tgi":  {Adapters: &AdapterPreset{ModulesFlag: "--lora-adapters"}},
	}}
	vllm, _ := in.Runtime("vllm")
	want := &AdapterPreset{
		Args:        []string{"--enable-lora", "--max-loras=$(MAX_LORAS)", "--max-lora-rank=$(MAX_LORA_RANK)"},
		ModulesFlag: "--lora-modules", MaxLoras: ptr(int32(8)), MaxLoraRank: ptr(DefaultMaxLoraRank),
	}
	if diff := cmp.Diff(want, vllm.Adapters); diff != "" {
		t.Errorf("vllm adapters (-want +got):\n%s", diff)
	}
	tgi, _ := in.Runtime("tgi")
	if diff := cmp.Diff(&AdapterPreset{ModulesFlag: "--lora-adapters"}, tgi.Adapters); diff != "" {
		t.Errorf("a platform's own adapter preset for tgi (-want +got):\n%s", diff)
	}
	llama, _ := (&Input{}).Runtime("llamacpp")
	if a := llama.Adapters; a == nil || a.ModulesFlag != "--lora" || a.PathOnly == nil || !*a.PathOnly {
		t.Errorf("built-in llamacpp adapters: %+v, want --lora by path alone", a)
	}
	for _, fw := range []string{"triton", "ollama"} {
		if p, _ := (&Input{}).Runtime(fw); p.Adapters != nil {
			t.Errorf("built-in %s serves adapters: %+v", fw, p.Adapters)
		}
	}
	if p, _ := (&Input{}).Runtime("tgi"); p.Adapters != nil {
		t.Errorf("built-in tgi serves adapters: %+v", p.Adapters)
	}
}
