package render

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"
)

// renderDocs renders a through the function and returns the output's
// documents, failing the test with the function's logs on an error.
func renderDocs(t *testing.T, f *Function, a Args) []map[string]any {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	out, err := f.Render(ctx, a)
	if err != nil {
		t.Fatalf("%v\nfunction logs:\n%s", err, f.Logs())
	}
	docs, err := Documents(out)
	if err != nil {
		t.Fatal(err)
	}
	return docs
}

// sortOutput finds the composite of kind among a render's documents and
// lists the composed resources: their composition resource names, sorted,
// with every pull Job as pull-job-* (its hash changes with its template)
// and every ResourceClaimTemplate as gpu-claims-* (likewise),
// and the objects themselves. Results are left out.
func sortOutput(docs []map[string]any, kind string) (xr map[string]any, names []string, composed []map[string]any) {
	for _, d := range docs {
		switch d["kind"] {
		case kind:
			xr = d
			continue
		case "Result":
			continue
		}
		meta, _ := d["metadata"].(map[string]any)
		ann, _ := meta["annotations"].(map[string]any)
		rn, _ := ann["crossplane.io/composition-resource-name"].(string)
		if strings.HasPrefix(rn, "pull-job-") {
			rn = "pull-job-*"
		}
		if strings.HasPrefix(rn, "gpu-claims-") {
			rn = "gpu-claims-*"
		}
		names = append(names, rn)
		composed = append(composed, d)
	}
	slices.Sort(names)
	return xr, names, composed
}
