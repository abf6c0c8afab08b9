package v1beta1

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// fakeOllama stands in for the ollama CLI and server in the start
// script's tests. It logs each call to $CALLS. The setup server (serve on
// any address but the pod's port) runs until it is stopped and makes
// `list` succeed meanwhile; create writes the Modelfile where the model's
// manifest goes; serve on 0.0.0.0:$PORT, the last call, logs the
// environment the script gave it and exits.
const fakeOllama = `#!/bin/sh
set -eu
case "$1" in
serve)
  if [ "$OLLAMA_HOST" = "0.0.0.0:$PORT" ]; then
    shift
    printf 'serve %s OLLAMA_MODELS=%s OLLAMA_NOPRUNE=%s\n' "$*" "$OLLAMA_MODELS" "$OLLAMA_NOPRUNE" >> "$CALLS"
    exit 0
  fi
  printf 'setup %s\n' "$OLLAMA_HOST" >> "$CALLS"
  trap 'rm -f "$STATE/up"; exit 0' TERM
  : > "$STATE/up"
  while :; do sleep 0.05; done ;;
list) [ -f "$STATE/up" ] ;;
create)
  [ -f "$STATE/up" ] || exit 1
  printf 'create %s %s\n' "$2" "$OLLAMA_HOST" >> "$CALLS"
  mkdir -p "$OLLAMA_MODELS/manifests/registry.ollama.ai/library/$2"
  cp "$4" "$OLLAMA_MODELS/manifests/registry.ollama.ai/library/$2/latest" ;;
*) exit 2 ;;
esac
`

