package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

var quiet = slog.New(slog.DiscardHandler)

// newLoaded returns a server answering from the demo sample, and the model.
func newLoaded(t *testing.T, cfg Config) (*Server, *httptest.Server, *Model) {
	t.Helper()
	m, _ := loadSample(t, "demo")
	s := NewServer(cfg, quiet)
	s.SetModel(m)
	ts := httptest.NewServer(s.Handler())
	t.Cleanup(ts.Close)
	return s, ts, m
}

func do(t *testing.T, method, url, body string) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	rsp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer rsp.Body.Close()
	b, err := io.ReadAll(rsp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return rsp, b
}

func decode[T any](t *testing.T, b []byte) T {
	t.Helper()
	var v T
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatalf("decoding %s: %v", b, err)
	}
	return v
}

type errorBody struct {
	Error apiError `json:"error"`
}

func TestEndpoints(t *testing.T) {
	cfg := Config{ModelName: "llama", ModelVersion: "2"}
	_, ts, m := newLoaded(t, cfg)
	host, _ := os.Hostname()

	completion := func(prompt string, n int) response {
		c := m.Generate(prompt, n)
		finish := c.Finish
		txt := c.Text()
		return response{
			ID: responseID(false, m.Digest, prompt, n), Object: "text_completion", Model: "llama", SystemFingerprint: m.Digest,
			Choices: []choice{{Text: &txt, FinishReason: &finish}},
			Usage:   &usage{PromptTokens: c.PromptTokens, CompletionTokens: len(c.Tokens), TotalTokens: c.PromptTokens + len(c.Tokens)},
		}
	}
	chatPrompt := "system: be brief\nuser: hello there\n"
	chat := func(n int) response {
		c := m.Generate(chatPrompt, n)
		finish := c.Finish
		return response{
			ID: responseID(true, m.Digest, chatPrompt, n), Object: "chat.completion", Model: "llama", SystemFingerprint: m.Digest,
			Choices: []choice{{Message: &message{Role: "assistant", Content: c.Text()}, FinishReason: &finish}},
			Usage:   &usage{PromptTokens: c.PromptTokens, CompletionTokens: len(c.Tokens), TotalTokens: c.PromptTokens + len(c.Tokens)},
		}
	}

	cases := map[string]struct {
		method, path, body string
		wantCode           int
		// One of: the exact body, a decoded value, or an error code.
		wantBody      string
		wantValue     any
		wantErrorCode string
	}{
		"healthz": {method: "GET", path: "/healthz", wantCode: 200, wantBody: "ok"},
		"models": {method: "GET", path: "/v1/models", wantCode: 200, wantValue: modelList{Object: "list", Data: []modelObject{{
			ID: "llama", Object: "model", OwnedBy: "inferno", Version: "2", WeightsDigest: m.Digest,
			UID: os.Getuid(), GID: os.Getgid(), Hostname: host,
		}}}},
		"completion": {
			method: "POST", path: "/v1/completions", body: `{"model":"llama","prompt":"hello world","max_tokens":5,"temperature":0.7}`,
			wantCode: 200, wantValue: completion("hello world", 5),
		},
		"completion with the default max_tokens": {
			method: "POST", path: "/v1/completions", body: `{"model":"llama","prompt":"hello world"}`,
			wantCode: 200, wantValue: completion("hello world", DefaultMaxTokens),
		},
		"completion of a prompt array joins it with newlines": {
			method: "POST", path: "/v1/completions", body: `{"model":"llama","prompt":["hello","world"],"max_tokens":4}`,
			wantCode: 200, wantValue: completion("hello\nworld", 4),
		},
		"completion of the longest max_tokens": {
			method: "POST", path: "/v1/completions", body: `{"model":"llama","prompt":"x","max_tokens":4096}`,
			wantCode: 200, wantValue: completion("x", 4096),
		},
		"chat": {
			method: "POST", path: "/v1/chat/completions",
			body:     `{"model":"llama","messages":[{"role":"system","content":"be brief"},{"role":"user","content":[{"type":"text","text":"hello there"}]}],"max_tokens":6}`,
			wantCode: 200, wantValue: chat(6),
		},
		"chat max_completion_tokens wins over max_tokens": {
			method: "POST", path: "/v1/chat/completions",
			body:     `{"model":"llama","messages":[{"role":"system","content":"be brief"},{"role":"user","content":"hello there"}],"max_tokens":2,"max_completion_tokens":3}`,
			wantCode: 200, wantValue: chat(3),
		},
		"another model":           {method: "POST", path: "/v1/completions", body: `{"model":"gpt-4","prompt":"hi"}`, wantCode: 404, wantErrorCode: "model_not_found"},
		"another model in chat":   {method: "POST", path: "/v1/chat/completions", body: `{"model":"fake","messages":[{"role":"user","content":"hi"}]}`, wantCode: 404, wantErrorCode: "model_not_found"},
		"no model":                {method: "POST", path: "/v1/completions", body: `{"prompt":"hi"}`, wantCode: 400, wantErrorCode: "missing_model"},
		"max_tokens 0":            {method: "POST", path: "/v1/completions", body: `{"model":"llama","max_tokens":0}`, wantCode: 400, wantErrorCode: "invalid_max_tokens"},
		"max_tokens negative":     {method: "POST", path: "/v1/completions", body: `{"model":"llama","max_tokens":-3}`, wantCode: 400, wantErrorCode: "invalid_max_tokens"},
		"max_tokens over the cap": {method: "POST", path: "/v1/chat/completions", body: `{"model":"llama","messages":[{"role":"user","content":"hi"}],"max_tokens":4097}`, wantCode: 400, wantErrorCode: "invalid_max_tokens"},
		"max_tokens not a number": {method: "POST", path: "/v1/completions", body: `{"model":"llama","max_tokens":"many"}`, wantCode: 400, wantErrorCode: "invalid_json"},
		"token array prompt":      {method: "POST", path: "/v1/completions", body: `{"model":"llama","prompt":[1,2,3]}`, wantCode: 400, wantErrorCode: "invalid_prompt"},
		"no messages":             {method: "POST", path: "/v1/chat/completions", body: `{"model":"llama","messages":[]}`, wantCode: 400, wantErrorCode: "invalid_messages"},
		"bad message content":     {method: "POST", path: "/v1/chat/completions", body: `{"model":"llama","messages":[{"role":"user","content":7}]}`, wantCode: 400, wantErrorCode: "invalid_messages"},
		"bad JSON":                {method: "POST", path: "/v1/completions", body: `{"model":`, wantCode: 400, wantErrorCode: "invalid_json"},
		"two JSON objects":        {method: "POST", path: "/v1/completions", body: `{"model":"llama"} {}`, wantCode: 400, wantErrorCode: "invalid_json"},
		"empty body":              {method: "POST", path: "/v1/completions", wantCode: 400, wantErrorCode: "invalid_json"},
		"body over 1 MiB": {
			method: "POST", path: "/v1/completions", body: `{"model":"llama","prompt":"` + strings.Repeat("a ", 600_000) + `"}`,
			wantCode: 413, wantErrorCode: "request_too_large",
		},
		"unknown path":         {method: "GET", path: "/v1/embeddings", wantCode: 404, wantErrorCode: "not_found"},
		"root":                 {method: "GET", path: "/", wantCode: 404, wantErrorCode: "not_found"},
		"GET a POST endpoint":  {method: "GET", path: "/v1/completions", wantCode: 405, wantErrorCode: "method_not_allowed"},
		"POST a GET endpoint":  {method: "POST", path: "/v1/models", wantCode: 405, wantErrorCode: "method_not_allowed"},
		"DELETE healthz":       {method: "DELETE", path: "/healthz", wantCode: 405, wantErrorCode: "method_not_allowed"},
		"HEAD healthz answers": {method: "HEAD", path: "/healthz", wantCode: 200},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			rsp, body := do(t, tc.method, ts.URL+tc.path, tc.body)
			if rsp.StatusCode != tc.wantCode {
				t.Fatalf("%s %s: status %d, want %d; body %s", tc.method, tc.path, rsp.StatusCode, tc.wantCode, body)
			}
			// Every response, errors included, names its pod, version and weights.
			for h, want := range map[string]string{HeaderWeights: m.Digest, HeaderVersion: "2", HeaderPod: host} {
				if got := rsp.Header.Get(h); got != want {
					t.Errorf("header %s = %q, want %q", h, got, want)
				}
			}
			switch {
			case tc.wantErrorCode != "":
				e := decode[errorBody](t, body)
				if e.Error.Code != tc.wantErrorCode || e.Error.Message == "" || e.Error.Type == "" {
					t.Errorf("error %+v, want code %q with a message and a type", e.Error, tc.wantErrorCode)
				}
				if ct := rsp.Header.Get("Content-Type"); ct != "application/json" {
					t.Errorf("Content-Type %q, want application/json", ct)
				}
			case tc.wantValue != nil:
				got := decodeLike(t, tc.wantValue, body)
				if diff := cmp.Diff(tc.wantValue, got); diff != "" {
					t.Errorf("body (-want +got):\n%s", diff)
				}
			case tc.method != "HEAD":
				if string(body) != tc.wantBody {
					t.Errorf("body %q, want %q", body, tc.wantBody)
				}
			}
			if tc.wantCode == 405 && rsp.Header.Get("Allow") == "" {
				t.Error("a 405 without an Allow header")
			}
		})
	}
}

