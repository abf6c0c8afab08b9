package resolve

import (
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/inferno-ai/function-inferno/apis/inference/v1alpha1"
	"github.com/inferno-ai/function-inferno/input/v1beta1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation"
)

// Bounds of spec.serve.options, as the schema has them: the function holds
// an XR to them too, since it may be handed one the API server never
// validated (crossplane render).
const (
	maxContextLength = 1 << 21
	maxParallel      = 1024
)

// chatTemplateName is the schema's pattern of spec.serve.options.chatTemplate:
// a name, so never a path nor a template's text.
var chatTemplateName = regexp.MustCompile(`^[a-z0-9][a-z0-9._-]*$`)

// serverOption is one option a claim sets, as its runtime takes it.
type serverOption struct {
	// name is its field of spec.serve.options.
	name string
	// at is the preset's translation; nil when it has none.
	at *v1beta1.OptionFlag
	// value is what the runtime is given; "" passes nothing (a choice
	// that leaves the runtime its default).
	value string
	// prompt and promptValue are a second flag the option passes
	// (ContextFlag.PromptFlag), when the preset has one.
	prompt, promptValue string
}

// applyOptions translates the claim's spec.serve.options by the runtime
// preset's option table into arguments after rt's (the preset's or
// spec.serve.args) and variables after rt's env. They are built from typed
// values, so input.policy.deniedServeArgs, which judges what spec.serve.args
// spells, never sees them.
//
//  1. Each value is within the schema's bounds (an XR the API server did
//     not validate is held to them here).
//  2. An option whose runtime has no entry (or an empty one) in
//     input.runtimes.<framework>.options is refused at its field, as is a
//     choice the entry does not list.
//  3. An option whose flag (or alias) is already in the arguments, or whose
//     variable is already in the environment, is refused: the claim's own
//     (spec.serve.args, spec.serve.env) are to be set once, the preset's
//     are the platform's pin.
//  4. Flags come as two arguments, flag then value, in the order of
//     ServeOptions' fields; a percent of GPU memory as a fraction, 90 as
//     "0.90".
func applyOptions(fw v1alpha1.Framework, rt v1beta1.RuntimePreset, sv *v1alpha1.ServeSpec, errs *FieldErrors) v1beta1.RuntimePreset {
	if sv == nil || sv.Options == nil {
		return rt
	}
	opts := claimOptions(fw, sv.Options, rt.Options, errs)
	var args []string
	var env []corev1.EnvVar
	for _, o := range opts {
		field := "spec.serve.options." + o.name
		preset := fmt.Sprintf("input.runtimes.%s.options.%s", fw, o.name)
		if o.at == nil || (o.at.Flag == "" && o.at.Env == "") {
			errs.Add(field, "the %s runtime takes no %s option in the platform's Input (%s is not set); remove it, or ask your platform team to map it to the runtime's flag or variable", fw, o.name, preset)
			continue
		}
		if !checkOptionFlag(o, preset, errs) {
			continue
		}
		if o.at.Flag != "" {
			if !optionArgFree(o, fw, rt.Args, sv, field, errs) {
				continue
			}
			if o.value != "" {
				args = append(args, o.at.Flag, o.value)
			}
			if o.prompt != "" {
				args = append(args, o.prompt, o.promptValue)
			}
			continue
		}
		if !optionEnvFree(o, fw, rt.Env, sv, field, errs) {
			continue
		}
		if o.value != "" {
			env = append(env, corev1.EnvVar{Name: o.at.Env, Value: o.value})
		}
	}
	if len(args) > 0 {
		rt.Args = append(slices.Clip(rt.Args), args...)
	}
	rt.Env = MergeEnv(rt.Env, env)
	return rt
}

// claimOptions are the options the claim sets, in the order of
// ServeOptions' fields, each checked against the schema's bounds and
// translated by table (nil: the runtime has none).
func claimOptions(fw v1alpha1.Framework, so *v1alpha1.ServeOptions, table *v1beta1.OptionsPreset, errs *FieldErrors) []serverOption {
	if table == nil {
		table = &v1beta1.OptionsPreset{}
	}
	var out []serverOption
	if n := so.ContextLength; n != nil {
		if *n < 1 || *n > maxContextLength {
			errs.Add("spec.serve.options.contextLength", "%d is out of range; use 1 to %d tokens", *n, maxContextLength)
		} else {
			o := serverOption{name: "contextLength", value: strconv.Itoa(int(*n))}
			if c := table.ContextLength; c != nil {
				o.at = &c.OptionFlag
				if c.PromptFlag != "" && c.Flag != "" {
					if *n < 2 {
						errs.Add("spec.serve.options.contextLength", "%d leaves no room for a prompt on the %s runtime, which is given the most prompt tokens, one below it, as %s; use at least 2", *n, fw, c.PromptFlag)
					} else {
						o.prompt, o.promptValue = c.PromptFlag, strconv.Itoa(int(*n)-1)
					}
				}
			}
			out = append(out, o)
		}
	}
	if d := so.DType; d != "" {
		out = appendChoice(out, fw, "dtype", string(d), slices.Contains(v1alpha1.DTypes, d), table.DType, errs)
	}
	if q := so.Quantization; q != "" {
		out = appendChoice(out, fw, "quantization", string(q), slices.Contains(v1alpha1.Quantizations, q), table.Quantization, errs)
	}
	if n := so.MaxParallel; n != nil {
		if *n < 1 || *n > maxParallel {
			errs.Add("spec.serve.options.maxParallel", "%d is out of range; use 1 to %d sequences", *n, maxParallel)
		} else {
			out = append(out, serverOption{name: "maxParallel", at: table.MaxParallel, value: strconv.Itoa(int(*n))})
		}
	}
	if p := so.GPUMemoryPercent; p != nil {
		if *p < 1 || *p > 100 {
			errs.Add("spec.serve.options.gpuMemoryPercent", "%d is out of range; use 1 to 100 percent", *p)
		} else {
			out = append(out, serverOption{name: "gpuMemoryPercent", at: table.GPUMemoryPercent, value: percentAsFraction(*p)})
		}
	}
	if t := so.ChatTemplate; t != "" {
		if len(t) > 64 || !chatTemplateName.MatchString(t) {
			errs.Add("spec.serve.options.chatTemplate", "%q is not a template name (lower-case letters, digits, '.', '_' and '-', at most 64); name one of the runtime's built-in templates, e.g. chatml", t)
		} else {
			out = append(out, serverOption{name: "chatTemplate", at: table.ChatTemplate, value: t})
		}
	}
	return out
}

