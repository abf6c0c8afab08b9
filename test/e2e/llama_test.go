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
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/inferno-ai/function-inferno/test/e2e/gguf"
	"github.com/inferno-ai/function-inferno/test/e2e/images"
	"github.com/inferno-ai/function-inferno/test/e2e/kube"
	"github.com/inferno-ai/function-inferno/test/e2e/traffic"
)

// llamaConcurrencyMetric is the llamacpp preset's ConcurrencyMetric
// (input/v1beta1/defaults.go): the gauge the HPA, KEDA's query and the
// PodMonitor's series are read by. The real server must export it.
const llamaConcurrencyMetric = "llamacpp:requests_processing"

// llamaServerBinary is llama-server as `make e2e-tools` builds it, with its
// shared libraries beside it.
func llamaServerBinary() string { return filepath.Join(binDir(), "llama", "llama-server") }

// llamaServerFiles is llama-server's image: the server at
// /app/llama-server with every library of its directory beside it (its
// rpath is $ORIGIN, and ggml_backend_load_all() looks for the
// libggml-cpu-<variant>.so backends in the executable's directory), the C
// and C++ runtime it links from this machine, and busybox for the preset's
// command (/bin/sh, find, sort, head).
func llamaServerFiles(server, busybox string) ([]images.File, error) {
	real, err := filepath.EvalSymlinks(server)
	if err != nil {
		return nil, err
	}
	dir := filepath.Dir(real)
	prog, err := images.HostProgram(real)
	if err != nil {
		return nil, err
	}
	var files []images.File
	for _, f := range prog {
		// The server and the libraries ldd found beside it move to /app;
		// the system's stay where the loader looks for them.
		if rel, ok := strings.CutPrefix(f.Path, dir+"/"); ok {
			f.Path = "/app/" + rel
		}
		files = append(files, f)
	}
	backends, err := filepath.Glob(filepath.Join(dir, "*.so"))
	if err != nil {
		return nil, err
	}
	for _, b := range backends {
		data, err := os.ReadFile(b)
		if err != nil {
			return nil, err
		}
		files = append(files, images.File{Path: "/app/" + filepath.Base(b), Data: data, Mode: 0o755})
	}
	bb, err := images.Busybox(busybox, "sh", "find", "sort", "head", "cat", "ls")
	if err != nil {
		return nil, err
	}
	return append(files, bb...), nil
}

// --- 32 serve llama.cpp ------------------------------------------------------