// decodeLike decodes b into a new value of want's type.
func decodeLike(t *testing.T, want any, b []byte) any {
	t.Helper()
	switch want.(type) {
	case modelList:
		return decode[modelList](t, b)
	case response:
		return decode[response](t, b)
	}
	t.Fatalf("no decoder for %T", want)
	return nil
}

func TestUnloadedServer(t *testing.T) {
	s := NewServer(Config{ModelName: "fake"}, quiet)
	s.setUnready("model directory /model has no .inferno-complete marker: the weights are not completely written")
	ts := httptest.NewServer(s.Handler())
	defer ts.Close()

	rsp, body := do(t, "GET", ts.URL+"/healthz", "")
	if rsp.StatusCode != 503 || !strings.Contains(string(body), "no .inferno-complete marker") {
		t.Errorf("healthz: %d %q, want 503 with the reason", rsp.StatusCode, body)
	}
	if got := rsp.Header.Get(HeaderWeights); got != "" {
		t.Errorf("%s = %q before any weights are loaded, want empty", HeaderWeights, got)
	}
	for _, c := range []struct{ method, path, body string }{
		{"GET", "/v1/models", ""},
		{"POST", "/v1/completions", `{"model":"fake","prompt":"hi"}`},
		{"POST", "/v1/chat/completions", `{"model":"fake","messages":[{"role":"user","content":"hi"}]}`},
	} {
		rsp, body := do(t, c.method, ts.URL+c.path, c.body)
		e := decode[errorBody](t, body)
		if rsp.StatusCode != 503 || e.Error.Code != "model_not_loaded" || !strings.Contains(e.Error.Message, "marker") {
			t.Errorf("%s %s: %d %s, want 503 model_not_loaded with the reason", c.method, c.path, rsp.StatusCode, body)
		}
	}
}

