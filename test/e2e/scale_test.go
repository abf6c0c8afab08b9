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
	"path/filepath"
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
	flagScale         = flag.Int("scale", 0, "claims in the scale scenario (make scale N=…); 0 skips it")
	flagScaleSteady   = flag.Duration("scale-steady", 2*time.Minute, "how long the scale scenario watches the claims at rest once all are Serving")
	flagScalePeerOnly = flag.Bool("scale-peer-only", false, "with -scale-peer, measure the peer alone (the function-inferno row already measured in the same build)")
	flagScalePeer     = flag.String("scale-peer", "", "a directory holding function-go-templating's source (make scale PEER=…): the scale scenario then composes the same claims with it and test/load/peers/function-go-templating.yaml, after function-inferno, and prints both side by side")
)

// The Composition test/load/peers/function-go-templating.yaml defines, and
// the Function it calls.
const (
	peerComposition = "xinferenceservices-go-templating"
	peerFunction    = "function-go-templating"
)

// scaleRow is one composition the scale scenario measures.
type scaleRow struct {
	label       string // as printed
	ns          string
	function    string // the Function Crossplane calls (its metrics' function_name)
	composition string // the claims' spec.compositionRef
}

// scaleResult is what one row cost.
type scaleResult struct {
	row        scaleRow
	n          int
	applied    time.Duration
	times      []time.Duration // apply → Serving, sorted
	up, rest   chainSnapshot
	changed    int
	events     map[string]float64
	stuck      int
	deleteTook time.Duration
	fnP99      string // the function's own histogram (function-inferno only)
}

// scale drives N claims through the real control plane at once and prints
// what they cost the whole chain: time until each is Serving, CPU seconds
// per process, RunFunction calls and kube-apiserver writes per claim, the
// function's p99, and at rest the calls and writes per claim that nothing
// caused. With -scale-peer it then does the same with function-go-templating
// composing the same objects, and prints the two side by side. It is not
// part of `make e2e` (make scale runs it).
func (s *infernoSuite) scale(t *testing.T) {
	n := *flagScale
	if n == 0 {
		t.Skip("run with -scale=N (make scale N=200)")
	}
	ctx := context.Background()
	sc := env.summary.start(t, fmt.Sprintf("15 scale (%d claims)", n))
	rows := []scaleRow{{label: RealFunctionName, ns: "team-scale", function: RealFunctionName}}
	if *flagScalePeer != "" {
		rows = append(rows, scaleRow{label: peerFunction + " v0.12.2", ns: "team-scale-peer", function: peerFunction, composition: peerComposition})
		if *flagScalePeerOnly {
			rows = rows[1:]
		}
	}
	var results []scaleResult
	for _, row := range rows {
		if row.function == peerFunction {
			installPeer(ctx, t)
		}
		r := s.scaleOne(ctx, t, row, n)
		results = append(results, r)
		for _, line := range strings.Split(strings.TrimSpace(r.table()), "\n") {
			sc.note("%s: %s", row.label, strings.Join(strings.Fields(line), " "))
		}
	}
	if len(results) > 1 {
		side := sideBySide(results)
		fmt.Fprintf(os.Stdout, "\n=== scale side by side (%d claims)\n%s\n", n, side)
	}
}

// installPeer builds function-go-templating from -scale-peer as the
// function package it ships as, installs it as the e2e installs
// function-inferno, and applies the peer Composition. The peer binds the
// SDK's default metrics address :8080, which Crossplane's RBAC manager
// holds here; the SDK ignores that error, so the peer serves without its
// own metrics and its calls are counted on Crossplane's side
// (function_run_function_request_total), as function-inferno's are in the
// side-by-side table.
func installPeer(ctx context.Context, t *testing.T) {
	t.Helper()
	dir, err := filepath.Abs(*flagScalePeer)
	if err != nil {
		t.Fatal(err)
	}
	// Its examples/ holds YAML the crossplane CLI cannot parse as
	// examples (a list), so the package goes without them.
	installFunction(ctx, t, peerFunction, dir, ".", "package", "")
	objs, err := env.admin.ApplyFile(ctx, filepath.Join(repoRoot(), "test", "load", "peers", "function-go-templating.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		for _, o := range objs {
			_ = env.admin.Delete(context.Background(), o.GroupVersionKind(), o.GetNamespace(), o.GetName())
		}
	})
}

