// Package traffic sends the e2e's real requests: an open loop of completion
// requests at a fixed rate to a model server, each on a new connection (so
// that kube-proxy balances every request, as it balances connections), and
// a record of each answer: its status, and which weights, version and pod
// answered it (the fake model server's X-Inferno-* headers). Every loop is
// bounded in count and in time.
package traffic

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"sort"
	"strings"
	"sync"
	"time"
)

// Headers of the fake model server that say who answered.
const (
	HeaderWeights = "X-Inferno-Weights"
	HeaderVersion = "X-Inferno-Version"
	HeaderPod     = "X-Inferno-Pod"
)

// Options of a loop.
type Options struct {
	// URL receives every request, e.g. http://10.0.0.7/v1/completions.
	URL string
	// Body is each request's JSON body.
	Body []byte
	// Rate is requests per second. Zero sends them back to back on
	// Concurrency workers.
	Rate float64
	// Max bounds the number of requests; MaxDuration the loop's time.
	Max         int
	MaxDuration time.Duration
	// Concurrency bounds requests in flight (default 8).
	Concurrency int
	// Timeout of one request (default 10 s).
	Timeout time.Duration
}

// Result is one request.
type Result struct {
	Start, End time.Time
	// Status is the HTTP status, 0 when no answer came.
	Status int
	Err    string
	// Weights, Version and Pod are the answering server's headers.
	Weights, Version, Pod string
}

// OK says whether the request was answered with 200.
func (r Result) OK() bool { return r.Status == http.StatusOK && r.Err == "" }

// Loop is a running loop.
type Loop struct {
	o      Options
	client *http.Client
	stop   chan struct{}
	done   chan struct{}

	mu      sync.Mutex
	results []Result
}

// Start begins sending; Stop ends the loop and returns its report.
func Start(o Options) *Loop {
	if o.Concurrency == 0 {
		o.Concurrency = 8
	}
	if o.Timeout == 0 {
		o.Timeout = 10 * time.Second
	}
	l := &Loop{
		o: o,
		client: &http.Client{Timeout: o.Timeout, Transport: &http.Transport{
			DisableKeepAlives: true,
			// Nothing here ever goes through a proxy: only addresses of this
			// machine and of the test's own bridge are contacted.
			Proxy: nil,
		}},
		stop: make(chan struct{}),
		done: make(chan struct{}),
	}
	go l.run()
	return l
}

func (l *Loop) run() {
	defer close(l.done)
	deadline := time.After(l.o.MaxDuration)
	sem := make(chan struct{}, l.o.Concurrency)
	var wg sync.WaitGroup
	var tick <-chan time.Time
	if l.o.Rate > 0 {
		t := time.NewTicker(time.Duration(float64(time.Second) / l.o.Rate))
		defer t.Stop()
		tick = t.C
	}
	// next waits for the next tick (when paced) and a free worker, and
	// says false when the loop must end instead.
	next := func() bool {
		if tick != nil {
			select {
			case <-tick:
			case <-l.stop:
				return false
			case <-deadline:
				return false
			}
		}
		select {
		case sem <- struct{}{}:
			return true
		case <-l.stop:
		case <-deadline:
		}
		return false
	}
	for sent := 0; sent < l.o.Max; sent++ {
		if !next() {
			wg.Wait()
			return
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			r := l.one()
			l.mu.Lock()
			l.results = append(l.results, r)
			l.mu.Unlock()
		}()
	}
	wg.Wait()
}

func (l *Loop) one() Result {
	r := Result{Start: time.Now()}
	req, err := http.NewRequestWithContext(context.Background(), http.MethodPost, l.o.URL, bytes.NewReader(l.o.Body))
	if err != nil {
		r.Err, r.End = err.Error(), time.Now()
		return r
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := l.client.Do(req)
	if err != nil {
		r.Err, r.End = err.Error(), time.Now()
		return r
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	r.End = time.Now()
	r.Status = resp.StatusCode
	r.Weights, r.Version, r.Pod = resp.Header.Get(HeaderWeights), resp.Header.Get(HeaderVersion), resp.Header.Get(HeaderPod)
	if err != nil {
		r.Err = "reading the answer: " + err.Error()
	} else if r.Status != http.StatusOK {
		r.Err = strings.TrimSpace(string(body))
	}
	return r
}

// Wait blocks until the loop has sent Max requests or run out of time.
func (l *Loop) Wait() Report {
	<-l.done
	return l.report()
}

// Stop ends the loop, waits for the requests in flight and returns the
// report. Safe to call once.
func (l *Loop) Stop() Report {
	close(l.stop)
	<-l.done
	return l.report()
}

// Snapshot is the report so far, while the loop runs.
func (l *Loop) Snapshot() Report { return l.report() }

func (l *Loop) report() Report {
	l.mu.Lock()
	rs := append([]Result(nil), l.results...)
	l.mu.Unlock()
	sort.Slice(rs, func(i, j int) bool { return rs[i].Start.Before(rs[j].Start) })
	rep := Report{Results: rs, ByVersion: map[string]int{}, ByWeights: map[string]int{}, ByPod: map[string]int{}}
	for _, r := range rs {
		if !r.OK() {
			rep.Failed++
			continue
		}
		rep.OK++
		rep.ByVersion[r.Version]++
		rep.ByWeights[r.Weights]++
		rep.ByPod[r.Pod]++
	}
	return rep
}

// Report is what a loop saw.
type Report struct {
	// Results in order of sending.
	Results    []Result
	OK, Failed int
	// Answers by the answering server's version, weights digest and pod.
	ByVersion, ByWeights, ByPod map[string]int
}

// Sent is the number of requests sent.
func (r Report) Sent() int { return len(r.Results) }

// Failures describes up to n failed requests, for a test's message.
func (r Report) Failures(n int) string {
	var out []string
	for _, x := range r.Results {
		if x.OK() {
			continue
		}
		if len(out) == n {
			out = append(out, "…")
			break
		}
		out = append(out, fmt.Sprintf("%s +%s: status %d %s", x.Start.Format("15:04:05.000"), x.End.Sub(x.Start).Round(time.Millisecond), x.Status, x.Err))
	}
	return strings.Join(out, "; ")
}

// FirstOK is the first answered request whose weights are w, and whether
// there is one.
func (r Report) FirstOK(weights string) (Result, bool) {
	for _, x := range r.Results {
		if x.OK() && x.Weights == weights {
			return x, true
		}
	}
	return Result{}, false
}

// Latency is the p-th percentile (0–100) of answered requests' latency.
func (r Report) Latency(p float64) time.Duration {
	var ds []time.Duration
	for _, x := range r.Results {
		if x.OK() {
			ds = append(ds, x.End.Sub(x.Start))
		}
	}
	if len(ds) == 0 {
		return 0
	}
	sort.Slice(ds, func(i, j int) bool { return ds[i] < ds[j] })
	i := int(p / 100 * float64(len(ds)-1))
	return ds[i]
}
