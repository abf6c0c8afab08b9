package fnpackage

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

// TestRewriteFunctionDependency: the Function dependency, and only it,
// points at the e2e registry; a package without exactly one is refused.
func TestRewriteFunctionDependency(t *testing.T) {
	cases := map[string]struct {
		in      string
		want    []map[string]any // dependsOn after the rewrite
		wantErr string
	}{
		"OneFunction": {
			in: `
apiVersion: meta.pkg.crossplane.io/v1
kind: Configuration
metadata: {name: c}
spec:
  dependsOn:
  - {apiVersion: pkg.crossplane.io/v1, kind: Function, package: xpkg.crossplane.io/inferno-ai/function-inferno, version: ">=v0.1.0"}
  - {apiVersion: pkg.crossplane.io/v1, kind: Provider, package: xpkg.crossplane.io/p, version: ">=v1"}
`,
			want: []map[string]any{
				{"apiVersion": "pkg.crossplane.io/v1", "kind": "Function", "package": "127.0.0.1:5000/function-inferno", "version": "v0.0.0-e2e"},
				{"apiVersion": "pkg.crossplane.io/v1", "kind": "Provider", "package": "xpkg.crossplane.io/p", "version": ">=v1"},
			},
		},
		"NoFunction":  {in: "spec: {dependsOn: []}", wantErr: "0 Function dependencies"},
		"TwoFunction": {in: "spec: {dependsOn: [{kind: Function, package: a}, {kind: Function, package: b}]}", wantErr: "2 Function dependencies"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			out, err := RewriteFunctionDependency([]byte(tc.in), "127.0.0.1:5000/function-inferno", "v0.0.0-e2e")
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error %v, want one containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var meta map[string]any
			if err := yaml.Unmarshal(out, &meta); err != nil {
				t.Fatal(err)
			}
			deps, _, _ := unstructured.NestedSlice(meta, "spec", "dependsOn")
			if len(deps) != len(tc.want) {
				t.Fatalf("dependsOn has %d entries, want %d: %v", len(deps), len(tc.want), deps)
			}
			for i, d := range deps {
				for k, v := range tc.want[i] {
					if got := d.(map[string]any)[k]; got != v {
						t.Errorf("dependsOn[%d].%s = %v, want %v", i, k, got, v)
					}
				}
			}
		})
	}
}
