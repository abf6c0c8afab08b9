// Command loadgen drives function-inferno and two floor functions over gRPC
// with mTLS on loopback with the same request, and prints one table:
// saturated throughput and server CPU per request, latency percentiles at
// a fixed rate, peak memory at a low rate every server sustains and over
// the whole run, against the targets of issue 23. The floors are the
// empty function (no answer to carry) and the canned floor (function-inferno's
// own answer, sent back without any work); the targets are read against
// the canned floor, which differs from function-inferno only in the work.
//
// One measurement on a shared 2-core machine moves by tens of percent, so
// loadgen runs -rounds rounds of all the servers, one at a time and
// interleaved (floor, function, canned floor, floor, …), each in a fresh
// process (the floors with function-inferno's garbage collector settings,
// load.TuneGC), and reports the median and the spread of every figure.
// -compare adds other builds of function-inferno to the same rounds (`make
// bench-codec`: the standard path in the decoder's place), -peer adds other
// projects' functions (function-go-templating and
// function-patch-and-transform, each given a Composition input that makes
// the same desired objects from the serving-stage request), -memory-limits
// runs every server at each of several soft memory limits in the same
// rounds. With -bench it adds the in-process benchmark figures from `go
// test -bench` output. `make bench` runs it.
package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"google.golang.org/protobuf/proto"

	"github.com/inferno-ai/function-inferno/test/load"
)

// Targets on a 2-core machine where server and load generator share the
// CPU, against the canned floor.
const (
	minThroughputRatio = 0.85                   // of the canned floor's saturated throughput (medians)
	maxP99Ratio        = 1.3                    // of the canned floor's p99 at the fixed rate (medians)
	maxPeakRSS         = 64 * 1024 * 1024       // bytes, in every round
	maxInProcess       = 300 * time.Microsecond // issue 23: in-process serving-stage RunFunction
	maxInProcessAllocs = 1200                   // allocations of the same call
	minPeerRatio       = 3.0                    // of each peer's saturated throughput (medians)
)

// A server is one of the binaries measured.
type server struct {
	name string
	bin  string
	args []string
	// peer is another project's function (-peer): it answers its own
	// request (the same XR and observed objects, its own Composition's
	// input), runs as it ships (no GC or metrics flags of ours), and is
	// held to its answer's shape, not to function-inferno's bytes.
	peer *peer
}

// request is what s is sent: a peer's own, else the shared one.
func (s server) request(shared *fnv1.RunFunctionRequest) *fnv1.RunFunctionRequest {
	if s.peer != nil {
		return s.peer.req
	}
	return shared
}

// with returns s with more arguments.
func (s server) with(args ...string) server {
	s.args = append(append([]string(nil), s.args...), args...)
	return s
}

// measured is what one round saw of one server.
type measured struct {
	saturated load.Result
	fixed     load.Result // none for a peer: see measure
	// steady is the measurement at -rss-rate, which every server
	// sustains: the peers' latency is compared there.
	steady load.Result
	rss    int64
	// steadyRSS is the peak RSS over a first measurement at -rss-rate,
	// a rate every server sustains here: every server at the same
	// throughput, which the whole run's peak, set while saturated (or,
	// for a server slower than -rate, while its queue grew), is not.
	steadyRSS int64
	// cpu is the server's CPU time over the saturated measurement: per
	// request it is the work the server does, which other load on the
	// machine slows but hardly changes.
	cpu time.Duration
}

// FirstError returns the first error any of the measurements saw.
func (m measured) FirstError() error {
	for _, r := range []load.Result{m.steady, m.fixed, m.saturated} {
		if r.FirstError != nil {
			return r.FirstError
		}
	}
	return nil
}

// compareFlag is -compare name=binary, repeated: other builds of
// function-inferno, measured in the same rounds.
type compareFlag []server

func (c *compareFlag) String() string { return fmt.Sprint(*c) }