// serveLlamaCPP: a framework: llamacpp claim on the real node, served by
// llama.cpp's own llama-server with the preset's command, probes and
// metrics, from a tiny GGUF model the test writes and the origin serves
// over http. The built-in http pull fetches it; the server starts from the
// read-only weights volume with its thread count from the CPU request; the
// preset's startup and readiness probes (/health) pass; a completion and a
// chat completion through the Service answer with text, the same text
// twice at temperature 0; /metrics exports the preset's concurrency gauge.
func (s *infernoSuite) serveLlamaCPP(t *testing.T) {
	if env.node == nil {
		t.Skip("no real node (-real-node=false)")
	}
	ctx := context.Background()
	sc := env.summary.start(t, "32 serve llama.cpp (real node)")
	sc.onRealNode(false)
	needLlamaServer(t)
	if err := env.createTeamNamespace(ctx, realNS); err != nil {
		t.Fatal(err)
	}
	ensureRealCompositions(ctx, t)

	// The model: written here, deterministic, served by the origin.
	uri, size := publishGGUF(t, "llama-tiny/tiny-llama.gguf", gguf.TinyLlama(1))

	const name = "llama"
	start := time.Now()
	applyClaim(ctx, t, llamaClaim(t, name, uri, "1"))

	waitPullComplete(ctx, t, realNS, name)
	pulled := time.Since(start)
	base := waitServiceURL(ctx, t, realNS, name, time.Minute)

	completion := map[string]any{"prompt": prompt, "max_tokens": maxTokens, "temperature": 0}
	chat := map[string]any{"messages": []any{map[string]any{"role": "user", "content": "hello, tiny model"}}, "max_tokens": maxTokens, "temperature": 0}
	var first string
	if err := kube.Eventually(ctx, 3*time.Minute, 100*time.Millisecond, "a completion answered through "+base, func(ctx context.Context) (bool, string, error) {
		text, err := llamaAsk(ctx, base+"/v1/completions", completion)
		first = text
		return err == nil, fmt.Sprint(err), nil
	}); err != nil {
		t.Fatalf("%v; the server's log:\n%s", err, serverLog(ctx, t, realNS, name))
	}
	answered := time.Since(start)
	sc.note("apply → Job Complete %.1fs → first answer %.1fs (llama-server, %d KiB GGUF)", pulled.Seconds(), answered.Seconds(), size/1024)

	again, err := llamaAsk(ctx, base+"/v1/completions", completion)
	if err != nil {
		t.Fatal(err)
	}
	if strings.TrimSpace(first) == "" || again != first {
		t.Errorf("/v1/completions at temperature 0 answered %q, then %q: want the same text, not empty", first, again)
	}
	chat1, err := llamaAsk(ctx, base+"/v1/chat/completions", chat)
	if err != nil {
		t.Fatal(err)
	}
	chat2, err := llamaAsk(ctx, base+"/v1/chat/completions", chat)
	if err != nil {
		t.Fatal(err)
	}
	if strings.TrimSpace(chat1) == "" || chat2 != chat1 {
		t.Errorf("/v1/chat/completions at temperature 0 answered %q, then %q: want the same text, not empty", chat1, chat2)
	}
	sc.note("completion %q, chat %q, each the same twice at temperature 0", first, chat1)

	// The preset's probes, as rendered, are what passed.
	d, err := env.admin.Typed.AppsV1().Deployments(realNS).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	checkLlamaProbes(t, d)

	metrics, err := llamaGet(ctx, base+"/metrics")
	if err != nil {
		t.Fatal(err)
	}
	if !hasMetric(metrics, llamaConcurrencyMetric) {
		t.Errorf("/metrics has no %s, the preset's concurrency metric; it exports:\n%s", llamaConcurrencyMetric, metrics)
	}
	waitClaimsReady(ctx, t, realNS, []string{name}, 2*time.Minute)
	sc.note("apply → claim Ready %.1fs", time.Since(start).Seconds())

	// The server process itself: its threads, its user, its weights.
	pods := claimServerPods(ctx, t, realNS, name)
	if len(pods) != 1 {
		t.Fatalf("%d server pods, want 1", len(pods))
	}
	if log := serverLog(ctx, t, realNS, name); !strings.Contains(log, "n_threads = 1") {
		t.Errorf("the server did not run one thread for a 50m CPU request; its log:\n%s", log)
	}
	pid := containerPID(t, &pods[0])
	if f := strings.Fields(procStatusField(t, pid, "Uid")); len(f) < 2 || f[0] != "65532" || f[1] != "65532" {
		t.Errorf("llama-server (pid %d) runs as uid %v, want 65532", pid, f)
	}
	err = os.WriteFile(fmt.Sprintf("/proc/%d/root/model/probe", pid), []byte("x"), 0o644)
	if !errors.Is(err, syscall.EROFS) {
		t.Errorf("writing into /model of llama-server: %v, want a read-only file system", err)
	}
	// Offline by construction: the preset's flags come last, where a
	// claim's cannot undo them, and --offline is among them.
	argv := procCmdline(t, pid)
	if n := len(argv); n < 3 || argv[n-1] != "--offline" || argv[n-3] != "-m" {
		t.Errorf("llama-server (pid %d) runs as %q, want its arguments to end in -m MODEL --offline", pid, argv)
	}
	// The claim's typed options reached the server as its flags: the
	// command line has them, and the server reports its slots.
	if want := []string{"--ctx-size", strconv.Itoa(llamaContext), "--parallel", strconv.Itoa(llamaSlots)}; !containsRun(argv, want) {
		t.Errorf("llama-server (pid %d) runs as %q, want it to have %q from spec.serve.options", pid, argv, want)
	}
	var props struct {
		TotalSlots int `json:"total_slots"`
	}
	if body, err := llamaGet(ctx, base+"/props"); err != nil {
		t.Error(err)
	} else if err := json.Unmarshal([]byte(body), &props); err != nil || props.TotalSlots != llamaSlots {
		t.Errorf("llama-server's /props: total_slots %d (%v), want %d from spec.serve.options.maxParallel:\n%s", props.TotalSlots, err, llamaSlots, body)
	}
	sc.note("llama-server pid %d: uid 65532, 1 thread for 50m CPU, /model read-only, /metrics has %s, %d slots from spec.serve.options, argv ends %q", pid, llamaConcurrencyMetric, props.TotalSlots, argv[max(0, len(argv)-3):])

	// Offline by construction, seen from the server's network namespace:
	// having served every request above, it holds no connection it opened
	// itself (each one is to its serving port, or on loopback).
	if out := outboundConnections(t, pid, 8080); len(out) > 0 {
		t.Errorf("llama-server (pid %d) opened connections of its own: %v", pid, out)
	}
	// A claim that asks llama-server to download a model by itself is
	// refused, by name, and composes nothing.
	fetch := llamaClaim(t, "llama-fetch", uri, "1")
	setField(fetch, []any{"-mu", uri}, "spec", "serve", "args")
	applyClaim(ctx, t, fetch)
	var refusal string
	if err := kube.Eventually(ctx, time.Minute, 250*time.Millisecond, "the claim asking llama-server to download refused", func(ctx context.Context) (bool, string, error) {
		xrs, err := env.admin.List(ctx, xrGVK, "", "crossplane.io/claim-name=llama-fetch,crossplane.io/claim-namespace="+realNS)
		if err != nil || len(xrs) == 0 {
			return false, "no composite yet", err
		}
		st, _, msg := kube.Condition(&xrs[0], "Synced")
		refusal = msg
		return st == "False" && strings.Contains(msg, "spec.serve.args[0]") && strings.Contains(msg, "downloads"), kube.ConditionsSummary(&xrs[0]), nil
	}); err != nil {
		t.Error(err)
	} else {
		sc.note("no connection of its own; -mu URL refused: %q", truncate(refusal, 160))
	}
	if jobs := pullJobs(ctx, t, realNS, "llama-fetch"); len(jobs) > 0 {
		t.Errorf("the refused claim composed %d Jobs", len(jobs))
	}
	if err := env.admin.Delete(ctx, claimGVK, realNS, "llama-fetch"); err != nil {
		t.Logf("deleting claim llama-fetch: %v", err)
	}

	uri2, baseText := upgradeLlamaUnderLoad(ctx, t, sc, name, base, first)
	addLlamaAdapterUnderLoad(ctx, t, sc, name, base, uri2, baseText)
	_ = env.admin.Delete(ctx, claimGVK, realNS, name)
}

