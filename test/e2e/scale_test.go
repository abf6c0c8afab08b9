//go:build e2e

package e2e

import (
	"bufio"
	"bytes"
	"context"
	"flag"
	"fmt"
	"io"
	"math"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"text/tabwriter"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/inferno-ai/function-inferno/test/e2e/kube"
)

var (
	flagScale       = flag.Int("scale", 0, "claims in the scale scenario (make scale N=…); 0 skips it")
	flagScaleSteady = flag.Duration("scale-steady", 2*time.Minute, "how long the scale scenario watches the claims at rest once all are Serving")
)

// scale drives N claims through the real control plane at once and prints
// what they cost the whole chain: time until each is Serving, CPU seconds
// per process, RunFunction calls and kube-apiserver writes per claim, the
// function's p99, and at rest the calls and writes per claim that nothing
// caused. It is not part of `make e2e` (make scale runs it).
func (s *infernoSuite) scale(t *testing.T) {
	n := *flagScale
	if n == 0 {
		t.Skip("run with -scale=N (make scale N=200)")
	}
	ctx := context.Background()
	sc := env.summary.start(t, fmt.Sprintf("15 scale (%d claims)", n))
	const ns = "team-scale"
	if err := env.createTeamNamespace(ctx, ns); err != nil {
		t.Fatal(err)
	}
	names := make([]string, n)
	for i := range names {
		names[i] = fmt.Sprintf("sc-%04d", i)
	}
	before := s.snapshot(ctx, t)
	start := time.Now()
	applyAll(ctx, t, ns, names)
	applied := time.Since(start)

	// When each claim was first seen Serving and Ready.
	serving := map[string]time.Duration{}
	deadline := start.Add(5*time.Minute + time.Duration(n)*time.Second)
	for len(serving) < n && time.Now().Before(deadline) {
		claims, err := env.admin.List(ctx, claimGVK, ns, "")
		if err != nil {
			t.Fatal(err)
		}
		now := time.Since(start)
		for i := range claims {
			c := &claims[i]
			if _, seen := serving[c.GetName()]; seen {
				continue
			}
			phase, _, _ := unstructured.NestedString(c.Object, "status", "phase")
			if phase == "Serving" {
				serving[c.GetName()] = now
			}
		}
		time.Sleep(time.Second)
	}
	if len(serving) < n {
		t.Errorf("%d of %d claims Serving after %s: stuck", len(serving), n, time.Since(start).Round(time.Second))
	}
	atServing := s.snapshot(ctx, t)
	versionsBefore := resourceVersions(ctx, t, ns)
	eventsBefore := eventReasons(ctx, t, ns)
	time.Sleep(*flagScaleSteady)
	atRest := s.snapshot(ctx, t)
	changed := 0
	for name, rv := range resourceVersions(ctx, t, ns) {
		if versionsBefore[name] != rv {
			changed++
		}
	}
	events := eventReasons(ctx, t, ns)
	for k, v := range eventsBefore {
		events[k] -= v
	}

	times := make([]time.Duration, 0, len(serving))
	for _, d := range serving {
		times = append(times, d)
	}
	slices.Sort(times)
	up, rest := atServing.minus(before), atRest.minus(atServing)
	perClaim := func(v float64) string { return fmt.Sprintf("%.1f", v/float64(n)) }
	hours := rest.elapsed.Hours()

	var b bytes.Buffer
	w := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	fmt.Fprintf(w, "claims\t%d (applied in %.1fs)\n", n, applied.Seconds())
	if len(times) > 0 {
		fmt.Fprintf(w, "apply -> Serving per claim\tp50 %.1fs  p90 %.1fs  max %.1fs  (%d of %d)\n", pct(times, 50).Seconds(), pct(times, 90).Seconds(), times[len(times)-1].Seconds(), len(times), n)
	}
	fmt.Fprintf(w, "CPU seconds until all Serving\t%s\n", cpuSpent(before.cpu, atServing.cpu))
	fmt.Fprintf(w, "RunFunction calls per claim until Serving\t%s\n", perClaim(up.calls))
	fmt.Fprintf(w, "kube-apiserver writes per claim until Serving\t%s (%s)\n", perClaim(up.writes), topWrites(up.writesBy, 6))
	fmt.Fprintf(w, "function p99 while they came up\t%s\n", up.p99())
	fmt.Fprintf(w, "circuit breaker until all Serving\t%s\n", up.breaker)
	fmt.Fprintf(w, "at rest (%s): RunFunction calls per claim-hour\t%.1f\n", rest.elapsed.Round(time.Second), rest.calls/float64(n)/hours)
	fmt.Fprintf(w, "at rest: kube-apiserver writes per claim-hour\t%.1f (%s)\n", rest.writes/float64(n)/hours, topWrites(rest.writesBy, 6))
	fmt.Fprintf(w, "at rest: composite status write requests per claim-hour\t%.1f\n", rest.writesBy["xinferenceservices/status"]/float64(n)/hours)
	fmt.Fprintf(w, "at rest: claims whose composite changed\t%d of %d (resourceVersion)\n", changed, n)
	fmt.Fprintf(w, "at rest: circuit breaker\t%s\n", rest.breaker)
	fmt.Fprintf(w, "at rest: events by reason (count increments)\t%s\n", topWrites(events, 4))
	_ = w.Flush()
	fmt.Fprintf(os.Stdout, "\n=== scale (%d claims)\n%s\n", n, b.String())
	for _, line := range strings.Split(strings.TrimSpace(b.String()), "\n") {
		sc.note("%s", strings.Join(strings.Fields(line), " "))
	}

	// Delete them all; count what is left namespace-wide (per-claim
	// lookups would be thousands of requests a poll).
	start = time.Now()
	for _, name := range names {
		if err := env.admin.Delete(ctx, claimGVK, ns, name); err != nil {
			t.Error(err)
		}
	}
	err := kube.Eventually(ctx, 2*time.Minute+time.Duration(n)*200*time.Millisecond, 2*time.Second, "scale claims and their objects gone", func(ctx context.Context) (bool, string, error) {
		claims, err := env.admin.List(ctx, claimGVK, ns, "")
		if err != nil {
			return false, "", err
		}
		pods, err := env.admin.Typed.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, "", err
		}
		pvcs, err := env.admin.Typed.CoreV1().PersistentVolumeClaims(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, "", err
		}
		left := len(claims) + len(pods.Items) + len(pvcs.Items)
		return left == 0, fmt.Sprintf("%d claims, %d pods, %d PVCs left", len(claims), len(pods.Items), len(pvcs.Items)), nil
	})
	if err != nil {
		t.Error(err)
	} else {
		sc.note("all deleted in %.1fs", time.Since(start).Seconds())
	}
}

