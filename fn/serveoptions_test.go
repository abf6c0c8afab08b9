package fn

import (
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/inferno-ai/function-inferno/input/v1beta1"
	"github.com/inferno-ai/function-inferno/internal/render"
	appsv1 "k8s.io/api/apps/v1"
)

// TestServeOptions: each typed server option reaches every runtime that has
// it as that runtime's own flag or variable, after the preset's arguments
// (or the claim's), in the order of ServeOptions' fields; a policy that
// denies every free argument keeps them, since the function builds them
// from typed values; an Input's option table replaces an entry of the
// built-in one.
func TestServeOptions(t *testing.T) {
	denyAll := map[string]any{"policy": map[string]any{"deniedServeArgs": []any{"*"}, "allowedServeEnv": []any{}}}
	preset := func(fw string) []string { return v1beta1.BuiltinRuntimes()[fw].Args }
	cases := map[string]struct {
		framework string
		options   map[string]any
		args      []any
		input     map[string]any
		// wantArgs follow the preset's arguments (or args, when set).
		wantArgs []string
		wantEnv  map[string]string
	}{
		"VLLMEvery": {
			framework: "vllm",
			options:   map[string]any{"contextLength": 32768, "dtype": "bfloat16", "quantization": "awq", "maxParallel": 64, "gpuMemoryPercent": 90},
			wantArgs:  []string{"--max-model-len", "32768", "--dtype", "bfloat16", "--quantization", "awq", "--max-num-seqs", "64", "--gpu-memory-utilization", "0.90"},
		},
		"SGLangEvery": {
			framework: "sglang",
			options:   map[string]any{"contextLength": 8192, "dtype": "bfloat16", "quantization": "marlin", "maxParallel": 32, "gpuMemoryPercent": 85, "chatTemplate": "chatml"},
			input:     denyAll,
			wantArgs:  []string{"--context-length", "8192", "--dtype", "bfloat16", "--quantization", "marlin", "--max-running-requests", "32", "--mem-fraction-static", "0.85", "--chat-template", "chatml"},
		},
		"VLLMUnderDenyAll": {
			framework: "vllm",
			options:   map[string]any{"contextLength": 8192, "maxParallel": 16},
			input:     denyAll,
			wantArgs:  []string{"--max-model-len", "8192", "--max-num-seqs", "16"},
		},
		"VLLMFullGPU": {
			framework: "vllm",
			options:   map[string]any{"gpuMemoryPercent": 100},
			wantArgs:  []string{"--gpu-memory-utilization", "1.00"},
		},
		"VLLMAfterClaimArgs": {
			framework: "vllm",
			args:      []any{"--model=$(MODEL_DIR)", "--port=$(PORT)"},
			options:   map[string]any{"dtype": "float16"},
			wantArgs:  []string{"--dtype", "float16"},
		},
		// TGI bounds prompts by a flag of their own, one below the context.
		"TGIContextAndPrompt": {
			framework: "tgi",
			options:   map[string]any{"contextLength": 4096, "quantization": "eetq", "gpuMemoryPercent": 5},
			wantArgs:  []string{"--max-total-tokens", "4096", "--max-input-tokens", "4095", "--quantize", "eetq", "--cuda-memory-fraction", "0.05"},
		},
		// TGI's dtype auto is its default: nothing passed.
		"TGIDTypeAuto": {
			framework: "tgi",
			options:   map[string]any{"dtype": "auto", "maxParallel": 128},
			wantArgs:  []string{"--max-concurrent-requests", "128"},
		},
		"LlamaCPP": {
			framework: "llamacpp",
			options:   map[string]any{"contextLength": 2048, "maxParallel": 4, "chatTemplate": "chatml"},
			input:     denyAll,
			wantArgs:  []string{"--ctx-size", "2048", "--parallel", "4", "--chat-template", "chatml"},
		},
		"OllamaByVariable": {
			framework: "ollama",
			options:   map[string]any{"contextLength": 8192, "maxParallel": 2},
			input:     denyAll,
			wantEnv:   map[string]string{"OLLAMA_CONTEXT_LENGTH": "8192", "OLLAMA_NUM_PARALLEL": "2"},
		},
		"InputReplacesAnEntry": {
			framework: "fake",
			options:   map[string]any{"maxParallel": 3},
			input:     map[string]any{"runtimes": map[string]any{"fake": map[string]any{"options": map[string]any{"maxParallel": map[string]any{"flag": "--slots"}}}}},
			wantArgs:  []string{"--slots", "3"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			xr := testXR()
			setPath(xr, tc.framework, "spec", "model", "framework")
			sv := map[string]any{"options": tc.options}
			if tc.args != nil {
				sv["args"] = tc.args
			}
			setPath(xr, sv, "spec", "serve")
			rsp, _ := settle(t, xr, tc.input, world{}, nil)
			if m := fatalMessage(rsp); m != "" {
				t.Fatalf("refused: %s", m)
			}
			d := desiredObject[appsv1.Deployment](t, rsp, render.ResourceDeployment)
			c := d.Spec.Template.Spec.Containers[0]
			want := preset(tc.framework)
			if tc.args != nil {
				want = nil
				for _, a := range tc.args {
					want = append(want, a.(string))
				}
			}
			want = append(slices.Clip(want), tc.wantArgs...)
			if diff := cmp.Diff(want, c.Args); diff != "" {
				t.Errorf("server args (-want +got):\n%s", diff)
			}
			for k, v := range tc.wantEnv {
				if got := envOf(d, k); got != v {
					t.Errorf("env %s = %q, want %q", k, got, v)
				}
			}
		})
	}
}

