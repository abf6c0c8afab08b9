// Package fnpackage turns the function's source into an installed
// Crossplane Function without a Docker engine: a static binary, a runtime
// image assembled with go-containerregistry, the real `crossplane xpkg
// build`/`xpkg push` against an in-process registry on 127.0.0.1, and then
// the part the Deployment package runtime would play (certificates, the
// FunctionRevision's endpoint, the process itself).
package fnpackage

import (
	"context"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"time"

	"github.com/google/go-containerregistry/pkg/registry"
	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/inferno-ai/function-inferno/test/e2e/images"
)

// RuntimeUser is the uid:gid of distroless' "nonroot", which the Dockerfile
// for users also runs as.
const RuntimeUser = images.NonRoot

// BuildRuntimeImage writes an image tarball at out holding binary as
// /function on an empty base, run as RuntimeUser with /function as its
// entrypoint and port 9443 exposed: the same image the Dockerfile makes,
// without Docker.
func BuildRuntimeImage(binary, out, tag string) error {
	bin, err := images.Binary(binary, "/function")
	if err != nil {
		return err
	}
	return images.Write(images.Spec{
		Tag: tag, Files: []images.File{bin},
		Entrypoint: []string{"/function"}, User: RuntimeUser, Ports: []string{"9443/tcp"},
	}, out)
}

// ImageConfig reads the config of the single image in a tarball, so a test
// can assert what BuildRuntimeImage produced.
func ImageConfig(path string) (*v1.ConfigFile, error) { return images.Config(path) }

// Registry is an OCI registry served in-process on 127.0.0.1. Both the
// crossplane CLI and Crossplane core talk plain HTTP to it: go-containerregistry
// treats 127.0.0.1 and localhost registries as insecure by default.
type Registry struct {
	Host string // 127.0.0.1:<port>
	srv  *http.Server
}

// StartRegistry serves a registry until Stop. Its log goes to logw.
func StartRegistry(logw io.Writer) (*Registry, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	r := &Registry{
		Host: l.Addr().String(),
		srv:  &http.Server{Handler: registry.New(registry.Logger(log.New(logw, "registry ", log.LstdFlags|log.Lmicroseconds))), ReadHeaderTimeout: 10 * time.Second},
	}
	go func() { _ = r.srv.Serve(l) }()
	return r, nil
}

// Stop shuts the registry down.
func (r *Registry) Stop(ctx context.Context) error {
	if err := r.srv.Shutdown(ctx); err != nil {
		return fmt.Errorf("stop registry: %w", err)
	}
	return nil
}
