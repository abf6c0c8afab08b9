package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/inferno-ai/function-inferno/input/v1beta1"
)

// parse parses args as main does, with env set for the duration.
func parse(t *testing.T, args []string, env map[string]string) (*CLI, string, error) {
	t.Helper()
	for _, k := range []string{"MODEL_DIR", "PORT", "MODEL_NAME", "MODEL_VERSION", "FAKE_LOAD_DELAY", "FAKE_TOKEN_DELAY", "FAKE_DRAIN_DELAY", "FAKE_SHUTDOWN_TIMEOUT", "FAKE_LOG_REQUESTS"} {
		if v, ok := env[k]; ok {
			t.Setenv(k, v)
		} else {
			t.Setenv(k, "")
			os.Unsetenv(k) // t.Setenv restores it after the test
		}
	}
	var cli CLI
	p, err := newParser(&cli)
	if err != nil {
		t.Fatal(err)
	}
	ctx, err := p.Parse(args)
	if err != nil {
		return nil, "", err
	}
	return &cli, ctx.Command(), nil
}

func TestCLI(t *testing.T) {
	defaults := ServeCmd{Port: 8080, ModelName: "fake", ShutdownTimeout: 30 * time.Second}
	with := func(f func(*ServeCmd)) ServeCmd { c := defaults; f(&c); return c }
	cases := map[string]struct {
		args      []string
		env       map[string]string
		wantCmd   string
		wantServe ServeCmd
		wantErr   string
	}{
		"the preset's flags serve": {
			args: []string{"--model-dir=/model", "--port=8080"}, wantCmd: "serve",
			wantServe: with(func(c *ServeCmd) { c.ModelDir = "/model" }),
		},
		"the Deployment's environment alone serves": {
			env:     map[string]string{"MODEL_DIR": "/model", "PORT": "9000", "MODEL_NAME": "llama", "MODEL_VERSION": "2"},
			wantCmd: "serve",
			wantServe: with(func(c *ServeCmd) {
				c.ModelDir, c.Port, c.ModelName, c.ModelVersion = "/model", 9000, "llama", "2"
			}),
		},
		"FAKE_ variables": {
			env:     map[string]string{"MODEL_DIR": "/m", "FAKE_LOAD_DELAY": "5s", "FAKE_TOKEN_DELAY": "20ms", "FAKE_DRAIN_DELAY": "3s", "FAKE_SHUTDOWN_TIMEOUT": "1m", "FAKE_LOG_REQUESTS": "true"},
			wantCmd: "serve",
			wantServe: with(func(c *ServeCmd) {
				c.ModelDir, c.LoadDelay, c.TokenDelay, c.DrainDelay, c.ShutdownTimeout, c.LogRequests = "/m", 5*time.Second, 20*time.Millisecond, 3*time.Second, time.Minute, true
			}),
		},
		"flags win over the environment": {
			args: []string{"--model-dir=/flag", "--token-delay=1ms"}, env: map[string]string{"MODEL_DIR": "/env", "FAKE_TOKEN_DELAY": "1s"},
			wantCmd:   "serve",
			wantServe: with(func(c *ServeCmd) { c.ModelDir, c.TokenDelay = "/flag", time.Millisecond }),
		},
		"serve by name": {
			args: []string{"serve", "--model-dir", "/model"}, wantCmd: "serve",
			wantServe: with(func(c *ServeCmd) { c.ModelDir = "/model" }),
		},
		"no model directory":   {wantErr: "--model-dir"},
		"a bad duration":       {args: []string{"--model-dir=/m", "--drain-delay=soon"}, wantErr: "drain-delay"},
		"weights":              {args: []string{"weights", "--out", "/tmp/w", "--seed", "demo"}, wantCmd: "weights"},
		"weights without seed": {args: []string{"weights", "--out", "/tmp/w"}, wantErr: "--seed"},
		"generate":             {args: []string{"generate", "--model-dir", "/tmp/w", "--prompt", "hi", "--max-tokens", "3"}, wantCmd: "generate"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			cli, cmd, err := parse(t, tc.args, tc.env)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("Parse(%q): error %v, want one naming %s", tc.args, err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("Parse(%q): %v", tc.args, err)
			}
			if !strings.HasPrefix(cmd, tc.wantCmd) {
				t.Fatalf("Parse(%q) selected %q, want %q", tc.args, cmd, tc.wantCmd)
			}
			if tc.wantCmd == "serve" {
				if diff := cmp.Diff(tc.wantServe, cli.Serve); diff != "" {
					t.Errorf("serve flags (-want +got):\n%s", diff)
				}
			}
		})
	}
}