func (c *compareFlag) Set(v string) error {
	name, bin, ok := strings.Cut(v, "=")
	if !ok || name == "" || bin == "" {
		return fmt.Errorf("want name=binary, not %q", v)
	}
	*c = append(*c, server{name: name, bin: bin})
	return nil
}

// A setting is one GC configuration every server runs with: the servers'
// own defaults, or -memory-limits' limit.
type setting struct {
	name string
	args []string
}

func settingsOf(limits string) ([]setting, error) {
	if limits == "" {
		return []setting{{name: "default GC settings"}}, nil
	}
	var out []setting
	for _, l := range strings.Split(limits, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(l))
		if err != nil || n < 0 {
			return nil, fmt.Errorf("-memory-limits: %q is not a number of MiB", l)
		}
		name := fmt.Sprintf("--memory-limit-mib=%d", n)
		if n == 0 {
			name += " (none)"
		}
		out = append(out, setting{name: name, args: []string{fmt.Sprintf("--memory-limit-mib=%d", n)}})
	}
	return out, nil
}

func main() {
	fnBin := flag.String("function", "bin/function-inferno", "The function-inferno binary.")
	floorBin := flag.String("floor", "bin/inferno-floor", "The empty function binary.")
	cannedBin := flag.String("canned-floor", "bin/inferno-canned-floor", "The canned-response function binary.")
	stage := flag.String("stage", "serving", "Observed resources of examples/xr.yaml to send: fresh, pulling, starting, serving, degraded.")
	rounds := flag.Int("rounds", 5, "Interleaved rounds of the servers.")
	duration := flag.Duration("duration", 5*time.Second, "How long each measurement runs (three per server per round: at -rss-rate, at -rate, saturated; a peer skips -rate).")
	rate := flag.Int("rate", 300, "Requests per second of the fixed-rate measurement.")
	rssRate := flag.Int("rss-rate", 50, "Requests per second of the first measurement, whose peak RSS is compared: a rate every server (the peers too) sustains.")
	concurrency := flag.Int("concurrency", 8, "Workers of the saturation measurement.")
	bench := flag.String("bench", "", "A file of `go test -bench -benchmem` output to include.")
	fnArgs := flag.String("function-args", "", "Extra flags for function-inferno, space separated.")
	limits := flag.String("memory-limits", "", "Soft memory limits in MiB to measure every server at, comma separated (0 for none), e.g. 16,32,64,0; empty runs each with its default.")
	var compare compareFlag
	flag.Var(&compare, "compare", "`name=binary`: another build of function-inferno to measure in the same rounds, which must answer exactly as function-inferno does; repeatable.")
	var peers peerFlag
	flag.Var(&peers, "peer", "`name=binary`: another project's function to measure in the same rounds, sent the same XR and observed objects with the input of the Composition test/load/peers/<name>.yaml; it must answer without a Fatal result and with as many desired objects as function-inferno; repeatable.")
	peerDir := flag.String("peer-inputs", "test/load/peers", "Where -peer's Compositions are, one <name>.yaml each.")
	flag.Parse()

	settings, err := settingsOf(*limits)
	exitOn(err)
	observed := ""
	if *stage != "fresh" {
		observed = "examples/observed/" + *stage + ".yaml"
	}
	req, err := load.Request("examples/xr.yaml", observed, "apis/composition.yaml")
	exitOn(err)
	pki, err := load.NewPKI()
	exitOn(err)

	fn := server{name: "function-inferno", bin: *fnBin, args: append([]string{"--metrics-address="}, strings.Fields(*fnArgs)...)}
	dir, err := os.MkdirTemp("", "inferno-loadgen-")
	exitOn(err)
	defer os.RemoveAll(dir) //nolint:errcheck // Best effort.
	cannedFile := filepath.Join(dir, "response.pb")
	fnRsp, err := captureResponse(fn, pki, req, *cannedBin, cannedFile)
	exitOn(err)

	servers := []server{
		{name: "floor (empty)", bin: *floorBin},
		fn,
		{name: "canned floor", bin: *cannedBin, args: []string{"--response=" + cannedFile}},
	}
	for _, c := range compare {
		c.args = fn.args
		exitOn(sameAnswer(fn, c, pki, req))
		servers = append(servers, c)
	}
	for _, p := range peers {
		p.req, err = load.Request("examples/xr.yaml", observed, filepath.Join(*peerDir, p.name+".yaml"))
		exitOn(err)
		p.want = len(fnRsp.GetDesired().GetResources())
		s := server{name: p.name, bin: p.bin, peer: p}
		exitOn(checkPeer(s, pki, fnRsp))
		servers = append(servers, s)
	}
	// results[setting][server] holds one measurement per round.
	results := make([][][]measured, len(settings))
	for i := range results {
		results[i] = make([][]measured, len(servers))
	}
	for r := range *rounds {
		for si, st := range settings {
			for i, s := range servers {
				fmt.Fprintf(os.Stderr, "round %d/%d: %s, %s\n", r+1, *rounds, s.name, st.name)
				if s.peer == nil {
					s = s.with(st.args...)
				}
				m, err := measure(s, pki, s.request(req), *duration, *rssRate, *rate, *concurrency)
				exitOn(err)
				results[si][i] = append(results[si][i], m)
			}
		}
	}

	tw := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "stage %s, mTLS on 127.0.0.1, %d interleaved rounds, %s per measurement, %d workers, fixed rate %d/s; median (min–max) over rounds\n",
		*stage, *rounds, *duration, *concurrency, *rate)
	ok := true
	for si, st := range settings {
		ok = report(tw, st, servers, results[si], *rate, *rssRate) && ok
	}
	if *bench != "" {
		rows, err := benchRows(*bench)
		exitOn(err)
		check := checker(tw, &ok)
		for _, r := range rows {
			if strings.HasPrefix(r.name, "BenchmarkRunFunction/serving") {
				check(fmt.Sprintf("in-process serving < %s", maxInProcess), r.nsPerOp < float64(maxInProcess.Nanoseconds()), "%.0fµs, %s", r.nsPerOp/1000, r.allocs)
				check(fmt.Sprintf("in-process serving < %d allocs", maxInProcessAllocs), r.allocsPerOp > 0 && r.allocsPerOp < maxInProcessAllocs, "%d allocs/op", r.allocsPerOp)
			}
		}
		fmt.Fprintln(tw)
		fmt.Fprintln(tw, "in-process benchmark\ttime/op\tmemory")
		for _, r := range rows {
			fmt.Fprintf(tw, "%s\t%.0fµs\t%s\n", r.name, r.nsPerOp/1000, r.allocs)
		}
	}
	_ = tw.Flush()
	for si := range settings {
		for i, s := range servers {
			for _, m := range results[si][i] {
				if err := m.FirstError(); err != nil {
					fmt.Fprintf(os.Stderr, "%s: first error: %v\n", s.name, err)
					break
				}
			}
		}
	}
	if !ok {
		os.Exit(1)
	}
}

