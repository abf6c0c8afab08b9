// Package render runs the real `crossplane render` against function-inferno
// started on a free loopback port, for `make render` and the render tests.
package render

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"sigs.k8s.io/yaml"

	"github.com/inferno-ai/function-inferno/test/fnproc"
)

// Function is a function-inferno process serving without TLS on 127.0.0.1.
type Function struct {
	*fnproc.Process
}

// StartFunction starts the function binary on a free loopback port and
// waits until it accepts connections.
func StartFunction(binary string) (*Function, error) {
	// No metrics server: two functions on one machine would fight over :8080.
	p, err := fnproc.Start(binary, "--insecure", "--metrics-address=")
	if err != nil {
		return nil, err
	}
	return &Function{Process: p}, nil
}

// Args are the files one render reads.
type Args struct {
	CLI         string // the crossplane binary
	XR          string
	Composition string
	Functions   string
	Observed    string // optional --observed-resources
	XRD         string // optional --xrd: default the XR from the XRD's schema
	Required    string // optional --required-resources: what the function may ask Crossplane for
}

// Render runs `crossplane render --include-full-xr --include-function-results`
// against the function and returns its standard output.
func (f *Function) Render(ctx context.Context, a Args) ([]byte, error) {
	args := []string{"render", a.XR, a.Composition, a.Functions,
		"--include-full-xr", "--include-function-results",
		"-a", "render.crossplane.io/runtime=Development",
		"-a", "render.crossplane.io/runtime-development-target=" + f.Address,
	}
	if a.Observed != "" {
		args = append(args, "--observed-resources="+a.Observed)
	}
	required, err := withSecrets(a.Required)
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(required)
	args = append(args, "--required-resources="+required)
	if a.XRD != "" {
		args = append(args, "--xrd="+a.XRD)
	}
	cmd := exec.CommandContext(ctx, a.CLI, args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	// crossplane render needs no cluster; an empty KUBECONFIG keeps it from
	// reading the user's.
	cmd.Env = append(os.Environ(), "KUBECONFIG=")
	if err := cmd.Run(); err != nil {
		return stdout.Bytes(), fmt.Errorf("crossplane %s: %w\n%s", strings.Join(args, " "), err, stderr.String())
	}
	return stdout.Bytes(), nil
}

// Documents splits a multi-document YAML stream into objects.
func Documents(b []byte) ([]map[string]any, error) {
	var out []map[string]any
	for _, doc := range bytes.Split(b, []byte("\n---")) {
		doc = bytes.TrimPrefix(bytes.TrimSpace(doc), []byte("---"))
		if len(bytes.TrimSpace(doc)) == 0 {
			continue
		}
		m := map[string]any{}
		if err := yaml.Unmarshal(doc, &m); err != nil {
			return nil, err
		}
		if len(m) > 0 {
			out = append(out, m)
		}
	}
	if len(out) == 0 {
		return nil, errors.New("no YAML documents")
	}
	return out, nil
}

// SecretsFixture holds the Secrets the examples name as credentials, which
// every render is given as required resources (the function asks for
// them, and holds a pull whose Secret Crossplane does not find). The path
// is relative to test/render, where the tests run; make render's command
// sets it from the repository's root.
var SecretsFixture = filepath.Join("..", "..", "examples", "secrets.yaml")

// withSecrets makes a directory of the required resources of one render:
// SecretsFixture and the file required, if any. The caller removes it.
func withSecrets(required string) (string, error) {
	dir, err := os.MkdirTemp("", "required-")
	if err != nil {
		return "", err
	}
	for i, f := range []string{SecretsFixture, required} {
		if f == "" {
			continue
		}
		b, err := os.ReadFile(f)
		if err != nil {
			os.RemoveAll(dir)
			return "", err
		}
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("%d.yaml", i)), b, 0o600); err != nil {
			os.RemoveAll(dir)
			return "", err
		}
	}
	return dir, nil
}