// TestThePresetRunsThisServer checks the `fake` preset against this
// binary: its args parse, its port and health path are the ones served,
// and the marker is the one pullers write.
func TestThePresetRunsThisServer(t *testing.T) {
	preset := v1beta1.BuiltinRuntimes()["fake"]
	port := strconv.Itoa(int(*preset.Port))
	var args []string
	for _, a := range preset.Args { // as the kubelet expands them
		args = append(args, strings.NewReplacer("$(MODEL_DIR)", "/model", "$(PORT)", port).Replace(a))
	}
	cli, cmd, err := parse(t, args, nil)
	if err != nil {
		t.Fatalf("the preset's args %q: %v", args, err)
	}
	if cmd != "serve" || cli.Serve.ModelDir != "/model" || strconv.Itoa(cli.Serve.Port) != port {
		t.Errorf("the preset's args %q: command %q, model dir %q, port %d", args, cmd, cli.Serve.ModelDir, cli.Serve.Port)
	}
	if defaults, _, _ := parse(t, []string{"--model-dir=/m"}, nil); strconv.Itoa(defaults.Serve.Port) != port {
		t.Errorf("the default port %d is not the preset's %s", defaults.Serve.Port, port)
	}
	if preset.HealthPath != "/healthz" {
		t.Errorf("the preset probes %s; the server answers /healthz", preset.HealthPath)
	}
	if MarkerFile != v1beta1.MarkerFile {
		t.Errorf("MarkerFile = %q, pullers write v1beta1.MarkerFile %q", MarkerFile, v1beta1.MarkerFile)
	}
}

func TestWeightsCommand(t *testing.T) {
	out := filepath.Join(t.TempDir(), "a", "b") // created, parents too
	if err := (&WeightsCmd{Out: out, Seed: "demo", Words: 64, Name: "model.markov"}).Run(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(out, MarkerFile)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("without --marker the marker exists (%v)", err)
	}
	if _, err := LoadModel(out); err == nil || !strings.Contains(err.Error(), "marker") {
		t.Errorf("LoadModel without the marker: %v, want a refusal", err)
	}
	if err := (&WeightsCmd{Out: out, Seed: "demo", Words: 64, Name: "model.markov", Marker: true}).Run(); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(out, "model.markov"))
	if err != nil {
		t.Fatal(err)
	}
	if string(b) != string(SampleWeights("demo", 64)) {
		t.Error("the written file is not SampleWeights(demo, 64)")
	}
	if _, err := LoadModel(out); err != nil {
		t.Errorf("LoadModel of a written directory with its marker: %v", err)
	}

	for name, c := range map[string]WeightsCmd{
		"one word":       {Out: out, Seed: "x", Words: 1, Name: "m.markov"},
		"too many words": {Out: out, Seed: "x", Words: 5000, Name: "m.markov"},
		"a path as name": {Out: out, Seed: "x", Words: 10, Name: "../m.markov"},
		"the marker":     {Out: out, Seed: "x", Words: 10, Name: MarkerFile},
	} {
		if err := c.Run(); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}

// TestGenerateIsTheServersOracle is the promise the end-to-end test relies
// on: `generate` prints exactly the text the server answers.
func TestGenerateIsTheServersOracle(t *testing.T) {
	_, dir := loadSample(t, "demo")
	m, err := LoadModel(dir)
	if err != nil {
		t.Fatal(err)
	}
	s := NewServer(Config{ModelName: "fake"}, quiet)
	s.SetModel(m)
	srv := httptest.NewServer(s.Handler())
	defer srv.Close()
	ts := srv.URL

	for _, tc := range []struct {
		prompt string
		max    int
		chat   bool
	}{
		{"hello world", 16, false},
		{"hello world", 3, false},
		{"", 16, false},
		{"tell me a story", 40, true},
	} {
		var out bytes.Buffer
		if err := (&GenerateCmd{ModelDir: dir, Prompt: tc.prompt, MaxTokens: tc.max, Chat: tc.chat}).Run(&out); err != nil {
			t.Fatal(err)
		}
		var got string
		if tc.chat {
			body, _ := json.Marshal(map[string]any{"model": "fake", "max_tokens": tc.max, "messages": []map[string]string{{"role": "user", "content": tc.prompt}}})
			_, b := do(t, "POST", ts+"/v1/chat/completions", string(body))
			got = decode[response](t, b).Choices[0].Message.Content
		} else {
			body, _ := json.Marshal(map[string]any{"model": "fake", "max_tokens": tc.max, "prompt": tc.prompt})
			_, b := do(t, "POST", ts+"/v1/completions", string(body))
			got = *decode[response](t, b).Choices[0].Text
		}
		if out.String() != got {
			t.Errorf("prompt %q, max %d, chat %v: generate printed %q, the server answered %q", tc.prompt, tc.max, tc.chat, out.String(), got)
		}
	}
	if err := (&GenerateCmd{ModelDir: dir, MaxTokens: 0}).Run(&bytes.Buffer{}); err == nil {
		t.Error("generate --max-tokens=0: no error")
	}
	if err := (&GenerateCmd{ModelDir: t.TempDir(), MaxTokens: 1}).Run(&bytes.Buffer{}); err == nil || !strings.Contains(err.Error(), "empty") {
		t.Errorf("generate on an empty directory: %v, want the loader's refusal", err)
	}
}

