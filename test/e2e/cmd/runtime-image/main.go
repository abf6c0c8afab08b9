// Command runtime-image writes a static binary's image as a tarball without
// a Docker engine: the binary on an empty base, run as the distroless
// nonroot user, the same image the Dockerfiles make. `make xpkg` embeds the
// function's in the Function package; `make images` writes the fake model
// server's, which `crane push` or `docker load` publishes.
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/inferno-ai/function-inferno/test/e2e/images"
)

func main() {
	binary := flag.String("binary", "", "The static binary (CGO_ENABLED=0).")
	out := flag.String("out", "runtime.tar", "Where to write the image tarball.")
	tag := flag.String("tag", "function-inferno-runtime:dev", "The image's tag inside the tarball.")
	path := flag.String("path", "/function", "Where the binary goes in the image; also the entrypoint.")
	port := flag.String("port", "9443/tcp", "The exposed port.")
	flag.Parse()
	if *binary == "" {
		fmt.Fprintln(os.Stderr, "-binary is required")
		os.Exit(2)
	}
	bin, err := images.Binary(*binary, *path)
	if err == nil {
		err = images.Write(images.Spec{Tag: *tag, Files: []images.File{bin}, Entrypoint: []string{*path},
			User: images.NonRoot, Ports: []string{*port}}, *out)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
