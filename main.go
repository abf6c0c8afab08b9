// Command function-inferno is a Crossplane composition function that turns
// an InferenceService claim into the Kubernetes objects that serve a model.
package main

import (
	"os"
	"runtime/debug"

	"github.com/alecthomas/kong"
	function "github.com/crossplane/function-sdk-go"
	grpcprometheus "github.com/grpc-ecosystem/go-grpc-middleware/providers/prometheus"
	"google.golang.org/grpc/health"

	"github.com/inferno-ai/function-inferno/fn"
)

// CLI is the function's command line: the flags Crossplane's package
// runtime and `crossplane render` pass to every function.
type CLI struct {
	Debug bool `short:"d" help:"Emit debug logs in addition to info logs."`

	Network            string `help:"Network on which to listen for gRPC connections." default:"tcp"`
	Address            string `help:"Address at which to listen for gRPC connections." default:":9443"`
	TLSCertsDir        string `help:"Directory containing server certs (tls.key, tls.crt) and the CA used to verify client certificates (ca.crt)." env:"TLS_SERVER_CERTS_DIR"`
	Insecure           bool   `help:"Run without mTLS credentials. If you supply this flag --tls-certs-dir will be ignored."`
	MaxRecvMessageSize int    `help:"Maximum size of received messages in MB." default:"4"`
	MetricsAddress     string `help:"Address at which to serve Prometheus metrics; empty turns them off." default:":8080"`

	// A call allocates about 125 KiB that is garbage when it returns, over a
	// live heap of a few MiB: with Go's default GOGC=100 the collector would
	// run every few dozen calls. A higher GC percentage under a soft memory
	// limit trades a little memory, capped, for far less collection.
	// The limit is 24 MiB, chosen by `make bench
	// BENCH_FLAGS=-memory-limits=…` (docs/performance.md): at 16 MiB the
	// collector runs near the limit all the time and takes a third more CPU
	// per request; at 24 MiB the CPU per request is that of 32 MiB (which
	// is that of no limit) within the machine's noise, while the peak RSS
	// falls from 54 to 46 MiB, and at 50 requests a second from 49 to 43
	// MiB, the empty function's own under the same settings; 64 MiB and no
	// limit peak at 61–70 MiB, over the 64 MiB target.
	// The environment variables GOGC and GOMEMLIMIT, when set, win.
	GCPercent      int   `help:"Garbage collection target percentage, unless GOGC is set." default:"400"`
	MemoryLimitMiB int64 `name:"memory-limit-mib" help:"Soft memory limit in MiB, unless GOMEMLIMIT is set; the collector works harder near it. 0 sets none." default:"24"`
}

// Run serves the function until the server fails.
func (c *CLI) Run() error {
	log, err := function.NewLogger(c.Debug)
	if err != nil {
		return err
	}
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(c.GCPercent)
	}
	if os.Getenv("GOMEMLIMIT") == "" && c.MemoryLimitMiB > 0 {
		debug.SetMemoryLimit(c.MemoryLimitMiB << 20)
	}
	return function.Serve(&fn.Function{Log: log},
		function.Listen(c.Network, c.Address),
		function.MTLSCertificates(c.TLSCertsDir),
		function.Insecure(c.Insecure),
		function.MaxRecvMessageSize(c.MaxRecvMessageSize*1024*1024),
		function.WithHealthServer(health.NewServer()),
		function.WithMetricsServer(c.MetricsAddress),
		// Operators size a control plane by the function's latency under
		// load: export it as a histogram, not only call counts.
		// Buckets from 0.25 ms: a call takes a fraction of a millisecond.
		function.WithMetricsServerOpts(grpcprometheus.WithServerHandlingTimeHistogram(
			grpcprometheus.WithHistogramBuckets([]float64{.00025, .0005, .001, .002, .005, .01, .025, .05, .1, .25, 1}),
		)),
	)
}

func main() {
	ctx := kong.Parse(&CLI{}, kong.Description("function-inferno: serve AI models on Kubernetes from one InferenceService claim."))
	ctx.FatalIfErrorf(ctx.Run())
}
