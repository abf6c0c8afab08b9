//go:build e2e

package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/inferno-ai/function-inferno/test/e2e/gguf"
	"github.com/inferno-ai/function-inferno/test/e2e/images"
	"github.com/inferno-ai/function-inferno/test/e2e/kube"
	"github.com/inferno-ai/function-inferno/test/e2e/traffic"
)

// ollamaServerBinary is Ollama's server as `make e2e-tools` builds it.
func ollamaServerBinary() string { return filepath.Join(binDir(), "ollama", "ollama") }

// ollamaServerFiles is Ollama's image: the server at /usr/bin/ollama,
// where Ollama's own image has it, with the C and C++ runtime it links from
// this machine, and busybox for the preset's start script.
func ollamaServerFiles(server, busybox string) ([]images.File, error) {
	real, err := filepath.EvalSymlinks(server)
	if err != nil {
		return nil, err
	}
	prog, err := images.HostProgram(real)
	if err != nil {
		return nil, err
	}
	var files []images.File
	for _, f := range prog {
		if f.Path == real {
			f.Path = "/usr/bin/ollama"
		}
		files = append(files, f)
	}
	// What scripts/serve/ollama.sh runs besides the shell's builtins.
	bb, err := images.Busybox(busybox, "sh", "find", "sort", "head", "sha256sum", "cut", "ln", "mkdir", "chmod", "rm", "cat", "sleep", "ls")
	if err != nil {
		return nil, err
	}
	return append(files, bb...), nil
}

// needOllama fails a scenario that runs Ollama when `make e2e-tools` has
// not built it.
func needOllama(t *testing.T) {
	t.Helper()
	if _, err := os.Stat(ollamaServerBinary()); err != nil {
		t.Fatalf("no ollama (%v): `make e2e-tools` builds it into bin/ollama", err)
	}
}

// --- 36 serve Ollama ---------------------------------------------------------