// scaleOne applies n small claims of row at once, waits until all are
// Serving, watches them at rest, and deletes them.
func (s *infernoSuite) scaleOne(ctx context.Context, t *testing.T, row scaleRow, n int) scaleResult {
	t.Helper()
	if err := env.createTeamNamespace(ctx, row.ns); err != nil {
		t.Fatal(err)
	}
	names := make([]string, n)
	for i := range names {
		names[i] = fmt.Sprintf("sc-%04d", i)
	}
	r := scaleResult{row: row, n: n}
	before := s.snapshot(ctx, t)
	start := time.Now()
	applyAll(ctx, t, row.ns, names, row.composition)
	r.applied = time.Since(start)

	// When each claim was first seen Serving.
	serving := map[string]time.Duration{}
	deadline := start.Add(5*time.Minute + time.Duration(n)*time.Second)
	for len(serving) < n && time.Now().Before(deadline) {
		claims, err := env.admin.List(ctx, claimGVK, row.ns, "")
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
		r.stuck = n - len(serving)
		t.Errorf("%s: %d of %d claims Serving after %s: stuck", row.label, len(serving), n, time.Since(start).Round(time.Second))
	}
	atServing := s.snapshot(ctx, t)
	versionsBefore := resourceVersions(ctx, t, row.ns)
	eventsBefore := eventReasons(ctx, t, row.ns)
	time.Sleep(*flagScaleSteady)
	atRest := s.snapshot(ctx, t)
	for name, rv := range resourceVersions(ctx, t, row.ns) {
		if versionsBefore[name] != rv {
			r.changed++
		}
	}
	r.events = eventReasons(ctx, t, row.ns)
	for k, v := range eventsBefore {
		r.events[k] -= v
	}
	for _, d := range serving {
		r.times = append(r.times, d)
	}
	slices.Sort(r.times)
	r.up, r.rest = atServing.minus(before), atRest.minus(atServing)
	if row.function == RealFunctionName {
		r.fnP99 = r.up.p99()
	}
	fmt.Fprintf(os.Stdout, "\n=== scale: %s (%d claims)\n%s\n", row.label, n, r.table())

	// Delete them all; count what is left namespace-wide (per-claim
	// lookups would be thousands of requests a poll).
	start = time.Now()
	for _, name := range names {
		if err := env.admin.Delete(ctx, claimGVK, row.ns, name); err != nil {
			t.Error(err)
		}
	}
	err := kube.Eventually(ctx, 2*time.Minute+time.Duration(n)*200*time.Millisecond, 2*time.Second, "scale claims and their objects gone", func(ctx context.Context) (bool, string, error) {
		claims, err := env.admin.List(ctx, claimGVK, row.ns, "")
		if err != nil {
			return false, "", err
		}
		pods, err := env.admin.Typed.CoreV1().Pods(row.ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, "", err
		}
		pvcs, err := env.admin.Typed.CoreV1().PersistentVolumeClaims(row.ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, "", err
		}
		left := len(claims) + len(pods.Items) + len(pvcs.Items)
		return left == 0, fmt.Sprintf("%d claims, %d pods, %d PVCs left", len(claims), len(pods.Items), len(pvcs.Items)), nil
	})
	if err != nil {
		t.Error(err)
	} else {
		r.deleteTook = time.Since(start)
	}
	return r
}

// table is one row's figures, as make scale has always printed them.
func (r scaleResult) table() string {
	n := float64(r.n)
	perClaim := func(v float64) string { return fmt.Sprintf("%.1f", v/n) }
	hours := r.rest.elapsed.Hours()
	var b bytes.Buffer
	w := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	fmt.Fprintf(w, "claims\t%d (applied in %.1fs)\n", r.n, r.applied.Seconds())
	if len(r.times) > 0 {
		fmt.Fprintf(w, "apply -> Serving per claim\tp50 %.1fs  p90 %.1fs  max %.1fs  (%d of %d)\n", pct(r.times, 50).Seconds(), pct(r.times, 90).Seconds(), r.times[len(r.times)-1].Seconds(), len(r.times), r.n)
	}
	fmt.Fprintf(w, "CPU seconds until all Serving\t%s\n", cpuSpent(r.up.cpuBefore, r.up.cpu))
	fmt.Fprintf(w, "RunFunction calls per claim until Serving (Crossplane's count)\t%s\n", perClaim(r.up.xpCalls[r.row.function]))
	fmt.Fprintf(w, "kube-apiserver writes per claim until Serving\t%s (%s)\n", perClaim(r.up.writes), topWrites(r.up.writesBy, 8))
	if r.fnP99 != "" {
		fmt.Fprintf(w, "function p99 while they came up\t%s\n", r.fnP99)
	}
	fmt.Fprintf(w, "RunFunction p99 as Crossplane saw it\t%s\n", r.up.xpP99(r.row.function))
	fmt.Fprintf(w, "circuit breaker until all Serving\t%s\n", r.up.breaker)
	fmt.Fprintf(w, "at rest (%s): RunFunction calls per claim-hour\t%.1f\n", r.rest.elapsed.Round(time.Second), r.rest.xpCalls[r.row.function]/n/hours)
	fmt.Fprintf(w, "at rest: kube-apiserver writes per claim-hour\t%.1f (%s)\n", r.rest.writes/n/hours, topWrites(r.rest.writesBy, 6))
	fmt.Fprintf(w, "at rest: claims whose composite changed\t%d of %d (resourceVersion)\n", r.changed, r.n)
	fmt.Fprintf(w, "at rest: circuit breaker\t%s\n", r.rest.breaker)
	fmt.Fprintf(w, "at rest: events by reason (count increments)\t%s\n", topWrites(r.events, 4))
	if r.deleteTook > 0 {
		fmt.Fprintf(w, "all deleted in\t%.1fs\n", r.deleteTook.Seconds())
	}
	_ = w.Flush()
	return b.String()
}

