package fn

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/inferno-ai/function-inferno/internal/reason"
)

// troubleshootingPage is the page that maps everything the function
// reports to what to do about it.
const troubleshootingPage = "../docs/troubleshooting.md"

// Sections of the troubleshooting page. Each holds one table whose first
// column is the key the tests below look for.
const (
	sectionFields   = "Refused claims and Inputs"
	sectionMessages = "Other refusals"
	sectionWarnings = "Warnings"
)

// TestTroubleshootingCoversEverything fails when the function can refuse a
// field, refuse with another message, or warn about a field that
// docs/troubleshooting.md does not explain — or when the page explains one
// the function no longer emits. (Its conditions are generated from
// internal/reason/reasons.go: see TestTroubleshootingConditions.)
//
// The function's reports are found in its source, not by rendering: the
// renders of the examples reach only some of them, while every field is a
// literal or a constant at the place the refusal is built. The scan
// understands the few forms the code uses (literals, constants,
// concatenation, fmt.Sprintf and local variables) and refuses anything
// else, so a report it cannot read fails here instead of escaping the page.
func TestTroubleshootingCoversEverything(t *testing.T) {
	code := scanReports(t)
	page := readTroubleshooting(t)

	for _, c := range []struct {
		section string
		emitted []string
		what    string
	}{
		{sectionFields, code.Fields, "refused field"},
		{sectionMessages, code.Messages, "refusal message"},
		{sectionWarnings, code.Warnings, "warned-about field"},
	} {
		documented := page.keys(c.section)
		if len(documented) == 0 {
			t.Errorf("%s has no table under \"## %s\"", troubleshootingPage, c.section)
			continue
		}
		if missing := without(c.emitted, documented); len(missing) > 0 {
			t.Errorf("%s lacks a row under \"## %s\" for each %s the function emits: add one per line of:\n%s",
				troubleshootingPage, c.section, c.what, strings.Join(missing, "\n"))
		}
		if stale := without(documented, c.emitted); len(stale) > 0 {
			t.Errorf("%s, \"## %s\", explains a %s the function no longer emits: remove it:\n%s",
				troubleshootingPage, c.section, c.what, strings.Join(stale, "\n"))
		}
	}
}

