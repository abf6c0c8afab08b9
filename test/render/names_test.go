package render

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestCrossplaneRenderNameClash renders the canary example through the real
// crossplane CLI with a Service llama-2 in team-a as a required resource
// (--required-resources): one that a claim llama-2 composed refuses the
// canary whose version 2 would name it, naming both owners; one that the
// example's own composite composed (crossplane.io/composite label) does not.
func TestCrossplaneRenderNameClash(t *testing.T) {
	cli := crossplaneCLI(t)
	f, err := StartFunction(buildFunction(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(f.Stop)
	service := func(composite, claim string) string {
		return `apiVersion: v1
kind: Service
metadata:
  name: llama-2
  namespace: team-a
  labels:
    crossplane.io/composite: ` + composite + `
    crossplane.io/claim-name: ` + claim + `
    crossplane.io/claim-namespace: team-a
    app.kubernetes.io/instance: ` + claim + `
spec:
  ports: [{port: 80}]
`
	}
	cases := map[string]struct {
		service string
		refused string
	}{
		"ClaimLlama2HasIt": {service: service("llama-2-q8w3n", "llama-2"), refused: "spec.traffic[1].version: would name Service llama-2, which InferenceService llama-2 already has in namespace team-a"},
		"OurOwn":           {service: service("llama-7x9kq", "llama")},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			required := filepath.Join(t.TempDir(), "required.yaml")
			if err := os.WriteFile(required, []byte(tc.service), 0o644); err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			out, err := f.Render(ctx, Args{
				CLI:         cli,
				XR:          filepath.Join(root, "examples", "canary", "xr.yaml"),
				Composition: filepath.Join(root, "apis", "composition.yaml"),
				Functions:   filepath.Join(root, "examples", "functions.yaml"),
				Required:    required,
			})
			switch {
			case tc.refused == "" && err != nil:
				t.Fatalf("refused: %v\nfunction logs:\n%s", err, f.Logs())
			case tc.refused != "" && err == nil:
				t.Fatalf("rendered, want a refusal:\n%s", out)
			case tc.refused != "" && !strings.Contains(err.Error(), tc.refused):
				t.Errorf("the refusal does not say %q:\n%v", tc.refused, err)
			}
		})
	}
}
