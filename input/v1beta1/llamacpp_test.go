package v1beta1

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestLlamaCPPPicksTheModelGGUF runs the llamacpp preset's command in every
// shell at hand over weights directories as sources ship them, with
// printf standing in for llama-server: the model is the GGUF it loads, not
// a multimodal projector or a LoRA adapter beside it, and a directory
// without one fails with a message instead of starting the server with
// `-m ""`.
func TestLlamaCPPPicksTheModelGGUF(t *testing.T) {
	rt := BuiltinRuntimes()["llamacpp"]
	cmd := rt.Args[0]
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
				run := exec.Command(sh[0], append(sh[1:], "-c", cmd)...)
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
				if got := args[len(args)-1]; got != filepath.Join(dir, c.want) {
					t.Errorf("-m %s, want %s", got, filepath.Join(dir, c.want))
				}
			})
		}
	}
}
