// Command loadgen drives function-inferno and two floor functions over gRPC
// with mTLS on loopback with the same request, and prints one table:
// saturated throughput, latency percentiles at a fixed rate, and peak
// memory, against the targets in the README. The floors are the empty
// function (no answer to carry) and the canned floor (function-inferno's
// own answer, sent back without any work); the targets are read against
// the canned floor, which differs from function-inferno only in the work.
//
// One measurement on a shared 2-core machine moves by tens of percent, so
// loadgen runs -rounds rounds of all three servers, one at a time and
// interleaved (floor, function, canned floor, floor, …), each in a fresh
// process (the floors with function-inferno's garbage collector settings,
// load.TuneGC), and reports the median and the spread of every figure. With
// -bench it adds the in-process benchmark figures from `go test -bench`
// output. `make bench` runs it.
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
	minThroughputRatio = 0.85             // of the canned floor's saturated throughput (medians)
	maxP99Ratio        = 1.3              // of the canned floor's p99 at the fixed rate (medians)
	maxPeakRSS         = 40 * 1024 * 1024 // bytes, in every round
	maxInProcess       = 200 * time.Microsecond
)

// A server is one of the three binaries measured.
type server struct {
	name string
	bin  string
	args []string
}

// measured is what one round saw of one server.
type measured struct {
	saturated load.Result
	fixed     load.Result
	rss       int64
}

// FirstError returns the first error either measurement saw.
func (m measured) FirstError() error {
	if m.saturated.FirstError != nil {
		return m.saturated.FirstError
	}
	return m.fixed.FirstError
}

func main() {
	fnBin := flag.String("function", "bin/function-inferno", "The function-inferno binary.")
	floorBin := flag.String("floor", "bin/inferno-floor", "The empty function binary.")
	cannedBin := flag.String("canned-floor", "bin/inferno-canned-floor", "The canned-response function binary.")
	stage := flag.String("stage", "serving", "Observed resources of examples/xr.yaml to send: fresh, pulling, starting, serving, degraded.")
	rounds := flag.Int("rounds", 5, "Interleaved rounds of the three servers.")
	duration := flag.Duration("duration", 5*time.Second, "How long each measurement runs (two per server per round).")
	rate := flag.Int("rate", 300, "Requests per second of the fixed-rate measurement.")
	concurrency := flag.Int("concurrency", 8, "Workers of the saturation measurement.")
	bench := flag.String("bench", "", "A file of `go test -bench -benchmem` output to include.")
	fnArgs := flag.String("function-args", "", "Extra flags for function-inferno, space separated.")
	flag.Parse()

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
	exitOn(captureResponse(fn, pki, req, *cannedBin, cannedFile))

	servers := []server{
		{name: "floor (empty)", bin: *floorBin},
		fn,
		{name: "canned floor", bin: *cannedBin, args: []string{"--response=" + cannedFile}},
	}
	results := make([][]measured, len(servers))
	for r := range *rounds {
		for i, s := range servers {
			fmt.Fprintf(os.Stderr, "round %d/%d: %s\n", r+1, *rounds, s.name)
			m, err := measure(s, pki, req, *duration, *rate, *concurrency)
			exitOn(err)
			results[i] = append(results[i], m)
		}
	}
	floor, fnRes, cannedRes := results[0], results[1], results[2]

	tw := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "stage %s, mTLS on 127.0.0.1, %d interleaved rounds, %s per measurement, %d workers, fixed rate %d/s; median (min–max) over rounds\n\n",
		*stage, *rounds, *duration, *concurrency, *rate)
	fmt.Fprintln(tw, "server\tsaturated req/s\tp50 @ fixed rate\tp99 @ fixed rate\tpeak RSS\terrors")
	for i, s := range servers {
		rs := results[i]
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%d\n", s.name,
			spread(rs, throughput, "%.0f"), spread(rs, p50, "%.2f ms"), spread(rs, p99, "%.2f ms"), spread(rs, rssMiB, "%.1f MiB"), errorCount(rs))
	}
	fmt.Fprintln(tw)

	fmt.Fprintln(tw, "ratio of medians\tsaturated req/s\tp99 @ fixed rate\tpeak RSS")
	for _, r := range []struct {
		name     string
		num, den []measured
	}{
		{"function / canned floor", fnRes, cannedRes},
		{"function / empty floor", fnRes, floor},
		{"canned floor / empty floor", cannedRes, floor},
	} {
		fmt.Fprintf(tw, "%s\t%.0f%%\t%.2fx\t%.2fx\n", r.name,
			100*ratio(r.num, r.den, throughput), ratio(r.num, r.den, p99), ratio(r.num, r.den, rssMiB))
	}
	fmt.Fprintln(tw)

	ok := true
	check := func(name string, pass bool, format string, a ...any) {
		verdict := "met"
		if !pass {
			verdict, ok = "MISSED", false
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\n", name, fmt.Sprintf(format, a...), verdict)
	}
	fmt.Fprintln(tw, "target\tmeasured\tverdict")
	tr := ratio(fnRes, cannedRes, throughput)
	check(fmt.Sprintf("throughput >= %.0f%% of canned floor", minThroughputRatio*100), tr >= minThroughputRatio, "%.0f%%", tr*100)
	pr := ratio(fnRes, cannedRes, p99)
	check(fmt.Sprintf("p99 @ %d/s <= %.1fx canned floor", *rate, maxP99Ratio), pr <= maxP99Ratio, "%.2fx", pr)
	worst := slices.Max(values(fnRes, rssMiB))
	check("peak RSS < 40 MiB, every round", worst*(1<<20) < maxPeakRSS, "%.1f MiB at most", worst)
	check("no errors", errorCount(fnRes) == 0, "%d", errorCount(fnRes))
	if *bench != "" {
		rows, err := benchRows(*bench)
		exitOn(err)
		for _, r := range rows {
			if strings.HasPrefix(r.name, "BenchmarkRunFunction/serving") {
				check("in-process serving < 200µs", r.nsPerOp < float64(maxInProcess.Nanoseconds()), "%.0fµs, %s", r.nsPerOp/1000, r.allocs)
			}
		}
		fmt.Fprintln(tw)
		fmt.Fprintln(tw, "in-process benchmark\ttime/op\tmemory")
		for _, r := range rows {
			fmt.Fprintf(tw, "%s\t%.0fµs\t%s\n", r.name, r.nsPerOp/1000, r.allocs)
		}
	}
	_ = tw.Flush()
	for i, s := range servers {
		for _, m := range results[i] {
			if err := m.FirstError(); err != nil {
				fmt.Fprintf(os.Stderr, "%s: first error: %v\n", s.name, err)
				break
			}
		}
	}
	if !ok {
		os.Exit(1)
	}
}

