package fn

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

// threatTableHeading starts the section of docs/security.md that holds the
// threat table: one row per field a tenant writes.
const threatTableHeading = "## Every field a tenant writes"

// crossplaneClaimFields are the fields Crossplane adds to every claim's
// spec (Crossplane v1's claims), which the XRDs' schemas do not list but a
// tenant writes all the same.
var crossplaneClaimFields = []string{
	"spec.compositionRef.name",
	"spec.compositionSelector.matchLabels",
	"spec.compositionRevisionRef.name",
	"spec.compositionRevisionSelector.matchLabels",
	"spec.compositionUpdatePolicy",
	"spec.writeConnectionSecretToRef.name",
	"spec.resourceRef.apiVersion",
	"spec.resourceRef.kind",
	"spec.resourceRef.name",
}

// crossplaneNamespacedFields are those Crossplane v2 adds to a namespaced
// InferenceService's spec.
var crossplaneNamespacedFields = []string{
	"spec.crossplane.compositionRef.name",
	"spec.crossplane.compositionSelector.matchLabels",
	"spec.crossplane.compositionRevisionRef.name",
	"spec.crossplane.compositionRevisionSelector.matchLabels",
	"spec.crossplane.compositionUpdatePolicy",
	"spec.crossplane.resourceRefs[]",
}

// threatRow is one row of the threat table.
type threatRow struct {
	line  int
	kind  string // "ModelCache" or "InferenceService"
	field string // the backticked field, "" when the cell names none
	test  string
}

// TestThreatTableCoversEveryField holds docs/security.md's threat table to
// the XRDs: every leaf field of a claim's spec is covered by exactly one
// row, every spec row names a field that exists, and every test or
// bad-input case the table names exists.
func TestThreatTableCoversEveryField(t *testing.T) {
	paths := map[string][]string{
		"InferenceService": slices.Concat(schemaPaths(t, "../apis/xrd.yaml", "../apis/namespaced/xrd.yaml"), crossplaneClaimFields, crossplaneNamespacedFields),
		"ModelCache":       append(schemaPaths(t, "../apis/modelcache-xrd.yaml"), crossplaneClaimFields...),
	}
	rows := threatRows(t, "../docs/security.md")
	if len(rows) == 0 {
		t.Fatalf("docs/security.md: no table under %q", threatTableHeading)
	}

	for kind, ps := range paths {
		for _, p := range ps {
			var by []int
			for _, r := range rows {
				if rowCovers(r, kind, p) {
					by = append(by, r.line)
				}
			}
			switch {
			case len(by) == 0:
				t.Errorf("docs/security.md: no row of the threat table covers the %s field %s; add one (field | what could go wrong | what guards it | test)", kind, p)
			case len(by) > 1:
				t.Errorf("docs/security.md: the %s field %s is covered by the rows of lines %v; keep it to one", kind, p, by)
			}
		}
	}

	for _, r := range rows {
		if !strings.HasPrefix(r.field, "spec.") {
			continue // metadata, statuses and observed objects: no schema to hold them to
		}
		if !slices.ContainsFunc(paths[r.kind], func(p string) bool { return rowCovers(r, r.kind, p) }) {
			t.Errorf("docs/security.md:%d: %s row %s names no field of the %s schema (stale)", r.line, r.kind, r.field, r.kind)
		}
	}

	funcs, badInput := testNames(t)
	tick := regexp.MustCompile("`([^`]*)`")
	for _, r := range rows {
		for _, m := range tick.FindAllStringSubmatch(r.test, -1) {
			name := m[1]
			switch {
			case regexp.MustCompile(`^(Test|Fuzz)\w+$`).MatchString(name):
				if !funcs[name] {
					t.Errorf("docs/security.md:%d: %s names test %s, which no *_test.go defines", r.line, r.field, name)
				}
			case regexp.MustCompile(`^[A-Z]\w*$`).MatchString(name):
				if !badInput(name) {
					t.Errorf("docs/security.md:%d: %s names bad-input case %s, which fn/badinput_test.go does not have", r.line, r.field, name)
				}
			case regexp.MustCompile(`^[a-z]\w*$`).MatchString(name):
				if !funcs[name] {
					t.Errorf("docs/security.md:%d: %s names check %s, which no *_test.go defines", r.line, r.field, name)
				}
			default:
				t.Errorf("docs/security.md:%d: %s: the test column names %q, which is neither a test, a bad-input case nor a check", r.line, r.field, name)
			}
		}
	}
}

// rowCovers says whether row r covers path p of kind: p is the row's field,
// or starts with it followed by "." or "[" (a field written "a.*" covers
// everything under a). A row without a kind of its own covers both kinds'
// Crossplane fields.
func rowCovers(r threatRow, kind, p string) bool {
	if r.kind != kind && !(r.kind == "InferenceService" && slices.Contains(crossplaneClaimFields, p)) {
		return false
	}
	f := strings.TrimSuffix(r.field, ".*")
	if f == "" {
		return false
	}
	return p == f || strings.HasPrefix(p, f+".") || strings.HasPrefix(p, f+"[")
}

