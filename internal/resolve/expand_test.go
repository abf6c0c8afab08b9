package resolve

import (
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
)

var update = flag.Bool("update", false, "rewrite testdata/expansion.json")

func TestExpand(t *testing.T) {
	vars := map[string]Var{
		"A":      {Value: "a", Hidden: -1},
		"FLAG":   {Value: "--trust-remote-code", Hidden: -1},
		"EMPTY":  {Value: "", Hidden: -1},
		"SECRET": {Value: "$(SECRET)", Hidden: 0},
		"LATE":   {Value: "x$(SECRET)", Hidden: 1},
	}
	cases := map[string]struct {
		in, out string
		hidden  int
	}{
		"Plain":           {in: "--ctx-size=512", out: "--ctx-size=512", hidden: -1},
		"Reference":       {in: "$(FLAG)", out: "--trust-remote-code", hidden: -1},
		"InsideAWord":     {in: "--$(A)b=$(A)", out: "--ab=a", hidden: -1},
		"Empty":           {in: "-$(EMPTY)-trust-remote-code", out: "--trust-remote-code", hidden: -1},
		"Unknown":         {in: "$(NOPE)", out: "$(NOPE)", hidden: -1},
		"Escaped":         {in: "$$(FLAG)", out: "$(FLAG)", hidden: -1},
		"EscapedDollar":   {in: "a$$b", out: "a$b", hidden: -1},
		"ThreeDollars":    {in: "$$$(A)", out: "$a", hidden: -1},
		"Unclosed":        {in: "$(FLAG", out: "$(FLAG", hidden: -1},
		"NameWithADollar": {in: "$(A$(A)", out: "$(A$(A)", hidden: -1},
		"LoneDollar":      {in: "a$", out: "a$", hidden: -1},
		"DollarOther":     {in: "$A$(A)", out: "$Aa", hidden: -1},
		"DollarRune":      {in: "$é$(A)", out: "$éa", hidden: -1},
		"NotNested":       {in: "$($(A))", out: "$($(A))", hidden: -1},
		"Hidden":          {in: "--key=$(SECRET)", out: "--key=$(SECRET)", hidden: 6},
		"HiddenFirst":     {in: "$(SECRET)", out: "$(SECRET)", hidden: 0},
		"HiddenInside":    {in: "--$(LATE)", out: "--x$(SECRET)", hidden: 3},
		"FirstHiddenWins": {in: "$(A)$(SECRET)$(SECRET)", out: "a$(SECRET)$(SECRET)", hidden: 1},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			out, hidden := Expand(tc.in, vars)
			if diff := cmp.Diff(tc, struct {
				in, out string
				hidden  int
			}{tc.in, out, hidden}, cmp.AllowUnexported(tc)); diff != "" {
				t.Errorf("Expand(%q) (-want +got):\n%s", tc.in, diff)
			}
		})
	}
}

func TestEnviron(t *testing.T) {
	secret := &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{Key: "k"}}
	env := []corev1.EnvVar{
		{Name: "A", Value: "a"},
		{Name: "B", Value: "$(A)$(C)"}, // C is not yet defined
		{Name: "C", Value: "c"},
		{Name: "S", ValueFrom: secret},
		{Name: "D", Value: "-$(S)"},
		{Name: "A", Value: "again$(A)"}, // the later of two wins, with the earlier's value
	}
	want := map[string]Var{
		"A": {Value: "againa", Hidden: -1},
		"B": {Value: "a$(C)", Hidden: -1},
		"C": {Value: "c", Hidden: -1},
		"S": {Value: "$(S)", Hidden: 0},
		"D": {Value: "-$(S)", Hidden: 1},
	}
	if diff := cmp.Diff(want, Environ(env)); diff != "" {
		t.Errorf("Environ (-want +got):\n%s", diff)
	}
}

// expansionCorpus is testdata/expansion.json: a container's environment
// and arguments, with what Expand says its process receives. e2e scenario
// 34 runs the same container on the real node and requires the kubelet to
// hand its process exactly Receives, so the policy's verdict, which is
// about Receives, is about what the server gets.
type expansionCorpus struct {
	// Pod is the pod's name, which the variable POD reads (valueFrom
	// fieldRef metadata.name): a value the function cannot see.
	Pod  string            `json:"pod"`
	Env  []corev1.EnvVar   `json:"env"`
	Args []expansionResult `json:"args"`
}

type expansionResult struct {
	Arg      string `json:"arg"`
	Receives string `json:"receives"`
	// Hidden is where the part the function cannot see begins, -1 for none.
	Hidden int `json:"hidden"`
}

// TestExpansionCorpus keeps testdata/expansion.json in step with Expand:
// run with -update after a deliberate change, and e2e scenario 34 holds
// the real kubelet to it.
func TestExpansionCorpus(t *testing.T) {
	const pod = "expansion"
	env := []corev1.EnvVar{
		{Name: "A", Value: "a"},
		{Name: "FLAG", Value: "--trust-remote-code"},
		{Name: "HALF", Value: "trust-remote"},
		{Name: "EMPTY", Value: ""},
		{Name: "DOLLAR", Value: "$$(A)"},
		{Name: "LATER", Value: "$(B)"}, // B is defined after it: left as written
		{Name: "B", Value: "b"},
		{Name: "POD", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.name"}}},
		{Name: "FROMPOD", Value: "--$(POD)"},
		{Name: "A", Value: "again-$(A)"},
	}
	args := []string{
		"--plain", "$(FLAG)", "--$(HALF)-code", "-$(EMPTY)-trust-remote-code", "$(NOPE)", "$$(FLAG)", "$$$(A)",
		"a$$b", "$(FLAG", "$(A$(A)", "a$", "$A$(A)", "$é$(A)", "$($(A))", "$(DOLLAR)", "$(LATER)", "$(B)",
		"--key=$(POD)", "$(POD)", "$(FROMPOD)", "$(A)", "$()", "$(A)$(A)", "$(a)", "x $(FLAG) y",
	}
	// What the kubelet knows and the function does not: POD's value.
	seen := make([]corev1.EnvVar, len(env))
	copy(seen, env)
	for i := range seen {
		if seen[i].ValueFrom != nil {
			seen[i] = corev1.EnvVar{Name: seen[i].Name, Value: pod}
		}
	}
	got := expansionCorpus{Pod: pod, Env: env}
	for _, a := range args {
		receives, _ := Expand(a, Environ(seen))
		_, hidden := Expand(a, Environ(env))
		got.Args = append(got.Args, expansionResult{Arg: a, Receives: receives, Hidden: hidden})
	}
	path := filepath.Join("testdata", "expansion.json")
	if *update {
		b, err := json.MarshalIndent(got, "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, append(b, '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var want expansionCorpus
	if err := json.Unmarshal(b, &want); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("%s is stale (-file +Expand); run go test ./internal/resolve -run TestExpansionCorpus -update:\n%s", path, diff)
	}
}