// sideBySide prints the rows' headline figures in columns, with the ratio
// of each to the first row's.
func sideBySide(rs []scaleResult) string {
	var b bytes.Buffer
	w := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	fmt.Fprint(w, "\t")
	for _, r := range rs {
		fmt.Fprintf(w, "%s\t", r.row.label)
	}
	fmt.Fprintln(w, "first / second")
	line := func(name string, v func(r scaleResult) float64, format string) {
		fmt.Fprintf(w, "%s\t", name)
		for _, r := range rs {
			fmt.Fprintf(w, format+"\t", v(r))
		}
		if d := v(rs[1]); d != 0 {
			fmt.Fprintf(w, "%.2f×", v(rs[0])/d)
		}
		fmt.Fprintln(w)
	}
	at := func(p int) func(r scaleResult) float64 {
		return func(r scaleResult) float64 {
			if len(r.times) == 0 {
				return 0
			}
			return pct(r.times, p).Seconds()
		}
	}
	line("apply -> Serving p50 (s)", at(50), "%.1f")
	line("apply -> Serving p90 (s)", at(90), "%.1f")
	line("apply -> Serving max (s)", at(100), "%.1f")
	line("claims stuck", func(r scaleResult) float64 { return float64(r.stuck) }, "%.0f")
	line("API writes per claim until Serving", func(r scaleResult) float64 { return r.up.writes / float64(r.n) }, "%.1f")
	line("kube-apiserver CPU s per claim until Serving", func(r scaleResult) float64 {
		return (r.up.cpu["kube-apiserver"] - r.up.cpuBefore["kube-apiserver"]) / float64(r.n)
	}, "%.2f")
	line("Crossplane CPU s per claim until Serving", func(r scaleResult) float64 {
		return (r.up.cpu["crossplane"] - r.up.cpuBefore["crossplane"]) / float64(r.n)
	}, "%.2f")
	line("RunFunction calls per claim until Serving", func(r scaleResult) float64 { return r.up.xpCalls[r.row.function] / float64(r.n) }, "%.1f")
	line("breaker opens until Serving", func(r scaleResult) float64 { return r.up.breaker.opens }, "%.0f")
	line("at rest: API writes per claim-hour", func(r scaleResult) float64 { return r.rest.writes / float64(r.n) / r.rest.elapsed.Hours() }, "%.1f")
	line("at rest: RunFunction calls per claim-hour", func(r scaleResult) float64 {
		return r.rest.xpCalls[r.row.function] / float64(r.n) / r.rest.elapsed.Hours()
	}, "%.1f")
	_ = w.Flush()
	fmt.Fprintln(&b, "API writes per claim by resource and verb:")
	for _, r := range rs {
		fmt.Fprintf(&b, "  %s: %s\n", r.row.label, topWrites(perClaimOf(r.up.writesBy, r.n), 12))
	}
	return b.String()
}

func perClaimOf(by map[string]float64, n int) map[string]float64 {
	out := make(map[string]float64, len(by))
	for k, v := range by {
		out[k] = v / float64(n)
	}
	return out
}