// report prints one setting's table, ratios and target verdicts, and
// says whether every target was met. results are in servers' order:
// the empty floor, function-inferno, the canned floor, then -compare's
// and -peer's.
func report(tw *tabwriter.Writer, st setting, servers []server, results [][]measured, rate, rssRate int) bool {
	floor, fnRes, cannedRes := results[0], results[1], results[2]
	fmt.Fprintf(tw, "\n%s\n", st.name)
	fmt.Fprintf(tw, "server\tsaturated req/s\tserver CPU/req\tp50 @ %d/s\tp99 @ %d/s\tp99 @ %d/s\tpeak RSS\tpeak RSS @ %d/s\terrors\n", rate, rate, rssRate, rssRate)
	for i, s := range servers {
		rs := results[i]
		p50s, p99s := spread(rs, p50, "%.2f ms"), spread(rs, p99, "%.2f ms")
		if s.peer != nil {
			p50s, p99s = "—", "—"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%d\n", s.name,
			spread(rs, throughput, "%.0f"), spread(rs, cpuPerReq, "%.0f µs"), p50s, p99s, spread(rs, steadyP99, "%.2f ms"), spread(rs, rssMiB, "%.1f MiB"), spread(rs, steadyRSSMiB, "%.1f MiB"), errorCount(rs))
	}
	fmt.Fprintln(tw)

	type pair struct {
		name     string
		num, den []measured
		peer     bool // one of the two has no measurement at the fixed rate
	}
	pairs := []pair{
		{"function / canned floor", fnRes, cannedRes, false},
		{"function / empty floor", fnRes, floor, false},
		{"canned floor / empty floor", cannedRes, floor, false},
	}
	for i, s := range servers[3:] {
		pairs = append(pairs,
			pair{s.name + " / canned floor", results[3+i], cannedRes, s.peer != nil},
			pair{"function / " + s.name, fnRes, results[3+i], s.peer != nil})
	}
	// Paired: each round's ratio, the two measured minutes apart at
	// most, so that a slow drift in the machine's other load cancels.
	fmt.Fprintf(tw, "ratio of medians\tsaturated req/s\tsame, per round\tserver CPU/req\tp99 @ %d/s\tp99 @ %d/s\tpeak RSS\tpeak RSS @ %d/s\n", rate, rssRate, rssRate)
	for _, r := range pairs {
		p99r := fmt.Sprintf("%.2fx", ratio(r.num, r.den, p99))
		if r.peer {
			p99r = "—"
		}
		fmt.Fprintf(tw, "%s\t%.0f%%\t%s\t%.2fx\t%s\t%.2fx\t%.2fx\t%.2fx\n", r.name,
			100*ratio(r.num, r.den, throughput), pairedSpread(r.num, r.den, throughput), ratio(r.num, r.den, cpuPerReq), p99r, ratio(r.num, r.den, steadyP99), ratio(r.num, r.den, rssMiB), ratio(r.num, r.den, steadyRSSMiB))
	}
	fmt.Fprintln(tw)

	ok := true
	check := checker(tw, &ok)
	fmt.Fprintln(tw, "target\tmeasured\tverdict")
	tr := ratio(fnRes, cannedRes, throughput)
	check(fmt.Sprintf("throughput >= %.0f%% of canned floor", minThroughputRatio*100), tr >= minThroughputRatio, "%.0f%%", tr*100)
	pr := ratio(fnRes, cannedRes, p99)
	check(fmt.Sprintf("p99 @ %d/s <= %.1fx canned floor", rate, maxP99Ratio), pr <= maxP99Ratio, "%.2fx", pr)
	worst := slices.Max(values(fnRes, rssMiB))
	check(fmt.Sprintf("peak RSS < %d MiB, every round", maxPeakRSS>>20), worst*(1<<20) < maxPeakRSS, "%.1f MiB at most", worst)
	check("no errors", errorCount(fnRes) == 0, "%d", errorCount(fnRes))
	for i, s := range servers {
		if s.peer == nil {
			continue
		}
		pr := ratio(fnRes, results[i], throughput)
		check(fmt.Sprintf("throughput >= %.0fx %s's", minPeerRatio, s.name), pr >= minPeerRatio, "%.2fx (per round %s)", pr, pairedSpread(fnRes, results[i], throughput))
		rr := ratio(fnRes, results[i], steadyRSSMiB)
		check(fmt.Sprintf("peak RSS @ %d/s <= %s's", rssRate, s.name), rr <= 1, "%.1f MiB against %.1f MiB", median(fnRes, steadyRSSMiB), median(results[i], steadyRSSMiB))
		check(s.name+" answered without errors", errorCount(results[i]) == 0, "%d", errorCount(results[i]))
	}
	return ok
}