// upgradeLlamaUnderLoad moves the llama.cpp claim to a second model (other
// weights, a new version) while 20 requests a second go through its
// Service, as scenario 17 does with the fake server: no request fails, and
// afterwards the server answers with the new model's text. llama-server
// sends no weights header, so the text tells the models apart.
// It returns the second model's URI and its answer.
func upgradeLlamaUnderLoad(ctx context.Context, t *testing.T, sc *scenario, name, base, oldText string) (string, string) {
	t.Helper()
	uri, _ := publishGGUF(t, "llama-tiny-v2/tiny-llama.gguf", gguf.TinyLlama(2))
	pulled := watchJobComplete(ctx, t, realNS, name, uri)
	completion := map[string]any{"prompt": prompt, "max_tokens": maxTokens, "temperature": 0}
	body, _ := json.Marshal(completion)
	loop := traffic.Start(traffic.Options{URL: base + "/v1/completions", Body: body, Rate: 20, Max: 20 * 240, MaxDuration: 4 * time.Minute})
	time.Sleep(2 * time.Second)
	start := time.Now()
	applyClaim(ctx, t, llamaClaim(t, name, uri, "2"))
	var newText string
	err := kube.Eventually(ctx, 3*time.Minute, 250*time.Millisecond, "the new model answering, rollout done", func(ctx context.Context) (bool, string, error) {
		if !deploymentSettled(ctx, realNS, name) || pulled().IsZero() {
			return false, fmt.Sprintf("rolling out; %d failed so far", loop.Snapshot().Failed), nil
		}
		text, err := llamaAsk(ctx, base+"/v1/completions", completion)
		newText = text
		return err == nil && text != oldText, fmt.Sprintf("answered %q (%v)", text, err), nil
	})
	time.Sleep(2 * time.Second)
	rep := loop.Stop()
	if err != nil {
		t.Fatal(err)
	}
	sc.note("upgrade to a second model under 20 req/s: sent %d, failed %d; new pull Complete %.1fs after the change, settled %.1fs; p99 %s; now %q",
		rep.Sent(), rep.Failed, pulled().Sub(start).Seconds(), time.Since(start).Seconds(), rep.Latency(99).Round(time.Millisecond), newText)
	if rep.Failed != 0 {
		t.Errorf("%d of %d requests failed during the upgrade: %s", rep.Failed, rep.Sent(), rep.Failures(5))
	}
	return uri, newText
}