// TestOllamaStartScript runs the ollama preset's start script with every
// shell at hand against a stand-in ollama: a directory of GGUFs becomes a
// private store whose model blob links to the first model GGUF, named
// MODEL_NAME with NUM_THREAD threads, read-only before the server starts;
// a store the weights are is served in place; a restarted container's
// store is replaced; weights that are neither are refused.
func TestOllamaStartScript(t *testing.T) {
	script := ServeScripts()
	if len(script) != 1 || script[0].File != "scripts/serve/ollama.sh" {
		t.Fatalf("start scripts %v, want scripts/serve/ollama.sh", script)
	}
	if c := BuiltinRuntimes()["ollama"].Command; len(c) != 4 || c[2] != script[0].Text {
		t.Fatalf("the ollama preset's command is not its start script: %q", c)
	}
	bin := t.TempDir()
	if err := os.WriteFile(filepath.Join(bin, "ollama"), []byte(fakeOllama), 0o755); err != nil {
		t.Fatal(err)
	}
	write := func(t *testing.T, dir string, files map[string]string) {
		t.Helper()
		for f, body := range files {
			p := filepath.Join(dir, f)
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	digest := func(s string) string { d := sha256.Sum256([]byte(s)); return hex.EncodeToString(d[:]) }

	cases := map[string]struct {
		weights   map[string]string
		threads   string
		restarted bool
		wantCode  int
		wantCalls []string // $MODEL_DIR and $HOME written as such
		wantBlob  string   // the blob's link target, under $MODEL_DIR
		wantModel string   // the Modelfile create was given
		wantOut   string
	}{
		"a GGUF directory: the first model GGUF, linked, named, one thread per CPU": {
			weights: map[string]string{"b/model-00001-of-00002.gguf": "weights", "b/model-00002-of-00002.gguf": "more", "a/mmproj-f16.gguf": "projector", "a/tiny-lora.gguf": "adapter", "README.md": "x"},
			threads: "2",
			wantCalls: []string{
				"setup 127.0.0.1:11435",
				"create tiny 127.0.0.1:11435",
				"serve --verbose OLLAMA_MODELS=$HOME/ollama/models OLLAMA_NOPRUNE=1",
			},
			wantBlob:  "$MODEL_DIR/b/model-00001-of-00002.gguf",
			wantModel: "FROM $MODEL_DIR/b/model-00001-of-00002.gguf\nPARAMETER num_thread 2\n",
		},
		"restarted: the last store is replaced, no thread count without a CPU request": {
			weights:   map[string]string{"model.gguf": "weights"},
			restarted: true,
			wantCalls: []string{
				"setup 127.0.0.1:11435",
				"create tiny 127.0.0.1:11435",
				"serve --verbose OLLAMA_MODELS=$HOME/ollama/models OLLAMA_NOPRUNE=1",
			},
			wantBlob:  "$MODEL_DIR/model.gguf",
			wantModel: "FROM $MODEL_DIR/model.gguf\n",
		},
		"an Ollama store: served in place, nothing created": {
			weights:   map[string]string{"blobs/sha256-00": "weights", "manifests/registry.ollama.ai/library/m/latest": "{}"},
			wantCalls: []string{"serve --verbose OLLAMA_MODELS=$MODEL_DIR OLLAMA_NOPRUNE=1"},
		},
		"neither: refused": {
			weights:  map[string]string{"model.safetensors": "weights", "mmproj.gguf": "projector"},
			wantCode: 1,
			wantOut:  "no Ollama store (blobs/ and manifests/) and no model GGUF under $MODEL_DIR",
		},
	}
	for _, sh := range availableShells(t) {
		for name, tc := range cases {
			t.Run(strings.Join(sh, " ")+"/"+name, func(t *testing.T) {
				t.Parallel()
				dir, home, state := t.TempDir(), t.TempDir(), t.TempDir()
				// t.TempDir cannot remove directories without a write bit
				// as a user other than root: give it back first.
				t.Cleanup(func() {
					_ = filepath.WalkDir(home, func(p string, d os.DirEntry, err error) error {
						if err == nil && d.IsDir() {
							_ = os.Chmod(p, 0o755)
						}
						return nil
					})
				})
				write(t, dir, tc.weights)
				if tc.restarted {
					old := filepath.Join(home, "ollama", "models", "blobs")
					write(t, old, map[string]string{"sha256-old": "old"})
					for _, p := range []string{filepath.Join(old, "sha256-old"), old} {
						if err := os.Chmod(p, 0o555); err != nil {
							t.Fatal(err)
						}
					}
				}
				calls := filepath.Join(state, "calls")
				cmd := exec.Command(sh[0], append(sh[1:], "-c", script[0].Text, "ollama", "--verbose")...)
				cmd.Env = []string{"PATH=" + bin + ":" + os.Getenv("PATH"), "HOME=" + home, "CALLS=" + calls, "STATE=" + state,
					"MODEL_DIR=" + dir, "MODEL_NAME=tiny", "PORT=11434", "NUM_THREAD=" + tc.threads}
				out, err := cmd.CombinedOutput()
				code := 0
				if ee, ok := err.(*exec.ExitError); ok {
					code = ee.ExitCode()
				} else if err != nil {
					t.Fatal(err)
				}
				names := strings.NewReplacer(dir, "$MODEL_DIR", home, "$HOME")
				if code != tc.wantCode || !strings.Contains(names.Replace(string(out)), tc.wantOut) {
					t.Fatalf("exit %d, want %d saying %q:\n%s", code, tc.wantCode, tc.wantOut, out)
				}
				b, _ := os.ReadFile(calls)
				var got []string
				if c := strings.TrimSpace(names.Replace(string(b))); c != "" {
					got = strings.Split(c, "\n")
				}
				if diff := cmp.Diff(tc.wantCalls, got); diff != "" {
					t.Errorf("ollama's calls (-want +got):\n%s", diff)
				}
				if tc.wantBlob == "" {
					return
				}
				store := filepath.Join(home, "ollama", "models")
				entries, _ := os.ReadDir(filepath.Join(store, "blobs"))
				want := "sha256-" + digest(tc.weights[strings.TrimPrefix(tc.wantBlob, "$MODEL_DIR/")])
				if len(entries) != 1 || entries[0].Name() != want {
					t.Fatalf("the store's blobs are %v, want just %s", entries, want)
				}
				link, err := os.Readlink(filepath.Join(store, "blobs", want))
				if err != nil || names.Replace(link) != tc.wantBlob {
					t.Errorf("blob %s links to %q (%v), want %s", want, link, err, tc.wantBlob)
				}
				mf, err := os.ReadFile(filepath.Join(store, "manifests", "registry.ollama.ai", "library", "tiny", "latest"))
				if err != nil || names.Replace(string(mf)) != tc.wantModel {
					t.Errorf("create was given %q (%v), want %q", mf, err, tc.wantModel)
				}
				// Read-only for the server, whose user owns it: no write bit
				// on anything but the links.
				_ = filepath.WalkDir(filepath.Join(home, "ollama"), func(p string, d os.DirEntry, err error) error {
					if err != nil || d.Type()&os.ModeSymlink != 0 {
						return err
					}
					if fi, err := d.Info(); err == nil && fi.Mode().Perm()&0o222 != 0 {
						t.Errorf("%s is %v, want it read-only", names.Replace(p), fi.Mode())
					}
					return nil
				})
			})
		}
	}
}
