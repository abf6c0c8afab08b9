package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Limits of a request. max_tokens is capped so that one request cannot
// hold a server (and, with --token-delay, a test) for an unbounded time.
const (
	DefaultMaxTokens = 16
	MaxTokensCap     = 4096
	maxBodyBytes     = 1 << 20
)

// The headers every response carries, so that a client behind a Service
// can count which pod and which weights answered it.
const (
	HeaderWeights = "X-Inferno-Weights"
	HeaderVersion = "X-Inferno-Version"
	HeaderPod     = "X-Inferno-Pod"
)

// Config is what a server needs besides its weights.
type Config struct {
	// ModelName is the only model name requests may ask for (the claim's
	// name in a cluster).
	ModelName string
	// ModelVersion is reported, never interpreted: it is the claim's tag.
	ModelVersion string
	// TokenDelay is slept before every generated token, so that requests
	// overlap and concurrency can be measured and scaled on.
	TokenDelay time.Duration
	// LogRequests logs one line per request; off, only events are logged.
	LogRequests bool
	// Adapters are LoRA adapters' weight directories by the model name
	// they answer to: a request for that name is answered from them. The
	// server is ready once the base weights and every adapter loaded.
	Adapters map[string]string

	// onRequest, when set, is called as a completion or chat request
	// starts, once it counts in RunningMetric: tests wait on it for a
	// request to be in flight instead of sleeping. Nil outside tests.
	onRequest func(*http.Request)
}

// Server answers the OpenAI-shaped API from a Model. It starts without
// weights and is unready until SetModel; Drain makes it unready again
// while it keeps answering.
type Server struct {
	cfg      Config
	log      *slog.Logger
	metrics  *metrics
	hostname string
	uid, gid int

	model    atomic.Pointer[Model]
	adapters atomic.Pointer[map[string]*Model]
	draining atomic.Bool

	mu     sync.Mutex
	reason string // why there is no model yet
}

// NewServer returns a server with no weights.
func NewServer(cfg Config, log *slog.Logger) *Server {
	host, err := os.Hostname()
	if err != nil {
		log.Warn("no hostname; responses name no pod", "err", err)
	}
	return &Server{
		cfg: cfg, log: log, metrics: newMetrics(), hostname: host,
		uid: os.Getuid(), gid: os.Getgid(),
		reason: "weights not loaded yet",
	}
}

// SetModel starts serving m.
func (s *Server) SetModel(m *Model) {
	s.model.Store(m)
	s.metrics.weights.WithLabelValues(m.Digest, s.cfg.ModelVersion).Set(1)
}

// setUnready records why the server has no model, for /healthz to say.
func (s *Server) setUnready(reason string) {
	s.mu.Lock()
	s.reason = reason
	s.mu.Unlock()
}

func (s *Server) unready() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.reason
}

// Drain fails the health check from now on, so that Kubernetes takes the
// pod out of its Service, while requests are still answered.
func (s *Server) Drain() { s.draining.Store(true) }

// LoadWeights loads dir, after delay, and retries every retry until it
// succeeds or ctx ends: a volume may be filled after the server starts.
// It logs a refusal only when the reason changes, so a server waiting for
// hours writes a handful of lines.
func (s *Server) LoadWeights(ctx context.Context, dir string, delay, retry time.Duration) {
	if delay > 0 {
		s.setUnready(fmt.Sprintf("waiting %s (--load-delay) before loading %s", delay, dir))
		s.log.Info("waiting before loading weights", "delay", delay, "dir", dir)
		if !sleep(ctx, delay) {
			return
		}
	}
	last := ""
	for {
		m, err := LoadModel(dir)
		if err == nil {
			err = s.loadAdapters()
		}
		if err == nil {
			s.SetModel(m)
			s.log.Info("weights loaded", "dir", dir, "files", strings.Join(m.Files, ","), "words", m.Words(), "digest", m.Digest)
			return
		}
		s.setUnready(err.Error())
		// Every attempt at debug level (which the server's own logger
		// leaves out), so that a test can count retries.
		s.log.Debug("weights not loaded", "reason", err.Error())
		if err.Error() != last {
			s.log.Warn("weights not loaded; retrying", "every", retry, "reason", err.Error())
			last = err.Error()
		}
		if !sleep(ctx, retry) {
			return
		}
	}
}