// TestTroubleshootingConditions holds the page's Conditions table to
// internal/reason/reasons.go, from which `make generate` (-update) writes it.
func TestTroubleshootingConditions(t *testing.T) {
	b, err := os.ReadFile(troubleshootingPage)
	if err != nil {
		t.Fatal(err)
	}
	page := string(b)
	start := strings.Index(page, conditionsBegin)
	end := strings.Index(page, conditionsEnd)
	if start < 0 || end < start {
		t.Fatalf("%s has no generated Conditions table between %q and %q", troubleshootingPage, conditionsBegin, conditionsEnd)
	}
	start += len(conditionsBegin)
	want := conditionsTable()
	if *update {
		if err := os.WriteFile(troubleshootingPage, []byte(page[:start]+want+page[end:]), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	if diff := cmp.Diff(want, page[start:end]); diff != "" {
		t.Errorf("%s: the Conditions table is stale; run make generate (-page +internal/reason/reasons.go):\n%s", troubleshootingPage, diff)
	}
}

// The generated table's fences on the page.
const (
	conditionsBegin = "<!-- Generated from internal/reason/reasons.go by make generate: edit the reasons there, not this table. -->\n"
	conditionsEnd   = "<!-- End of the generated table. -->\n"
)

// conditionsTable is the Conditions table of the troubleshooting page:
// one row per reason, in the order of internal/reason/reasons.go.
func conditionsTable() string {
	var b strings.Builder
	b.WriteString("| Condition | Status | Reason | What it means | What to do |\n|---|---|---|---|---|\n")
	for r := range reason.NumReasons {
		d := reason.Docs[r]
		status := "False"
		if d.Status {
			status = "True"
		}
		fmt.Fprintf(&b, "| `%s` | `%s` | `%s` | %s | %s |\n", d.Type, status, d.Name, cell(d.Means), cell(d.Do))
	}
	return b.String()
}

// cell escapes a table cell's pipes.
func cell(s string) string { return strings.ReplaceAll(s, "|", "\\|") }

// TestReasonsDocumented: every reason has a name, a condition type, and
// both columns; no two share a name.
func TestReasonsDocumented(t *testing.T) {
	types := []string{reason.ConditionWeightsReady, reason.ConditionServerReady, reason.ConditionTrafficSplit, reason.ConditionAdaptersReady, reason.ConditionInferencePool, reason.ConditionPlaced}
	seen := map[string]reason.Reason{}
	for r := range reason.NumReasons {
		d := reason.Docs[r]
		if d.Name == "" || !slices.Contains(types, d.Type) || d.Means == "" || d.Do == "" {
			t.Errorf("reason %d (%q) is not fully documented in internal/reason/reasons.go: %+v", r, d.Name, d)
		}
		if other, dup := seen[d.Name]; dup {
			t.Errorf("reasons %d and %d are both named %q", other, r, d.Name)
		}
		seen[d.Name] = r
		if got := r.Condition("m"); got.Type != d.Type || got.Status != d.Status || got.Reason != r {
			t.Errorf("%s.condition() = %+v", d.Name, got)
		}
	}
}

// TestScanReports holds the source scan to the forms it must understand.
func TestScanReports(t *testing.T) {
	src := `package fn
func f(errs *fieldErrors, fw string, i int, ok bool) {
	const field = "spec.a"
	errs.add(field, "bad")
	g := "input.runtimes." + string(fw)
	errs.add(g+".image", "bad")
	e := fmt.Sprintf("spec.env[%d]", i)
	errs.add(e+".name", "bad")
	h := "input.storage.mode"
	if ok {
		h = "spec.storage.mode"
	}
	errs.add(h, "bad")
	_ = fmt.Errorf("cannot read %s: %w", "x", nil)
	_ = &PathError{Path: "p", Msg: fmt.Sprintf("must be %s", "y")}
	warnings = append(warnings, fmt.Sprintf("spec.b: risky %d", i), "spec.c has no effect")
}
`
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "x.go", src, 0)
	if err != nil {
		t.Fatal(err)
	}
	var r reports
	var problems []string
	r.scanFiles(fset, []*ast.File{f}, &problems)
	want := reports{
		Fields:   []string{"input.runtimes.*.image", "input.storage.mode", "spec.a", "spec.env[*].name", "spec.storage.mode"},
		Messages: []string{"cannot read …: …", "…: must be …"},
		Warnings: []string{"spec.b", "spec.c"},
	}
	r.sort()
	if diff := cmp.Diff(want, r); diff != "" || len(problems) > 0 {
		t.Errorf("scan (-want +got):\n%s\nproblems: %v", diff, problems)
	}
}

// reports is what the function can say, by kind, as the page keys it.
type reports struct {
	// Fields are the field paths of Fatal results, * for a variable part.
	Fields []string
	// Messages are the other Fatal messages, … for a variable part.
	Messages []string
	// Warnings are the field paths warnings start with.
	Warnings []string
}

func (r *reports) sort() {
	for _, l := range []*[]string{&r.Fields, &r.Messages, &r.Warnings} {
		slices.Sort(*l)
		*l = slices.Compact(*l)
	}
}

// reportingPackages are the directories, relative to this one, of the
// packages whose messages reach the user: the function's stages and the
// struct codec's, whose decoding errors refuse a claim.
var reportingPackages = []string{".", "../internal/resolve", "../internal/observe", "../internal/plan", "../internal/render", "../internal/status", "../internal/structcodec"}

// scanReports scans the non-test source of reportingPackages.
func scanReports(t *testing.T) reports {
	t.Helper()
	fset := token.NewFileSet()
	var r reports
	var problems []string
	for _, dir := range reportingPackages {
		files, err := filepath.Glob(filepath.Join(dir, "*.go"))
		if err != nil {
			t.Fatal(err)
		}
		var parsed []*ast.File
		for _, name := range files {
			if strings.HasSuffix(name, "_test.go") {
				continue
			}
			f, err := parser.ParseFile(fset, name, nil, 0)
			if err != nil {
				t.Fatal(err)
			}
			parsed = append(parsed, f)
		}
		if len(parsed) == 0 {
			t.Fatalf("no Go source in %s: has the package moved?", dir)
		}
		// One package at a time: constants and functions are resolved
		// within their own package.
		r.scanFiles(fset, parsed, &problems)
	}
	if len(problems) > 0 {
		t.Fatalf("the troubleshooting scan cannot read these reports; write their reason or field as a literal or constant:\n%s", strings.Join(problems, "\n"))
	}
	if len(r.Fields) == 0 || len(r.Messages) == 0 || len(r.Warnings) == 0 {
		t.Fatalf("the scan found too little (%d fields, %d messages, %d warnings): has the code changed shape?", len(r.Fields), len(r.Messages), len(r.Warnings))
	}
	r.sort()
	return r
}

// scanFiles adds the reports made in one package's files. Constants are
// the package's, and a parameter of a function can be whatever its callers
// in the package pass it.
func (r *reports) scanFiles(fset *token.FileSet, files []*ast.File, problems *[]string) {
	consts := map[string][]ast.Expr{}
	var funcs []*ast.FuncDecl
	for _, f := range files {
		for _, d := range f.Decls {
			switch d := d.(type) {
			case *ast.GenDecl:
				if d.Tok == token.CONST {
					collectValueSpecs(d, consts)
				}
			case *ast.FuncDecl:
				if d.Body != nil {
					funcs = append(funcs, d)
				}
			}
		}
	}
	depth := 0
	evaluators := map[string]*evaluator{}
	byDecl := map[*ast.FuncDecl]*evaluator{}
	for _, fd := range funcs {
		e := &evaluator{vars: assignments(fd.Body), consts: consts, params: paramIndex(fd), depth: &depth}
		byDecl[fd] = e
		evaluators[fd.Name.Name] = e
	}
	for _, fd := range funcs {
		ast.Inspect(fd.Body, func(n ast.Node) bool {
			if c, ok := n.(*ast.CallExpr); ok {
				if callee := evaluators[strings.TrimPrefix(callName(c), ".")]; callee != nil {
					callee.sites = append(callee.sites, callSite{args: c.Args, caller: byDecl[fd]})
				}
			}
			return true
		})
	}
	problem := func(n ast.Node, msg string) {
		*problems = append(*problems, fset.Position(n.Pos()).String()+": "+msg)
	}
	for _, fd := range funcs {
		e := byDecl[fd]
		ast.Inspect(fd.Body, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.CompositeLit:
				switch typeName(n.Type) {
				case "PathError":
					// The codec's decoding errors, which the function
					// returns as refusals of the claim.
					for _, el := range n.Elts {
						if kv, ok := el.(*ast.KeyValueExpr); ok && identName(kv.Key) == "Msg" {
							for _, m := range e.pattern(kv.Value) {
								r.Messages = append(r.Messages, "…: "+strings.ReplaceAll(m, "*", "…"))
							}
						}
					}
				}
			case *ast.CallExpr:
				switch fun := callName(n); {
				case (fun == ".add" || fun == ".Add") && len(n.Args) >= 2:
					for _, field := range e.eval(n.Args[0]) {
						if strings.HasPrefix(field, "*") {
							problem(n, "a refused field that does not start with a constant path")
							continue
						}
						r.Fields = append(r.Fields, field)
					}
				case (fun == "fmt.Errorf" || fun == "errors.New") && len(n.Args) >= 1:
					if lit, ok := stringLit(n.Args[0]); ok {
						r.Messages = append(r.Messages, strings.ReplaceAll(verbs.ReplaceAllString(lit, "*"), "*", "…"))
					}
					// errors.New of a non-literal joins fieldErrors, which
					// the .add case covers.
				case fun == "append" && len(n.Args) >= 2 && strings.HasSuffix(strings.ToLower(exprName(n.Args[0])), "warnings"):
					for i, a := range n.Args[1:] {
						if n.Ellipsis.IsValid() && i == len(n.Args)-2 {
							// append(warnings, more...) passes warnings on.
							continue
						}
						for _, w := range e.eval(a) {
							field := warningField.FindString(w)
							if field == "" {
								problem(a, "a warning that does not start with the field it is about")
								continue
							}
							r.Warnings = append(r.Warnings, field)
						}
					}
				}
			}
			return true
		})
	}
}

