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
	bin := os.Getenv("E2E_BIN_DIR")
	if bin == "" {
		bin = filepath.Join("..", "..", "..", "bin")
	}
	server := filepath.Join(bin, "llama", "llama-server")
	if _, err := os.Stat(server); err != nil {
		t.Skipf("no llama-server (%v); `make e2e-tools` builds it", err)
	}
	model := filepath.Join(t.TempDir(), "tiny.gguf")
	var b bytes.Buffer
	if err := Write(&b, TinyLlama(1)); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(model, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	var log bytes.Buffer
	cmd := exec.Command(server, "-m", model, "--host", "127.0.0.1", "--port", fmt.Sprint(port), "-t", "1", "-tb", "1")
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
	ask := func(prompt string) string {
		body, _ := json.Marshal(map[string]any{"prompt": prompt, "max_tokens": 24, "temperature": 0})
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
			t.Fatalf("%q answered %s", prompt, r.Status)
		}
		return out.Choices[0].Text
	}
	for _, p := range []string{"the model on the real node says", "hello", "0123456789", "¿qué?"} {
		a, b := ask(p), ask(p)
		if a == "" || !utf8.ValidString(a) || a != b {
			t.Errorf("%q answered %q, then %q: want the same valid UTF-8 text", p, a, b)
		}
	}
}