// checker returns a function that prints one target's verdict and clears
// ok when it is missed.
func checker(tw *tabwriter.Writer, ok *bool) func(name string, pass bool, format string, a ...any) {
	return func(name string, pass bool, format string, a ...any) {
		verdict := "met"
		if !pass {
			verdict, *ok = "MISSED", false
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\n", name, fmt.Sprintf(format, a...), verdict)
	}
}

// sameAnswer checks that another build answers req exactly as
// function-inferno does: a build that answered differently would measure
// different work.
func sameAnswer(fn, other server, pki *load.PKI, req *fnv1.RunFunctionRequest) error {
	want, err := runOnce(fn, pki, req)
	if err != nil {
		return err
	}
	got, err := runOnce(other, pki, req)
	if err != nil {
		return err
	}
	if !proto.Equal(want, got) {
		return fmt.Errorf("%s answers differently from function-inferno", other.name)
	}
	return nil
}

// captureResponse asks function-inferno for its answer to req once, writes
// it to file for the canned floor, and checks that the canned floor then
// gives the same answer: a floor that answered differently would measure
// something else.
func captureResponse(fn server, pki *load.PKI, req *fnv1.RunFunctionRequest, cannedBin, file string) (*fnv1.RunFunctionResponse, error) {
	want, err := runOnce(fn, pki, req)
	if err != nil {
		return nil, err
	}
	b, err := proto.MarshalOptions{Deterministic: true}.Marshal(want)
	if err != nil {
		return nil, err
	}
	if err := os.WriteFile(file, b, 0o600); err != nil {
		return nil, err
	}
	got, err := runOnce(server{name: "canned floor", bin: cannedBin, args: []string{"--response=" + file}}, pki, req)
	if err != nil {
		return nil, err
	}
	if !proto.Equal(want, got) {
		return nil, errors.New("the canned floor's response differs from function-inferno's")
	}
	return want, nil
}

func runOnce(s server, pki *load.PKI, req *fnv1.RunFunctionRequest) (*fnv1.RunFunctionResponse, error) {
	p, err := load.StartServer(s.name, s.bin, pki, s.args...)
	if err != nil {
		return nil, err
	}
	defer p.Stop()
	c, err := load.Dial(p.Address, pki)
	if err != nil {
		return nil, err
	}
	defer c.Close() //nolint:errcheck // Done with it.
	rsp, err := c.Run(context.Background(), req)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", s.name, err)
	}
	return rsp, nil
}