var (
	// verbs are fmt verbs, with flags and width.
	verbs = regexp.MustCompile(`%[-+# 0-9.]*[a-zA-Z%]`)
	// warningField is the field path a warning starts with.
	warningField = regexp.MustCompile(`^[a-z][A-Za-z0-9]*(\.[A-Za-z0-9]+|\[\*\])*`)
)

// evaluator works out the strings an expression can be, with * for what
// it cannot know (parameters, fields of values).
type evaluator struct {
	vars   map[string][]ast.Expr // every value assigned to a local name
	consts map[string][]ast.Expr // package constants
	params map[string]int        // the function's parameters, by position
	sites  []callSite            // every call of the function in the package
	depth  *int                  // shared by all evaluators, bounding recursion
}

// callSite is one call of a function: its arguments, read in the caller.
type callSite struct {
	args   []ast.Expr
	caller *evaluator
}

// paramIndex numbers a function's parameters (the receiver is not one).
func paramIndex(fd *ast.FuncDecl) map[string]int {
	out := map[string]int{}
	i := 0
	for _, f := range fd.Type.Params.List {
		if len(f.Names) == 0 {
			i++
			continue
		}
		for _, n := range f.Names {
			out[n.Name] = i
			i++
		}
	}
	return out
}

func (e *evaluator) eval(x ast.Expr) []string {
	if e.depth == nil {
		e.depth = new(int)
	}
	if x == nil || *e.depth > 20 {
		return []string{"*"}
	}
	*e.depth++
	defer func() { *e.depth-- }()
	switch x := x.(type) {
	case *ast.BasicLit:
		if s, ok := stringLit(x); ok {
			return []string{s}
		}
	case *ast.ParenExpr:
		return e.eval(x.X)
	case *ast.Ident:
		if vs, ok := e.vars[x.Name]; ok {
			return e.evalAll(vs)
		}
		if vs, ok := e.consts[x.Name]; ok {
			return e.evalAll(vs)
		}
		if i, ok := e.params[x.Name]; ok && len(e.sites) > 0 {
			var out []string
			for _, site := range e.sites {
				if i < len(site.args) {
					out = append(out, site.caller.eval(site.args[i])...)
				} else {
					out = append(out, "*")
				}
			}
			slices.Sort(out)
			return slices.Compact(out)
		}
	case *ast.BinaryExpr:
		if x.Op == token.ADD {
			var out []string
			for _, l := range e.eval(x.X) {
				for _, r := range e.eval(x.Y) {
					out = append(out, collapse(l+r))
				}
			}
			return out
		}
	case *ast.CallExpr:
		switch callName(x) {
		case "fmt.Sprintf":
			if len(x.Args) > 0 {
				if lit, ok := stringLit(x.Args[0]); ok {
					return e.sprintf(lit, x.Args[1:])
				}
			}
		case "string":
			if len(x.Args) == 1 {
				return e.eval(x.Args[0])
			}
		}
	}
	return []string{"*"}
}

