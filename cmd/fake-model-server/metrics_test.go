package main

import (
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/inferno-ai/function-inferno/input/v1beta1"
)

// scrape returns the value of every series /metrics exposes, by its
// exposition-format name and labels, e.g. `x_total{code="200"}`.
func scrape(t *testing.T, url string) map[string]float64 {
	t.Helper()
	rsp, body := do(t, "GET", url+"/metrics", "")
	if rsp.StatusCode != 200 || !strings.HasPrefix(rsp.Header.Get("Content-Type"), "text/plain") {
		t.Fatalf("/metrics: %d %q", rsp.StatusCode, rsp.Header.Get("Content-Type"))
	}
	series := map[string]float64{}
	for line := range strings.Lines(string(body)) {
		if strings.HasPrefix(line, "#") {
			continue
		}
		i := strings.LastIndexByte(line, ' ')
		v, err := strconv.ParseFloat(strings.TrimSpace(line[i+1:]), 64)
		if err != nil {
			t.Fatalf("metrics line %q: %v", line, err)
		}
		series[line[:i]] = v
	}
	return series
}

func TestMetricsCount(t *testing.T) {
	_, ts, m := newLoaded(t, Config{ModelName: "fake", ModelVersion: "3"})
	do(t, "POST", ts.URL+"/v1/completions", `{"model":"fake","prompt":"one two three","max_tokens":5}`)
	do(t, "POST", ts.URL+"/v1/completions", `{"model":"fake","prompt":"four","max_tokens":5,"stream":true}`)
	do(t, "POST", ts.URL+"/v1/completions", `{"model":"nope"}`)
	do(t, "POST", ts.URL+"/v1/chat/completions", `{"model":"fake","messages":[{"role":"user","content":"x"}],"max_tokens":2}`)
	do(t, "GET", ts.URL+"/healthz", "")
	do(t, "GET", ts.URL+"/no/such/path", "")
	do(t, "GET", ts.URL+"/nor/this", "")

	wantCompletion := len(m.Generate("one two three", 5).Tokens) + len(m.Generate("four", 5).Tokens) + len(m.Generate("user: x\n", 2).Tokens)
	got := scrape(t, ts.URL)
	for series, want := range map[string]float64{
		`inferno_fake_requests_total{code="200",endpoint="/v1/completions"}`:           2,
		`inferno_fake_requests_total{code="404",endpoint="/v1/completions"}`:           1,
		`inferno_fake_requests_total{code="200",endpoint="/v1/chat/completions"}`:      1,
		`inferno_fake_requests_total{code="200",endpoint="/healthz"}`:                  1,
		`inferno_fake_requests_total{code="404",endpoint="other"}`:                     2,
		`inferno_fake_request_duration_seconds_count{endpoint="/v1/completions"}`:      3,
		`inferno_fake_request_duration_seconds_count{endpoint="/v1/chat/completions"}`: 1,
		`inferno_fake_tokens_total{kind="prompt"}`:                                     3 + 1 + 2, // "user: x"
		`inferno_fake_tokens_total{kind="completion"}`:                                 float64(wantCompletion),
		`inferno_fake_weights_info{digest="` + m.Digest + `",version="3"}`:             1,
		RunningMetric: 0,
	} {
		if v, ok := got[series]; !ok {
			t.Errorf("no series %s", series)
		} else if v != want {
			t.Errorf("%s = %v, want %v", series, v, want)
		}
	}
	if _, ok := got["go_goroutines"]; !ok {
		t.Error("no Go runtime metrics")
	}
}

// TestRunningCountsInFlightRequests is the gauge an autoscaler reads: it
// must rise with concurrent requests, streams included, and fall back. The
// requests are held in flight, counted, until the gauge has been read.
func TestRunningCountsInFlightRequests(t *testing.T) {
	started, release := make(chan struct{}, 3), make(chan struct{})
	_, ts, _ := newLoaded(t, Config{ModelName: "fake", onRequest: func(*http.Request) {
		started <- struct{}{}
		<-release
	}})
	// Before the server's close, which waits for its requests.
	releaseAll := sync.OnceFunc(func() { close(release) })
	t.Cleanup(releaseAll)
	var wg sync.WaitGroup
	for _, body := range []string{
		`{"model":"fake","prompt":"a","max_tokens":10}`,
		`{"model":"fake","prompt":"b","max_tokens":10}`,
		`{"model":"fake","prompt":"c","max_tokens":10,"stream":true}`,
	} {
		wg.Go(func() { do(t, "POST", ts.URL+"/v1/completions", body) })
	}
	for i := range 3 {
		select {
		case <-started:
		case <-time.After(10 * time.Second):
			t.Fatalf("%d of 3 requests reached the server", i)
		}
	}
	if v := scrape(t, ts.URL)[RunningMetric]; v != 3 {
		t.Errorf("%s = %v with three requests in flight, want 3", RunningMetric, v)
	}
	releaseAll()
	wg.Wait()
	if v := scrape(t, ts.URL)[RunningMetric]; v != 0 {
		t.Errorf("%s = %v after the requests finished, want 0", RunningMetric, v)
	}
}

// The preset scales on the gauge by name; renaming one without the other
// would silently break autoscaling on concurrency.
func TestRunningMetricIsThePresetsConcurrencyMetric(t *testing.T) {
	if got := v1beta1.BuiltinRuntimes()["fake"].ConcurrencyMetric; got != RunningMetric {
		t.Errorf("the fake preset's ConcurrencyMetric is %q, the server exports %q", got, RunningMetric)
	}
}
