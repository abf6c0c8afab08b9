// Command cannedfloor is the canned-response floor: the same
// function-sdk-go server as function-inferno, answering every request with
// one response read at start-up — in `make bench`, function-inferno's own
// response to the serving-stage request — doing no work but copying it, as
// every function allocates the response it sends. Against the empty floor it
// shows what it costs to carry function-inferno's answer (allocating it,
// encoding it, sending it, the client decoding it, collecting it); against
// function-inferno it shows what the function's own work costs, everything
// else being equal.
package main

import (
	"context"
	"fmt"
	"os"

	"github.com/alecthomas/kong"
	function "github.com/crossplane/function-sdk-go"
	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"google.golang.org/protobuf/proto"

	"github.com/inferno-ai/function-inferno/test/load"
)

// canned answers with the same response every time.
type canned struct {
	fnv1.UnimplementedFunctionRunnerServiceServer
	rsp *fnv1.RunFunctionResponse
}

// RunFunction returns a copy of the canned response with the request's
// tag. It copies (proto.Clone) rather than shares the response's parts:
// every function builds a fresh response per call, which the collector then
// reclaims, and a floor that handed out one shared message would pay
// neither the allocation nor the collection, making the function's own work
// look dearer than it is.
func (c canned) RunFunction(_ context.Context, req *fnv1.RunFunctionRequest) (*fnv1.RunFunctionResponse, error) {
	rsp := proto.Clone(c.rsp).(*fnv1.RunFunctionResponse)
	if rsp.Meta == nil {
		rsp.Meta = &fnv1.ResponseMeta{}
	}
	rsp.Meta.Tag = req.GetMeta().GetTag()
	return rsp, nil
}

type cli struct {
	Address        string `default:":9443" help:"Address at which to listen for gRPC connections."`
	TLSCertsDir    string `help:"Directory with tls.crt, tls.key and ca.crt." env:"TLS_SERVER_CERTS_DIR"`
	Insecure       bool   `help:"Run without mTLS credentials."`
	Response       string `required:"" type:"existingfile" help:"File holding the RunFunctionResponse to send, in protobuf's binary encoding."`
	GCPercent      int    `help:"Garbage collection target percentage, unless GOGC is set; function-inferno's default." default:"400"`
	MemoryLimitMiB int64  `name:"memory-limit-mib" help:"Soft memory limit in MiB, unless GOMEMLIMIT is set; function-inferno's default (main.go). 0 sets none." default:"24"`
}

func (c *cli) Run() error {
	load.TuneGC(c.GCPercent, c.MemoryLimitMiB)
	b, err := os.ReadFile(c.Response)
	if err != nil {
		return err
	}
	rsp := &fnv1.RunFunctionResponse{}
	if err := proto.Unmarshal(b, rsp); err != nil {
		return fmt.Errorf("%s: %w", c.Response, err)
	}
	return function.Serve(canned{rsp: rsp},
		function.Listen("tcp", c.Address),
		function.MTLSCertificates(c.TLSCertsDir),
		function.Insecure(c.Insecure),
		function.WithMetricsServer(""),
	)
}

func main() {
	ctx := kong.Parse(&cli{}, kong.Description("The canned-response function: the floor of load tests that carries a real response."))
	ctx.FatalIfErrorf(ctx.Run())
}
