// Command render starts function-inferno on a free loopback port, renders
// an XR with the real `crossplane render`, prints the result and stops the
// function. `make render` runs it.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"time"

	"github.com/inferno-ai/function-inferno/test/render"
)

func main() {
	fn := flag.String("function", "bin/function-inferno", "The function binary.")
	cli := flag.String("crossplane", "bin/crossplane", "The crossplane CLI binary.")
	xr := flag.String("xr", "examples/xr.yaml", "The XR to render.")
	comp := flag.String("composition", "apis/composition.yaml", "The Composition.")
	fns := flag.String("functions", "examples/functions.yaml", "The Functions file.")
	stage := flag.String("stage", "", "Render with examples/observed/<stage>.yaml: pulling, failed, starting, serving or degraded.")
	observed := flag.String("observed", "", "Render with these observed resources instead of a -stage (e.g. examples/canary/observed/serving.yaml).")
	required := flag.String("required", "", "Pass these required resources (e.g. examples/modelcache/required/ready.yaml).")
	flag.Parse()

	a := render.Args{CLI: *cli, XR: *xr, Composition: *comp, Functions: *fns, Observed: *observed, Required: *required}
	// Run from the repository's root (make render).
	render.SecretsFixture = "examples/secrets.yaml"
	if *stage != "" && *observed == "" {
		a.Observed = "examples/observed/" + *stage + ".yaml"
		if _, err := os.Stat(a.Observed); err != nil {
			fmt.Fprintf(os.Stderr, "no stage %q: %v (stages: pulling, failed, starting, serving, degraded)\n", *stage, err)
			os.Exit(2)
		}
	}
	f, err := render.StartFunction(*fn)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	out, err := f.Render(ctx, a)
	cancel()
	f.Stop()
	os.Stdout.Write(out) //nolint:errcheck // Nothing to do if stdout is gone.
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		fmt.Fprintln(os.Stderr, f.Logs())
		os.Exit(1)
	}
}