// captureResponse asks function-inferno for its answer to req once, writes
// it to file for the canned floor, and checks that the canned floor then
// gives the same answer: a floor that answered differently would measure
// something else.
func captureResponse(fn server, pki *load.PKI, req *fnv1.RunFunctionRequest, cannedBin, file string) error {
	want, err := runOnce(fn, pki, req)
	if err != nil {
		return err
	}
	b, err := proto.MarshalOptions{Deterministic: true}.Marshal(want)
	if err != nil {
		return err
	}
	if err := os.WriteFile(file, b, 0o600); err != nil {
		return err
	}
	got, err := runOnce(server{name: "canned floor", bin: cannedBin, args: []string{"--response=" + file}}, pki, req)
	if err != nil {
		return err
	}
	if !proto.Equal(want, got) {
		return errors.New("the canned floor's response differs from function-inferno's")
	}
	return nil
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
// round's, warms it up, and measures it.
func measure(s server, pki *load.PKI, req *fnv1.RunFunctionRequest, d time.Duration, rate, concurrency int) (measured, error) {
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
	if err := c.Call(ctx, req); err != nil {
		return measured{}, fmt.Errorf("%s: %w", s.name, err)
	}
	load.Saturate(ctx, c, req, concurrency, time.Second) // warm up
	var m measured
	m.saturated = load.Saturate(ctx, c, req, concurrency, d)
	m.fixed = load.FixedRate(ctx, c, req, rate, d)
	m.rss, err = p.PeakRSS()
	return m, err
}

// A metric is one figure of one measurement.
type metric func(measured) float64

func throughput(m measured) float64 { return m.saturated.Throughput() }
func p50(m measured) float64        { return ms(m.fixed.Percentile(50)) }
func p99(m measured) float64        { return ms(m.fixed.Percentile(99)) }
func rssMiB(m measured) float64     { return float64(m.rss) / (1 << 20) }

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

func errorCount(rs []measured) int {
	n := 0
	for _, m := range rs {
		n += m.saturated.Errors + m.fixed.Errors
	}
	return n
}

type benchRow struct {
	name    string
	nsPerOp float64
	allocs  string
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
		rows = append(rows, benchRow{name: fields[0], nsPerOp: ns, allocs: allocs})
	}
	return rows, sc.Err()
}

func exitOn(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
