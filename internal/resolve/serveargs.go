package resolve

import (
	"fmt"
	"slices"
	"strings"

	"github.com/inferno-ai/function-inferno/apis/inference/v1alpha1"
	"github.com/inferno-ai/function-inferno/input/v1beta1"
)

// What a claim's spec.serve hands the model server, judged as the server
// will receive it. A deny-list over the args as written was undone three
// times by other spellings of the same option, so the judgement is about
// the server's input instead:
//
//   - each argument after the kubelet's $(VAR) expansion (expand.go), with
//     the environment the server container will have, the claim's
//     variables included; an argument whose flag comes from a value the
//     function cannot see (valueFrom) is refused under a policy;
//   - each variable by the name the server reads it under: the runtime
//     preset's table (input.runtimes.<framework>.flags) lists the
//     variables a server takes its flags from and the other spellings of
//     each flag it refuses.
//
// Flags of class Preset and Fetch are refused with or without a policy:
// the preset's command owns them, and servers are offline by
// construction. Under a policy, input.policy.deniedServeArgs, the Unsafe
// flags and input.policy.allowedServeEnv (or the built-in refusals) apply.

// optionsHint points a refused tenant at the options no policy takes away.
const optionsHint = "spec.serve.options sets the context length, dtype, quantization, parallel sequences, GPU memory and chat template under any policy"

// judgeServe holds the claim's spec.serve.args and spec.serve.env to the
// runtime's flag table and the platform's policy.
func judgeServe(s *Spec, sv *v1alpha1.ServeSpec, in *v1beta1.Input, errs *FieldErrors) {
	if s.Model.Framework == "" {
		return
	}
	j := judge{fw: string(s.Model.Framework), policy: in.Policy}
	if f := s.Runtime.Flags; f != nil {
		j.flags = *f
	}
	if !j.checkTable(errs) || sv == nil {
		return
	}
	if p := in.Policy; p != nil {
		j.denied = p.DeniedServeArgs
		if j.denied == nil {
			j.denied = v1beta1.DefaultDeniedServeArgs
		}
	}
	for i, a := range sv.Args {
		field := fmt.Sprintf("spec.serve.args[%d]", i)
		for _, x := range s.expansions(a) {
			if j.arg(field, a, x, errs) {
				break // one refusal per argument says enough
			}
		}
	}
	for i, e := range sv.Env {
		j.env(fmt.Sprintf("spec.serve.env[%d].name", i), e.Name, errs)
	}
}

// judge is what one claim's server options are held to.
type judge struct {
	fw     string
	flags  v1beta1.ServerFlags
	policy *v1beta1.Policy
	// denied is input.policy.deniedServeArgs (or its default) under a
	// policy, nil without one.
	denied []string
}

// expansion is an argument as the server receives it (Expand).
type expansion struct {
	out    string
	hidden int
}

// expansions is arg as each version's server receives it, without
// repeats: the versions' environments differ (MODEL_VERSION), and any of
// them is what some server gets. The adapters' variables (MAX_LORAS,
// MAX_LORA_RANK) are numbers, which make no flag, and are left out.
func (s *Spec) expansions(arg string) []expansion {
	if !strings.Contains(arg, "$") {
		return []expansion{{out: arg, hidden: -1}}
	}
	var xs []expansion
	for i := range s.Versions {
		out, hidden := Expand(arg, Environ(s.ServerEnv(&s.Versions[i])))
		x := expansion{out: out, hidden: hidden}
		if !containsExpansion(xs, x) {
			xs = append(xs, x)
		}
	}
	return xs
}

func containsExpansion(xs []expansion, x expansion) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

// checkTable refuses a flag table the function cannot apply: a rule of
// no class it knows would be no rule at all.
func (j judge) checkTable(errs *FieldErrors) bool {
	ok := true
	for i, r := range j.flags.Rules {
		switch r.Class {
		case v1beta1.FlagPreset, v1beta1.FlagFetch, v1beta1.FlagUnsafe, v1beta1.FlagDenied:
		default:
			errs.Add(fmt.Sprintf("input.runtimes.%s.flags.rules[%d].class", j.fw, i), "%q is not a class of flag; use Preset, Fetch, Unsafe or Denied", r.Class)
			ok = false
		}
	}
	return ok
}

// refuses reports whether rule r applies to this claim: Preset and Fetch
// always, Unsafe under a policy. Denied rules only name other spellings
// of a deniedServeArgs flag.
func (j judge) refuses(r v1beta1.FlagRule) bool {
	switch r.Class {
	case v1beta1.FlagPreset, v1beta1.FlagFetch:
		return true
	case v1beta1.FlagUnsafe:
		return j.policy != nil
	}
	return false
}

// fix is what a claim refused by rule r can do instead.
func (j judge) fix(r v1beta1.FlagRule) string {
	switch r.Class {
	case v1beta1.FlagPreset:
		return "remove it: the runtime preset sets it"
	case v1beta1.FlagFetch:
		return "remove it: servers serve only the weights the function pulls under the platform's policy (spec.model.uri, spec.adapters)"
	}
	return fmt.Sprintf("remove it, or ask your platform team: since the platform sets a policy (input.policy.*), the %s runtime's flag table (input.runtimes.%s.flags) refuses it", j.fw, j.fw)
}

