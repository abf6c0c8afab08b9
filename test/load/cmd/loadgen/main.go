// Command loadgen drives function-inferno and the empty floor function over
// gRPC with mTLS on loopback with the same request, one server at a time,
// and prints one table: saturated throughput, latency percentiles at a
// fixed rate, and peak memory, against the targets in the README. With
// -bench it adds the in-process benchmark figures from `go test -bench`
// output. `make bench` runs it.
package main

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"

	"github.com/inferno-ai/function-inferno/test/load"
)

// Targets on a 2-core machine where server and load generator share the CPU.
const (
	minThroughputRatio = 0.80             // of the floor's saturated throughput
	maxP99Ratio        = 1.5              // of the floor's p99 at the fixed rate
	maxPeakRSS         = 40 * 1024 * 1024 // bytes
	maxInProcess       = 200 * time.Microsecond
)

type measured struct {
	name      string
	saturated load.Result
	fixed     load.Result
	rss       int64
}

func main() {
	fnBin := flag.String("function", "bin/function-inferno", "The function-inferno binary.")
	floorBin := flag.String("floor", "bin/inferno-floor", "The empty function binary.")
	stage := flag.String("stage", "serving", "Observed resources of examples/xr.yaml to send: fresh, pulling, starting, serving, degraded.")
	duration := flag.Duration("duration", 5*time.Second, "How long each measurement runs.")
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

	var results []measured
	for _, s := range []struct{ name, bin string }{{"floor (empty function)", *floorBin}, {"function-inferno", *fnBin}} {
		args := []string{}
		if s.bin == *fnBin {
			args = append(args, "--metrics-address=")
			args = append(args, strings.Fields(*fnArgs)...)
		}
		m, err := measure(s.name, s.bin, pki, req, *duration, *rate, *concurrency, args...)
		exitOn(err)
		results = append(results, m)
	}

	floor, fn := results[0], results[1]
	tw := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "stage %s, mTLS on 127.0.0.1, %s per measurement, %d workers, fixed rate %d/s\n\n", *stage, *duration, *concurrency, *rate)
	fmt.Fprintln(tw, "server\tsaturated req/s\tp50\tp90\tp99 @ fixed rate\terrors\tpeak RSS")
	for _, m := range results {
		fmt.Fprintf(tw, "%s\t%.0f\t%s\t%s\t%s\t%d\t%.1f MiB\n", m.name, m.saturated.Throughput(),
			round(m.fixed.Percentile(50)), round(m.fixed.Percentile(90)), round(m.fixed.Percentile(99)),
			m.saturated.Errors+m.fixed.Errors, float64(m.rss)/(1<<20))
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
	ratio := fn.saturated.Throughput() / floor.saturated.Throughput()
	check("throughput >= 80% of floor", ratio >= minThroughputRatio, "%.0f%%", ratio*100)
	p99 := float64(fn.fixed.Percentile(99)) / float64(floor.fixed.Percentile(99))
	check(fmt.Sprintf("p99 @ %d/s <= 1.5x floor", *rate), p99 <= maxP99Ratio, "%.2fx", p99)
	check("peak RSS < 40 MiB", fn.rss < maxPeakRSS, "%.1f MiB", float64(fn.rss)/(1<<20))
	check("no errors", fn.saturated.Errors+fn.fixed.Errors == 0, "%d", fn.saturated.Errors+fn.fixed.Errors)
	if *bench != "" {
		rows, err := benchRows(*bench)
		exitOn(err)
		for _, r := range rows {
			if strings.Contains(r.name, "/serving") && !strings.Contains(r.name, "large") {
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
	if fn.FirstErrorOrNil() != nil {
		fmt.Fprintln(os.Stderr, "first error:", fn.FirstErrorOrNil())
	}
	if !ok {
		os.Exit(1)
	}
}

// FirstErrorOrNil returns the first error either measurement saw.
func (m measured) FirstErrorOrNil() error {
	if m.saturated.FirstError != nil {
		return m.saturated.FirstError
	}
	return m.fixed.FirstError
}

func measure(name, bin string, pki *load.PKI, req *fnv1.RunFunctionRequest, d time.Duration, rate, concurrency int, args ...string) (measured, error) {
	s, err := load.StartServer(name, bin, pki, args...)
	if err != nil {
		return measured{}, err
	}
	defer s.Stop()
	c, err := load.Dial(s.Address, pki)
	if err != nil {
		return measured{}, err
	}
	defer c.Close() //nolint:errcheck // Done with it.
	ctx := context.Background()
	if err := c.Call(ctx, req); err != nil {
		return measured{}, fmt.Errorf("%s: %w", name, err)
	}
	load.Saturate(ctx, c, req, concurrency, time.Second) // warm up
	m := measured{name: name}
	m.saturated = load.Saturate(ctx, c, req, concurrency, d)
	m.fixed = load.FixedRate(ctx, c, req, rate, d)
	m.rss, err = s.PeakRSS()
	return m, err
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

func round(d time.Duration) time.Duration { return d.Round(10 * time.Microsecond) }

func exitOn(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
