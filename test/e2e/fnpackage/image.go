// Package fnpackage turns the function's source into an installed
// Crossplane Function without a Docker engine: a static binary, a runtime
// image assembled with go-containerregistry, the real `crossplane xpkg
// build`/`xpkg push` against an in-process registry on 127.0.0.1, and then
// the part the Deployment package runtime would play (certificates, the
// FunctionRevision's endpoint, the process itself).
package fnpackage

import (
	"archive/tar"
	"bytes"
	"context"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
)

// RuntimeUser is the uid:gid of distroless' "nonroot", which the Dockerfile
// for users also runs as.
const RuntimeUser = "65532:65532"

// BuildRuntimeImage writes an image tarball at out holding binary as
// /function on an empty base, run as RuntimeUser with /function as its
// entrypoint and port 9443 exposed: the same image the Dockerfile makes,
// without Docker.
func BuildRuntimeImage(binary, out, tag string) error {
	bin, err := os.ReadFile(binary)
	if err != nil {
		return err
	}
	var layerTar bytes.Buffer
	tw := tar.NewWriter(&layerTar)
	if err := tw.WriteHeader(&tar.Header{
		Name: "function", Mode: 0o755, Size: int64(len(bin)), Typeflag: tar.TypeReg,
		// A fixed time keeps the layer digest stable across builds of the
		// same binary.
		ModTime: time.Unix(0, 0),
	}); err != nil {
		return err
	}
	if _, err := tw.Write(bin); err != nil {
		return err
	}
	if err := tw.Close(); err != nil {
		return err
	}
	layerBytes := layerTar.Bytes()
	layer, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(layerBytes)), nil
	})
	if err != nil {
		return err
	}
	img, err := mutate.AppendLayers(empty.Image, layer)
	if err != nil {
		return err
	}
	cfg, err := img.ConfigFile()
	if err != nil {
		return err
	}
	cfg = cfg.DeepCopy()
	cfg.OS, cfg.Architecture = "linux", "amd64"
	cfg.Config.Entrypoint = []string{"/function"}
	cfg.Config.User = RuntimeUser
	cfg.Config.ExposedPorts = map[string]struct{}{"9443/tcp": {}}
	if img, err = mutate.ConfigFile(img, cfg); err != nil {
		return err
	}
	ref, err := name.NewTag(tag)
	if err != nil {
		return err
	}
	return tarball.WriteToFile(out, ref, img)
}

// ImageConfig reads the config of the single image in a tarball, so a test
// can assert what BuildRuntimeImage produced.
func ImageConfig(path string) (*v1.ConfigFile, error) {
	img, err := tarball.ImageFromPath(path, nil)
	if err != nil {
		return nil, err
	}
	return img.ConfigFile()
}

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
