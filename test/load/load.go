package load

import (
	"context"
	"fmt"
	"os"
	"runtime/debug"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"github.com/inferno-ai/function-inferno/test/fnproc"
	"github.com/inferno-ai/function-inferno/test/render"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/protobuf/types/known/structpb"
)

// Server is a function server process on a loopback port, with mTLS.
type Server struct {
	*fnproc.Process
	Name string
}

// StartServer starts binary with --tls-certs-dir on a free loopback port
// and waits until it accepts connections.
func StartServer(name, binary string, pki *PKI, extraArgs ...string) (*Server, error) {
	dir, err := os.MkdirTemp("", "inferno-load-")
	if err != nil {
		return nil, err
	}
	if err := pki.WriteServerCerts(dir); err != nil {
		return nil, err
	}
	p, err := fnproc.Start(binary, append([]string{"--tls-certs-dir=" + dir}, extraArgs...)...)
	if err != nil {
		return nil, err
	}
	return &Server{Process: p, Name: name}, nil
}

// Client is a gRPC connection to a function server.
type Client struct {
	conn *grpc.ClientConn
	fn   fnv1.FunctionRunnerServiceClient
}

// Dial connects to a server with the PKI's client certificate.
func Dial(addr string, pki *PKI) (*Client, error) {
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(credentials.NewTLS(pki.ClientTLS())))
	if err != nil {
		return nil, err
	}
	return &Client{conn: conn, fn: fnv1.NewFunctionRunnerServiceClient(conn)}, nil
}

// Close closes the connection.
func (c *Client) Close() error { return c.conn.Close() }

// Call sends one request and checks the answer carries no Fatal result.
func (c *Client) Call(ctx context.Context, req *fnv1.RunFunctionRequest) error {
	_, err := c.Run(ctx, req)
	return err
}

// Run sends one request and returns the answer, or an error if it carries
// a Fatal result.
func (c *Client) Run(ctx context.Context, req *fnv1.RunFunctionRequest) (*fnv1.RunFunctionResponse, error) {
	rsp, err := c.fn.RunFunction(ctx, req)
	if err != nil {
		return nil, err
	}
	for _, r := range rsp.GetResults() {
		if r.GetSeverity() == fnv1.Severity_SEVERITY_FATAL {
			return nil, fmt.Errorf("fatal result: %s", r.GetMessage())
		}
	}
	return rsp, nil
}

// Result is what one measurement saw.
type Result struct {
	Requests   int
	Errors     int
	FirstError error
	Duration   time.Duration
	Latencies  []time.Duration // sorted
}

// Throughput is requests answered per second.
func (r Result) Throughput() float64 { return float64(r.Requests) / r.Duration.Seconds() }

// Percentile returns the p-th percentile latency (0 < p <= 100).
func (r Result) Percentile(p float64) time.Duration {
	if len(r.Latencies) == 0 {
		return 0
	}
	i := int(float64(len(r.Latencies))*p/100+0.5) - 1
	return r.Latencies[min(max(i, 0), len(r.Latencies)-1)]
}

// Saturate sends requests back to back from concurrency workers for d and
// reports the throughput: the most the server answers on this machine.
func Saturate(ctx context.Context, c *Client, req *fnv1.RunFunctionRequest, concurrency int, d time.Duration) Result {
	var (
		mu  sync.Mutex
		res Result
		wg  sync.WaitGroup
	)
	end := time.Now().Add(d)
	start := time.Now()
	for range concurrency {
		wg.Go(func() {
			var lat []time.Duration
			var errs int
			var first error
			for time.Now().Before(end) {
				t0 := time.Now()
				if err := c.Call(ctx, req); err != nil {
					errs++
					if first == nil {
						first = err
					}
					continue
				}
				lat = append(lat, time.Since(t0))
			}
			mu.Lock()
			res.Latencies = append(res.Latencies, lat...)
			res.Errors += errs
			if res.FirstError == nil {
				res.FirstError = first
			}
			mu.Unlock()
		})
	}
	wg.Wait()
	res.Duration = time.Since(start)
	res.Requests = len(res.Latencies)
	slices.Sort(res.Latencies)
	return res
}