// schemaPaths walks spec of every version of each XRD's OpenAPI schema and
// returns its leaf field paths, arrays as "[]".
func schemaPaths(t *testing.T, files ...string) []string {
	t.Helper()
	seen := map[string]bool{}
	var walk func(s map[string]any, path string)
	walk = func(s map[string]any, path string) {
		props, _ := s["properties"].(map[string]any)
		switch {
		case s["type"] == "object" && len(props) > 0:
			for k, v := range props {
				sub, _ := v.(map[string]any)
				walk(sub, path+"."+k)
			}
		case s["type"] == "array":
			items, _ := s["items"].(map[string]any)
			walk(items, path+"[]")
		default:
			seen[path] = true
		}
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var xrd struct {
			Spec struct {
				Versions []struct {
					Schema struct {
						OpenAPIV3Schema struct {
							Properties map[string]map[string]any `json:"properties"`
						} `json:"openAPIV3Schema"`
					} `json:"schema"`
				} `json:"versions"`
			} `json:"spec"`
		}
		if err := yaml.Unmarshal(b, &xrd); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		if len(xrd.Spec.Versions) == 0 {
			t.Fatalf("%s: no versions", f)
		}
		for _, v := range xrd.Spec.Versions {
			spec := v.Schema.OpenAPIV3Schema.Properties["spec"]
			if spec == nil {
				t.Fatalf("%s: a version without spec", f)
			}
			walk(spec, "spec")
		}
	}
	out := make([]string, 0, len(seen))
	for p := range seen {
		out = append(out, p)
	}
	slices.Sort(out)
	return out
}

// threatRows reads the table under threatTableHeading.
func threatRows(t *testing.T, file string) []threatRow {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(b), "\n")
	start := slices.Index(lines, threatTableHeading)
	if start < 0 {
		t.Fatalf("%s: no section %q", file, threatTableHeading)
	}
	field := regexp.MustCompile("^(ModelCache )?`([^`]+)`")
	var rows []threatRow
	inTable := false
	for i := start + 1; i < len(lines) && !strings.HasPrefix(lines[i], "## "); i++ {
		l := strings.TrimSpace(lines[i])
		if !strings.HasPrefix(l, "|") {
			if inTable {
				break // one table
			}
			continue
		}
		if !inTable {
			inTable = true
			if l != "| field | what could go wrong | what guards it | test |" {
				t.Fatalf("%s:%d: the threat table's header is %q", file, i+1, l)
			}
			continue
		}
		if strings.HasPrefix(l, "|---") {
			continue
		}
		cells := strings.Split(strings.Trim(strings.ReplaceAll(l, `\|`, "\x00"), "|"), "|")
		if len(cells) != 4 {
			t.Errorf("%s:%d: a row of %d cells, want 4", file, i+1, len(cells))
			continue
		}
		r := threatRow{line: i + 1, kind: "InferenceService", test: cells[3]}
		cell := strings.TrimSpace(cells[0])
		if m := field.FindStringSubmatch(cell); m != nil {
			r.field = m[2]
			if m[1] != "" {
				r.kind = "ModelCache"
			}
		} else {
			r.field = cell
		}
		rows = append(rows, r)
	}
	return rows
}

// testNames returns the test, fuzz and helper functions every *_test.go of
// the module defines, and a test of whether fn/badinput_test.go has a case
// of that name: a string literal, or a prefix literal added to a loop's
// names ("PolicyHost"+name) and the rest as a literal.
func testNames(t *testing.T) (map[string]bool, func(string) bool) {
	t.Helper()
	funcs := map[string]bool{}
	def := regexp.MustCompile(`(?m)^func (?:\([^)]*\) )?(\w+)\(`)
	err := filepath.WalkDir("..", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == ".git" || d.Name() == "node_modules" || d.Name() == "vendor") {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, "_test.go") {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, m := range def.FindAllStringSubmatch(string(b), -1) {
			funcs[m[1]] = true
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile("badinput_test.go")
	if err != nil {
		t.Fatal(err)
	}
	src := string(b)
	var prefixes []string
	for _, m := range regexp.MustCompile(`"(\w+)"\s*\+\s*name`).FindAllStringSubmatch(src, -1) {
		prefixes = append(prefixes, m[1])
	}
	return funcs, func(name string) bool {
		if strings.Contains(src, `"`+name+`"`) {
			return true
		}
		for _, p := range prefixes {
			if rest, ok := strings.CutPrefix(name, p); ok && strings.Contains(src, `"`+rest+`"`) {
				return true
			}
		}
		return false
	}
}
