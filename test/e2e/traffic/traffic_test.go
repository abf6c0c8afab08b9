package traffic

import (
	"net"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// TestLoopCountsWhoAnswered: every request is recorded once, failures are
// told from answers, and answers are counted by the answering server.
func TestLoopCountsWhoAnswered(t *testing.T) {
	var n atomic.Int64
	var conns atomic.Int64
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		i := n.Add(1)
		if i%5 == 0 {
			http.Error(w, "overloaded", http.StatusServiceUnavailable)
			return
		}
		v := "1"
		if i%2 == 0 {
			v = "2"
		}
		w.Header().Set(HeaderVersion, v)
		w.Header().Set(HeaderWeights, "sha256:"+v)
		w.Header().Set(HeaderPod, "pod-"+v)
		_, _ = w.Write([]byte(`{}`))
	}))
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			conns.Add(1)
		}
	}
	srv.Start()
	defer srv.Close()

	rep := Start(Options{URL: srv.URL, Body: []byte(`{}`), Max: 20, MaxDuration: 10 * time.Second, Concurrency: 1}).Wait()
	if rep.Sent() != 20 || rep.OK != 16 || rep.Failed != 4 {
		t.Fatalf("sent %d ok %d failed %d, want 20, 16, 4", rep.Sent(), rep.OK, rep.Failed)
	}
	want := map[string]int{"1": 8, "2": 8}
	if diff := cmp.Diff(want, rep.ByVersion); diff != "" {
		t.Errorf("answers by version (-want +got):\n%s", diff)
	}
	if got := conns.Load(); got != 20 {
		t.Errorf("%d connections for 20 requests: each request must open its own, so that kube-proxy balances it", got)
	}
	if _, ok := rep.FirstOK("sha256:2"); !ok {
		t.Error("FirstOK found no answer of sha256:2")
	}
}

// TestLoopIsBounded: a loop ends at its time bound even when its count
// bound is far away, and Stop ends it at once.
func TestLoopIsBounded(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	defer srv.Close()
	start := time.Now()
	rep := Start(Options{URL: srv.URL, Rate: 50, Max: 1 << 30, MaxDuration: 300 * time.Millisecond}).Wait()
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("the loop ran %s past its 300 ms bound", took)
	}
	if rep.Sent() == 0 || rep.Sent() > 30 {
		t.Errorf("sent %d requests in 300 ms at 50/s", rep.Sent())
	}
	l := Start(Options{URL: srv.URL, Rate: 50, Max: 1 << 30, MaxDuration: time.Hour})
	time.Sleep(100 * time.Millisecond)
	start = time.Now()
	l.Stop()
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("Stop took %s", took)
	}
}