// loadAdapters loads every adapter of the config, or none.
func (s *Server) loadAdapters() error {
	loaded := make(map[string]*Model, len(s.cfg.Adapters))
	for name, dir := range s.cfg.Adapters {
		m, err := LoadModel(dir)
		if err != nil {
			return refuse("adapter %s: %v", name, err)
		}
		loaded[name] = m
		s.log.Info("adapter loaded", "adapter", name, "dir", dir, "digest", m.Digest)
	}
	s.adapters.Store(&loaded)
	return nil
}

// modelFor is the weights that answer a request for model name: the base
// model's, or an adapter's; nil for a name the server does not serve.
func (s *Server) modelFor(name string, base *Model) *Model {
	if name == s.cfg.ModelName {
		return base
	}
	if a := s.adapters.Load(); a != nil {
		return (*a)[name]
	}
	return nil
}

// sleep waits d or until ctx ends, and says whether d passed.
func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// route is one endpoint. inflight endpoints count in RunningMetric.
type route struct {
	method   string
	handler  http.HandlerFunc
	inflight bool
}

// Handler serves the API. It routes itself rather than through
// http.ServeMux so that unknown paths and wrong methods get JSON errors in
// OpenAI's shape, as every other error does.
func (s *Server) Handler() http.Handler {
	metricsHandler := s.metrics.handler()
	routes := map[string]route{
		"/healthz":             {method: http.MethodGet, handler: s.healthz},
		"/metrics":             {method: http.MethodGet, handler: metricsHandler.ServeHTTP},
		"/v1/models":           {method: http.MethodGet, handler: s.models},
		"/v1/completions":      {method: http.MethodPost, handler: s.completions, inflight: true},
		"/v1/chat/completions": {method: http.MethodPost, handler: s.chatCompletions, inflight: true},
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		digest := ""
		if m := s.model.Load(); m != nil {
			digest = m.Digest
		}
		h := w.Header()
		h.Set(HeaderWeights, digest)
		h.Set(HeaderVersion, s.cfg.ModelVersion)
		h.Set(HeaderPod, s.hostname)

		rec := &statusRecorder{ResponseWriter: w}
		endpoint := r.URL.Path
		rt, ok := routes[r.URL.Path]
		switch {
		case !ok:
			// One label value for every unknown path keeps the series
			// bounded whatever clients ask for.
			endpoint = "other"
			writeError(rec, http.StatusNotFound, "invalid_request_error", "not_found", fmt.Sprintf("no such path %s", r.URL.Path))
		case r.Method != rt.method && !(rt.method == http.MethodGet && r.Method == http.MethodHead):
			h.Set("Allow", rt.method)
			writeError(rec, http.StatusMethodNotAllowed, "invalid_request_error", "method_not_allowed", fmt.Sprintf("%s takes %s, not %s", r.URL.Path, rt.method, r.Method))
		default:
			if rt.inflight {
				s.metrics.running.Inc()
				defer s.metrics.running.Dec()
				if s.cfg.onRequest != nil {
					s.cfg.onRequest(r)
				}
			}
			rt.handler(rec, r)
		}
		code := rec.code
		if code == 0 {
			code = http.StatusOK
		}
		s.metrics.requests.WithLabelValues(endpoint, strconv.Itoa(code)).Inc()
		s.metrics.duration.WithLabelValues(endpoint).Observe(time.Since(start).Seconds())
		if s.cfg.LogRequests {
			s.log.Info("request", "method", r.Method, "path", r.URL.Path, "code", code, "duration", time.Since(start))
		}
	})
}

