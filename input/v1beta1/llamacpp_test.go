package v1beta1

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestLlamaCPPPicksTheModelGGUF runs the llamacpp preset's command in every
// shell at hand over weights directories as sources ship them, with
// printf standing in for llama-server: the model is the GGUF it loads, not
// a multimodal projector or a LoRA adapter beside it, and a directory
// without one fails with a message instead of starting the server with
// `-m ""`.
func TestLlamaCPPPicksTheModelGGUF(t *testing.T) {
	rt := BuiltinRuntimes()["llamacpp"]
	if len(rt.Command) != 4 || rt.Command[1] != "-c" || len(rt.Args) != 0 {
		t.Fatalf("the preset's command is %q and args %q, want /bin/sh -c SCRIPT llama-server and no args (so that the container's args reach llama-server)", rt.Command, rt.Args)
	}
	cmd := rt.Command[2]
	const server = "exec /app/llama-server "
	if !strings.Contains(cmd, server) {
		t.Fatalf("the preset no longer execs %q: %s", server, cmd)
	}
	cmd = strings.Replace(cmd, server, `exec printf '%s\n' `, 1)
	cases := map[string]struct {
		files []string
		want  string // the -m argument, relative to MODEL_DIR; "" means it must fail
	}{
		"OneFile":       {files: []string{"qwen2.5-0.5b-instruct-q4_k_m.gguf"}, want: "qwen2.5-0.5b-instruct-q4_k_m.gguf"},
		"WithProjector": {files: []string{"model-q4_k_m.gguf", "mmproj-model-f16.gguf"}, want: "model-q4_k_m.gguf"},
		"WithLoRA":      {files: []string{"base.gguf", "adapters/a-LoRA-f16.gguf"}, want: "base.gguf"},
		"SplitModel":    {files: []string{"m-00002-of-00002.gguf", "m-00001-of-00002.gguf"}, want: "m-00001-of-00002.gguf"},
		"InASubdir":     {files: []string{"d48ad0e1/model.gguf", "d48ad0e1/.inferno-complete"}, want: "d48ad0e1/model.gguf"},
		"NoModel":       {files: []string{"README.md", "mmproj-f16.gguf"}},
		"NothingAtAll":  {},
	}
	for _, sh := range availableShells(t) {
		for name, c := range cases {
			t.Run(sh[0]+"/"+name, func(t *testing.T) {
				dir := t.TempDir()
				for _, f := range c.files {
					p := filepath.Join(dir, f)
					if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
						t.Fatal(err)
					}
					if err := os.WriteFile(p, nil, 0o644); err != nil {
						t.Fatal(err)
					}
				}
				run := exec.Command(sh[0], append(sh[1:], "-c", cmd, rt.Command[3])...)
				run.Env = append(os.Environ(), "MODEL_DIR="+dir, "PORT=8080")
				out, err := run.CombinedOutput()
				if c.want == "" {
					if err == nil || !strings.Contains(string(out), "no model GGUF") {
						t.Errorf("want a failure naming the missing model; got %v, %q", err, out)
					}
					return
				}
				if err != nil {
					t.Fatalf("%v: %s", err, out)
				}
				args := strings.Split(strings.TrimSpace(string(out)), "\n")
				want := []string{"--host", "0.0.0.0", "--port", "8080", "--metrics", "-m", filepath.Join(dir, c.want), "--offline"}
				if diff := cmp.Diff(want, args); diff != "" {
					t.Errorf("llama-server's arguments (-want +got):\n%s", diff)
				}
			})
		}
	}
}

// TestLlamaCPPLoadsAdaptersAtScaleZero runs the preset's command with the
// adapter arguments the function appends (--lora DIR per adapter, see
// render.AdapterArgs), printf standing in for llama-server: each becomes
// --lora-scaled FILE:0, the directory's GGUF, in order (llama-server
// numbers adapters by it); other arguments pass through; a directory
// without a GGUF, or a file name --lora-scaled cannot take, fails with a
// message.
func TestLlamaCPPLoadsAdaptersAtScaleZero(t *testing.T) {
	rt := BuiltinRuntimes()["llamacpp"]
	cmd := strings.Replace(rt.Command[2], "exec /app/llama-server ", `exec printf '%s\n' `, 1)
	cases := map[string]struct {
		files []string // under the adapters directory
		args  []string // after $0; "@" stands for the adapters directory
		want  []string // before the preset's own flags; nil means it must fail with fail
		fail  string
	}{
		"None":   {want: []string{}},
		"Two":    {files: []string{"22/b.gguf", "11/a.gguf", "11/.inferno-complete"}, args: []string{"--lora", "@/22", "--lora", "@/11"}, want: []string{"--lora-scaled", "@/22/b.gguf:0", "--lora-scaled", "@/11/a.gguf:0"}},
		"Others": {files: []string{"11/x.gguf"}, args: []string{"--ctx-size", "512", "--lora", "@/11"}, want: []string{"--ctx-size", "512", "--lora-scaled", "@/11/x.gguf:0"}},
		"NoGGUF": {files: []string{"11/README.md"}, args: []string{"--lora", "@/11"}, fail: "no adapter GGUF"},
		"Colon":  {files: []string{"11/a:b.gguf"}, args: []string{"--lora", "@/11"}, fail: "comma or a colon"},
	}
	for _, sh := range availableShells(t) {
		for name, c := range cases {
			t.Run(sh[0]+"/"+name, func(t *testing.T) {
				dir, ads := t.TempDir(), t.TempDir()
				if err := os.WriteFile(filepath.Join(dir, "m.gguf"), nil, 0o644); err != nil {
					t.Fatal(err)
				}
				for _, f := range c.files {
					p := filepath.Join(ads, f)
					if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
						t.Fatal(err)
					}
					if err := os.WriteFile(p, nil, 0o644); err != nil {
						t.Fatal(err)
					}
				}
				at := func(v []string) []string {
					out := make([]string, len(v))
					for i, a := range v {
						out[i] = strings.Replace(a, "@", ads, 1)
					}
					return out
				}
				run := exec.Command(sh[0], append(append(sh[1:], "-c", cmd, rt.Command[3]), at(c.args)...)...)
				run.Env = append(os.Environ(), "MODEL_DIR="+dir, "PORT=8080")
				out, err := run.CombinedOutput()
				if c.fail != "" {
					if err == nil || !strings.Contains(string(out), c.fail) {
						t.Errorf("want a failure naming %q; got %v, %q", c.fail, err, out)
					}
					return
				}
				if err != nil {
					t.Fatalf("%v: %s", err, out)
				}
				args := strings.Split(strings.TrimSpace(string(out)), "\n")
				// The preset's own flags come last, where a claim's
				// spelling of them cannot win.
				want := append(at(c.want), "--host", "0.0.0.0", "--port", "8080", "--metrics", "-m", filepath.Join(dir, "m.gguf"), "--offline")
				if diff := cmp.Diff(want, args); diff != "" {
					t.Errorf("llama-server's arguments (-want +got):\n%s", diff)
				}
			})
		}
	}
}
