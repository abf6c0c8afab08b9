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
	section := readmeSection(t, "Runtimes")
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

// TestReadmeOptionsTable holds the README's server options table to the
// built-in option tables: per option and framework, the first word of the
// cell is the preset's flag or variable, "—" where it has none.
func TestReadmeOptionsTable(t *testing.T) {
	section := readmeSection(t, "Server options")
	columns := [][]string{{"vllm"}, {"sglang"}, {"tgi"}, {"llamacpp"}, {"ollama"}, {"triton", "fake"}}
	got := map[string]string{}
	for _, line := range strings.Split(section, "\n") {
		if !strings.HasPrefix(line, "| `") {
			continue
		}
		cells := strings.Split(strings.Trim(line, "|"), " | ")
		if len(cells) != len(columns)+1 {
			t.Errorf("row %q has %d columns, want %d", line, len(cells), len(columns)+1)
			continue
		}
		option := strings.Trim(strings.TrimSpace(cells[0]), "`")
		for i, fws := range columns {
			first, _, _ := strings.Cut(strings.TrimSpace(cells[i+1]), " ")
			for _, fw := range fws {
				got[option+" "+fw] = strings.Trim(first, "`")
			}
		}
	}
	want := map[string]string{}
	for fw, p := range BuiltinRuntimes() {
		o := p.Options
		if o == nil {
			o = &OptionsPreset{}
		}
		at := func(f *OptionFlag) string {
			switch {
			case f == nil || (f.Flag == "" && f.Env == ""):
				return "—"
			case f.Flag != "":
				return f.Flag
			}
			return f.Env
		}
		var ctx, dtype, quant *OptionFlag
		if o.ContextLength != nil {
			ctx = &o.ContextLength.OptionFlag
		}
		if o.DType != nil {
			dtype = &o.DType.OptionFlag
		}
		if o.Quantization != nil {
			quant = &o.Quantization.OptionFlag
		}
		for option, f := range map[string]*OptionFlag{
			"contextLength": ctx, "dtype": dtype, "quantization": quant,
			"maxParallel": o.MaxParallel, "gpuMemoryPercent": o.GPUMemoryPercent, "chatTemplate": o.ChatTemplate,
		} {
			want[option+" "+fw] = at(f)
		}
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("README.md's server options table disagrees with the built-in option tables (-want +got):\n%s", diff)
	}
}

// readmeSection is the text of the README's section under "## heading".
func readmeSection(t *testing.T, heading string) string {
	t.Helper()
	b, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(b), "\n## "+heading+"\n")
	if !ok {
		t.Fatalf("README.md has no %s section", heading)
	}
	section, _, _ = strings.Cut(section, "\n## ")
	return section
}
