package fn

import (
	"bytes"
	"context"
	"net"
	"sync"
	"testing"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/protobuf/proto"
)

// TestConcurrentGRPC serves the function over gRPC on loopback and sends
// it requests of every stage from many goroutines at once. Under the race
// detector (make test runs it) this proves the function shares no state
// between calls; each answer must also equal the in-process one.
func TestConcurrentGRPC(t *testing.T) {
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := grpc.NewServer()
	fnv1.RegisterFunctionRunnerServiceServer(srv, &Function{})
	go srv.Serve(lis) //nolint:errcheck // Stopped below.
	t.Cleanup(srv.Stop)

	conn, err := grpc.NewClient(lis.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close() })
	client := fnv1.NewFunctionRunnerServiceClient(conn)

	input := compositionInput(t)
	xr := readYAML(t, "../examples/xr.yaml")
	marshal := proto.MarshalOptions{Deterministic: true}
	type call struct {
		req  *fnv1.RunFunctionRequest
		want []byte
	}
	var calls []call
	for _, stage := range append([]string{"fresh"}, stages...) {
		var observed []observedObject
		if stage != "fresh" {
			observed, _ = stageObserved(t, xr, input, stage)
		}
		req := newRequest(t, xr, input, observed...)
		want, err := marshal.Marshal(run(t, req))
		if err != nil {
			t.Fatal(err)
		}
		calls = append(calls, call{req: req, want: want})
	}

	const workers, perWorker = 8, 25
	var wg sync.WaitGroup
	errs := make(chan string, workers*perWorker)
	for w := range workers {
		wg.Go(func() {
			for i := range perWorker {
				c := calls[(w+i)%len(calls)]
				rsp, err := client.RunFunction(context.Background(), c.req)
				if err != nil {
					errs <- err.Error()
					continue
				}
				got, err := marshal.Marshal(rsp)
				if err != nil || !bytes.Equal(got, c.want) {
					errs <- "a response over gRPC differs from the in-process one"
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
}