// pattern is a message's shape: a fmt.Sprintf's format with every verb as
// *, however much the scan knows of the arguments, so that one row can
// explain a message whatever it is about.
func (e *evaluator) pattern(x ast.Expr) []string {
	if c, ok := x.(*ast.CallExpr); ok && callName(c) == "fmt.Sprintf" && len(c.Args) > 0 {
		if lit, ok := stringLit(c.Args[0]); ok {
			return []string{collapse(verbs.ReplaceAllString(lit, "*"))}
		}
	}
	return e.eval(x)
}

// sprintf is what fmt.Sprintf(format, args...) can be: a %s argument's
// values where the scan knows them, * for every other verb.
func (e *evaluator) sprintf(format string, args []ast.Expr) []string {
	out := []string{""}
	last, arg := 0, 0
	for _, m := range verbs.FindAllStringIndex(format, -1) {
		lit, verb := format[last:m[0]], format[m[0]:m[1]]
		last = m[1]
		vals := []string{"*"}
		switch {
		case verb == "%%":
			vals = []string{"%"}
		case verb == "%s" && arg < len(args):
			vals = e.eval(args[arg])
		}
		if verb != "%%" {
			arg++
		}
		var next []string
		for _, o := range out {
			for _, v := range vals {
				next = append(next, o+lit+v)
			}
		}
		out = next
	}
	for i := range out {
		out[i] = collapse(out[i] + format[last:])
	}
	slices.Sort(out)
	return slices.Compact(out)
}

func (e *evaluator) evalAll(xs []ast.Expr) []string {
	var out []string
	for _, x := range xs {
		out = append(out, e.eval(x)...)
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// assignments collects every value assigned to each local name in a body.
func assignments(body *ast.BlockStmt) map[string][]ast.Expr {
	out := map[string][]ast.Expr{}
	ast.Inspect(body, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.AssignStmt:
			if len(n.Lhs) == len(n.Rhs) {
				for i, l := range n.Lhs {
					if id, ok := l.(*ast.Ident); ok {
						out[id.Name] = append(out[id.Name], n.Rhs[i])
					}
				}
			}
		case *ast.GenDecl:
			collectValueSpecs(n, out)
		}
		return true
	})
	return out
}