// TestServeOptionsRefused: an option the runtime has no translation for, a
// value it does not take, a value out of range, and an option also set by
// another route are each refused at the option's field, with the fix.
func TestServeOptionsRefused(t *testing.T) {
	cases := map[string]struct {
		framework string
		serve     map[string]any
		input     map[string]any
		field     string
		fix       string
	}{
		"NoSuchOptionTriton": {framework: "triton", serve: map[string]any{"options": map[string]any{"contextLength": 4096}},
			field: "spec.serve.options.contextLength", fix: "the triton runtime takes no contextLength option in the platform's Input (input.runtimes.triton.options.contextLength is not set)"},
		"NoChatTemplateOnVLLM": {framework: "vllm", serve: map[string]any{"options": map[string]any{"chatTemplate": "chatml"}},
			field: "spec.serve.options.chatTemplate", fix: "ask your platform team to map it"},
		"NoQuantizationOnLlamaCPP": {framework: "llamacpp", serve: map[string]any{"options": map[string]any{"quantization": "awq"}},
			field: "spec.serve.options.quantization", fix: "input.runtimes.llamacpp.options.quantization is not set"},
		"ChoiceTheRuntimeLacks": {framework: "vllm", serve: map[string]any{"options": map[string]any{"quantization": "exl2"}},
			field: "spec.serve.options.quantization", fix: `"exl2" is not a quantization the vllm runtime takes (input.runtimes.vllm.options.quantization.values: awq, bitsandbytes, compressed-tensors, fp8, gptq)`},
		"TGIFloat32": {framework: "tgi", serve: map[string]any{"options": map[string]any{"dtype": "float32"}},
			field: "spec.serve.options.dtype", fix: "use one of them, or leave it out"},
		"UnknownDType": {framework: "vllm", serve: map[string]any{"options": map[string]any{"dtype": "int3"}},
			field: "spec.serve.options.dtype", fix: "use one the schema lists"},
		"ContextTooLong": {framework: "vllm", serve: map[string]any{"options": map[string]any{"contextLength": 1 << 22}},
			field: "spec.serve.options.contextLength", fix: "use 1 to 2097152 tokens"},
		"ContextNoRoomForPrompt": {framework: "tgi", serve: map[string]any{"options": map[string]any{"contextLength": 1}},
			field: "spec.serve.options.contextLength", fix: "use at least 2"},
		"ParallelZero": {framework: "vllm", serve: map[string]any{"options": map[string]any{"maxParallel": 0}},
			field: "spec.serve.options.maxParallel", fix: "use 1 to 1024 sequences"},
		"GPUPercentOver": {framework: "vllm", serve: map[string]any{"options": map[string]any{"gpuMemoryPercent": 101}},
			field: "spec.serve.options.gpuMemoryPercent", fix: "use 1 to 100 percent"},
		// A path or a template's text is not a name.
		"ChatTemplatePath": {framework: "llamacpp", serve: map[string]any{"options": map[string]any{"chatTemplate": "../../weights/t.jinja"}},
			field: "spec.serve.options.chatTemplate", fix: "name one of the runtime's built-in templates"},
		"AlsoInArgs": {framework: "llamacpp", serve: map[string]any{"args": []any{"-c", "4096"}, "options": map[string]any{"contextLength": 2048}},
			field: "spec.serve.options.contextLength", fix: `is passed also as -c in spec.serve.args[0] ("-c"); set it once`},
		"AlsoInArgsAsValue": {framework: "vllm", serve: map[string]any{"args": []any{"--max-num-seqs=8"}, "options": map[string]any{"maxParallel": 16}},
			field: "spec.serve.options.maxParallel", fix: "spec.serve.args[0]"},
		"AlsoInEnv": {framework: "ollama", serve: map[string]any{"env": []any{map[string]any{"name": "OLLAMA_NUM_PARALLEL", "value": "4"}}, "options": map[string]any{"maxParallel": 2}},
			field: "spec.serve.options.maxParallel", fix: "is set also as OLLAMA_NUM_PARALLEL in spec.serve.env[0]; set it once"},
		"PresetPassesIt": {framework: "fake", serve: map[string]any{"options": map[string]any{"maxParallel": 3}},
			input: map[string]any{"runtimes": map[string]any{"fake": map[string]any{"args": []any{"--slots", "1"}, "options": map[string]any{"maxParallel": map[string]any{"flag": "--slots"}}}}},
			field: "spec.serve.options.maxParallel", fix: "the platform's fake runtime preset passes --slots itself (input.runtimes.fake.args"},
		// The platform's table, taken away: {} has no flag nor variable.
		"EntryTakenAway": {framework: "vllm", serve: map[string]any{"options": map[string]any{"maxParallel": 3}},
			input: map[string]any{"runtimes": map[string]any{"vllm": map[string]any{"options": map[string]any{"maxParallel": map[string]any{}}}}},
			field: "spec.serve.options.maxParallel", fix: "the vllm runtime takes no maxParallel option"},
		"InputBothFlagAndEnv": {framework: "vllm", serve: map[string]any{"options": map[string]any{"maxParallel": 3}},
			input: map[string]any{"runtimes": map[string]any{"vllm": map[string]any{"options": map[string]any{"maxParallel": map[string]any{"flag": "--max-num-seqs", "env": "SEQS"}}}}},
			field: "input.runtimes.vllm.options.maxParallel", fix: "must give the option one of them"},
		"InputReservedEnv": {framework: "ollama", serve: map[string]any{"options": map[string]any{"maxParallel": 3}},
			input: map[string]any{"runtimes": map[string]any{"ollama": map[string]any{"options": map[string]any{"maxParallel": map[string]any{"env": "MODEL_DIR"}}}}},
			field: "input.runtimes.ollama.options.maxParallel.env", fix: "is set by the function"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			xr := testXR()
			setPath(xr, tc.framework, "spec", "model", "framework")
			setPath(xr, tc.serve, "spec", "serve")
			rsp := run(t, newRequest(t, xr, tc.input))
			m := fatalMessage(rsp)
			if m == "" {
				t.Fatalf("not refused; desired %v", desiredNames(rsp))
			}
			if !strings.Contains(m, tc.field+":") {
				t.Errorf("the refusal does not name %s:\n%s", tc.field, m)
			}
			if !strings.Contains(m, tc.fix) {
				t.Errorf("the refusal does not say %q:\n%s", tc.fix, m)
			}
		})
	}
}
