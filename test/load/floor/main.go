// Command floor is the empty function: the same function-sdk-go server as
// function-inferno, returning the request's desired state unchanged. Load
// tests drive it with the same requests to measure what the SDK, gRPC and
// TLS cost on their own, the floor function-inferno's figures are read
// against.
package main

import (
	"context"

	"github.com/alecthomas/kong"
	function "github.com/crossplane/function-sdk-go"
	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"github.com/crossplane/function-sdk-go/response"

	"github.com/inferno-ai/function-inferno/test/load"
)

type floor struct {
	fnv1.UnimplementedFunctionRunnerServiceServer
}

// RunFunction returns the desired state it was given.
func (floor) RunFunction(_ context.Context, req *fnv1.RunFunctionRequest) (*fnv1.RunFunctionResponse, error) {
	return response.To(req, response.DefaultTTL), nil
}

type cli struct {
	Address        string `default:":9443" help:"Address at which to listen for gRPC connections."`
	TLSCertsDir    string `help:"Directory with tls.crt, tls.key and ca.crt." env:"TLS_SERVER_CERTS_DIR"`
	Insecure       bool   `help:"Run without mTLS credentials."`
	GCPercent      int    `help:"Garbage collection target percentage, unless GOGC is set; function-inferno's default." default:"400"`
	MemoryLimitMiB int64  `name:"memory-limit-mib" help:"Soft memory limit in MiB, unless GOMEMLIMIT is set; function-inferno's default (main.go). 0 sets none." default:"24"`
}

func (c *cli) Run() error {
	load.TuneGC(c.GCPercent, c.MemoryLimitMiB)
	return function.Serve(floor{},
		function.Listen("tcp", c.Address),
		function.MTLSCertificates(c.TLSCertsDir),
		function.Insecure(c.Insecure),
		function.WithMetricsServer(""),
	)
}

func main() {
	ctx := kong.Parse(&cli{}, kong.Description("The empty function: the floor of load tests."))
	ctx.FatalIfErrorf(ctx.Run())
}