// serveOllama: a framework: ollama claim on the real node, served by
// Ollama's own `ollama serve` through the preset's start script, from the
// tiny GGUF the origin serves over http (scenario 32's model). The script
// links the GGUF into a store in scratch and names it the claim's name;
// the preset's probes (/api/version) pass; Ollama's own /api/chat and its
// OpenAI /v1/chat/completions through the Service answer with text, the
// same twice at temperature 0, to the model named as the claim. Ollama's
// unauthenticated management API cannot change what it serves: delete,
// create, copy and pull fail and the model still answers. Then an upgrade
// to a second model under 20 requests a second, none failing.
func (s *infernoSuite) serveOllama(t *testing.T) {
	if env.node == nil {
		t.Skip("no real node (-real-node=false)")
	}
	ctx := context.Background()
	sc := env.summary.start(t, "36 serve Ollama (real node)")
	sc.onRealNode(false)
	needOllama(t)
	if err := env.createTeamNamespace(ctx, realNS); err != nil {
		t.Fatal(err)
	}
	ensureRealCompositions(ctx, t)

	uri, size := publishGGUF(t, "ollama-tiny/tiny-llama.gguf", gguf.TinyLlama(1))

	// The claim's name is MODEL_NAME, the name the script gives the model
	// in Ollama's store: what clients send as "model".
	const name = "ollama"
	start := time.Now()
	applyClaim(ctx, t, ollamaClaim(t, name, uri, "1"))
	waitPullComplete(ctx, t, realNS, name)
	pulled := time.Since(start)
	base := waitServiceURL(ctx, t, realNS, name, time.Minute)

	var first string
	if err := kube.Eventually(ctx, 3*time.Minute, 100*time.Millisecond, "/api/chat answered through "+base, func(ctx context.Context) (bool, string, error) {
		text, err := ollamaChat(ctx, base, name)
		first = text
		return err == nil, fmt.Sprint(err), nil
	}); err != nil {
		t.Fatalf("%v; the server's log:\n%s", err, serverLog(ctx, t, realNS, name))
	}
	answered := time.Since(start)
	sc.note("apply → Job Complete %.1fs → first /api/chat answer %.1fs (ollama serve, %d KiB GGUF)", pulled.Seconds(), answered.Seconds(), size/1024)

	again, err := ollamaChat(ctx, base, name)
	if err != nil {
		t.Fatal(err)
	}
	if strings.TrimSpace(first) == "" || again != first {
		t.Errorf("/api/chat at temperature 0 answered %q, then %q: want the same text, not empty", first, again)
	}
	openai := ollamaOpenAIChat(name)
	chat1, err := llamaAsk(ctx, base+"/v1/chat/completions", openai)
	if err != nil {
		t.Fatal(err)
	}
	chat2, err := llamaAsk(ctx, base+"/v1/chat/completions", openai)
	if err != nil {
		t.Fatal(err)
	}
	if strings.TrimSpace(chat1) == "" || chat2 != chat1 {
		t.Errorf("/v1/chat/completions at temperature 0 answered %q, then %q: want the same text, not empty", chat1, chat2)
	}
	sc.note("/api/chat %q, /v1/chat/completions %q, each the same twice at temperature 0, model %q", first, chat1, name)

	tags, err := llamaGet(ctx, base+"/api/tags")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(tags, `"name":"`+name+`:latest"`) {
		t.Errorf("/api/tags does not list %s:latest, the claim's name:\n%s", name, tags)
	}

	// The management API: no authentication, and nothing it can do to
	// what is served. The store is read-only to the server's user, and the
	// pod reaches no registry.
	for _, call := range []struct{ method, path, body string }{
		{http.MethodDelete, "/api/delete", `{"model":"` + name + `"}`},
		{http.MethodPost, "/api/create", `{"model":"` + name + `","from":"` + name + `","system":"changed","stream":false}`},
		{http.MethodPost, "/api/copy", `{"source":"` + name + `","destination":"other"}`},
		{http.MethodPost, "/api/pull", `{"model":"tinyllama","stream":false}`},
	} {
		code, body, err := ollamaCall(ctx, call.method, base+call.path, call.body)
		if err != nil {
			t.Fatal(err)
		}
		if code == http.StatusOK {
			t.Errorf("%s %s answered 200 (%s): the store must be read-only to the server", call.method, call.path, body)
		}
		sc.note("%s %s → %d %s", call.method, call.path, code, strings.TrimSpace(body))
	}
	if after, err := ollamaChat(ctx, base, name); err != nil || after != first {
		t.Errorf("after the management calls /api/chat answered %q (%v), want %q as before", after, err, first)
	}

	waitClaimsReady(ctx, t, realNS, []string{name}, 2*time.Minute)
	sc.note("apply → claim Ready %.1fs", time.Since(start).Seconds())

	// The server process: its user, its threads, its weights.
	pods := claimServerPods(ctx, t, realNS, name)
	if len(pods) != 1 {
		t.Fatalf("%d server pods, want 1", len(pods))
	}
	pid := containerPID(t, &pods[0])
	if f := strings.Fields(procStatusField(t, pid, "Uid")); len(f) < 2 || f[0] != "65532" || f[1] != "65532" {
		t.Errorf("ollama (pid %d) runs as uid %v, want 65532", pid, f)
	}
	if argv := procCmdline(t, pid); len(argv) != 2 || argv[1] != "serve" {
		t.Errorf("the container's process (pid %d) is %q, want the script to have exec'd `ollama serve`", pid, argv)
	}
	if log := serverLog(ctx, t, realNS, name); !strings.Contains(log, "NumThreads:1 ") {
		t.Errorf("the runner did not load the model with one thread for a 50m CPU request; the server's log:\n%s", log)
	}
	root := fmt.Sprintf("/proc/%d/root", pid)
	err = os.WriteFile(root+"/model/probe", []byte("x"), 0o644)
	if !errors.Is(err, syscall.EROFS) {
		t.Errorf("writing into /model of ollama: %v, want a read-only file system", err)
	}
	blobs, _ := filepath.Glob(root + "/tmp/ollama/models/blobs/sha256-*")
	var linked string
	for _, b := range blobs {
		if target, err := os.Readlink(b); err == nil {
			linked = target
		}
	}
	if !strings.HasPrefix(linked, "/model/") {
		t.Errorf("no blob of the store links to the weights (%d blobs, link %q): the GGUF must be linked, not copied", len(blobs), linked)
	}
	for _, dir := range []string{"/tmp/ollama/models/blobs", "/tmp/ollama/models/manifests"} {
		fi, err := os.Stat(root + dir)
		if err != nil || fi.Mode().Perm()&0o222 != 0 {
			t.Errorf("%s of ollama: %v %v, want it read-only", dir, fi.Mode(), err)
		}
	}
	sc.note("ollama pid %d: uid 65532, `ollama serve`, 1 thread for 50m CPU, /model read-only, the model blob a link to %s, the store read-only", pid, linked)

	upgradeOllamaUnderLoad(ctx, t, sc, name, base, first)
	_ = env.admin.Delete(ctx, claimGVK, realNS, name)
}

