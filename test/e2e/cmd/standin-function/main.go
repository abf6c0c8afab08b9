// Command standin is a throwaway composition function that proves the
// end-to-end harness before (and independently of) the real
// function-inferno: it composes one Deployment, named after the claim, into
// the claim's namespace, and reports it ready once the Deployment is
// Available. It takes the flags of function-template-go.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"

	"github.com/crossplane/function-sdk-go"
	"github.com/crossplane/function-sdk-go/logging"
	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"github.com/crossplane/function-sdk-go/request"
	"github.com/crossplane/function-sdk-go/resource"
	"github.com/crossplane/function-sdk-go/resource/composed"
	"github.com/crossplane/function-sdk-go/response"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func main() {
	address := flag.String("address", ":9443", "Address at which to listen for gRPC connections.")
	certs := flag.String("tls-certs-dir", os.Getenv("TLS_SERVER_CERTS_DIR"), "Directory with tls.crt, tls.key and ca.crt for mTLS.")
	insecure := flag.Bool("insecure", false, "Serve without mTLS.")
	debug := flag.Bool("debug", false, "Log debug messages.")
	flag.Parse()

	log, err := function.NewLogger(*debug)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	if err := function.Serve(&standin{log: log},
		function.Listen("tcp", *address),
		function.MTLSCertificates(*certs),
		function.Insecure(*insecure)); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

type standin struct {
	fnv1.UnimplementedFunctionRunnerServiceServer
	log logging.Logger
}

// RunFunction composes the claim's Deployment.
func (f *standin) RunFunction(_ context.Context, req *fnv1.RunFunctionRequest) (*fnv1.RunFunctionResponse, error) {
	rsp := response.To(req, response.DefaultTTL)
	xr, err := request.GetObservedCompositeResource(req)
	if err != nil {
		response.Fatal(rsp, fmt.Errorf("observed XR: %w", err))
		return rsp, nil
	}
	labels := xr.Resource.GetLabels()
	ns, name := labels["crossplane.io/claim-namespace"], labels["crossplane.io/claim-name"]
	if ns == "" || name == "" {
		response.Fatal(rsp, fmt.Errorf("XR %s has no claim labels: only claims are supported", xr.Resource.GetName()))
		return rsp, nil
	}
	replicas, err := xr.Resource.GetInteger("spec.replicas")
	if err != nil {
		replicas = 1
	}
	image, err := xr.Resource.GetString("spec.image")
	if err != nil || image == "" {
		image = "registry.invalid/standin:latest"
	}

	d := composed.New()
	d.Object = deployment(ns, name, image, replicas)
	desired, err := request.GetDesiredComposedResources(req)
	if err != nil {
		response.Fatal(rsp, err)
		return rsp, nil
	}
	dc := &resource.DesiredComposed{Resource: d, Ready: resource.ReadyFalse}
	observed, err := request.GetObservedComposedResources(req)
	if err != nil {
		response.Fatal(rsp, err)
		return rsp, nil
	}
	if o, ok := observed["deployment"]; ok && available(o.Resource.Object) {
		dc.Ready = resource.ReadyTrue
	}
	desired["deployment"] = dc
	if err := response.SetDesiredComposedResources(rsp, desired); err != nil {
		response.Fatal(rsp, err)
		return rsp, nil
	}
	f.log.Debug("composed", "namespace", ns, "name", name, "ready", dc.Ready)
	return rsp, nil
}

func available(obj map[string]any) bool {
	conds, _, _ := unstructured.NestedSlice(obj, "status", "conditions")
	for _, c := range conds {
		if m, ok := c.(map[string]any); ok && m["type"] == "Available" && m["status"] == "True" {
			return true
		}
	}
	return false
}

// deployment meets the "restricted" Pod Security Standard, so the harness's
// Pod Security checks have a clean baseline.
func deployment(ns, name, image string, replicas int64) map[string]any {
	labels := map[string]any{"app.kubernetes.io/name": "standin", "app.kubernetes.io/instance": name}
	return map[string]any{
		"apiVersion": "apps/v1",
		"kind":       "Deployment",
		"metadata":   map[string]any{"name": name, "namespace": ns, "labels": labels},
		"spec": map[string]any{
			"replicas": replicas,
			"selector": map[string]any{"matchLabels": labels},
			"template": map[string]any{
				"metadata": map[string]any{"labels": labels},
				"spec": map[string]any{
					"securityContext": map[string]any{
						"runAsNonRoot":   true,
						"runAsUser":      int64(65532),
						"seccompProfile": map[string]any{"type": "RuntimeDefault"},
					},
					"containers": []any{map[string]any{
						"name":  "server",
						"image": image,
						"securityContext": map[string]any{
							"allowPrivilegeEscalation": false,
							"capabilities":             map[string]any{"drop": []any{"ALL"}},
						},
					}},
				},
			},
		},
	}
}