func TestDrainFailsOnlyTheHealthCheck(t *testing.T) {
	s, ts, _ := newLoaded(t, Config{ModelName: "fake"})
	s.Drain()
	if rsp, body := do(t, "GET", ts.URL+"/healthz", ""); rsp.StatusCode != 503 || !strings.Contains(string(body), "draining") {
		t.Errorf("healthz while draining: %d %q, want 503 draining", rsp.StatusCode, body)
	}
	if rsp, body := do(t, "POST", ts.URL+"/v1/completions", `{"model":"fake","prompt":"hi"}`); rsp.StatusCode != 200 {
		t.Errorf("completion while draining: %d %s, want 200", rsp.StatusCode, body)
	}
}

// readEvents reads a server-sent event stream into its data payloads.
func readEvents(t *testing.T, r io.Reader) []string {
	t.Helper()
	events, err := parseEvents(r)
	if err != nil {
		t.Fatal(err)
	}
	return events
}

// parseEvents is readEvents for goroutines, which must not call t.Fatal.
func parseEvents(r io.Reader) ([]string, error) {
	var events []string
	sc := bufio.NewScanner(r)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if line == "" {
			continue // the blank line that ends an event
		}
		data, ok := strings.CutPrefix(line, "data: ")
		if !ok {
			return nil, fmt.Errorf("stream line %q is not a data line", line)
		}
		events = append(events, data)
	}
	return events, sc.Err()
}