func collectValueSpecs(g *ast.GenDecl, into map[string][]ast.Expr) {
	for _, s := range g.Specs {
		vs, ok := s.(*ast.ValueSpec)
		if !ok || len(vs.Values) != len(vs.Names) {
			continue
		}
		for i, n := range vs.Names {
			into[n.Name] = append(into[n.Name], vs.Values[i])
		}
	}
}

func variable(vals []string) bool {
	return slices.ContainsFunc(vals, func(v string) bool { return strings.Contains(v, "*") })
}

func collapse(s string) string {
	for strings.Contains(s, "**") {
		s = strings.ReplaceAll(s, "**", "*")
	}
	return s
}

func stringLit(x ast.Expr) (string, bool) {
	l, ok := x.(*ast.BasicLit)
	if !ok || l.Kind != token.STRING {
		return "", false
	}
	s, err := strconv.Unquote(l.Value)
	return s, err == nil
}

func identName(x ast.Expr) string {
	if id, ok := x.(*ast.Ident); ok {
		return id.Name
	}
	return ""
}

func typeName(x ast.Expr) string {
	if u, ok := x.(*ast.UnaryExpr); ok {
		x = u.X
	}
	return identName(x)
}

// callName is "pkg.Func" for a package function, ".method" for a method,
// and the name for a plain function.
func callName(c *ast.CallExpr) string {
	switch f := c.Fun.(type) {
	case *ast.Ident:
		return f.Name
	case *ast.SelectorExpr:
		if id, ok := f.X.(*ast.Ident); ok && (id.Name == "fmt" || id.Name == "errors") {
			return id.Name + "." + f.Sel.Name
		}
		return "." + f.Sel.Name
	}
	return ""
}

// exprName is the last name in an expression such as *warnings or
// r.Warnings.
func exprName(x ast.Expr) string {
	switch x := x.(type) {
	case *ast.Ident:
		return x.Name
	case *ast.StarExpr:
		return exprName(x.X)
	case *ast.SelectorExpr:
		return x.Sel.Name
	}
	return ""
}

// without lists what of a is not in b.
func without(a, b []string) []string {
	var out []string
	for _, x := range a {
		if !slices.Contains(b, x) {
			out = append(out, x)
		}
	}
	return out
}

// troubleshooting is the page's tables: section heading → rows of cells.
type troubleshooting map[string][][]string

func readTroubleshooting(t *testing.T) troubleshooting {
	t.Helper()
	b, err := os.ReadFile(troubleshootingPage)
	if err != nil {
		t.Fatal(err)
	}
	out := troubleshooting{}
	section := ""
	for _, line := range strings.Split(string(b), "\n") {
		switch {
		case strings.HasPrefix(line, "## "):
			section = strings.TrimSpace(strings.TrimPrefix(line, "## "))
		case strings.HasPrefix(line, "|") && !tableSeparator.MatchString(line):
			out[section] = append(out[section], cells(line))
		}
	}
	// Drop each table's header row.
	for s, rows := range out {
		out[s] = rows[1:]
	}
	return out
}

var tableSeparator = regexp.MustCompile(`^\|[-:| ]+\|\s*$`)

// cells splits a table row at the pipes that are not escaped.
func cells(line string) []string {
	line = strings.TrimSpace(line)
	line = strings.TrimSuffix(strings.TrimPrefix(line, "|"), "|")
	var out []string
	var cur strings.Builder
	for i := 0; i < len(line); i++ {
		switch {
		case line[i] == '\\' && i+1 < len(line) && line[i+1] == '|':
			cur.WriteByte('|')
			i++
		case line[i] == '|':
			out = append(out, strings.TrimSpace(cur.String()))
			cur.Reset()
		default:
			cur.WriteByte(line[i])
		}
	}
	return append(out, strings.TrimSpace(cur.String()))
}

// keys are the first cells of a section's rows, without backticks.
func (p troubleshooting) keys(section string) []string {
	var out []string
	for _, row := range p[section] {
		out = append(out, rowKey(section, row))
	}
	return out
}

func rowKey(section string, row []string) string {
	return strings.Trim(row[0], "` ")
}
