package main

import (
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// TestAdapters: a server given --adapter NAME=DIR is ready only once the
// base weights and every adapter loaded, answers a request for NAME from
// the adapter's weights (another digest, another answer) and for its own
// name from the base, and lists the adapters in /v1/models with the base
// as their parent.
func TestAdapters(t *testing.T) {
	base, baseDir := loadSample(t, "demo")
	sql, sqlDir := loadSample(t, "sql-adapter")
	missing := t.TempDir() + "/none"

	ev := newEvents()
	s := NewServer(Config{ModelName: "llama", Adapters: map[string]string{"sql": sqlDir, "later": missing}}, slog.New(ev))
	ts := httptest.NewServer(s.Handler())
	t.Cleanup(ts.Close)
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	go s.LoadWeights(ctx, baseDir, 0, time.Millisecond)
	// The base weights and the other adapter load; three attempts later
	// the server is still unready, naming the missing adapter.
	ev.await(t, 3, "weights not loaded", "adapter later")
	if rsp, body := do(t, "GET", ts.URL+"/healthz", ""); rsp.StatusCode != http.StatusServiceUnavailable || !strings.Contains(string(body), "adapter later") {
		t.Fatalf("healthz %d %s while an adapter is missing, want 503 naming it", rsp.StatusCode, body)
	}
	cancel()

	s = NewServer(Config{ModelName: "llama", Adapters: map[string]string{"sql": sqlDir}}, quiet)
	ts = httptest.NewServer(s.Handler())
	t.Cleanup(ts.Close)
	s.LoadWeights(context.Background(), baseDir, 0, time.Millisecond)

	list := decode[modelList](t, func() []byte { _, b := do(t, "GET", ts.URL+"/v1/models", ""); return b }())
	var got []string
	for _, m := range list.Data {
		got = append(got, m.ID+"/"+m.Parent+"/"+m.WeightsDigest)
	}
	if diff := cmp.Diff([]string{"llama//" + base.Digest, "sql/llama/" + sql.Digest}, got); diff != "" {
		t.Errorf("/v1/models (-want +got):\n%s", diff)
	}
	for model, want := range map[string]*Model{"llama": base, "sql": sql} {
		rsp, body := do(t, "POST", ts.URL+"/v1/completions", `{"model":"`+model+`","prompt":"hello world","max_tokens":4}`)
		if rsp.StatusCode != http.StatusOK {
			t.Fatalf("model %s: %d %s", model, rsp.StatusCode, body)
		}
		if d := rsp.Header.Get(HeaderWeights); d != want.Digest {
			t.Errorf("model %s answered from weights %s, want %s", model, d, want.Digest)
		}
		r := decode[response](t, body)
		if r.Model != model || r.Choices[0].Text == nil || *r.Choices[0].Text != want.Generate("hello world", 4).Text() {
			t.Errorf("model %s answered %+v", model, r)
		}
	}
	if rsp, _ := do(t, "POST", ts.URL+"/v1/completions", `{"model":"other","prompt":"x"}`); rsp.StatusCode != http.StatusNotFound {
		t.Errorf("an unknown model got %d, want 404", rsp.StatusCode)
	}
}

func TestParseAdapters(t *testing.T) {
	if got, err := parseAdapters([]string{"a=/x", "b=/y=z"}, "llama"); err != nil || !cmp.Equal(got, map[string]string{"a": "/x", "b": "/y=z"}) {
		t.Errorf("parseAdapters = %v, %v", got, err)
	}
	for _, bad := range [][]string{{"a"}, {"=x"}, {"a="}, {"llama=/x"}, {"a=/x", "a=/y"}} {
		if _, err := parseAdapters(bad, "llama"); err == nil {
			t.Errorf("parseAdapters(%q) accepted", bad)
		}
	}
}