func TestStreaming(t *testing.T) {
	_, dir := loadSample(t, "demo")
	// A second weights file whose word "end" only ends the text, for an
	// answer of no tokens.
	if err := os.WriteFile(filepath.Join(dir, "z.markov"), []byte("inferno-markov 1\nend: $\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	m, err := LoadModel(dir)
	if err != nil {
		t.Fatal(err)
	}
	s := NewServer(Config{ModelName: "fake"}, quiet)
	s.SetModel(m)
	ts := httptest.NewServer(s.Handler())
	defer ts.Close()
	cases := map[string]struct {
		path, body  string
		prompt      string
		max         int
		chat, usage bool
		wantObject  string
		wantFinish  string // when the case is about the finish reason
	}{
		"completion": {
			path: "/v1/completions", body: `{"model":"fake","prompt":"hello world","max_tokens":7,"stream":true}`,
			prompt: "hello world", max: 7, wantObject: "text_completion",
		},
		"completion with usage": {
			path: "/v1/completions", body: `{"model":"fake","prompt":"hello world","max_tokens":7,"stream":true,"stream_options":{"include_usage":true}}`,
			prompt: "hello world", max: 7, usage: true, wantObject: "text_completion",
		},
		"chat": {
			path: "/v1/chat/completions", body: `{"model":"fake","messages":[{"role":"user","content":"tell me"}],"max_tokens":9,"stream":true}`,
			prompt: "user: tell me\n", max: 9, chat: true, wantObject: "chat.completion.chunk",
		},
		"chat that stops before max_tokens": {
			path: "/v1/chat/completions", body: `{"model":"fake","messages":[{"role":"user","content":"hi"}],"stream":true,"stream_options":{"include_usage":true}}`,
			prompt: "user: hi\n", max: DefaultMaxTokens, chat: true, usage: true, wantObject: "chat.completion.chunk",
			wantFinish: "stop",
		},
		"completion with no tokens": {
			path: "/v1/completions", body: `{"model":"fake","prompt":"the end","stream":true}`,
			prompt: "the end", max: DefaultMaxTokens, wantObject: "text_completion", wantFinish: "stop",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			want := m.Generate(tc.prompt, tc.max)
			if tc.wantFinish != "" && want.Finish != tc.wantFinish {
				t.Fatalf("the model finishes %q with %q, want %q: the case tests nothing", tc.prompt, want.Finish, tc.wantFinish)
			}
			rsp, err := http.Post(ts.URL+tc.path, "application/json", strings.NewReader(tc.body))
			if err != nil {
				t.Fatal(err)
			}
			defer rsp.Body.Close()
			if rsp.StatusCode != 200 || rsp.Header.Get("Content-Type") != "text/event-stream" {
				t.Fatalf("status %d, Content-Type %q; want 200 text/event-stream", rsp.StatusCode, rsp.Header.Get("Content-Type"))
			}
			if rsp.Header.Get(HeaderWeights) != m.Digest {
				t.Errorf("%s = %q, want %s", HeaderWeights, rsp.Header.Get(HeaderWeights), m.Digest)
			}
			events := readEvents(t, rsp.Body)
			if len(events) == 0 || events[len(events)-1] != "[DONE]" {
				t.Fatalf("events %q do not end with [DONE]", events)
			}
			events = events[:len(events)-1]
			if tc.usage {
				last := decode[response](t, []byte(events[len(events)-1]))
				wantUsage := &usage{PromptTokens: want.PromptTokens, CompletionTokens: len(want.Tokens), TotalTokens: want.PromptTokens + len(want.Tokens)}
				if diff := cmp.Diff(wantUsage, last.Usage); diff != "" || len(last.Choices) != 0 {
					t.Errorf("usage chunk %s: choices %d, usage (-want +got):\n%s", events[len(events)-1], len(last.Choices), diff)
				}
				events = events[:len(events)-1]
			}
			wantChunks := max(len(want.Tokens), 1) // an empty answer is one empty chunk
			if len(events) != wantChunks {
				t.Fatalf("%d chunks, want one per token (%d): %q", len(events), wantChunks, events)
			}
			var text strings.Builder
			for i, e := range events {
				c := decode[response](t, []byte(e))
				if c.Object != tc.wantObject || c.Model != "fake" || c.SystemFingerprint != m.Digest || c.Usage != nil || len(c.Choices) != 1 {
					t.Fatalf("chunk %d: %s", i, e)
				}
				ch := c.Choices[0]
				if last := i == len(events)-1; last != (ch.FinishReason != nil) {
					t.Errorf("chunk %d of %d: finish_reason %v, want one on the last chunk only", i, len(events), ch.FinishReason)
				} else if last && *ch.FinishReason != want.Finish {
					t.Errorf("finish_reason %q, want %q", *ch.FinishReason, want.Finish)
				}
				if tc.chat {
					if ch.Delta == nil || (ch.Delta.Role == "assistant") != (i == 0) {
						t.Fatalf("chunk %d: delta %+v, want the assistant role on the first chunk only", i, ch.Delta)
					}
					text.WriteString(ch.Delta.Content)
				} else {
					if ch.Text == nil {
						t.Fatalf("chunk %d has no text: %s", i, e)
					}
					text.WriteString(*ch.Text)
				}
			}
			if text.String() != want.Text() {
				t.Errorf("the chunks concatenate to %q, want the non-streaming text %q", text.String(), want.Text())
			}
		})
	}
}

// TestStreamingFlushesEachToken reads the first chunk while the server is
// still sleeping before the second: a buffered stream would deliver both
// at the end.
func TestStreamingFlushesEachToken(t *testing.T) {
	_, ts, _ := newLoaded(t, Config{ModelName: "fake", TokenDelay: 300 * time.Millisecond})
	start := time.Now()
	rsp, err := http.Post(ts.URL+"/v1/completions", "application/json", strings.NewReader(`{"model":"fake","prompt":"a","max_tokens":10,"stream":true}`))
	if err != nil {
		t.Fatal(err)
	}
	defer rsp.Body.Close()
	line, err := bufio.NewReader(rsp.Body).ReadString('\n')
	if err != nil || !strings.HasPrefix(line, "data: {") {
		t.Fatalf("first line %q, %v", line, err)
	}
	if took := time.Since(start); took > 2*time.Second {
		t.Errorf("the first token took %s to arrive with a 300ms token delay: not flushed per token", took)
	}
}

func TestTokenDelayPacesNonStreamingAnswers(t *testing.T) {
	_, ts, _ := newLoaded(t, Config{ModelName: "fake", TokenDelay: 20 * time.Millisecond})
	start := time.Now()
	rsp, body := do(t, "POST", ts.URL+"/v1/completions", `{"model":"fake","prompt":"hello world","max_tokens":10}`)
	if rsp.StatusCode != 200 {
		t.Fatalf("%d %s", rsp.StatusCode, body)
	}
	n := decode[response](t, body).Usage.CompletionTokens
	if took, want := time.Since(start), time.Duration(n)*20*time.Millisecond; took < want {
		t.Errorf("%d tokens took %s, want at least %s", n, took, want)
	}
}

func TestChatPrompt(t *testing.T) {
	cases := map[string]struct {
		messages string
		want     string
	}{
		"strings":       {`[{"role":"system","content":"s"},{"role":"user","content":"u"}]`, "system: s\nuser: u\n"},
		"content parts": {`[{"role":"user","content":[{"type":"text","text":"a"},{"type":"image_url","image_url":{}},{"type":"text","text":"b"}]}]`, "user: a\nb\n"},
		"null content":  {`[{"role":"assistant","content":null},{"role":"user","content":"u"}]`, "assistant: \nuser: u\n"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := ChatPrompt(decode[[]ChatMessage](t, []byte(tc.messages)))
			if err != nil {
				t.Fatal(err)
			}
			if got != tc.want {
				t.Errorf("ChatPrompt = %q, want %q", got, tc.want)
			}
		})
	}
	if got, want := chatUserPrompt("tell me"), "user: tell me\n"; got != want {
		t.Errorf("chatUserPrompt = %q, want %q", got, want)
	}
}

