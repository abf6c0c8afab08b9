// Package render runs the real `crossplane render` against function-inferno
// started on a free loopback port, for `make render` and the render tests.
package render

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strings"
	"time"

	"sigs.k8s.io/yaml"
)

// Function is a function-inferno process serving without TLS on 127.0.0.1.
type Function struct {
	Address string
	cmd     *exec.Cmd
	logs    *bytes.Buffer
}

// StartFunction starts the function binary on a free loopback port and
// waits until it accepts connections.
func StartFunction(binary string) (*Function, error) {
	addr, err := freeAddress()
	if err != nil {
		return nil, err
	}
	logs := &bytes.Buffer{}
	// No metrics server: two functions on one machine would fight over :8080.
	cmd := exec.Command(binary, "--insecure", "--address="+addr, "--metrics-address=")
	cmd.Stdout, cmd.Stderr = logs, logs
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("cannot start %s: %w", binary, err)
	}
	f := &Function{Address: addr, cmd: cmd, logs: logs}
	deadline := time.Now().Add(30 * time.Second)
	for {
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			_ = c.Close()
			return f, nil
		}
		if time.Now().After(deadline) {
			f.Stop()
			return nil, fmt.Errorf("the function did not listen on %s within 30s: %w\n%s", addr, err, logs)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// Stop ends the function process.
func (f *Function) Stop() {
	if f.cmd.Process != nil {
		_ = f.cmd.Process.Kill()
		_ = f.cmd.Wait()
	}
}

// Logs returns what the function printed.
func (f *Function) Logs() string { return f.logs.String() }

func freeAddress() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer l.Close() //nolint:errcheck // Only used to find a free port.
	return l.Addr().String(), nil
}

// Args are the files one render reads.
type Args struct {
	CLI         string // the crossplane binary
	XR          string
	Composition string
	Functions   string
	Observed    string // optional --observed-resources
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
