package fn

import (
	"encoding/json"
	"os"
	"regexp"
	"strconv"
	"testing"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"github.com/google/go-cmp/cmp"
)

// TestPolicyJudgesWhatTheServerReceives runs the corpus of tricky
// arguments (internal/resolve/testdata/expansion.json, which e2e scenario
// 34 holds the real kubelet to) through the function under a policy that
// denies --trust-remote-code, and requires the refusals to follow what
// the server receives, not what the claim wrote: "$(FLAG)" and
// "--$(HALF)-code" are refused though neither spells the flag, "$$(FLAG)"
// is passed though it names the variable (the server receives the text
// "$(FLAG)"), and an argument whose flag's name would come from a value
// the function cannot see (a field, valueFrom) is refused.
func TestPolicyJudgesWhatTheServerReceives(t *testing.T) {
	b, err := os.ReadFile("../internal/resolve/testdata/expansion.json")
	if err != nil {
		t.Fatal(err)
	}
	var corpus struct {
		Env  []map[string]any `json:"env"`
		Args []struct {
			Arg      string `json:"arg"`
			Receives string `json:"receives"`
		} `json:"args"`
	}
	if err := json.Unmarshal(b, &corpus); err != nil {
		t.Fatal(err)
	}
	refused := map[string]bool{
		"$(FLAG)": true, "--$(HALF)-code": true, "-$(EMPTY)-trust-remote-code": true, "x $(FLAG) y": true,
		// A value from a field where a flag's name goes.
		"$(POD)": true, "$(FROMPOD)": true,
	}
	env := make([]any, len(corpus.Env))
	for i, e := range corpus.Env {
		env[i] = e
	}
	args := make([]any, len(corpus.Args))
	want := map[int]bool{}
	for i, a := range corpus.Args {
		args[i] = a.Arg
		if refused[a.Arg] {
			want[i] = true
		}
	}
	if len(want) != len(refused) {
		t.Fatalf("the corpus lacks some of %v", refused)
	}
	xr := testXR()
	setPath(xr, map[string]any{"env": env, "args": args}, "spec", "serve")
	rsp := run(t, newRequest(t, xr, map[string]any{"policy": map[string]any{"maxReplicas": 8}}))
	got := map[int]bool{}
	for _, r := range rsp.GetResults() {
		if r.GetSeverity() != fnv1.Severity_SEVERITY_FATAL {
			continue
		}
		for _, m := range regexp.MustCompile(`spec\.serve\.args\[(\d+)\]`).FindAllStringSubmatch(r.GetMessage(), -1) {
			i, _ := strconv.Atoi(m[1])
			got[i] = true
		}
	}
	if diff := cmp.Diff(want, got); diff != "" {
		for i, a := range corpus.Args {
			t.Logf("args[%d] %q receives %q", i, a.Arg, a.Receives)
		}
		t.Errorf("refused arguments by index (-want +got):\n%s", diff)
	}
}