// addLlamaAdapterUnderLoad adds a LoRA adapter (TinyLoRA, written here and
// served by the origin) to the serving llama.cpp claim while 20 requests a
// second go through its Service: its own pull Job fetches it, the server
// rolls to a template that loads it at scale 0 (the preset's --lora-scaled
// FILE:0), and status.adapters gives its id. Then a request without "lora"
// still answers as the base model, and one with "lora": [{"id": N,
// "scale": 1}] answers differently, the same twice. No request fails.
func addLlamaAdapterUnderLoad(ctx context.Context, t *testing.T, sc *scenario, name, base, modelURI, baseText string) {
	t.Helper()
	loraURI, size := publishGGUF(t, "llama-lora/tiny-lora.gguf", gguf.TinyLoRA(7, 4))
	before := podNames(claimServerPods(ctx, t, realNS, name))
	completion := map[string]any{"prompt": prompt, "max_tokens": maxTokens, "temperature": 0}
	body, _ := json.Marshal(completion)
	loop := traffic.Start(traffic.Options{URL: base + "/v1/completions", Body: body, Rate: 20, Max: 20 * 240, MaxDuration: 4 * time.Minute})
	time.Sleep(2 * time.Second)
	start := time.Now()
	c := llamaClaim(t, name, modelURI, "2")
	setField(c, []any{map[string]any{"name": "tiny", "uri": loraURI}}, "spec", "adapters")
	applyClaim(ctx, t, c)
	var id int64 = -1
	err := kube.Eventually(ctx, 3*time.Minute, 250*time.Millisecond, "adapter tiny Serving with an id, rollout done", func(ctx context.Context) (bool, string, error) {
		obj, err := env.admin.Get(ctx, claimGVK, realNS, name)
		if err != nil {
			return false, "", err
		}
		list, _, _ := unstructured.NestedSlice(obj.Object, "status", "adapters")
		if len(list) != 1 {
			return false, fmt.Sprintf("status.adapters %v", list), nil
		}
		m, _ := list[0].(map[string]any)
		n, ok := m["id"].(int64)
		if m["phase"] != "Serving" || !ok || !deploymentSettled(ctx, realNS, name) {
			return false, fmt.Sprintf("%v; %d failed so far", m, loop.Snapshot().Failed), nil
		}
		id = n
		return true, "", nil
	})
	served := time.Since(start)
	time.Sleep(2 * time.Second)
	rep := loop.Stop()
	if err != nil {
		t.Fatalf("%v; the server's log:\n%s", err, serverLog(ctx, t, realNS, name))
	}
	after := podNames(claimServerPods(ctx, t, realNS, name))
	withLora := map[string]any{"prompt": prompt, "max_tokens": maxTokens, "temperature": 0, "lora": []any{map[string]any{"id": id, "scale": 1}}}
	plain, err := llamaAsk(ctx, base+"/v1/completions", completion)
	if err != nil {
		t.Fatal(err)
	}
	a, err := llamaAsk(ctx, base+"/v1/completions", withLora)
	if err != nil {
		t.Fatal(err)
	}
	b, err := llamaAsk(ctx, base+"/v1/completions", withLora)
	if err != nil {
		t.Fatal(err)
	}
	sc.note("adapter tiny (%d KiB GGUF) added under 20 req/s: Serving as id %d in %.1fs, servers %v → %v; sent %d, failed %d; p99 %s; base %q, with lora id %d %q",
		size/1024, id, served.Seconds(), before, after, rep.Sent(), rep.Failed, rep.Latency(99).Round(time.Millisecond), plain, id, a)
	if rep.Failed != 0 {
		t.Errorf("%d of %d requests failed while the adapter was added: %s", rep.Failed, rep.Sent(), rep.Failures(5))
	}
	if plain != baseText {
		t.Errorf("without \"lora\" the server answered %q; the base model alone answered %q: the adapter must apply only to requests that ask for it", plain, baseText)
	}
	if strings.TrimSpace(a) == "" || a != b || a == baseText {
		t.Errorf("with lora id %d the server answered %q, then %q (base %q): want the same text twice, not the base model's", id, a, b, baseText)
	}
}

