package gguf

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
	"unicode/utf8"
)

// TestTinyLlamaOnLlamaServer serves TinyLlama with the real llama-server
// when `make e2e-tools` has built it (bin/llama), and skips otherwise: every
// answer is 200 with valid UTF-8 text (the trap random weights fall into),
// and the same at temperature 0.
func TestTinyLlamaOnLlamaServer(t *testing.T) {
	dir := t.TempDir()
	model := writeFile(t, dir, "tiny.gguf", TinyLlama(1))
	ask := serve(t, "-m", model)
	for _, p := range []string{"the model on the real node says", "hello", "0123456789", "¿qué?"} {
		a, b := ask(p, nil), ask(p, nil)
		if a == "" || !utf8.ValidString(a) || a != b {
			t.Errorf("%q answered %q, then %q: want the same valid UTF-8 text", p, a, b)
		}
	}
}

// TestTinyLoRAOnLlamaServer loads TinyLoRA as the llamacpp preset does
// (--lora-scaled FILE:0: loaded, applied to no request by default): a
// request without "lora" answers as the base model alone, one that applies
// adapter 0 answers differently, and each the same twice.
// --lora-init-without-apply would not do: this llama-server still applies
// such an adapter at scale 1 to every request that names none.
func TestTinyLoRAOnLlamaServer(t *testing.T) {
	dir := t.TempDir()
	model := writeFile(t, dir, "tiny.gguf", TinyLlama(1))
	lora := writeFile(t, dir, "lora.gguf", TinyLoRA(7, 4))
	base := serve(t, "-m", model)
	ask := serve(t, "-m", model, "--lora-scaled", lora+":0")
	on := []map[string]any{{"id": 0, "scale": 1}}
	for _, p := range []string{"the model on the real node says", "hello"} {
		want := base(p, nil)
		if got := ask(p, nil); got != want {
			t.Errorf("%q without lora: %q, base model alone %q: want the same", p, got, want)
		}
		a, b := ask(p, on), ask(p, on)
		if a == "" || !utf8.ValidString(a) || a != b || a == want {
			t.Errorf("%q with adapter 0: %q, then %q (base %q): want the same valid UTF-8 text twice, not the base model's", p, a, b, want)
		}
	}
}

// writeFile writes f as dir/name.
func writeFile(t *testing.T, dir, name string, f File) string {
	t.Helper()
	var b bytes.Buffer
	if err := Write(&b, f); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// serve starts the real llama-server that `make e2e-tools` built
// (bin/llama) with args on a free loopback port, one thread, and returns
// a completion at temperature 0 (lora, when set, is the request's "lora");
// it skips without the binary.
func serve(t *testing.T, args ...string) func(prompt string, lora any) string {
	t.Helper()
	bin := os.Getenv("E2E_BIN_DIR")
	if bin == "" {
		bin = filepath.Join("..", "..", "..", "bin")
	}
	server := filepath.Join(bin, "llama", "llama-server")
	if _, err := os.Stat(server); err != nil {
		t.Skipf("no llama-server (%v); `make e2e-tools` builds it", err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	var log bytes.Buffer
	cmd := exec.Command(server, append(args, "--host", "127.0.0.1", "--port", fmt.Sprint(port), "-t", "1", "-tb", "1")...)
	cmd.Stdout, cmd.Stderr = &log, &log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	base := fmt.Sprintf("http://127.0.0.1:%d", port)
	client := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{Proxy: nil}}
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		if r, err := client.Get(base + "/health"); err == nil {
			r.Body.Close()
			if r.StatusCode == http.StatusOK {
				break
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("llama-server never healthy; its log:\n%s", log.String())
		}
	}
	return func(prompt string, lora any) string {
		t.Helper()
		req := map[string]any{"prompt": prompt, "max_tokens": 24, "temperature": 0}
		if lora != nil {
			req["lora"] = lora
		}
		body, _ := json.Marshal(req)
		r, err := client.Post(base+"/v1/completions", "application/json", bytes.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		defer r.Body.Close()
		var out struct {
			Choices []struct {
				Text string `json:"text"`
			} `json:"choices"`
		}
		if r.StatusCode != http.StatusOK || json.NewDecoder(r.Body).Decode(&out) != nil || len(out.Choices) != 1 {
			t.Fatalf("%q answered %s; the server's log:\n%s", prompt, r.Status, log.String())
		}
		return out.Choices[0].Text
	}
}