// applyAll applies a small claim per name, ten at a time.
func applyAll(ctx context.Context, t *testing.T, ns string, names []string) {
	t.Helper()
	var wg sync.WaitGroup
	work := make(chan string)
	errs := make(chan error, len(names))
	for range 10 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for name := range work {
				if _, err := env.admin.Apply(ctx, smallClaim(t, ns, name)); err != nil {
					errs <- err
				}
			}
		}()
	}
	for _, n := range names {
		work <- n
	}
	close(work)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
}

// chainSnapshot is what the chain has done so far, from its own counters.
type chainSnapshot struct {
	at       time.Time
	elapsed  time.Duration // set by minus
	cpu      map[string]float64
	calls    float64             // RunFunction calls handled
	buckets  map[float64]float64 // RunFunction handling-time histogram: le → count
	writes   float64             // kube-apiserver mutating requests
	writesBy map[string]float64  // by resource[/subresource]
	breaker  breakerCounts       // Crossplane's XR circuit breaker counters
}

func (s *infernoSuite) snapshot(ctx context.Context, t *testing.T) chainSnapshot {
	t.Helper()
	snap := chainSnapshot{at: time.Now(), cpu: cpuByProcess(), buckets: map[float64]float64{}, writesBy: map[string]float64{}, breaker: readBreaker(t)}
	fm, err := httpGet(s.fnMetrics)
	if err != nil {
		t.Fatalf("function metrics: %v", err)
	}
	for _, m := range parseMetrics(fm) {
		if m.labels["grpc_method"] != "RunFunction" {
			continue
		}
		switch m.name {
		case "grpc_server_handled_total":
			snap.calls += m.value
		case "grpc_server_handling_seconds_bucket":
			le, err := strconv.ParseFloat(m.labels["le"], 64)
			if err == nil || m.labels["le"] == "+Inf" {
				if m.labels["le"] == "+Inf" {
					le = math.Inf(1)
				}
				snap.buckets[le] += m.value
			}
		}
	}
	am, err := env.admin.Typed.CoreV1().RESTClient().Get().AbsPath("/metrics").DoRaw(ctx)
	if err != nil {
		t.Fatalf("kube-apiserver metrics: %v", err)
	}
	for _, m := range parseMetrics(am) {
		if m.name != "apiserver_request_total" {
			continue
		}
		switch m.labels["verb"] {
		case "POST", "PUT", "PATCH", "DELETE", "APPLY", "DELETECOLLECTION":
			key := m.labels["resource"]
			if sub := m.labels["subresource"]; sub != "" {
				key += "/" + sub
			}
			snap.writes += m.value
			snap.writesBy[key] += m.value
		}
	}
	return snap
}