// events is a slog.Handler that keeps every record, at every level, so
// that a test waits for what the server did (a refusal, a retry, a load, a
// drain) instead of sleeping and hoping it happened.
type events struct {
	mu      sync.Mutex
	records []slog.Record
	added   chan struct{} // closed and replaced on every record
}

func newEvents() *events { return &events{added: make(chan struct{})} }

func (e *events) Enabled(context.Context, slog.Level) bool { return true }
func (e *events) WithAttrs([]slog.Attr) slog.Handler       { return e }
func (e *events) WithGroup(string) slog.Handler            { return e }

func (e *events) Handle(_ context.Context, r slog.Record) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.records = append(e.records, r.Clone())
	close(e.added)
	e.added = make(chan struct{})
	return nil
}

// count is how many records so far have the message msg and, unless
// reason is empty, a reason attribute containing it.
func (e *events) count(msg, reason string) int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.countLocked(msg, reason)
}

func (e *events) countLocked(msg, reason string) int {
	n := 0
	for _, r := range e.records {
		if r.Message != msg {
			continue
		}
		matched := reason == ""
		r.Attrs(func(a slog.Attr) bool {
			if a.Key == "reason" && strings.Contains(a.Value.String(), reason) {
				matched = true
			}
			return !matched
		})
		if matched {
			n++
		}
	}
	return n
}