// statusRecorder remembers the status code for the metrics. Unwrap lets
// http.ResponseController reach the connection's Flush for streams.
type statusRecorder struct {
	http.ResponseWriter
	code int
}

func (r *statusRecorder) WriteHeader(code int) {
	if r.code == 0 {
		r.code = code
	}
	r.ResponseWriter.WriteHeader(code)
}

func (r *statusRecorder) Write(b []byte) (int, error) {
	if r.code == 0 {
		r.code = http.StatusOK
	}
	return r.ResponseWriter.Write(b)
}

func (r *statusRecorder) Unwrap() http.ResponseWriter { return r.ResponseWriter }

func (s *Server) healthz(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	switch {
	case s.draining.Load():
		w.WriteHeader(http.StatusServiceUnavailable)
		io.WriteString(w, "draining: shutting down")
	case s.model.Load() == nil:
		w.WriteHeader(http.StatusServiceUnavailable)
		io.WriteString(w, s.unready())
	default:
		io.WriteString(w, "ok")
	}
}

// modelObject is an OpenAI model with what this server adds: the version
// and weights it serves and who it runs as, so that a test can check the
// pod's security context from outside.
type modelObject struct {
	ID            string `json:"id"`
	Object        string `json:"object"`
	Created       int64  `json:"created"`
	OwnedBy       string `json:"owned_by"`
	Version       string `json:"version"`
	WeightsDigest string `json:"weights_digest"`
	// Parent is an adapter's base model; empty for the base model.
	Parent   string `json:"parent,omitempty"`
	UID      int    `json:"uid"`
	GID      int    `json:"gid"`
	Hostname string `json:"hostname"`
}

type modelList struct {
	Object string        `json:"object"`
	Data   []modelObject `json:"data"`
}

func (s *Server) models(w http.ResponseWriter, _ *http.Request) {
	m, ok := s.loaded(w)
	if !ok {
		return
	}
	list := modelList{Object: "list", Data: []modelObject{{
		ID: s.cfg.ModelName, Object: "model", OwnedBy: "inferno",
		Version: s.cfg.ModelVersion, WeightsDigest: m.Digest,
		UID: s.uid, GID: s.gid, Hostname: s.hostname,
	}}}
	// The adapters, in name order, each with its base model as parent
	// (as vLLM lists LoRA adapters).
	if a := s.adapters.Load(); a != nil {
		names := make([]string, 0, len(*a))
		for n := range *a {
			names = append(names, n)
		}
		sort.Strings(names)
		for _, n := range names {
			list.Data = append(list.Data, modelObject{
				ID: n, Object: "model", OwnedBy: "inferno", Parent: s.cfg.ModelName,
				Version: s.cfg.ModelVersion, WeightsDigest: (*a)[n].Digest,
				UID: s.uid, GID: s.gid, Hostname: s.hostname,
			})
		}
	}
	writeJSON(w, http.StatusOK, list)
}

// loaded returns the model, or answers 503 when there is none yet.
func (s *Server) loaded(w http.ResponseWriter) (*Model, bool) {
	m := s.model.Load()
	if m == nil {
		writeError(w, http.StatusServiceUnavailable, "server_error", "model_not_loaded", s.unready())
	}
	return m, m != nil
}

// streamOptions is OpenAI's stream_options; include_usage adds a last
// chunk with the token counts, which benchmark clients ask for.
type streamOptions struct {
	IncludeUsage bool `json:"include_usage"`
}

type completionRequest struct {
	Model         string          `json:"model"`
	Prompt        json.RawMessage `json:"prompt"`
	MaxTokens     *int            `json:"max_tokens"`
	Stream        bool            `json:"stream"`
	StreamOptions *streamOptions  `json:"stream_options"`
}

type chatRequest struct {
	Model               string         `json:"model"`
	Messages            []ChatMessage  `json:"messages"`
	MaxTokens           *int           `json:"max_tokens"`
	MaxCompletionTokens *int           `json:"max_completion_tokens"`
	Stream              bool           `json:"stream"`
	StreamOptions       *streamOptions `json:"stream_options"`
}