// arg judges one argument as written and as x, the server's copy of it,
// and reports whether it refused it.
func (j judge) arg(field, written string, x expansion, errs *FieldErrors) bool {
	as := fmt.Sprintf("%q", written)
	if x.out != written {
		as = fmt.Sprintf("%q (which the server receives as %q)", written, x.out)
	}
	for _, r := range j.flags.Rules {
		if !j.refuses(r) {
			continue
		}
		if d, ok := j.passes(x.out, r.Flags); ok {
			errs.Add(field, "%s passes %s, which %s; %s", as, d, r.Why, j.fix(r))
			return true
		}
	}
	if j.policy == nil {
		return false
	}
	if d, ok := DeniedArg(x.out, j.denied); ok {
		errs.Add(field, "%s passes %s, which the platform does not allow (input.policy.deniedServeArgs: %s); remove it ("+optionsHint+"), or ask your platform team", as, d, strings.Join(j.denied, ", "))
		return true
	}
	if x.hidden >= 0 && flagPosition(x.out[:x.hidden]) {
		ref, _, _ := strings.Cut(x.out[x.hidden:], ")")
		errs.Add(field, "%s takes a flag from %s), a value from a Secret, ConfigMap or field that the function cannot see, so the platform's policy (input.policy.deniedServeArgs) cannot judge it; write the flag and the reference in one argument (--flag=%s)), or set the option through a variable the platform allows (input.policy.allowedServeEnv)", as, ref, ref)
		return true
	}
	return false
}

// passes is DeniedArg for a rule's flags, but a word that is one of the
// server's Exact flags is itself and abbreviates nothing.
func (j judge) passes(arg string, flags []string) (string, bool) {
	if len(flags) == 0 {
		return "", false
	}
	// Word by word: DeniedArg of the whole argument would look at its
	// words again, Exact ones included.
	for _, w := range strings.Fields(arg) {
		name, _, _ := strings.Cut(strings.Trim(w, `"'`+"`;"), "=")
		if slices.Contains(j.flags.Exact, strings.ReplaceAll(name, "_", "-")) {
			continue
		}
		if d, ok := DeniedArg(w, flags); ok {
			return d, true
		}
	}
	return "", false
}

// flagPosition reports whether a value that follows seen in an argument
// could be (or end) a flag's name: it begins the argument or one of its
// words, or continues a word that has no '=' yet.
func flagPosition(seen string) bool {
	w := seen
	if i := strings.LastIndexAny(seen, " \t\n"); i >= 0 {
		w = seen[i+1:]
	}
	return !strings.Contains(w, "=")
}

// env judges the variable name a claim sets in its servers.
func (j judge) env(field, name string, errs *FieldErrors) {
	if _, guarded := guardedServeEnv[name]; guarded || reserved(name) {
		return // refused by applyServe
	}
	for _, r := range j.flags.Rules {
		if !j.refuses(r) {
			continue
		}
		if _, ok := v1beta1.NameMatches(name, r.Env); ok {
			errs.Add(field, "%q is the %s server's variable for %s, which %s; %s", name, j.fw, spelling(r), r.Why, j.fix(r))
			return
		}
	}
	p := j.policy
	if p == nil {
		return
	}
	if d, ok := j.deniedSpelling(name); ok {
		errs.Add(field, "%q is the %s server's variable for %s, which the platform does not allow (input.policy.deniedServeArgs: %s); remove it, or ask your platform team", name, j.fw, d, strings.Join(j.denied, ", "))
		return
	}
	if p.AllowedServeEnv != nil {
		if _, ok := v1beta1.NameMatches(name, p.AllowedServeEnv); !ok {
			allowed := strings.Join(p.AllowedServeEnv, ", ")
			if allowed == "" {
				allowed = "none"
			}
			errs.Add(field, "%q is not among the variables the platform allows (input.policy.allowedServeEnv: %s); remove it, or ask your platform team to list it", name, allowed)
		}
		return
	}
	if pat, ok := v1beta1.NameMatches(name, v1beta1.DefaultDeniedServeEnv); ok {
		errs.Add(field, "%q (matching %s) can make a process load or run code other than its image's, or look for it elsewhere, which the platform's policy refuses unless it lists the variable (input.policy.allowedServeEnv is not set); remove it, or ask your platform team to list it there", name, pat)
		return
	}
	if pat, ok := v1beta1.NameMatches(name, j.flags.Variables); ok {
		errs.Add(field, "%q (matching %s) is a variable the %s server reads its flags from (input.runtimes.%s.flags.variables), which would pass a flag around the platform's policy; pass the option in spec.serve.args ("+optionsHint+"), or ask your platform team to list the variable in input.policy.allowedServeEnv", name, pat, j.fw, j.fw)
	}
}

// deniedSpelling reports which flag of input.policy.deniedServeArgs the
// variable name spells for this server: a Denied (or any) rule's variable
// of a denied flag, or <flagVariablePrefix>SOME_FLAG for --some-flag. With
// "*" every flag is denied, so every variable the server reads flags
// from is too.
func (j judge) deniedSpelling(name string) (string, bool) {
	for _, d := range j.denied {
		if d == "*" {
			if _, ok := v1beta1.NameMatches(name, j.flags.Variables); ok {
				return "a flag", true
			}
			for _, r := range j.flags.Rules {
				if _, ok := v1beta1.NameMatches(name, r.Env); ok {
					return spelling(r), true
				}
			}
			continue
		}
		for _, r := range j.flags.Rules {
			if _, ok := DeniedArg(d, r.Flags); ok {
				if _, ok := v1beta1.NameMatches(name, r.Env); ok {
					return d, true
				}
			}
		}
		if pre := j.flags.FlagVariablePrefix; pre != nil && strings.HasPrefix(d, "--") {
			if name == *pre+strings.ToUpper(strings.ReplaceAll(strings.TrimPrefix(d, "--"), "-", "_")) {
				return d, true
			}
		}
	}
	return "", false
}

// spelling names rule r's option by its longest flag, or its variable.
func spelling(r v1beta1.FlagRule) string {
	best := ""
	for _, f := range r.Flags {
		if len(f) > len(best) {
			best = f
		}
	}
	if best == "" && len(r.Env) > 0 {
		return r.Env[0]
	}
	return best
}