// FixedRate sends rate requests per second for d, each on schedule whether
// or not earlier ones have been answered (an open loop, so a slow answer
// cannot hide the queueing it causes), and measures each latency from its
// scheduled start.
func FixedRate(ctx context.Context, c *Client, req *fnv1.RunFunctionRequest, rate int, d time.Duration) Result {
	n := int(d.Seconds() * float64(rate))
	interval := time.Second / time.Duration(rate)
	lat := make([]time.Duration, n)
	var errs atomic.Int64
	var first atomic.Value
	var wg sync.WaitGroup
	start := time.Now()
	for i := range n {
		due := start.Add(time.Duration(i) * interval)
		time.Sleep(time.Until(due))
		wg.Go(func() {
			if err := c.Call(ctx, req); err != nil {
				errs.Add(1)
				first.CompareAndSwap(nil, err)
				lat[i] = -1
				return
			}
			lat[i] = time.Since(due)
		})
	}
	wg.Wait()
	res := Result{Duration: time.Since(start), Errors: int(errs.Load())}
	if e, ok := first.Load().(error); ok {
		res.FirstError = e
	}
	for _, l := range lat {
		if l >= 0 {
			res.Latencies = append(res.Latencies, l)
		}
	}
	res.Requests = len(res.Latencies)
	slices.Sort(res.Latencies)
	return res
}

// Request builds a RunFunctionRequest from an XR file, an optional observed
// resources file (multi-document YAML) and the Composition file's Input.
func Request(xrPath, observedPath, compositionPath string) (*fnv1.RunFunctionRequest, error) {
	xr, err := readDocs(xrPath)
	if err != nil {
		return nil, err
	}
	comp, err := readDocs(compositionPath)
	if err != nil {
		return nil, err
	}
	req := &fnv1.RunFunctionRequest{Meta: &fnv1.RequestMeta{Tag: "load"}, Observed: &fnv1.State{}}
	if req.Observed.Composite, err = asResource(xr[0]); err != nil {
		return nil, err
	}
	spec, _ := comp[0]["spec"].(map[string]any)
	steps, _ := spec["pipeline"].([]any)
	if len(steps) > 0 {
		if in, ok := steps[0].(map[string]any)["input"].(map[string]any); ok {
			if req.Input, err = structpb.NewStruct(in); err != nil {
				return nil, err
			}
		}
	}
	if observedPath != "" {
		docs, err := readDocs(observedPath)
		if err != nil {
			return nil, err
		}
		req.Observed.Resources = map[string]*fnv1.Resource{}
		for _, d := range docs {
			meta, _ := d["metadata"].(map[string]any)
			ann, _ := meta["annotations"].(map[string]any)
			name, _ := ann["crossplane.io/composition-resource-name"].(string)
			if req.Observed.Resources[name], err = asResource(d); err != nil {
				return nil, err
			}
		}
	}
	return req, nil
}

func asResource(m map[string]any) (*fnv1.Resource, error) {
	s, err := structpb.NewStruct(m)
	return &fnv1.Resource{Resource: s}, err
}

func readDocs(path string) ([]map[string]any, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	docs, err := render.Documents(b)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return docs, nil
}

// TuneGC sets the garbage collector the way function-inferno's main does
// (--gc-percent, --memory-limit-mib; GOGC and GOMEMLIMIT win when set), so
// that a floor function run with the same flags differs from it only in
// the work it does.
func TuneGC(percent int, limitMiB int64) {
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(percent)
	}
	if os.Getenv("GOMEMLIMIT") == "" && limitMiB > 0 {
		debug.SetMemoryLimit(limitMiB << 20)
	}
}
