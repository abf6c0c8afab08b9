package v1beta1

import (
	"os"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestReadmeRuntimeTable holds the README's runtime table to the built-in
// presets: one row per framework, with the preset's image, port, probe
// path and concurrency metric ("—" for none), and "refused" in the
// adapters column exactly where the preset serves no adapters.
func TestReadmeRuntimeTable(t *testing.T) {
	b, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(b), "\n## Runtimes\n")
	if !ok {
		t.Fatal("README.md has no Runtimes section")
	}
	section, _, _ = strings.Cut(section, "\n## ")
	unquote := func(c string) string { return strings.Trim(strings.TrimSpace(c), "`") }
	got := map[string][]string{}
	for _, line := range strings.Split(section, "\n") {
		if !strings.HasPrefix(line, "| `") {
			continue
		}
		cells := strings.Split(strings.Trim(line, "|"), " | ")
		if len(cells) != 7 {
			t.Errorf("row %q has %d columns, want 7", line, len(cells))
			continue
		}
		adapters := "served"
		if unquote(cells[5]) == "refused" {
			adapters = "refused"
		}
		got[unquote(cells[0])] = []string{unquote(cells[1]), unquote(cells[2]), unquote(cells[3]), unquote(cells[4]), adapters}
	}
	want := map[string][]string{}
	for fw, p := range BuiltinRuntimes() {
		metric, adapters := p.ConcurrencyMetric, "served"
		if metric == "" {
			metric = "—"
		}
		if p.Adapters == nil {
			adapters = "refused"
		}
		want[fw] = []string{p.Image, strconv.Itoa(int(*p.Port)), p.HealthPath, metric, adapters}
	}
	if diff := cmp.Diff(want, got); diff != "" {
		fws := make([]string, 0, len(want))
		for fw := range want {
			fws = append(fws, fw)
		}
		sort.Strings(fws)
		t.Errorf("README.md's runtime table against the presets of %v (-presets +README):\n%s", fws, diff)
	}
}