// startServe runs `serve` on a loopback port until the returned cancel,
// as SIGTERM would end it, and returns once it is ready. onRequest, when
// not nil, is the server's Config.onRequest; ev has the server's log.
func startServe(t *testing.T, c ServeCmd, onRequest func(*http.Request)) (url string, ev *events, sigterm func(), exited <-chan error) {
	t.Helper()
	cfg, err := c.config()
	if err != nil {
		t.Fatal(err)
	}
	cfg.onRequest = onRequest
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ev = newEvents()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	// Closed after the result, so that the cleanup's receive returns also
	// when the test took the result.
	go func() { done <- c.serve(ctx, ln, cfg, slog.New(ev)); close(done) }()
	t.Cleanup(func() {
		cancel()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			t.Error("serve did not return")
		}
	})
	url = "http://" + ln.Addr().String()
	ev.await(t, 1, "weights loaded", "")
	if rsp, body := do(t, "GET", url+"/healthz", ""); rsp.StatusCode != 200 {
		t.Fatalf("healthz %d %q once the weights loaded, want 200", rsp.StatusCode, body)
	}
	return url, ev, cancel, done
}

func TestGracefulShutdown(t *testing.T) {
	m, dir := loadSample(t, "demo")
	// Prompts whose answers run the full 20 tokens, so that they are still
	// in flight when the drain ends.
	var long []string
	for i := 0; len(long) < 2; i++ {
		if p := "slow " + strconv.Itoa(i); m.Generate(p, 20).Finish == "length" {
			long = append(long, p)
		}
	}
	const tokenDelay, drainDelay = 50 * time.Millisecond, 400 * time.Millisecond
	started := make(chan struct{}, 3) // the two slow requests and the one during the drain
	url, ev, sigterm, exited := startServe(t, ServeCmd{
		ModelDir: dir, ModelName: "fake", TokenDelay: tokenDelay,
		DrainDelay: drainDelay, ShutdownTimeout: 10 * time.Second,
	}, func(*http.Request) { started <- struct{}{} })

	// A slow stream (20 tokens, a second) and a slow plain request.
	type result struct {
		text string
		err  error
		at   time.Time
	}
	slowStream, slowPlain := make(chan result, 1), make(chan result, 1)
	firstChunk := make(chan struct{})
	go func() {
		rsp, err := http.Post(url+"/v1/completions", "application/json", strings.NewReader(`{"model":"fake","prompt":"`+long[0]+`","max_tokens":20,"stream":true}`))
		if err != nil {
			slowStream <- result{err: err}
			close(firstChunk)
			return
		}
		defer rsp.Body.Close()
		var text strings.Builder
		buf := make([]byte, 1)
		var raw bytes.Buffer
		first := true
		for { // byte by byte, to notice the first chunk while the rest is still coming
			n, err := rsp.Body.Read(buf)
			raw.Write(buf[:n])
			if first && bytes.Contains(raw.Bytes(), []byte("\n\n")) {
				close(firstChunk)
				first = false
			}
			if err != nil {
				break
			}
		}
		events, err := parseEvents(&raw)
		if err != nil {
			slowStream <- result{err: err}
			return
		}
		for _, e := range events {
			if e == "[DONE]" {
				slowStream <- result{text: text.String(), at: time.Now()}
				return
			}
			var c response
			if err := json.Unmarshal([]byte(e), &c); err != nil {
				slowStream <- result{err: err}
				return
			}
			text.WriteString(*c.Choices[0].Text)
		}
		slowStream <- result{err: errors.New("the stream ended without [DONE]: " + raw.String())}
	}()
	go func() {
		rsp, err := http.Post(url+"/v1/completions", "application/json", strings.NewReader(`{"model":"fake","prompt":"`+long[1]+`","max_tokens":20}`))
		if err != nil {
			slowPlain <- result{err: err}
			return
		}
		defer rsp.Body.Close()
		var c response
		err = json.NewDecoder(rsp.Body).Decode(&c)
		if err == nil && rsp.StatusCode != 200 {
			err = errors.New(rsp.Status)
		}
		if err != nil {
			slowPlain <- result{err: err}
			return
		}
		slowPlain <- result{text: *c.Choices[0].Text, at: time.Now()}
	}()
	// Both requests are in the server's hands, and the stream is flowing.
	for i := range 2 {
		select {
		case <-started:
		case <-time.After(10 * time.Second):
			t.Fatalf("%d of the 2 slow requests reached the server", i)
		}
	}
	<-firstChunk
	sigtermAt := time.Now()
	sigterm()

	// While draining: unready, but still answering new requests.
	ev.await(t, 1, "draining", "")
	if rsp, body := do(t, "GET", url+"/healthz", ""); rsp.StatusCode != 503 || !strings.Contains(string(body), "draining") {
		t.Fatalf("healthz %d %q once draining, want 503 draining", rsp.StatusCode, body)
	}
	rsp, body := do(t, "POST", url+"/v1/completions", `{"model":"fake","prompt":"during the drain","max_tokens":1}`)
	if rsp.StatusCode != 200 {
		t.Errorf("a new request while draining: %d %s, want 200", rsp.StatusCode, body)
	}
	if rsp.Close != true {
		t.Error("a response while draining keeps the connection alive; want Connection: close")
	}
	if time.Since(sigtermAt) >= drainDelay {
		t.Fatalf("the drain checks took longer than the drain delay (%s); the test proves nothing", drainDelay)
	}

	// The in-flight requests finish after the drain, with the whole answer.
	for name, c := range map[string]struct {
		ch     chan result
		prompt string
	}{"stream": {slowStream, long[0]}, "plain": {slowPlain, long[1]}} {
		select {
		case r := <-c.ch:
			if r.err != nil {
				t.Fatalf("the in-flight %s request: %v", name, r.err)
			}
			if want := m.Generate(c.prompt, 20).Text(); r.text != want {
				t.Errorf("the in-flight %s request got %q, want %q", name, r.text, want)
			}
			if r.at.Sub(sigtermAt) < drainDelay {
				t.Errorf("the in-flight %s request finished %s after SIGTERM, before the drain ended: it was not slow enough to test shutdown", name, r.at.Sub(sigtermAt))
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("the in-flight %s request did not finish", name)
		}
	}
	select {
	case err := <-exited:
		if err != nil {
			t.Errorf("serve returned %v, want nil (exit 0)", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("serve did not return after its requests finished")
	}
	if _, err := http.Get(url + "/healthz"); err == nil {
		t.Error("the server still accepts connections after shutting down")
	}
}

func TestShutdownTimeoutCutsSlowRequests(t *testing.T) {
	m, dir := loadSample(t, "demo")
	if len(m.Generate("x", 30).Tokens) < 2 {
		t.Fatal(`the answer to "x" is too short to be slow; pick another prompt`)
	}
	started := make(chan struct{}, 1)
	url, _, sigterm, exited := startServe(t, ServeCmd{
		ModelDir: dir, ModelName: "fake", TokenDelay: time.Second, ShutdownTimeout: 100 * time.Millisecond,
	}, func(*http.Request) { started <- struct{}{} })
	go func() {
		rsp, err := http.Post(url+"/v1/completions", "application/json", strings.NewReader(`{"model":"fake","prompt":"x","max_tokens":30}`))
		if err == nil {
			rsp.Body.Close()
		}
	}()
	select { // the slow request is in flight: 30 tokens, a second each
	case <-started:
	case <-time.After(10 * time.Second):
		t.Fatal("the slow request never reached the server")
	}
	sigterm()
	select {
	case err := <-exited:
		if err == nil || !strings.Contains(err.Error(), "--shutdown-timeout") {
			t.Errorf("serve returned %v, want an error naming --shutdown-timeout", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("serve waited past its shutdown timeout")
	}
}

// TestNoKubernetesDependencies keeps the image small and the server a
// plain workload: the constant it shares with input/v1beta1 is copied, not
// imported.
func TestNoKubernetesDependencies(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go list")
	}
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command")
	}
	out, err := exec.Command(gobin, "list", "-deps", ".").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	if !strings.Contains(string(out), "\nnet/http\n") {
		t.Fatalf("go list -deps printed no net/http; the check below would prove nothing:\n%s", out)
	}
	for dep := range strings.Lines(string(out)) {
		if strings.HasPrefix(dep, "k8s.io/") || strings.HasPrefix(dep, "sigs.k8s.io/") || strings.Contains(dep, "crossplane") || strings.HasPrefix(dep, "github.com/inferno-ai/") && strings.TrimSpace(dep) != "github.com/inferno-ai/function-inferno/cmd/fake-model-server" {
			t.Errorf("the server links %s", strings.TrimSpace(dep))
		}
	}
}