// upgradeOllamaUnderLoad moves the Ollama claim to a second model (other
// weights, a new version) while 20 requests a second go through its
// Service: no request fails, and afterwards the server answers, under the
// same name, with the new model's text.
func upgradeOllamaUnderLoad(ctx context.Context, t *testing.T, sc *scenario, name, base, oldText string) {
	t.Helper()
	uri, _ := publishGGUF(t, "ollama-tiny-v2/tiny-llama.gguf", gguf.TinyLlama(2))
	pulled := watchJobComplete(ctx, t, realNS, name, uri)
	body, _ := json.Marshal(ollamaOpenAIChat(name))
	loop := traffic.Start(traffic.Options{URL: base + "/v1/chat/completions", Body: body, Rate: 20, Max: 20 * 240, MaxDuration: 4 * time.Minute})
	time.Sleep(2 * time.Second)
	start := time.Now()
	applyClaim(ctx, t, ollamaClaim(t, name, uri, "2"))
	var newText string
	err := kube.Eventually(ctx, 3*time.Minute, 250*time.Millisecond, "the new model answering, rollout done", func(ctx context.Context) (bool, string, error) {
		if !deploymentSettled(ctx, realNS, name) || pulled().IsZero() {
			return false, fmt.Sprintf("rolling out; %d failed so far", loop.Snapshot().Failed), nil
		}
		text, err := ollamaChat(ctx, base, name)
		newText = text
		return err == nil && text != oldText, fmt.Sprintf("answered %q (%v)", text, err), nil
	})
	time.Sleep(2 * time.Second)
	rep := loop.Stop()
	if err != nil {
		t.Fatalf("%v; the server's log:\n%s", err, serverLog(ctx, t, realNS, name))
	}
	sc.note("upgrade to a second model under 20 req/s: sent %d, failed %d; new pull Complete %.1fs after the change, settled %.1fs; p99 %s; now %q",
		rep.Sent(), rep.Failed, pulled().Sub(start).Seconds(), time.Since(start).Seconds(), rep.Latency(99).Round(time.Millisecond), newText)
	if rep.Failed != 0 {
		t.Errorf("%d of %d requests failed during the upgrade: %s", rep.Failed, rep.Sent(), rep.Failures(5))
	}
}

// ollamaClaim is scenario 36's claim: framework ollama on the real node,
// 50m of CPU (one thread: the preset derives num_thread from the
// request), no GPU; memory for `ollama serve` and its runner (about 35 MB
// each with the tiny model).
func ollamaClaim(t *testing.T, name, uri, version string) *unstructured.Unstructured {
	c := realClaim(t, name, uri, version, 1)
	setField(c, "ollama", "spec", "model", "framework")
	setField(c, map[string]any{"cpu": "50m", "memory": "256Mi", "gpu": int64(0)}, "spec", "resources")
	return c
}

// ollamaOpenAIChat is a chat request in OpenAI's shape, at temperature 0.
func ollamaOpenAIChat(model string) map[string]any {
	return map[string]any{"model": model, "messages": []any{map[string]any{"role": "user", "content": "hello, tiny model"}}, "max_tokens": maxTokens, "temperature": 0}
}

// ollamaChat asks Ollama's own /api/chat, not streamed, at temperature 0,
// and returns the answer's content.
func ollamaChat(ctx context.Context, base, model string) (string, error) {
	b, _ := json.Marshal(map[string]any{
		"model": model, "stream": false,
		"messages": []any{map[string]any{"role": "user", "content": "hello, tiny model"}},
		"options":  map[string]any{"temperature": 0, "num_predict": maxTokens},
	})
	code, body, err := ollamaCall(ctx, http.MethodPost, base+"/api/chat", string(b))
	if err != nil {
		return "", err
	}
	if code != http.StatusOK {
		return "", fmt.Errorf("/api/chat: %d %s", code, body)
	}
	var r struct {
		Message struct {
			Content string `json:"content"`
		} `json:"message"`
	}
	if err := json.Unmarshal([]byte(body), &r); err != nil {
		return "", fmt.Errorf("/api/chat answered %q: %v", body, err)
	}
	return r.Message.Content, nil
}

// ollamaCall sends one JSON request and returns the status and body.
func ollamaCall(ctx context.Context, method, url, body string) (int, string, error) {
	req, err := http.NewRequestWithContext(ctx, method, url, bytes.NewReader([]byte(body)))
	if err != nil {
		return 0, "", err
	}
	req.Header.Set("Content-Type", "application/json")
	client := &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{Proxy: nil, DisableKeepAlives: true}}
	resp, err := client.Do(req)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(out), nil
}
