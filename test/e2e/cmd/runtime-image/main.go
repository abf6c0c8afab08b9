// Command runtime-image writes the function's runtime image as a tarball
// without a Docker engine: the static binary as /function on an empty base,
// run as the distroless nonroot user, the same image the Dockerfile makes.
// `make xpkg` embeds it in the Function package.
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/inferno-ai/function-inferno/test/e2e/fnpackage"
)

func main() {
	binary := flag.String("binary", "", "The static function binary (CGO_ENABLED=0).")
	out := flag.String("out", "runtime.tar", "Where to write the image tarball.")
	tag := flag.String("tag", "function-inferno-runtime:dev", "The image's tag inside the tarball.")
	flag.Parse()
	if *binary == "" {
		fmt.Fprintln(os.Stderr, "-binary is required")
		os.Exit(2)
	}
	if err := fnpackage.BuildRuntimeImage(*binary, *out, *tag); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