// measure starts a fresh process of s, so that its peak RSS is this
// round's, and measures it: first at rssRate, which every server sustains
// (after a second of it to warm up), for the peak RSS at the same
// throughput; then at the fixed rate for latency; then saturated, for the
// throughput and the CPU per request.
func measure(s server, pki *load.PKI, req *fnv1.RunFunctionRequest, d time.Duration, rssRate, rate, concurrency int) (measured, error) {
	p, err := load.StartServer(s.name, s.bin, pki, s.args...)
	if err != nil {
		return measured{}, err
	}
	defer p.Stop()
	c, err := load.Dial(p.Address, pki)
	if err != nil {
		return measured{}, err
	}
	defer c.Close() //nolint:errcheck // Done with it.
	ctx := context.Background()
	rsp, err := c.Run(ctx, req)
	if err != nil {
		return measured{}, fmt.Errorf("%s: %w", s.name, err)
	}
	if s.peer != nil {
		if err := s.peer.check(rsp); err != nil {
			return measured{}, err
		}
	}
	var m measured
	load.FixedRate(ctx, c, req, rssRate, time.Second) // warm up
	m.steady = load.FixedRate(ctx, c, req, rssRate, d)
	if m.steadyRSS, err = p.PeakRSS(); err != nil {
		return m, err
	}
	// A peer is slower than the fixed rate here: its queue would only
	// grow, and with it its memory and the time the rounds take.
	if s.peer == nil {
		m.fixed = load.FixedRate(ctx, c, req, rate, d)
	}
	cpu0, err := p.CPUTime()
	if err != nil {
		return m, err
	}
	m.saturated = load.Saturate(ctx, c, req, concurrency, d)
	cpu1, err := p.CPUTime()
	if err != nil {
		return m, err
	}
	m.cpu = cpu1 - cpu0
	m.rss, err = p.PeakRSS()
	return m, err
}