// ChatMessage is one message of a chat request. Content is a string or an
// array of content parts, of which the text parts count.
type ChatMessage struct {
	Role    string          `json:"role"`
	Content json.RawMessage `json:"content"`
}

// completionPrompt reads a completions prompt: a string, or an array of
// strings joined by newlines (one prompt, one choice, unlike OpenAI, which
// answers each). Token arrays are refused: this model has no tokenizer.
func completionPrompt(raw json.RawMessage) (string, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return "", nil
	}
	var one string
	if err := json.Unmarshal(raw, &one); err == nil {
		return one, nil
	}
	var many []string
	if err := json.Unmarshal(raw, &many); err != nil {
		return "", errors.New("prompt must be a string or an array of strings")
	}
	return strings.Join(many, "\n"), nil
}

// ChatPrompt is the prompt a chat answers: one "role: content" line per
// message. `generate --chat` uses it too, so the oracle and the server
// cannot disagree.
func ChatPrompt(messages []ChatMessage) (string, error) {
	var b strings.Builder
	for i, m := range messages {
		content, err := messageContent(m.Content)
		if err != nil {
			return "", fmt.Errorf("messages[%d].content: %v", i, err)
		}
		fmt.Fprintf(&b, "%s: %s\n", m.Role, content)
	}
	return b.String(), nil
}

func messageContent(raw json.RawMessage) (string, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return "", nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err == nil {
		return s, nil
	}
	var parts []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if err := json.Unmarshal(raw, &parts); err != nil {
		return "", errors.New("must be a string or an array of content parts")
	}
	var texts []string
	for _, p := range parts {
		if p.Type == "text" {
			texts = append(texts, p.Text)
		}
	}
	return strings.Join(texts, "\n"), nil
}

// checkMaxTokens applies the default and the bounds shared by the API and
// `generate`.
func checkMaxTokens(n *int) (int, error) {
	if n == nil {
		return DefaultMaxTokens, nil
	}
	if *n < 1 || *n > MaxTokensCap {
		return 0, fmt.Errorf("max_tokens must be between 1 and %d, not %d", MaxTokensCap, *n)
	}
	return *n, nil
}

func (s *Server) completions(w http.ResponseWriter, r *http.Request) {
	var req completionRequest
	if !decodeBody(w, r, &req) {
		return
	}
	prompt, err := completionPrompt(req.Prompt)
	if err != nil {
		writeError(w, http.StatusBadRequest, "invalid_request_error", "invalid_prompt", err.Error())
		return
	}
	s.generate(w, r, req.Model, prompt, req.MaxTokens, req.Stream, req.StreamOptions, false)
}

func (s *Server) chatCompletions(w http.ResponseWriter, r *http.Request) {
	var req chatRequest
	if !decodeBody(w, r, &req) {
		return
	}
	if len(req.Messages) == 0 {
		writeError(w, http.StatusBadRequest, "invalid_request_error", "invalid_messages", "messages must not be empty")
		return
	}
	prompt, err := ChatPrompt(req.Messages)
	if err != nil {
		writeError(w, http.StatusBadRequest, "invalid_request_error", "invalid_messages", err.Error())
		return
	}
	maxTokens := req.MaxTokens
	if req.MaxCompletionTokens != nil { // the newer name wins, as in OpenAI's API
		maxTokens = req.MaxCompletionTokens
	}
	s.generate(w, r, req.Model, prompt, maxTokens, req.Stream, req.StreamOptions, true)
}