// minus is what happened between o and s.
func (s chainSnapshot) minus(o chainSnapshot) chainSnapshot {
	d := chainSnapshot{at: s.at, elapsed: s.at.Sub(o.at), cpu: s.cpu, calls: s.calls - o.calls, writes: s.writes - o.writes,
		buckets: map[float64]float64{}, writesBy: map[string]float64{}, breaker: s.breaker.minus(o.breaker)}
	for k, v := range s.buckets {
		d.buckets[k] = v - o.buckets[k]
	}
	for k, v := range s.writesBy {
		if dv := v - o.writesBy[k]; dv > 0 {
			d.writesBy[k] = dv
		}
	}
	return d
}

// p99 is the histogram's 99th percentile as the upper bound of its bucket.
func (s chainSnapshot) p99() string {
	les := make([]float64, 0, len(s.buckets))
	for le := range s.buckets {
		les = append(les, le)
	}
	slices.Sort(les)
	total := s.buckets[math.Inf(1)]
	if total == 0 {
		return "no calls"
	}
	for _, le := range les {
		if s.buckets[le] >= 0.99*total {
			if math.IsInf(le, 1) {
				return "over the largest bucket"
			}
			return fmt.Sprintf("≤ %g ms (%.0f calls)", le*1000, total)
		}
	}
	return "?"
}

func topWrites(by map[string]float64, k int) string {
	type kv struct {
		k string
		v float64
	}
	var l []kv
	for key, v := range by {
		l = append(l, kv{key, v})
	}
	slices.SortFunc(l, func(a, b kv) int { return int(b.v - a.v) })
	var out []string
	for i, e := range l {
		if i == k {
			break
		}
		out = append(out, fmt.Sprintf("%s %.0f", e.k, e.v))
	}
	return strings.Join(out, ", ")
}

func pct(sorted []time.Duration, p int) time.Duration {
	i := (len(sorted)*p + 99) / 100
	return sorted[max(0, min(len(sorted)-1, i-1))]
}

// metric is one sample of the Prometheus text format.
type metric struct {
	name   string
	labels map[string]string
	value  float64
}

// parseMetrics reads the samples of a Prometheus text exposition; the
// label values the scenario reads hold no commas or quotes.
func parseMetrics(b []byte) []metric {
	var out []metric
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || line[0] == '#' {
			continue
		}
		name, rest := line, ""
		labels := map[string]string{}
		if i := strings.IndexByte(line, '{'); i >= 0 {
			j := strings.LastIndexByte(line, '}')
			if j < i {
				continue
			}
			name, rest = line[:i], strings.TrimSpace(line[j+1:])
			for _, kv := range strings.Split(line[i+1:j], ",") {
				k, v, ok := strings.Cut(kv, "=")
				if ok {
					labels[k] = strings.Trim(v, `"`)
				}
			}
		} else if k, v, ok := strings.Cut(line, " "); ok {
			name, rest = k, v
		}
		f := strings.Fields(rest)
		if len(f) == 0 {
			continue
		}
		v, err := strconv.ParseFloat(f[0], 64)
		if err != nil {
			continue
		}
		out = append(out, metric{name: name, labels: labels, value: v})
	}
	return out
}

func httpGet(url string) ([]byte, error) {
	rsp, err := http.Get(url) //nolint:gosec,noctx // A loopback URL the test made.
	if err != nil {
		return nil, err
	}
	defer rsp.Body.Close() //nolint:errcheck // Read-only.
	return io.ReadAll(rsp.Body)
}

// resourceVersions maps the composites of a namespace's claims to their
// resourceVersions: a change at rest is a write that changed something.
func resourceVersions(ctx context.Context, t *testing.T, ns string) map[string]string {
	t.Helper()
	xrs, err := env.admin.List(ctx, xrGVK, "", "crossplane.io/claim-namespace="+ns)
	if err != nil {
		t.Fatal(err)
	}
	out := make(map[string]string, len(xrs))
	for _, x := range xrs {
		out[x.GetName()] = x.GetResourceVersion()
	}
	return out
}

// eventReasons sums the counts of a namespace's Events by reason.
func eventReasons(ctx context.Context, t *testing.T, ns string) map[string]float64 {
	t.Helper()
	l, err := env.admin.Typed.CoreV1().Events(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]float64{}
	for _, e := range l.Items {
		n := e.Count
		if n == 0 {
			n = 1
		}
		out[e.InvolvedObject.Kind+"/"+e.Reason] += float64(n)
	}
	return out
}