// publishGGUF writes f where the origin serves it as path and returns its
// URL and size.
func publishGGUF(t *testing.T, path string, f gguf.File) (string, int) {
	t.Helper()
	var b bytes.Buffer
	if err := gguf.Write(&b, f); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(env.origin.Dir, filepath.FromSlash(path))
	if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(file, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return env.origin.URL + "/" + path, b.Len()
}

// llamaClaim is scenario 32's claim: framework llamacpp on the real node,
// 50m of CPU (which rounds up to one thread: the preset derives -t from
// the request), no GPU.
func llamaClaim(t *testing.T, name, uri, version string) *unstructured.Unstructured {
	c := realClaim(t, name, uri, version, 1)
	setField(c, "llamacpp", "spec", "model", "framework")
	setField(c, map[string]any{"cpu": "50m", "memory": "128Mi", "gpu": int64(0)}, "spec", "resources")
	// Typed options, which the preset translates into llama-server's
	// flags: scenario 32 reads them back from the server.
	setField(c, map[string]any{"contextLength": int64(llamaContext), "maxParallel": int64(llamaSlots)}, "spec", "serve", "options")
	return c
}

// The llama claims' spec.serve.options: two slots (llama-server's own
// default is four, so /props tells the option's from it) sharing a context
// of 1,024 tokens.
const (
	llamaContext = 1024
	llamaSlots   = 2
)

// outboundConnections lists the TCP connections of a process's network
// namespace (/proc/<pid>/net/tcp and tcp6) that it opened itself: those
// established or being opened whose local port is not port (where it is
// the server) and whose local address is not loopback.
func outboundConnections(t *testing.T, pid, port int) []string {
	t.Helper()
	var out []string
	for _, f := range []string{"tcp", "tcp6"} {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/net/%s", pid, f))
		if err != nil {
			t.Fatal(err)
		}
		for _, line := range strings.Split(string(b), "\n")[1:] {
			fields := strings.Fields(line)
			// 01 ESTABLISHED, 02 SYN_SENT.
			if len(fields) < 4 || (fields[3] != "01" && fields[3] != "02") {
				continue
			}
			local, remote := fields[1], fields[2]
			addr, hexPort, _ := strings.Cut(local, ":")
			if p, err := strconv.ParseUint(hexPort, 16, 16); err == nil && int(p) == port {
				continue
			}
			// 127.0.0.1 and ::1 as /proc spells them.
			if addr == "0100007F" || addr == "00000000000000000000000001000000" {
				continue
			}
			out = append(out, f+" "+local+" -> "+remote)
		}
	}
	return out
}

// containsRun says whether run appears in args, in order and adjacent.
func containsRun(args, run []string) bool {
	for i := 0; i+len(run) <= len(args); i++ {
		if slices.Equal(args[i:i+len(run)], run) {
			return true
		}
	}
	return false
}

// podNames lists pods by name.
func podNames(pods []corev1.Pod) []string {
	out := make([]string, len(pods))
	for i, p := range pods {
		out[i] = p.Name
	}
	return out
}

// checkLlamaProbes checks the server Deployment probes /health on the
// server's port, as the llamacpp preset says: the probes llama-server
// answers 503 to while it loads the model and 200 once it can serve.
func checkLlamaProbes(t *testing.T, d *appsv1.Deployment) {
	t.Helper()
	c := d.Spec.Template.Spec.Containers[0]
	for what, p := range map[string]*corev1.Probe{"startup": c.StartupProbe, "readiness": c.ReadinessProbe} {
		if p == nil || p.HTTPGet == nil || p.HTTPGet.Path != "/health" {
			t.Errorf("the %s probe is %+v, want GET /health", what, p)
		}
	}
}

// hasMetric says a Prometheus exposition has a sample of name.
func hasMetric(exposition, name string) bool {
	for _, line := range strings.Split(exposition, "\n") {
		if strings.HasPrefix(line, name+" ") || strings.HasPrefix(line, name+"{") {
			return true
		}
	}
	return false
}

// llamaAsk posts an OpenAI request and returns the first choice's text (a
// completion's text or a chat answer's message content).
func llamaAsk(ctx context.Context, url string, body map[string]any) (string, error) {
	text, _, err := llamaPost(ctx, noProxy, url, "", body)
	return text, err
}

// llamaPost posts an OpenAI request to url through client, with host as
// the Host header unless it is empty, and returns the first choice's text
// (a completion's text or a chat answer's message content) and the
// response's headers (also with an error, once there is a response).
func llamaPost(ctx context.Context, client *http.Client, url, host string, body map[string]any) (string, http.Header, error) {
	b, _ := json.Marshal(body)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(b))
	if err != nil {
		return "", nil, err
	}
	if host != "" {
		req.Host = host
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := client.Do(req)
	if err != nil {
		return "", nil, err
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		return "", resp.Header, fmt.Errorf("%s: %s", resp.Status, strings.TrimSpace(string(out)))
	}
	var r struct {
		Choices []struct {
			Text    string `json:"text"`
			Message struct {
				Content string `json:"content"`
			} `json:"message"`
		} `json:"choices"`
	}
	if err := json.Unmarshal(out, &r); err != nil || len(r.Choices) != 1 {
		return "", resp.Header, fmt.Errorf("answer %q: %v", out, err)
	}
	return r.Choices[0].Text + r.Choices[0].Message.Content, resp.Header, nil
}

// needLlamaServer fails a scenario that runs llama-server when `make
// e2e-tools` has not built it.
func needLlamaServer(t *testing.T) {
	t.Helper()
	if _, err := os.Stat(llamaServerBinary()); err != nil {
		t.Fatalf("no llama-server (%v): `make e2e-tools` builds it into bin/llama", err)
	}
}

func llamaGet(ctx context.Context, url string) (string, error) {
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	resp, err := noProxy.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("GET %s: %s", url, resp.Status)
	}
	return string(b), err
}

// serverLog is the log of a claim's first server pod, through the API
// server, for failure messages and the thread count.
func serverLog(ctx context.Context, t *testing.T, ns, claim string) string {
	l, err := env.admin.Typed.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: instanceLabel + "=" + claim + ",app.kubernetes.io/component=model-server"})
	if err != nil || len(l.Items) == 0 {
		return fmt.Sprintf("(no server pod: %v)", err)
	}
	b, err := env.admin.Typed.CoreV1().Pods(ns).GetLogs(l.Items[0].Name, &corev1.PodLogOptions{}).DoRaw(ctx)
	if err != nil {
		return fmt.Sprintf("(logs: %v)", err)
	}
	return string(b)
}