// applyAll applies a small claim per name, ten at a time, of the
// Composition named (the XRD's default when empty).
func applyAll(ctx context.Context, t *testing.T, ns string, names []string, composition string) {
	t.Helper()
	var wg sync.WaitGroup
	work := make(chan string)
	errs := make(chan error, len(names))
	for range 10 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for name := range work {
				c := smallClaim(t, ns, name)
				if composition != "" {
					setField(c, map[string]any{"name": composition}, "spec", "compositionRef")
				}
				if _, err := env.admin.Apply(ctx, c); err != nil {
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
	at        time.Time
	elapsed   time.Duration // set by minus
	cpu       map[string]float64
	cpuBefore map[string]float64             // set by minus
	buckets   map[float64]float64            // function-inferno's handling-time histogram: le → count
	xpCalls   map[string]float64             // RunFunction requests Crossplane sent, by Function
	xpBuckets map[string]map[float64]float64 // Crossplane's RunFunction latency histogram, by Function
	writes    float64                        // kube-apiserver mutating requests
	writesBy  map[string]float64             // by resource[/subresource] and verb
	breaker   breakerCounts                  // Crossplane's XR circuit breaker counters
}

func (s *infernoSuite) snapshot(ctx context.Context, t *testing.T) chainSnapshot {
	t.Helper()
	snap := chainSnapshot{at: time.Now(), cpu: cpuByProcess(), buckets: map[float64]float64{}, writesBy: map[string]float64{},
		xpCalls: map[string]float64{}, xpBuckets: map[string]map[float64]float64{}}
	// One scrape of Crossplane's metrics: its breaker's counters and its
	// RunFunction counters.
	if xm, err := httpGet(env.core.MetricsURL); err == nil {
		metrics := parseMetrics(xm)
		snap.breaker = breakerOf(metrics)
		for _, m := range metrics {
			fn := m.labels["function_name"]
			switch m.name {
			case "function_run_function_request_total":
				snap.xpCalls[fn] += m.value
			case "function_run_function_seconds_bucket":
				le, err := parseLE(m.labels["le"])
				if err != nil {
					continue
				}
				if snap.xpBuckets[fn] == nil {
					snap.xpBuckets[fn] = map[float64]float64{}
				}
				snap.xpBuckets[fn][le] += m.value
			}
		}
	} else {
		t.Logf("Crossplane's metrics (breaker and RunFunction counters): %v", err)
	}
	fm, err := httpGet(s.fnMetrics)
	if err != nil {
		t.Fatalf("function metrics: %v", err)
	}
	for _, m := range parseMetrics(fm) {
		if m.labels["grpc_method"] != "RunFunction" {
			continue
		}
		if m.name == "grpc_server_handling_seconds_bucket" {
			if le, err := parseLE(m.labels["le"]); err == nil {
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
			key += " " + m.labels["verb"]
			snap.writes += m.value
			snap.writesBy[key] += m.value
		}
	}
	return snap
}

// minus is what happened between o and s.
func (s chainSnapshot) minus(o chainSnapshot) chainSnapshot {
	d := chainSnapshot{at: s.at, elapsed: s.at.Sub(o.at), cpu: s.cpu, cpuBefore: o.cpu, writes: s.writes - o.writes,
		buckets: map[float64]float64{}, writesBy: map[string]float64{}, breaker: s.breaker.minus(o.breaker),
		xpCalls: map[string]float64{}, xpBuckets: map[string]map[float64]float64{}}
	for k, v := range s.buckets {
		d.buckets[k] = v - o.buckets[k]
	}
	for fn, v := range s.xpCalls {
		d.xpCalls[fn] = v - o.xpCalls[fn]
	}
	for fn, bs := range s.xpBuckets {
		d.xpBuckets[fn] = map[float64]float64{}
		for le, v := range bs {
			d.xpBuckets[fn][le] = v - o.xpBuckets[fn][le]
		}
	}
	for k, v := range s.writesBy {
		if dv := v - o.writesBy[k]; dv > 0 {
			d.writesBy[k] = dv
		}
	}
	return d
}

// p99 is function-inferno's histogram's 99th percentile as the upper
// bound of its bucket.
func (s chainSnapshot) p99() string { return p99Of(s.buckets) }

// xpP99 is the 99th percentile of Crossplane's RunFunction latency for fn
// (prometheus' default buckets: 5 ms, 10 ms, 25 ms, …), the round trip
// included.
func (s chainSnapshot) xpP99(fn string) string { return p99Of(s.xpBuckets[fn]) }

func parseLE(s string) (float64, error) {
	if s == "+Inf" {
		return math.Inf(1), nil
	}
	return strconv.ParseFloat(s, 64)
}

func p99Of(buckets map[float64]float64) string {
	les := make([]float64, 0, len(buckets))
	for le := range buckets {
		les = append(les, le)
	}
	slices.Sort(les)
	total := buckets[math.Inf(1)]
	if total == 0 {
		return "no calls"
	}
	for _, le := range les {
		if buckets[le] >= 0.99*total {
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
