// Package crossplanecore installs and runs Crossplane core v2.4.0 on the
// test's control plane the way its Helm chart would: the chart's RBAC
// (read from the chart in the crossplane module, not copied), `core init`
// and `core start` as the crossplane ServiceAccount, `rbac start` as the
// rbac-manager ServiceAccount.
package crossplanecore

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"text/template"

	"sigs.k8s.io/yaml"
)

// ChartRBACTemplates are the chart templates that make up Crossplane's
// permissions: its own ClusterRole (aggregating every ClusterRole labelled
// rbac.crossplane.io/aggregate-to-crossplane) and binding, the RBAC
// manager's, and the aggregated admin/edit/view/browse roles.
var ChartRBACTemplates = []string{
	"clusterrole.yaml",
	"clusterrolebinding.yaml",
	"rbac-manager-clusterrole.yaml",
	"rbac-manager-clusterrolebinding.yaml",
	"rbac-manager-allowed-provider-permissions.yaml",
	"rbac-manager-managed-clusterroles.yaml",
}

// RenderChartRBAC renders the chart's RBAC templates with its default
// values for a release named "crossplane" in namespace. Only the handful of
// Helm template functions those templates use are provided; a template that
// starts to need another one fails loudly here rather than silently
// rendering something else.
func RenderChartRBAC(chartDir, namespace string) ([]byte, error) {
	valuesYAML, err := os.ReadFile(filepath.Join(chartDir, "values.yaml"))
	if err != nil {
		return nil, err
	}
	values := map[string]any{}
	if err := yaml.Unmarshal(valuesYAML, &values); err != nil {
		return nil, fmt.Errorf("chart values: %w", err)
	}
	chartYAML, err := os.ReadFile(filepath.Join(chartDir, "Chart.yaml"))
	if err != nil {
		return nil, err
	}
	chart := map[string]any{}
	if err := yaml.Unmarshal(chartYAML, &chart); err != nil {
		return nil, fmt.Errorf("Chart.yaml: %w", err)
	}
	data := map[string]any{
		"Values": values,
		// Helm exposes Chart fields capitalised.
		"Chart":   map[string]any{"Name": chart["name"], "Version": chart["version"], "AppVersion": chart["appVersion"]},
		"Release": map[string]any{"Name": "crossplane", "Namespace": namespace, "Service": "Helm"},
	}

	root := template.New("chart").Option("missingkey=zero")
	root.Funcs(template.FuncMap{
		"default": func(def, v any) any {
			if v == nil || v == "" {
				return def
			}
			return v
		},
		"trunc": func(n int, s string) string {
			if len(s) > n {
				return s[:n]
			}
			return s
		},
		"trimSuffix": func(suffix, s string) string { return strings.TrimSuffix(s, suffix) },
		"replace":    func(old, repl, s string) string { return strings.ReplaceAll(s, old, repl) },
		"quote":      func(v any) string { return fmt.Sprintf("%q", fmt.Sprint(v)) },
		"indent": func(n int, s string) string {
			pad := strings.Repeat(" ", n)
			return pad + strings.ReplaceAll(s, "\n", "\n"+pad)
		},
		"toYaml": func(v any) (string, error) {
			b, err := yaml.Marshal(v)
			return strings.TrimSuffix(string(b), "\n"), err
		},
		"include": func(name string, data any) (string, error) {
			var b bytes.Buffer
			err := root.ExecuteTemplate(&b, name, data)
			return b.String(), err
		},
	})
	if _, err := root.ParseFiles(filepath.Join(chartDir, "templates", "_helpers.tpl")); err != nil {
		return nil, fmt.Errorf("chart helpers: %w", err)
	}
	var out bytes.Buffer
	for _, name := range ChartRBACTemplates {
		t, err := root.Clone()
		if err != nil {
			return nil, err
		}
		if _, err := t.ParseFiles(filepath.Join(chartDir, "templates", name)); err != nil {
			return nil, fmt.Errorf("chart template %s: %w", name, err)
		}
		var b bytes.Buffer
		if err := t.ExecuteTemplate(&b, name, data); err != nil {
			return nil, fmt.Errorf("render %s: %w", name, err)
		}
		// text/template prints a missing map key as "<no value>"; Helm
		// prints nothing.
		out.WriteString("---\n# Source: crossplane/templates/" + name + "\n")
		out.WriteString(strings.ReplaceAll(b.String(), "<no value>", ""))
		out.WriteString("\n")
	}
	return out.Bytes(), nil
}