// generate answers a completion or chat request once its prompt is known.
func (s *Server) generate(w http.ResponseWriter, r *http.Request, model, prompt string, maxTokens *int, stream bool, opts *streamOptions, chat bool) {
	if model == "" {
		writeError(w, http.StatusBadRequest, "invalid_request_error", "missing_model", "model is required")
		return
	}
	if model != s.cfg.ModelName && s.cfg.Adapters[model] == "" {
		writeError(w, http.StatusNotFound, "invalid_request_error", "model_not_found",
			fmt.Sprintf("the model %q does not exist; this server serves %q", model, s.cfg.ModelName))
		return
	}
	n, err := checkMaxTokens(maxTokens)
	if err != nil {
		writeError(w, http.StatusBadRequest, "invalid_request_error", "invalid_max_tokens", err.Error())
		return
	}
	base, ok := s.loaded(w)
	if !ok {
		return
	}
	m := s.modelFor(model, base)
	// An adapter's answer names the adapter's weights.
	w.Header().Set(HeaderWeights, m.Digest)
	c := m.Generate(prompt, n)
	s.metrics.tokens.WithLabelValues("prompt").Add(float64(c.PromptTokens))
	a := answer{
		id: responseID(chat, m.Digest, prompt, n), model: model, digest: m.Digest,
		chat: chat, completion: c,
	}
	if stream {
		s.stream(w, r, a, opts != nil && opts.IncludeUsage)
		return
	}
	// Pace the whole answer as a stream would be, so that a non-streaming
	// request is in flight for as long.
	for range c.Tokens {
		if !s.pace(r.Context()) {
			clientGone(w)
			return
		}
		s.metrics.tokens.WithLabelValues("completion").Inc()
	}
	writeJSON(w, http.StatusOK, a.response())
}

// pace sleeps the token delay, and says false when the client left.
func (s *Server) pace(ctx context.Context) bool {
	if s.cfg.TokenDelay <= 0 {
		return ctx.Err() == nil
	}
	return sleep(ctx, s.cfg.TokenDelay)
}

// clientGone records a request its client abandoned; 499 is nginx's code
// for it, and it is only ever seen in the metrics.
func clientGone(w http.ResponseWriter) { w.WriteHeader(499) }

// responseID derives the id from what determines the answer, so that the
// same request gets the same id from every pod.
func responseID(chat bool, digest, prompt string, maxTokens int) string {
	prefix := "cmpl-"
	if chat {
		prefix = "chatcmpl-"
	}
	h := sha256.New()
	fmt.Fprintf(h, "%s\x00%s\x00%d\x00%s", prefix, digest, maxTokens, prompt)
	return prefix + hex.EncodeToString(h.Sum(nil))[:24]
}

// answer is a generated completion and what its response objects need.
type answer struct {
	id, model, digest string
	chat              bool
	completion        Completion
}

type usage struct {
	PromptTokens     int `json:"prompt_tokens"`
	CompletionTokens int `json:"completion_tokens"`
	TotalTokens      int `json:"total_tokens"`
}

type message struct {
	Role    string `json:"role,omitempty"`
	Content string `json:"content"`
}

type choice struct {
	Index int `json:"index"`
	// Text for completions, Message or Delta for chat.
	Text         *string   `json:"text,omitempty"`
	Message      *message  `json:"message,omitempty"`
	Delta        *message  `json:"delta,omitempty"`
	Logprobs     *struct{} `json:"logprobs"`
	FinishReason *string   `json:"finish_reason"`
}

type response struct {
	ID                string   `json:"id"`
	Object            string   `json:"object"`
	Created           int64    `json:"created"`
	Model             string   `json:"model"`
	SystemFingerprint string   `json:"system_fingerprint"`
	Choices           []choice `json:"choices"`
	Usage             *usage   `json:"usage,omitempty"`
}

func (a answer) usage() *usage {
	c := a.completion
	return &usage{PromptTokens: c.PromptTokens, CompletionTokens: len(c.Tokens), TotalTokens: c.PromptTokens + len(c.Tokens)}
}

func (a answer) envelope(object string, choices ...choice) response {
	// created is 0, not the clock: answers must be byte-identical across
	// pods and runs.
	return response{ID: a.id, Object: object, Model: a.model, SystemFingerprint: a.digest, Choices: choices}
}