// await returns once n records match (as count counts them), and fails
// the test if that takes 10 s: the timeout is for a broken server, not
// the synchronisation.
func (e *events) await(t *testing.T, n int, msg, reason string) {
	t.Helper()
	timeout := time.After(10 * time.Second)
	for {
		e.mu.Lock()
		got, added := e.countLocked(msg, reason), e.added
		e.mu.Unlock()
		if got >= n {
			return
		}
		select {
		case <-added:
		case <-timeout:
			t.Fatalf("waited 10s for %d log records %q (reason %q), got %d", n, msg, reason, got)
		}
	}
}

func TestLoadWeightsWaitsForTheVolume(t *testing.T) {
	ev := newEvents()
	s := NewServer(Config{ModelName: "fake"}, slog.New(ev))
	ts := httptest.NewServer(s.Handler())
	defer ts.Close()
	dir := filepath.Join(t.TempDir(), "model")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan struct{})
	go func() { s.LoadWeights(ctx, dir, 0, 5*time.Millisecond); close(done) }()

	// refused waits until the loader has refused n times for reason, then
	// checks that /healthz says so: the directory does not change while
	// it looks, so neither does the reason.
	refused := func(n int, reason string) {
		t.Helper()
		ev.await(t, n, "weights not loaded", reason)
		if rsp, body := do(t, "GET", ts.URL+"/healthz", ""); rsp.StatusCode != 503 || !strings.Contains(string(body), reason) {
			t.Fatalf("healthz %d %q after the loader refused for %q", rsp.StatusCode, body, reason)
		}
	}
	refused(1, "does not exist")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	refused(1, "is empty")
	// The weights arrive before the marker, as a puller writes them.
	if err := (&WeightsCmd{Out: dir, Seed: "demo", Words: 64, Name: "model.markov"}).Run(); err != nil {
		t.Fatal(err)
	}
	refused(10, "no .inferno-complete marker") // ten retries with the same reason
	if err := os.WriteFile(filepath.Join(dir, MarkerFile), []byte("done\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	ev.await(t, 1, "weights loaded", "")
	if rsp, body := do(t, "GET", ts.URL+"/healthz", ""); rsp.StatusCode != 200 || string(body) != "ok" {
		t.Errorf("healthz %d %q once the weights loaded, want 200 ok", rsp.StatusCode, body)
	}
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("LoadWeights did not return once loaded")
	}

	// One line per reason, however many retries, and one when loaded.
	if n := ev.count("weights not loaded; retrying", ""); n != 3 {
		t.Errorf("%d refusal lines, want 3 (one per distinct reason)", n)
	}
	if n := ev.count("weights loaded", ""); n != 1 {
		t.Errorf("%d loaded lines, want 1", n)
	}
}

func TestLoadDelay(t *testing.T) {
	_, dir := loadSample(t, "demo")
	ev := newEvents()
	s := NewServer(Config{ModelName: "fake"}, slog.New(ev))
	ts := httptest.NewServer(s.Handler())
	defer ts.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	const delay = 300 * time.Millisecond
	start := time.Now()
	go s.LoadWeights(ctx, dir, delay, time.Millisecond)
	ev.await(t, 1, "waiting before loading weights", "")
	rsp, body := do(t, "GET", ts.URL+"/healthz", "")
	if rsp.StatusCode != 503 || !strings.Contains(string(body), "--load-delay") {
		if took := time.Since(start); took >= delay {
			t.Fatalf("healthz was asked %s after the start, after the %s load delay: the test proves nothing", took, delay)
		}
		t.Errorf("healthz during the load delay: %d %q, want 503 naming --load-delay", rsp.StatusCode, body)
	}
	ev.await(t, 1, "weights loaded", "")
	if took := time.Since(start); took < delay {
		t.Errorf("loaded after %s, before the %s load delay", took, delay)
	}
}