// A metric is one figure of one measurement.
type metric func(measured) float64

func throughput(m measured) float64 { return m.saturated.Throughput() }
func cpuPerReq(m measured) float64 {
	return float64(m.cpu.Microseconds()) / float64(max(m.saturated.Requests, 1))
}
func p50(m measured) float64 { return ms(m.fixed.Percentile(50)) }
func p99(m measured) float64 { return ms(m.fixed.Percentile(99)) }
func steadyP99(m measured) float64 {
	return ms(m.steady.Percentile(99))
}
func rssMiB(m measured) float64 { return float64(m.rss) / (1 << 20) }
func steadyRSSMiB(m measured) float64 {
	return float64(m.steadyRSS) / (1 << 20)
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

func values(rs []measured, f metric) []float64 {
	out := make([]float64, len(rs))
	for i, m := range rs {
		out[i] = f(m)
	}
	slices.Sort(out)
	return out
}

func median(rs []measured, f metric) float64 {
	v := values(rs, f)
	if len(v)%2 == 1 {
		return v[len(v)/2]
	}
	return (v[len(v)/2-1] + v[len(v)/2]) / 2
}

// spread is "median (min–max)" with each number in format.
func spread(rs []measured, f metric, format string) string {
	v := values(rs, f)
	num := strings.Fields(format)[0]
	return fmt.Sprintf(format+" ("+num+"–"+num+")", median(rs, f), v[0], v[len(v)-1])
}

func ratio(num, den []measured, f metric) float64 { return median(num, f) / median(den, f) }

// pairedSpread is "median (min–max)" of the rounds' own ratios, in percent.
func pairedSpread(num, den []measured, f metric) string {
	rs := make([]float64, len(num))
	for i := range num {
		rs[i] = 100 * f(num[i]) / f(den[i])
	}
	slices.Sort(rs)
	med := rs[len(rs)/2]
	if len(rs)%2 == 0 {
		med = (rs[len(rs)/2-1] + rs[len(rs)/2]) / 2
	}
	return fmt.Sprintf("%.0f%% (%.0f–%.0f%%)", med, rs[0], rs[len(rs)-1])
}

func errorCount(rs []measured) int {
	n := 0
	for _, m := range rs {
		n += m.steady.Errors + m.fixed.Errors + m.saturated.Errors
	}
	return n
}

type benchRow struct {
	name        string
	nsPerOp     float64
	allocs      string
	allocsPerOp int // 0 when the line has none
}

// benchRows reads "BenchmarkX-2  N  123 ns/op  456 B/op  7 allocs/op" lines.
func benchRows(path string) ([]benchRow, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close() //nolint:errcheck // Read only.
	var rows []benchRow
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) < 4 || !strings.HasPrefix(fields[0], "Benchmark") || fields[3] != "ns/op" {
			continue
		}
		var ns float64
		if _, err := fmt.Sscan(fields[2], &ns); err != nil {
			continue
		}
		allocs := strings.Join(fields[4:], " ")
		row := benchRow{name: fields[0], nsPerOp: ns, allocs: allocs}
		for i := 5; i < len(fields); i++ {
			if fields[i] == "allocs/op" {
				row.allocsPerOp, _ = strconv.Atoi(fields[i-1])
			}
		}
		rows = append(rows, row)
	}
	return rows, sc.Err()
}

func exitOn(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