func (a answer) response() response {
	text := a.completion.Text()
	finish := a.completion.Finish
	ch := choice{FinishReason: &finish}
	object := "text_completion"
	if a.chat {
		object = "chat.completion"
		ch.Message = &message{Role: "assistant", Content: text}
	} else {
		ch.Text = &text
	}
	r := a.envelope(object, ch)
	r.Usage = a.usage()
	return r
}

// chunk is the i-th of n stream chunks carrying piece; the last carries
// the finish reason, and the first of a chat the assistant role.
func (a answer) chunk(i, n int, piece string) response {
	ch := choice{}
	if i == n-1 {
		finish := a.completion.Finish
		ch.FinishReason = &finish
	}
	if !a.chat {
		ch.Text = &piece
		return a.envelope("text_completion", ch)
	}
	ch.Delta = &message{Content: piece}
	if i == 0 {
		ch.Delta.Role = "assistant"
	}
	return a.envelope("chat.completion.chunk", ch)
}

// stream answers with server-sent events, one chunk per token, flushed as
// each token is generated. The pieces concatenate to the non-streaming
// text: every token but the first carries its leading space. An answer
// with no tokens is one empty chunk, so the finish reason is still sent.
func (s *Server) stream(w http.ResponseWriter, r *http.Request, a answer, includeUsage bool) {
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	rc := http.NewResponseController(w)
	send := func(v any) bool {
		b, err := json.Marshal(v)
		if err == nil {
			_, err = fmt.Fprintf(w, "data: %s\n\n", b)
		}
		if err == nil {
			err = rc.Flush()
		}
		return err == nil
	}

	tokens := a.completion.Tokens
	if len(tokens) == 0 {
		if !send(a.chunk(0, 1, "")) {
			return
		}
	}
	for i, tok := range tokens {
		if !s.pace(r.Context()) {
			return
		}
		piece := tok
		if i > 0 {
			piece = " " + tok
		}
		if !send(a.chunk(i, len(tokens), piece)) {
			return
		}
		s.metrics.tokens.WithLabelValues("completion").Inc()
	}
	if includeUsage {
		object := "text_completion"
		if a.chat {
			object = "chat.completion.chunk"
		}
		last := a.envelope(object)
		last.Choices = []choice{}
		last.Usage = a.usage()
		if !send(last) {
			return
		}
	}
	io.WriteString(w, "data: [DONE]\n\n")
	rc.Flush()
}

// decodeBody reads a JSON request body of at most maxBodyBytes, answering
// 413 or 400 itself when it cannot.
func decodeBody(w http.ResponseWriter, r *http.Request, v any) bool {
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, maxBodyBytes))
	err := dec.Decode(v)
	if err == nil && dec.More() {
		err = errors.New("data after the JSON object")
	}
	var tooLarge *http.MaxBytesError
	switch {
	case errors.As(err, &tooLarge):
		writeError(w, http.StatusRequestEntityTooLarge, "invalid_request_error", "request_too_large",
			fmt.Sprintf("the request body is larger than %d bytes", tooLarge.Limit))
		return false
	case errors.Is(err, io.EOF):
		writeError(w, http.StatusBadRequest, "invalid_request_error", "invalid_json", "the request body is empty; want a JSON object")
		return false
	case err != nil:
		writeError(w, http.StatusBadRequest, "invalid_request_error", "invalid_json", "the request body is not valid JSON: "+err.Error())
		return false
	}
	return true
}

// apiError is OpenAI's error object.
type apiError struct {
	Message string `json:"message"`
	Type    string `json:"type"`
	Code    string `json:"code"`
}

func writeError(w http.ResponseWriter, status int, typ, code, msg string) {
	writeJSON(w, status, struct {
		Error apiError `json:"error"`
	}{apiError{Message: msg, Type: typ, Code: code}})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil { // only our own types are marshalled; this is a bug
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write(append(b, '\n'))
}