// appendChoice appends option name of value v, one of the field's values
// when known, translated by c's Values.
func appendChoice(out []serverOption, fw v1alpha1.Framework, name, v string, known bool, c *v1beta1.ChoiceFlag, errs *FieldErrors) []serverOption {
	field := "spec.serve.options." + name
	if !known {
		errs.Add(field, "%q is not a %s the function knows; leave it out, or use one the schema lists", v, name)
		return out
	}
	o := serverOption{name: name, value: v}
	if c == nil {
		return append(out, o)
	}
	o.at = &c.OptionFlag
	if c.Values != nil {
		spelled, ok := c.Values[v]
		if !ok && (c.Flag != "" || c.Env != "") {
			errs.Add(field, "%q is not a %s the %s runtime takes (input.runtimes.%s.options.%s.values: %s); use one of them, or leave it out", v, name, fw, fw, name, strings.Join(slices.Sorted(maps.Keys(c.Values)), ", "))
			return out
		}
		o.value = spelled
	}
	return append(out, o)
}

// percentAsFraction spells a percent as the fraction of 1 that vLLM's
// --gpu-memory-utilization and TGI's --cuda-memory-fraction take, with two
// decimals and no floating point: 90 is "0.90", 100 "1.00".
func percentAsFraction(p int32) string {
	return fmt.Sprintf("%d.%02d", p/100, p%100)
}

// checkOptionFlag refuses a preset entry that cannot be followed: both a
// flag and a variable, or a variable that is no name or one the function
// sets.
func checkOptionFlag(o serverOption, preset string, errs *FieldErrors) bool {
	f := o.at
	switch {
	case f.Flag != "" && f.Env != "":
		errs.Add(preset, "sets both flag %q and env %q; the Composition's Input must give the option one of them", f.Flag, f.Env)
	case f.Flag != "" && !strings.HasPrefix(f.Flag, "-"):
		errs.Add(preset+".flag", "%q is not a flag; the Composition's Input must name one such as --max-model-len", f.Flag)
	case f.Env != "" && len(validation.IsEnvVarName(f.Env)) > 0:
		errs.Add(preset+".env", "%q is not an environment variable name; the Composition's Input must name one such as OLLAMA_CONTEXT_LENGTH", f.Env)
	case f.Env != "" && reserved(f.Env):
		errs.Add(preset+".env", "%q is set by the function; the Composition's Input must name the runtime's own variable", f.Env)
	default:
		return true
	}
	return false
}

// optionArgFree reports whether no argument already passes o's flag, an
// alias of it or its prompt flag, in any spelling DeniedArg reads; else
// it refuses the claim's option, naming who passed it.
func optionArgFree(o serverOption, fw v1alpha1.Framework, args []string, sv *v1alpha1.ServeSpec, field string, errs *FieldErrors) bool {
	flags := append([]string{o.at.Flag}, o.at.Aliases...)
	if o.prompt != "" {
		flags = append(flags, o.prompt)
	}
	for i, a := range args {
		d, ok := DeniedArg(a, flags)
		if !ok {
			continue
		}
		if len(sv.Args) > 0 {
			errs.Add(field, "is passed also as %s in spec.serve.args[%d] (%q); set it once: remove the argument, or the option", d, i, a)
		} else {
			errs.Add(field, "the platform's %s runtime preset passes %s itself (input.runtimes.%s.args: %q); remove the option, or ask your platform team", fw, d, fw, a)
		}
		return false
	}
	return true
}

// optionEnvFree reports whether no variable of env is o's; else it
// refuses the claim's option, naming who set it.
func optionEnvFree(o serverOption, fw v1alpha1.Framework, env []corev1.EnvVar, sv *v1alpha1.ServeSpec, field string, errs *FieldErrors) bool {
	if !slices.ContainsFunc(env, func(e corev1.EnvVar) bool { return e.Name == o.at.Env }) {
		return true
	}
	if i := slices.IndexFunc(sv.Env, func(e corev1.EnvVar) bool { return e.Name == o.at.Env }); i >= 0 {
		errs.Add(field, "is set also as %s in spec.serve.env[%d]; set it once: remove the variable, or the option", o.at.Env, i)
	} else {
		errs.Add(field, "the platform's %s runtime preset sets %s itself (input.runtimes.%s.env); remove the option, or ask your platform team", fw, o.at.Env, fw)
	}
	return false
}
